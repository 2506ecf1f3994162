"""The numeric stages: microaggregation of numeric quasi-identifiers (optionally block by
block, by attribute groups, with l-diversity / t-closeness enforced, or with a noisy
aggregation) and the epsilon-DP release, then the one verification and the measurements."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .. import __version__
from .._base.scaling import apply_scaler, fit_scaler, from_safe_range, safe_exponents, to_safe_range
from .._base.validation import resolve_seed
from ..aggregate.aggregators import aggregate
from ..exceptions import ConstantColumnWarning, LowUtilityWarning, PrivacyLeakWarning
from .advice import low_utility_message
from .assemble import Findings, assemble
from .certify import certify_metrics
from .measure import Tables, completed_tables, numeric_metrics, sensitive_metrics
from .missing import prepare_missing, published_sensitive
from .notes import warn_user
from .publish import Published, publish, published_numbers
from .request import Request
from .result import Release
from .verify import (
    closeness_checks,
    diversity_checks,
    group_k_check,
    k_check,
)

__all__ = ["Outcome", "aggregate_safely", "privacy_params", "quasi_identifier_matrix",
           "run_numeric"]


@dataclass
class Outcome:
    """What a numeric stage produced, before verification and measurement."""

    labels: NDArray[np.intp]
    masked: NDArray[np.float64]
    scaled: NDArray[np.float64]
    scaler: Any
    method: str
    method_params: Mapping[str, Any]
    scaling: str
    partitions: dict[str, NDArray[np.intp]] = field(default_factory=dict)
    groups: tuple[tuple[str, ...], ...] = ()
    group_methods: dict[str, str] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    privacy_notes: list[str] = field(default_factory=list)
    budget: Mapping[str, Any] | None = None
    alternative: str | None = None
    shuffle: np.random.Generator | None = None
    steps: tuple[Any, ...] = ()
    """The records of a plan's steps (:mod:`.plan_stage`); empty: one step, recorded by
    :func:`steps_of`."""


def quasi_identifier_matrix(df: pd.DataFrame, columns: tuple[str, ...], *,
                            allow_missing: bool = False) -> NDArray[np.float64]:
    """The quasi-identifiers as float64, with errors that name columns, dtypes and counts
    (infinite values always refused; missing ones kept as NaN with ``allow_missing``)."""
    from ..exceptions import SchemaError
    from .rules import require_numeric

    require_numeric(df.dtypes, columns)
    values = df.loc[:, list(columns)].to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(values)
    missing = np.isnan(values)
    if infinite.any() or (missing.any() and not allow_missing):
        bad = [
            f"{c!r}: {int(n_nan)} missing, {int(n_inf)} infinite"
            for c, n_nan, n_inf in zip(columns, missing.sum(axis=0), infinite.sum(axis=0),
                                       strict=True)
            if n_inf or (n_nan and not allow_missing)
        ]
        raise SchemaError(
            f"Quasi-identifiers contain {'infinite' if infinite.any() else 'missing'} values "
            f"in {len(df)} rows checked ({'; '.join(bad)}). "
            + ("Replace or drop the infinite values first." if infinite.any() else
               "Choose a missing= strategy (pattern, category, impute:median, impute:mean) "
               "or drop them first; microagg never imputes silently."))
    return np.ascontiguousarray(values)


def aggregate_safely(values: NDArray[np.float64], labels: NDArray[np.intp], *, method: str,
                     random_state: np.random.Generator, **params: Any) -> NDArray[np.float64]:
    """:func:`~microagg.aggregate.aggregate` with constant columns published exactly (a mean
    of 0.1s may come out as 0.10000000000000002) and extreme columns aggregated near 1 (a
    mean of values near 1e308 overflows; an exact power of two brings them in range and
    back)."""
    safe = safe_exponents(values)
    masked = from_safe_range(aggregate(to_safe_range(values, safe), labels, method=method,
                                       random_state=random_state, **params), safe)
    constant = values.max(axis=0) == values.min(axis=0)
    if constant.any():
        masked = np.array(masked, dtype=np.float64)
        masked[:, constant] = values[:, constant]
    return masked


def privacy_params(request: Request) -> dict[str, Any]:
    """The l-diversity and t-closeness entries of ``Release.params``."""
    return {
        "l": request.l,
        "diversity": request.diversity if request.l is not None else None,
        "t": request.t,
        "t_distance": MappingProxyType({c: d.distance for c, d in request.closeness.items()}),
    }


def run_numeric(request: Request) -> Release:
    """Run a numeric, attribute-group or epsilon-DP request (see :attr:`Request.kind`)."""
    from .pattern_stage import pattern_stage
    from .stages import STAGES

    timings: dict[str, float] = {}
    qi = request.quasi_identifiers
    seed, rng = resolve_seed(request.random_state)
    raw = quasi_identifier_matrix(request.data, qi, allow_missing=True)  # refused next
    request, record = prepare_missing(request)
    values = (raw if not record.imputed
              else quasi_identifier_matrix(request.data, qi, allow_missing=True))
    notes: list[str] = []
    varying = np.nanmax(np.where(np.isnan(values), -np.inf, values), axis=0) \
        > np.nanmin(np.where(np.isnan(values), np.inf, values), axis=0)
    constant = [c for c, v in zip(qi, varying, strict=True) if not v]
    if constant:
        warn_user(notes, f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: "
                     "excluded from the distances and the information loss, and published "
                     "unchanged.", ConstantColumnWarning)
    timings["validate"] = time.perf_counter() - request.started
    if request.kind == "patterns":  # the one stage that records its missingness patterns
        outcome = pattern_stage(request, values, rng, timings, record)
    else:
        outcome = STAGES[request.kind](request, values, rng, timings)
    record.warn(notes)
    notes = outcome.privacy_notes + notes + outcome.notes
    table = request.data.drop(columns=list(request.identifiers))
    for j, col in enumerate(qi):
        table[col] = outcome.masked[:, j]
    published = publish(table, request, timings)
    t = time.perf_counter()
    checks, classes, labels = _verify(request, outcome, published, notes)
    if published.rounding is not None:
        checks["rounding"] = published.rounding
    timings["verify"] = time.perf_counter() - t
    t = time.perf_counter()
    metrics = _measure(request, outcome, published.data, raw, varying, classes, labels, notes)
    timings["measure"] = time.perf_counter() - t
    if request.certify is not None:
        t = time.perf_counter()
        metrics.update(certify_metrics(outcome.scaled, labels, request.k, request.certify,
                                       seed))
        timings["certify"] = time.perf_counter() - t
    data = published.data
    if outcome.shuffle is not None:  # the input order would say which rows share a rank block
        order = outcome.shuffle.permutation(data.shape[0])
        data = data.iloc[order].reset_index(drop=True)
        labels = labels[order]
    return assemble(request, data=data, labels=labels, seed=seed,
                    params={**_params(request, outcome), "missing": record.params()},
                    findings=Findings(checks, metrics, notes, timings,
                                      attacked=published.data),
                    partitions=outcome.partitions, steps=steps_of(request, raw, outcome))


def steps_of(request: Request, raw: NDArray[np.float64], outcome: Outcome) -> tuple[Any, ...]:
    """``Release.steps``: the plan's records, or the record of the one step (its figures
    on the quasi-identifiers before masking and as published: rounded, dates at their
    published precision, as the release's metrics count them)."""
    from ..steps._state import step_record

    if outcome.steps:
        return outcome.steps
    assert request.plan is not None  # every built Request has one
    qi = list(request.quasi_identifiers)
    original = pd.DataFrame(raw, columns=qi)
    partitions = list(outcome.partitions.values()) or [outcome.labels]
    return (step_record(request.plan.steps[0], original, original,
                        pd.DataFrame(published_numbers(outcome.masked, qi, request),
                                     columns=qi), partitions),)


def _verify(request: Request, outcome: Outcome, final: Published, notes: list[str]
            ) -> tuple[dict[str, Any], NDArray[np.intp] | None, NDArray[np.intp]]:
    """k (promised or reported), the group k, l and t, from the published table (dates
    back, rounded): the classes of identical published quasi-identifiers."""
    k, qi, partitions = request.k, request.quasi_identifiers, outcome.partitions
    checks = outcome.checks
    labels = outcome.labels
    noisy_or_dp = request.noisy or request.epsilon is not None
    published = final.data
    classes_of_all = final.quasi_identifier_classes(qi)  # the published table, as it is
    achieved = int(np.bincount(classes_of_all).min())
    if partitions:
        labels = classes_of_all
        guaranteed = len(partitions) == 1 and not request.noisy  # one group of every column
        checks["k_anonymity"] = k_check(k if guaranteed else None, achieved)
        if len(partitions) > 1:
            _attribute_group_warning(checks, notes, k, achieved, labels, len(partitions))
    else:
        checks["k_anonymity"] = k_check(None if request.noisy else k, achieved)
    if outcome.steps:
        from .plan_stage import step_checks

        checks["steps"] = step_checks(request, request.data, published, records=outcome.steps)
    group_min = (min(int(np.bincount(g).min()) for g in partitions.values()) if partitions
                 else int(np.bincount(labels).min()))
    checks["group_k"] = group_k_check(
        k, group_min, "size of the smallest group over which each representative"
        + (" and its noise are" if noisy_or_dp else " is")
        + " computed (from the release's labels)"
        + (", in every attribute group's own partition" if partitions else ""))
    sens = request.sensitive
    classes = classes_of_all if sens and not noisy_or_dp else None
    if classes is not None:
        checks.update(diversity_checks(classes, published_sensitive(published, classes, sens),
                                       sens, request.l, request.diversity,
                                       request.diversity_c))
        checks.update(closeness_checks(classes, request.closeness, request.t))
    return checks, classes, labels


def _attribute_group_warning(checks: dict[str, Any], notes: list[str], k: int, achieved: int,
                             labels: NDArray[np.intp], n_groups: int) -> None:
    checks["k_anonymity"] = MappingProxyType({
        **checks["k_anonymity"],
        "model": "real k-anonymity (Nin, Herranz & Torra 2008): the smallest number of "
                 "identical published quasi-identifier records; microaggregation by "
                 "attribute groups does not guarantee k-anonymity",
    })
    warn_user(notes, f"The quasi-identifiers were microaggregated in {n_groups} attribute "
                 f"groups separately: every group has at least {k} records in each "
                 f"attribute group, but the published records are NOT {k}-anonymous (real "
                 f"k-anonymity {achieved}; unique records: "
                 f"{int(np.sum(np.bincount(labels) == 1))}), and an "
                 "intruder can intersect the groups (metrics['intersection_attack_*']).",
          PrivacyLeakWarning, first=True)


def _measure(request: Request, outcome: Outcome, published: pd.DataFrame,
             values: NDArray[np.float64], varying: NDArray[np.bool_],
             classes: NDArray[np.intp] | None, labels: NDArray[np.intp], notes: list[str]
             ) -> dict[str, Any]:
    qi = request.quasi_identifiers
    shown = published_numbers(outcome.masked, qi, request)  # rounded, dates as published
    masked_scaled = apply_scaler(shown, outcome.scaler)
    metrics = numeric_metrics(
        completed_tables(Tables(values, shown, outcome.scaled, masked_scaled, labels, qi,
                                varying)),
        known=request.intruder_knows, clustering_il=request.clustering_il,
        attribute_groups={"groups": outcome.groups} if outcome.partitions else None,
        of_classes=(sensitive_metrics(classes, published, request.sensitive)
                    if classes is not None else None))
    noisy_or_dp = request.noisy or request.epsilon is not None
    cause = [name for name, on in (("l-diversity", request.l is not None),
                                   ("t-closeness", bool(request.closeness))) if on]
    advice = low_utility_message(  # noise is chosen, not lost: only the grouping's loss counts
        labels, request.k, None if noisy_or_dp else metrics["information_loss"] / 100,
        loss_name="information loss", method=outcome.method, alternative=outcome.alternative,
        cause=(f"{' and '.join(cause)} merged groups to reach the required level; a lower "
               "level (or fewer sensitive columns) keeps more.") if cause else None)
    if advice:
        warn_user(notes, advice, LowUtilityWarning)
    return metrics


def _params(request: Request, outcome: Outcome) -> Mapping[str, Any]:
    blocking = request.blocking
    return MappingProxyType({
        "method": outcome.method,
        "k": request.k,
        "quasi_identifiers": request.quasi_identifiers,
        "sensitive": request.sensitive,
        "identifiers": request.identifiers,
        "aggregation": request.aggregation,
        "aggregation_params": MappingProxyType(dict(request.aggregation_params)),
        "scaling": outcome.scaling,
        "method_params": outcome.method_params,
        "epsilon": request.epsilon,
        "intruder_knows": request.intruder_knows,
        **privacy_params(request),
        "attribute_groups": tuple(outcome.groups) if outcome.partitions else None,
        "blocking": (MappingProxyType({"blocking": blocking,
                                       "block_size": request.block_size})
                     if blocking is not None else None),
        "group_methods": MappingProxyType(outcome.group_methods),
        "time_budget": outcome.budget,
        "certify": request.certify,
        "microagg_version": __version__,
    })


def standard_scaling(values: NDArray[np.float64], scaling: str) -> tuple[Any, Any]:
    """The scaler for ``scaling`` and the scaled values."""
    scaler = fit_scaler(values, scaling)
    return scaler, apply_scaler(values, scaler)
