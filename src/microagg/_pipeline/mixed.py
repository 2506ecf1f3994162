"""The generalizing stage: mixed numeric + categorical quasi-identifiers (seed 002, MAGE;
Torra 2004) and CDT (seed 004). Groups of at least k are generalized: numbers to their mean
or interval, ordinal categories to the median or range, nominal ones to the closest common
generalization in their hierarchy (or the group's mode)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .. import __version__
from .._base.scaling import SAFE_MAGNITUDE, apply_scaler, fit_scaler
from .._base.validation import resolve_seed
from ..aggregate.generalize import generalize
from ..exceptions import LowUtilityWarning, SchemaError
from ..metrics import (
    group_size_summary,
    il_omega,
    information_loss,
    normalized_certainty_penalty,
    privacy_of_quasi_identifiers,
    privacy_of_release,
    query_answering,
    utility_loss,
)
from ..models import ILOmegaCost
from ..partition.cdt import Columns
from ..partition.mixed import MixedData
from .advice import low_utility_message
from .assemble import Findings, assemble
from .grouping import enforce_models
from .measure import sensitive_metrics
from .missing import MissingRecord, prepare_missing, published_sensitive, repair_diversity
from .mixed_patterns import Pieces, missing_mask, plan_mixed, published_missing, weighted_metrics
from .notes import warn_user
from .numeric import privacy_params, quasi_identifier_matrix
from .pattern_stage import restricted_request
from .publish import Published, publish, published_numbers
from .request import Request
from .result import Release
from .rules import require_complete
from .verify import (
    checked_partition,
    closeness_checks,
    diversity_checks,
    group_k_check,
    k_check,
    published_classes,
)

__all__ = ["run_mixed"]


@dataclass(frozen=True)
class _Columns:
    """The quasi-identifiers split by kind, encoded for the partitioner."""

    numeric: NDArray[np.float64]  # plain numeric columns, then ordinal ranks
    num_cols: tuple[str, ...]     # their names
    n_plain: int                  # how many of them are plain numeric
    cat_cols: tuple[str, ...]
    codes: NDArray[np.intp]
    tables: tuple[Any, ...]


def _number_text(value: float) -> str:
    """Exact text of a number: ``39`` for an integral value, else the shortest repr."""
    v = float(value)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _is_ordinal(column: pd.Series) -> bool:
    """An ordered pandas categorical."""
    dtype = column.dtype
    return isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)


def _refuse_extreme_magnitudes(numeric: NDArray[np.float64], columns: tuple[str, ...],
                               method: str) -> None:
    """The generalizing methods square values and ranges unscaled: refuse magnitudes whose
    squares overflow (the numeric methods scale such columns safely)."""
    peak = np.abs(numeric).max(axis=0) if numeric.size else np.zeros(numeric.shape[1])
    extreme = [f"{col!r} (largest magnitude {peak[j]:g})" for j, col in enumerate(columns)
               if peak[j] > SAFE_MAGNITUDE]
    if extreme:
        raise SchemaError(
            f"Quasi-identifier(s) {', '.join(extreme)} exceed {SAFE_MAGNITUDE:.3g} in "
            f"magnitude: method {method!r} squares differences of the original values, which "
            "overflow beyond the largest float (1.8e308). Divide the column by a power of ten "
            "first, or use a numeric method (mdav), which scales such columns safely.")


def _split_columns(request: Request, method: str) -> _Columns:
    """Ordinal (an ordered categorical with no hierarchy given): ranks join the numbers."""
    df, qi, hierarchies = request.data, request.quasi_identifiers, request.hierarchies
    ord_cols = tuple(c for c in qi if c in hierarchies and hierarchies[c].source == "flat"
                     and _is_ordinal(df[c]))
    num_cols = tuple(c for c in qi if c not in hierarchies)
    cat_cols = tuple(c for c in qi if c in hierarchies and c not in ord_cols)
    numeric = quasi_identifier_matrix(df, num_cols) if num_cols else np.zeros((len(df), 0))
    ranks = np.column_stack([df[c].cat.codes.to_numpy() for c in ord_cols]).astype(np.float64) \
        if ord_cols else np.zeros((len(df), 0))
    numeric = np.column_stack([numeric, ranks])
    _refuse_extreme_magnitudes(numeric, num_cols + ord_cols, method)
    codes = (np.column_stack([hierarchies[c].encode(df[c].to_numpy()) for c in cat_cols])
             if cat_cols else np.zeros((len(df), 0), dtype=np.intp))
    return _Columns(numeric, num_cols + ord_cols, len(num_cols), cat_cols, codes,
                    tuple(hierarchies[c].tables() for c in cat_cols))


def _sensitive_columns(df: pd.DataFrame, sens: tuple[str, ...]) -> Columns:
    """Sensitive attributes for CDT's Gower distance: numbers as numbers, the rest coded."""
    numeric = [c for c in sens if pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    other = [c for c in sens if c not in numeric]
    require_complete(df, sens, "CDT compares sensitive tuples")
    return Columns.of(df[numeric].to_numpy(dtype=np.float64) if numeric else None,
                      np.column_stack([pd.factorize(df[c])[0] for c in other]) if other else None)


def _partition(request: Request, cols: _Columns, rng: np.random.Generator,
               timings: dict[str, float]) -> tuple[NDArray[np.intp], dict[str, Any]]:
    """Groups of at least k, then l-diversity and t-closeness enforced at least IL cost."""
    partitioner = request.partitioner
    params = dict(request.method_params)
    call_params = params
    if partitioner.needs_sensitive:
        call_params = {**params, "sensitive": _sensitive_columns(request.data,
                                                                 request.sensitive)}
        params["sensitive"] = request.sensitive  # recorded by name
    data = MixedData.build(cols.numeric if cols.num_cols else None, cols.codes, cols.tables)
    timings["validate"] = time.perf_counter() - request.started
    t = time.perf_counter()
    labels = checked_partition(partitioner, data, request.k, rng, call_params)
    timings["partition"] = time.perf_counter() - t
    labels = enforce_models(request, labels, timings, lambda current: {"cost": ILOmegaCost(
        cols.numeric, cols.codes, cols.tables, current, int(current.max()) + 1)})
    centre = (cols.numeric if cols.num_cols
              else np.column_stack([cols.codes, np.zeros(len(labels))]).astype(np.float64))
    labels = repair_diversity(request, labels, centre)  # missing sensitive values
    return labels, params


def _ordinal_representative(column: pd.Series, labels: NDArray[np.intp], aggregation: str
                            ) -> pd.Series | list[str]:
    """Each group's (lower) median category, or its ``[low, high]`` range of categories."""
    codes = column.cat.codes.to_numpy()
    categories = column.cat.categories
    order = np.lexsort((codes, labels))
    sizes = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    sorted_codes = codes[order]
    if aggregation == "interval":
        low = categories[sorted_codes[starts]][labels]
        high = categories[sorted_codes[starts + sizes - 1]][labels]
        return [f"[{a}, {b}]" if a != b else str(a) for a, b in zip(low, high, strict=True)]
    median = sorted_codes[starts + (sizes - 1) // 2]
    dtype = column.dtype
    assert isinstance(dtype, pd.CategoricalDtype)  # ordinal columns only
    return pd.Series(pd.Categorical.from_codes(median[labels], dtype=dtype),
                     index=column.index)


def _group_mode_labels(column: pd.Series, labels: NDArray[np.intp]) -> pd.Series:
    """Each group's most frequent value (the first in sorted order among ties)."""
    codes, uniques = pd.factorize(column, sort=True)
    counts = np.zeros((int(labels.max()) + 1, len(uniques)), dtype=np.int64)
    np.add.at(counts, (labels, codes), 1)
    mode = np.argmax(counts, axis=1)
    return pd.Series(np.asarray(uniques)[mode[labels]], index=column.index)


def _publish(request: Request, cols: _Columns, labels: NDArray[np.intp]
             ) -> tuple[pd.DataFrame, Any, NDArray[np.bool_]]:
    """The published table: each group's representatives in place of its values."""
    df, aggregation = request.data, request.aggregation or "mean"
    hierarchies = request.hierarchies
    sets = [request.partitioner.publishes_value_sets and hierarchies[c].source == "flat"
            for c in cols.cat_cols]
    gen = generalize(cols.numeric, cols.codes, cols.tables, labels, numeric_mode=aggregation,
                     categorical_sets=sets)
    published = df.drop(columns=list(request.identifiers))
    constant = (cols.numeric.max(axis=0) == cols.numeric.min(axis=0) if cols.num_cols
                else np.zeros(0, bool))
    if constant.any():  # a mean of 0.1s is not always 0.1: constants are published exactly
        gen.numeric[:, constant] = cols.numeric[:, constant]
    for j, col in enumerate(cols.num_cols):
        if j >= cols.n_plain:  # ordinal: the median category, or the category range
            published[col] = _ordinal_representative(df[col], labels, aggregation)
        elif aggregation == "mean":
            published[col] = gen.numeric[:, j]
        else:
            published[col] = [f"[{_number_text(a)}, {_number_text(b)}]"
                              for a, b in zip(gen.low[:, j], gen.high[:, j], strict=True)]
    for j, col in enumerate(cols.cat_cols):
        if request.categorical_aggregation == "mode":
            published[col] = _group_mode_labels(df[col], labels)
        else:
            published[col] = gen.labels[j]
    return published, gen, constant


def _verify(request: Request, final: Published, labels: NDArray[np.intp]
            ) -> tuple[dict[str, Any], NDArray[np.intp]]:
    """k, the group k, l and t, from the published table (dates back, rounded)."""
    k, sens, published = request.k, request.sensitive, final.data
    group_k = group_k_check(k, int(np.bincount(labels).min()),
                            "size of the smallest group (from the release's labels)")
    classes = final.quasi_identifier_classes(request.quasi_identifiers)
    checks: dict[str, Any] = {
        "k_anonymity": k_check(k, int(np.bincount(classes).min())),
        "group_k": group_k,
        **diversity_checks(classes, published_sensitive(published, classes, sens), sens,
                           request.l, request.diversity, request.diversity_c),
        **closeness_checks(classes, request.closeness, request.t),
    }
    if final.rounding is not None:
        checks["rounding"] = final.rounding
    return checks, classes


def _measure(request: Request, cols: _Columns, gen: Any, labels: NDArray[np.intp],
             classes: NDArray[np.intp], published: pd.DataFrame, constant: NDArray[np.bool_]
             ) -> dict[str, Any]:
    numeric, tables, aggregation = cols.numeric, cols.tables, request.aggregation or "mean"
    spans = numeric.max(axis=0) - numeric.min(axis=0) if cols.num_cols else np.zeros(0)
    lo, hi = (gen.low, gen.high)
    if aggregation == "mean" and cols.num_cols:  # the class's interval, for the loss measures
        spans_of = generalize(numeric, None, (), labels, numeric_mode="interval")
        lo, hi = spans_of.low, spans_of.high
    metrics: dict[str, Any] = {
        "il_omega": il_omega(lo, hi, spans, gen.nodes, tables),
        "il_omega_normalized": il_omega(lo, hi, spans, gen.nodes, tables, normalized=True),
        "ncp": normalized_certainty_penalty(lo, hi, spans, gen.nodes, tables,
                                            covered=gen.covered),
        "utility_loss": utility_loss(labels, numeric if cols.num_cols else None,
                                     [request.data[c].to_numpy() for c in cols.cat_cols]),
        "privacy_of_quasi_identifiers": privacy_of_quasi_identifiers(classes),
        "query_answering": MappingProxyType(query_answering(
            numeric, gen.low, gen.high, cols.codes, gen.nodes, tables, k=request.k,
            random_state=0)),
        **group_size_summary(labels),
    }
    n_plain = cols.n_plain
    if n_plain and aggregation == "mean":
        scaler = fit_scaler(numeric[:, :n_plain], "standard")
        shown = published_numbers(gen.numeric[:, :n_plain], cols.num_cols[:n_plain], request)
        metrics["information_loss"] = information_loss(  # on the numbers as published
            apply_scaler(numeric[:, :n_plain], scaler), apply_scaler(shown, scaler))
        metrics["information_loss_columns"] = tuple(
            c for c, const in zip(cols.num_cols[:n_plain], constant, strict=False)
            if not const)
    if request.sensitive:
        metrics.update(sensitive_metrics(classes, published, request.sensitive))
        metrics["privacy_of_release"] = privacy_of_release(
            metrics["privacy_of_quasi_identifiers"], metrics["privacy_of_sensitive"])
    return metrics


def _notes(request: Request, cols: _Columns, labels: NDArray[np.intp], ncp: float
           ) -> list[str]:
    notes = [
        f"Quasi-identifier {c!r} is not numeric and has no hierarchy: a flat one is used "
        "(a group shows its value when all its records share it, '*' otherwise)."
        for c in cols.cat_cols
        if request.hierarchies[c].source == "flat"
        and request.categorical_aggregation == "generalize"]
    partitioner = request.partitioner
    cause = [name for name, on in (("l-diversity", request.l is not None),
                                   ("t-closeness", bool(request.closeness))) if on]
    advice = low_utility_message(
        labels, request.k, ncp, loss_name="NCP", method=partitioner.name,
        alternative=None if partitioner.fixed_size else
        "mdav-categorical" if cols.cat_cols or cols.num_cols[cols.n_plain:] else "mdav",
        cause=(f"{' and '.join(cause)} merged groups to reach the required level; a lower "
               "level (or fewer sensitive columns) keeps more.") if cause else None,
        sensitive=partitioner.needs_sensitive)
    if advice:
        warn_user(notes, advice, LowUtilityWarning)
    return notes


def run_mixed(request: Request) -> Release:
    """Run a generalizing request (:attr:`Request.kind` ``"mixed"``)."""
    timings: dict[str, float] = {}
    partitioner = request.partitioner
    seed, rng = resolve_seed(request.random_state)
    request, record = prepare_missing(request)
    if missing_mask(request).any():
        return _run_patterns(request, record, seed, rng, timings)
    cols = _split_columns(request, partitioner.name)
    labels, params = _partition(request, cols, rng, timings)
    t = time.perf_counter()
    published, gen, constant = _publish(request, cols, labels)
    table = published_missing(published, record.category)
    timings["aggregate"] = time.perf_counter() - t
    final = publish(table, request, timings)
    t = time.perf_counter()
    checks, classes = _verify(request, final, labels)
    timings["verify"] = time.perf_counter() - t
    t = time.perf_counter()
    metrics = _measure(request, cols, gen, labels, classes, final.data, constant)
    notes: list[str] = []
    record.warn(notes)
    notes += _notes(request, cols, labels, metrics["ncp"])
    timings["measure"] = time.perf_counter() - t
    n_plain = cols.n_plain
    return assemble(request, data=final.data, labels=labels, seed=seed,
                    findings=Findings(checks, metrics, notes, timings),
                    params=_params(request, record, (cols.num_cols[:n_plain],
                                                     cols.num_cols[n_plain:], cols.cat_cols),
                                   params),
                    steps=_steps(request, table, labels, metrics))


def _steps(request: Request, table: pd.DataFrame, labels: NDArray[np.intp],
           metrics: dict[str, Any]) -> tuple[Any, ...]:
    """``Release.steps``: the one step's record; its information loss is the NCP in percent
    (the loss of generalized values)."""
    from ..steps.microaggregate import step_record

    assert request.plan is not None  # every built Request has one
    qi = list(request.quasi_identifiers)
    original = request.data.loc[:, qi]
    return (step_record(request.plan.steps[0], original, original, table.loc[:, qi],
                        [labels], loss=100.0 * float(metrics["ncp"])),)


def _params(request: Request, record: MissingRecord,
            kinds: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
            params: dict[str, Any]) -> MappingProxyType[str, Any]:
    partitioner = request.partitioner
    return MappingProxyType({
        "method": partitioner.name,
        "k": request.k,
        "quasi_identifiers": request.quasi_identifiers,
        "numeric_quasi_identifiers": kinds[0],
        "ordinal_quasi_identifiers": kinds[1],
        "categorical_quasi_identifiers": kinds[2],
        "categorical_aggregation": request.categorical_aggregation,
        "hierarchies": MappingProxyType({c: request.hierarchies[c].source for c in kinds[2]}),
        "sensitive": request.sensitive,
        "identifiers": request.identifiers,
        "aggregation": request.aggregation,
        "method_params": MappingProxyType({**partitioner.params, **params}),
        **privacy_params(request),
        "missing": record.params(),
        "microagg_version": __version__,
    })


def _run_patterns(request: Request, record: MissingRecord, seed: int,
                  rng: np.random.Generator, timings: dict[str, float]) -> Release:
    """Each missingness pattern generalized on its observed quasi-identifiers."""
    qi = request.quasi_identifiers
    t = time.perf_counter()
    plan = plan_mixed(request, record)
    pieces = Pieces.empty(request)
    labels = np.zeros(len(request.data), dtype=np.intp)
    offset, params, kinds = 0, dict(request.method_params), ((), (), ())
    for j, missing in enumerate(plan.missing):
        rows = plan.rows(j)
        observed = tuple(c for c, m in zip(qi, missing, strict=True) if not m)
        sub_labels = np.zeros(rows.size, dtype=np.intp)
        if observed:
            sub = restricted_request(request, rows, observed)
            cols = _split_columns(sub, sub.partitioner.name)
            sub_labels, params = _partition(sub, cols, rng, timings)
            published, gen, constant = _publish(sub, cols, sub_labels)
            pieces.add(rows, published, observed)
            pieces.metrics.append((rows.size, _measure(
                sub, cols, gen, sub_labels, published_classes(published, observed),
                published, constant)))
            kinds = tuple(tuple(dict.fromkeys((*a, *b)))  # type: ignore[assignment]
                          for a, b in zip(kinds, (cols.num_cols[:cols.n_plain],
                                                  cols.num_cols[cols.n_plain:],
                                                  cols.cat_cols), strict=True))
        labels[rows] = sub_labels + offset
        offset += int(sub_labels.max()) + 1
    timings["partition_and_aggregate"] = time.perf_counter() - t
    table = pieces.into(request.data.drop(columns=list(request.identifiers)),
                        record.category)
    final = publish(table, request, timings)
    t = time.perf_counter()
    checks, classes = _verify(request, final, labels)
    timings["verify"] = time.perf_counter() - t
    metrics = weighted_metrics(pieces, labels, classes)
    if request.sensitive:
        metrics.update(sensitive_metrics(classes, final.data, request.sensitive))
    notes: list[str] = []
    record.warn(notes)
    return assemble(request, data=final.data, labels=labels, seed=seed,
                    findings=Findings(checks, metrics, notes, timings),
                    params=_params(request, record, kinds, params),
                    steps=_steps(request, table, labels, metrics))
