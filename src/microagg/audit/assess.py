"""Assess a release made elsewhere: rebuild a :class:`~microagg.release.Release` from an
original table and its published version, for ``microagg report``.

Everything is re-derived from the two tables: the equivalence classes of identical published
quasi-identifiers (:func:`microagg._pipeline.verify.published_classes`, the one verifier's)
stand for the groups, k / l / t come from :func:`microagg.audit.check.check_table`,
and the information loss and linkage risk compare the numeric quasi-identifiers row by row
(z-scores of the original, as :func:`microagg.anonymize` does). An original with missing
values is accepted as it is; a release with a non-numeric quasi-identifier is then measured
per missingness pattern, as the release measures it (:mod:`microagg.audit._review_patterns`). A microagg summary JSON, when
given, adds the parameters, seed and warnings the release was made with; its figures are not
trusted but recomputed. The NCP is measured over the published classes, not over the
release's groups (not published): where two groups publish the same values the review's NCP
is larger, and says so (:func:`ncp_basis`).
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._base.validation import check_k
from .._pipeline.kept import weight_treated
from .._pipeline.notes import Note
from .._pipeline.plan_review import plan_checks
from .._pipeline.review import Unmasked, as_released, reading_of, review_checks
from .._pipeline.rules import load_hierarchies
from .._pipeline.verify import published_classes
from ..aggregate.generalize import generalize
from ..exceptions import PrivacyLeakWarning, SchemaError
from ..hierarchy import Hierarchy
from ..metrics import (
    dld_risk,
    group_size_summary,
    il1s,
    information_loss,
    moment_changes,
    normalized_certainty_penalty,
)
from ..metrics.headline import column_losses
from ..release import DLD_SAMPLE, DLD_SAMPLE_ABOVE, Release
from ..steps import Plan
from ._review_patterns import pattern_losses
from ._review_survey import SurveyRoles, review_survey_risk, survey_roles_of
from .check import check_table

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema

__all__ = ["UNKNOWN_SEED", "assess_release", "load_summary", "ncp_basis", "ncp_of_classes",
           "numeric_measures"]

UNKNOWN_SEED = -1
"""The ``seed`` of an assessed release whose summary does not give one."""


def load_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a release summary written by ``--summary-json`` (or :meth:`Release.to_json`).

    Raises
    ------
    ValueError
        If the file is not JSON or not an object with ``params``.
    """
    file = pathlib.Path(path).expanduser()
    try:
        summary = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(file)!r} is not JSON: {exc}") from exc
    if not isinstance(summary, dict) or not isinstance(summary.get("params"), dict):
        raise ValueError(f"{str(file)!r} is not a microagg release summary (no 'params').")
    return summary


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def assess_release(original: pd.DataFrame, published: pd.DataFrame, *,  # noqa: PLR0913 - keyword-only options, the survey roles named as anonymize's
                   quasi_identifiers: Sequence[str], sensitive: Sequence[str] = (),
                   summary: Mapping[str, Any] | None = None, k: int | None = None,
                   hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None = None,
                   schema: Schema | None = None, weight: str | None = None,
                   household: str | None = None, strata: str | None = None) -> Release:
    """A :class:`~microagg.release.Release` re-derived from an original and a published table.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before masking.
    published : pandas.DataFrame
        The released table: the same records in the same order (microagg keeps the order; a
        release that shuffled its rows cannot be compared record by record).
    quasi_identifiers : sequence of str
        Columns present in both tables.
    sensitive : sequence of str, default=()
        Published sensitive columns, for l, t and homogeneity.
    summary : mapping, optional
        A release summary (:func:`load_summary`): its params, seed and warnings are shown.
    k : int, optional
        The k the published file must reach (``microagg report -k``), ``k >= 2``; it
        replaces the summary's. Without either, the achieved level is only reported.
    hierarchies : mapping of str to Hierarchy or path, optional
        The categorical quasi-identifiers' hierarchies, as given to
        :func:`microagg.anonymize`, for the NCP; a flat one for a column without.
    schema : Schema, optional
        The schema the release was made with: its date quasi-identifiers are compared as
        days and its ordinal ones by rank, as the release measured them
        (:func:`~microagg._pipeline.review.as_released`; the summary's ``params["dates"]``
        too), so that the figures are the release's own. Its ``[[steps]]`` (a plan) are
        judged as the release judged them (:mod:`microagg._pipeline.plan_review`): each
        step's verifier on the two tables (``checks["steps"]``) and, without ``k`` or a
        summary, the k the plan requires (a one-step plan's; none over the keys of a plan of
        several steps). ``quasi_identifiers`` are then the plan's keys.
    weight, household, strata : str, optional
        The survey roles (the sampling weight, the household id, the strata), each by
        default the summary's (``params``), else the schema's. With any of them the review
        carries ``metrics["survey_risk"]``, the release's own figures before and after
        through the same function (:mod:`microagg.audit._review_survey`): the household
        risk after masking on the published household column, else on the original's row
        for row (left out for a release whose summary gives a noisy aggregation), as the
        release measures it. ``params`` then name the roles used.

    Returns
    -------
    Release
        ``labels`` are the published equivalence classes; ``checks`` and ``metrics`` are
        recomputed; ``seed`` is the summary's or :data:`UNKNOWN_SEED`. A release with a
        quasi-identifier that is not numeric in both tables also gets ``ncp``
        (:func:`ncp_of_classes`), its headline loss, measured over the published classes:
        the release's own figure only when they are its groups, which the files cannot
        always tell (``metrics["ncp_measured_on"]`` says which, :func:`ncp_basis`).
        ``params["keep"]`` and ``checks["household_relinking"]`` are judged by the
        release's own functions (:func:`~microagg._pipeline.review.review_checks` with the
        k, the weight and the households the review knows), so that the verdict is the
        release's word for word.

    Raises
    ------
    SchemaError
        If a column is missing from either table (named), or the row counts differ, or a
        numeric quasi-identifier holds an infinite value, or a hierarchy lacks a value, or a
        survey role names an unknown column or holds values it may not (a weight not a
        finite number > 0; the column and the allowed range named). Missing values (NaN)
        are accepted and not counted (:func:`numeric_measures`).
    ValueError
        If ``k`` is not an int >= 2 or exceeds the number of rows.

    Examples
    --------
    >>> original = pd.DataFrame({"age": [30.0, 32.0, 50.0, 54.0]})
    >>> published = pd.DataFrame({"age": [31.0, 31.0, 52.0, 52.0]})
    >>> release = assess_release(original, published, quasi_identifiers=["age"])
    >>> release.k, round(release.metrics["information_loss"], 3)  # 100 * 10 / 451
    (2, 2.217)
    """
    qi = list(quasi_identifiers)
    sens = list(sensitive)
    _check_tables(original, published, qi, sens)
    params: dict[str, Any] = dict(summary.get("params", {})) if summary else {}
    reading = reading_of(schema, qi, params)
    params.setdefault("dates", {c: {"format": f or "ISO 8601"} for c, f in reading[0].items()})
    original, published = as_released(original, reading), as_released(published, reading)
    result = check_table(published, quasi_identifiers=qi, sensitive=sens)
    labels = published_classes(published, qi)
    if k is not None:
        params["k"] = check_k(k, n_samples=len(published), caller="report")
    params.setdefault("quasi_identifiers", qi)
    params.setdefault("sensitive", sens)
    params.setdefault("method", "unknown (assessed from the files)")
    params.setdefault("k", None)
    # a schema's plan: each step checked, and its k as the release's (without -k or summary)
    plan_required, steps, _ = plan_checks(schema, published, qi, original)
    required_k = _promised_k(summary, params, k, plan_required)
    if schema is not None and schema.plan is not None:
        params.setdefault("plan", schema.plan.to_records())
    roles = survey_roles_of(SurveyRoles(weight, household, strata), params, schema)
    k_entry, steps = _summary_plan(summary, (original, published), qi, params, roles,
                                   k is not None) if not (steps or plan_required) \
        else (None, steps)
    checks, params["keep"], _ = review_checks(
        published, qi, sens, required_k, steps=steps, k_entry=k_entry,
        known=_unmasked(original, published, params, roles, required_k, schema))
    for col in sens:
        checks[f"l_diversity ({col})"] = {"required": None,
                                          "achieved": result.l_diversity[col]["distinct"],
                                          "model": "distinct l-diversity of " + col}
        checks[f"t_closeness ({col})"] = {"required": None,
                                          "achieved": result.t_closeness[col],
                                          "model": "t-closeness (EMD) of " + col}
    numeric = [c for c in qi if _numeric(original[c]) and _numeric(published[c])]
    metrics: dict[str, Any] = {**group_size_summary(labels),
                               "class_risk": result.risk["mean"],
                               "share_in_classes_below_5": result.risk[
                                   "share_in_classes_below_5"]}
    if numeric:
        metrics.update(numeric_measures(original[numeric].to_numpy(dtype=np.float64),
                                        published[numeric].to_numpy(dtype=np.float64)))
    if numeric and len(numeric) < len(qi) and "dld_risk" in metrics:
        # a distance linkage over the numeric columns alone ignores the categories an
        # intruder also holds: not the headline risk of a mixed release (the class risk is)
        metrics["dld_risk_numeric_only"] = metrics.pop("dld_risk")
    if sens:
        metrics["homogeneity"] = {col: result.homogeneity[col] for col in sens}
    _survey_measures(original, published, qi, roles, params, metrics,
                     _risk_k(params, required_k, schema))
    warnings = tuple(summary.get("warnings", ())) if summary else ()
    other = [c for c in qi if c not in numeric]
    if other:
        warnings += _ncp_measures(original, published, qi, numeric, labels, hierarchies,
                                  metrics, summary)
    nominal = [c for c in other if c not in reading[1]]
    if nominal:
        warnings += (Note(f"Quasi-identifier(s) {nominal} are not numeric in both tables: "
                          "they are compared by category (no SSE/SST, no linkage distance).",
                          UserWarning),)
    if required_k is not None and result.k < int(required_k):
        warnings = (Note(f"The published file is NOT {required_k}-anonymous: its smallest "
                         f"class has {result.k} record(s).", PrivacyLeakWarning), *warnings)
    seed = summary.get("seed") if summary else None
    return Release.of(data=published, labels=labels, params=params, layout="assessed",
                      seed=int(seed) if isinstance(seed, int) else UNKNOWN_SEED,
                      checks=checks, metrics=metrics, warnings=warnings)


def _summary_plan(summary: Mapping[str, Any] | None, tables: tuple[pd.DataFrame, pd.DataFrame],
                  qi: list[str], params: Mapping[str, Any], roles: SurveyRoles,
                  k_given: bool) -> tuple[Mapping[str, Any] | None, tuple[Any, ...]]:
    """The k check and step checks of the plan the summary recorded (``params["plan"]``:
    ``microagg anonymize --step``), judged as the release judged them
    (:func:`~microagg._pipeline.plan_review.summary_plan_checks`) on ``tables`` (the
    original, the published); ``(None, ())`` without a summary, or for a release made
    without a plan of steps.
    With ``k_given`` (``-k``), the k required is ``params["k"]``, not the plan's."""
    from .._pipeline.plan_review import summary_plan, summary_plan_checks
    from ..steps._state import StepRoles

    plan = None if summary is None else summary_plan(params)
    if summary is None or plan is None:
        return None, ()
    step_roles = StepRoles(
        quasi_identifiers=tuple(qi), sensitive=tuple(params.get("sensitive") or ()),
        identifiers=tuple(params.get("identifiers") or ()), weight=roles.weight,
        household=roles.household, strata=() if roles.strata is None else (roles.strata,),
        dates=tuple(str(c) for c in params.get("dates") or ()))
    k_entry, steps = summary_plan_checks(plan, summary, *tables, step_roles)
    if k_given:
        k_entry = {**k_entry, "required": params["k"]}
    return k_entry, steps


def _ncp_measures(original: pd.DataFrame, published: pd.DataFrame, qi: list[str],
                  numeric: list[str], labels: NDArray[np.intp], hierarchies: Any,
                  metrics: dict[str, Any], summary: Mapping[str, Any] | None
                  ) -> tuple[str, ...]:
    """The NCP of a release with a non-numeric quasi-identifier into ``metrics``, with what
    it is measured over (:func:`ncp_basis`: the published classes, against the summary's
    groups); with missing values each missingness pattern measured and weighted as the
    release does (:func:`~microagg.audit._review_patterns.pattern_losses`, which also gives
    SSE/SST). The notes to add."""
    if original[qi].notna().all(axis=None) and published[qi].notna().all(axis=None):
        metrics["ncp"] = ncp_of_classes(original, published, qi, labels, hierarchies)
    else:
        metrics.update(pattern_losses(original, published, qi, numeric, labels, hierarchies))
    if "ncp" not in metrics:
        return (Note("No record has an observed quasi-identifier: no NCP.", UserWarning),)
    groups = ((summary or {}).get("metrics") or {}).get("n_groups")
    metrics["ncp_measured_on"] = ncp_basis(int(metrics["n_groups"]),
                                           groups if isinstance(groups, int) else None)
    return ()


def ncp_basis(classes: int, groups: int | None) -> str:
    """What a review's NCP is measured over, in words (``metrics["ncp_measured_on"]``).

    A release measures its NCP over the groups it made (:func:`microagg.anonymize`,
    ``microagg._pipeline.mixed``); their labels are not published. The review measures it
    over the classes of identical published quasi-identifiers
    (:func:`ncp_of_classes`): two groups that publish the same values (equal means, or
    means made equal by rounding) are one class there, whose intervals span both groups,
    so the review's NCP is then larger than the release's and cannot be made equal from the
    two files. With as many classes as the release made groups (``groups``, the summary's
    ``metrics["n_groups"]``) the classes are the groups and the figure is the release's.

    Examples
    --------
    >>> ncp_basis(988, 988)
    "the 988 classes of identical published records, the release's 988 groups"
    """
    if groups == classes:
        return f"the {classes:,} classes of identical published records, the release's " \
               f"{groups:,} groups"
    told = (f"not the release's {groups:,} groups" if groups is not None
            else "not the release's groups")
    return (f"the {classes:,} classes of identical published records, {told}: the groups "
            "are not published, and groups that publish the same values are one class "
            "here, so this NCP is at least the release's")


def _promised_k(summary: Mapping[str, Any] | None, params: Mapping[str, Any], k: int | None,
                plan_required: int | None) -> int | None:
    """The k a release promised: ``k`` (``-k``) when given; else its summary's
    ``checks["k_anonymity"]["required"]`` (a noisy release asks for groups of k but promises
    no k-anonymity), else ``params["k"]``; without a summary, a schema plan's
    (``plan_required``, :func:`~microagg._pipeline.plan_review.plan_k`) when there is one."""
    if k is not None:
        return params["k"]
    if summary is None and plan_required is not None:
        return plan_required
    k_entry = ((summary or {}).get("checks") or {}).get("k_anonymity")
    if isinstance(k_entry, Mapping) and "required" in k_entry:
        required = k_entry["required"]
        return int(required) if isinstance(required, int) else None
    return params.get("k")


def _survey_measures(original: pd.DataFrame, published: pd.DataFrame, qi: list[str],
                     roles: SurveyRoles, params: dict[str, Any], metrics: dict[str, Any],
                     k: int | None) -> None:
    """``metrics["survey_risk"]`` as the release measures it, and the roles it used into
    ``params``, when a survey role is given or the summary's or schema's
    (:func:`~microagg.audit._review_survey.review_survey_risk`)."""
    survey = review_survey_risk(original, published, keys=qi, roles=roles, params=params,
                                k=k)
    if survey is not None:
        metrics["survey_risk"] = survey
        params.update(weight=roles.weight, household=roles.household, strata=roles.strata)


def _unmasked(original: pd.DataFrame, published: pd.DataFrame, params: Mapping[str, Any],
              roles: SurveyRoles, required_k: int | None, schema: Schema | None) -> Unmasked:
    """What the review knows of how the release judged its columns published unchanged:
    the k it was asked for (``params["k"]``, else the k required), the weight when
    published, the original's household id of each row, and whether a step of its plan
    (the summary's, else the schema's) treats the weight."""
    household = roles.household if roles.household in original.columns else None
    plan = schema.plan if schema is not None else None
    if params.get("plan") and roles.weight is not None and household is not None:
        plan = Plan.from_records(params["plan"])  # only a weight with households is judged
    k = params.get("k")
    return Unmasked(
        k=int(k) if isinstance(k, int) else required_k,
        weight=roles.weight if roles.weight in published.columns else None,
        household=household,
        household_ids=None if household is None else original[household],
        treated=weight_treated(plan, roles.weight))


def _risk_k(params: Mapping[str, Any], required_k: int | None, schema: Schema | None
            ) -> int | None:
    """The k the release's survey risk counted beside 2, 3 and 5 (``Request.k``): the
    params' (the summary's, or ``-k``), else the k required, else a schema plan's smallest
    promised k (2 when no step promises one), else none."""
    if isinstance(params.get("k"), int):
        return int(params["k"])
    if required_k is not None:
        return int(required_k)
    if schema is not None and schema.plan is not None:
        promised = [s.required_k for s in schema.plan.steps if s.required_k is not None]
        return min(promised, default=2)
    return None


def ncp_of_classes(original: pd.DataFrame, published: pd.DataFrame, qi: list[str],
                   classes: NDArray[np.intp],
                   hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None = None
                   ) -> float:
    """NCP of a release whose groups are its published equivalence ``classes``, on the
    original (complete) values, as :func:`microagg.anonymize` computes it for a mixed release
    (``microagg._pipeline.mixed``): the same hierarchies (:func:`load_hierarchies`: a flat
    one where none is given), ordered categoricals without one as ranks, each class's
    interval and common node (:func:`~microagg.aggregate.generalize.generalize`), and value sets
    where a flat column publishes them (CDT), then
    :func:`~microagg.metrics.normalized_certainty_penalty`.
    """
    loaded = load_hierarchies(original, tuple(qi), (), hierarchies)[0]
    ordinal = [c for c in qi if c in loaded and loaded[c].source == "flat"
               and isinstance(dtype := original[c].dtype, pd.CategoricalDtype)
               and bool(dtype.ordered)]
    cat_cols = [c for c in qi if c in loaded and c not in ordinal]
    n = len(original)
    columns = [original[c].to_numpy(dtype=np.float64) for c in qi if c not in loaded] + [
        original[c].cat.codes.to_numpy().astype(np.float64) for c in ordinal]
    numeric = np.column_stack(columns) if columns else np.zeros((n, 0))
    tables = [loaded[c].tables() for c in cat_cols]
    codes = (np.column_stack([loaded[c].encode(original[c].to_numpy()) for c in cat_cols])
             if cat_cols else np.zeros((n, 0), dtype=np.intp))
    sets = [loaded[c].source == "flat" and not published[c].dropna().astype(str).isin(
        t.node_labels).all() for c, t in zip(cat_cols, tables, strict=True)]
    gen = generalize(numeric, codes, tables, classes, numeric_mode="interval",
                     categorical_sets=sets)
    spans = numeric.max(axis=0) - numeric.min(axis=0)
    return normalized_certainty_penalty(gen.low, gen.high, spans, gen.nodes, tables,
                                        covered=gen.covered)


def _check_tables(original: pd.DataFrame, published: pd.DataFrame, qi: list[str],
                  sens: list[str]) -> None:
    """Every named column in both tables, and the same number of rows."""
    for name, table, columns in (("original", original, qi),
                                 ("published", published, [*qi, *sens])):
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise SchemaError(f"Column(s) {', '.join(map(repr, missing))} are not in the "
                              f"{name} table; its columns: "
                              f"{', '.join(map(str, table.columns))}.")
    if len(original) != len(published):
        raise SchemaError(f"The original has {len(original):,} rows but the published table "
                          f"{len(published):,}; the report compares them record by record.")


def numeric_measures(values: NDArray[np.float64], masked: NDArray[np.float64]
                     ) -> dict[str, Any]:
    """SSE/SST (on z-scores and in original units), DLD, IL1s and the moment changes of the
    numeric quasi-identifiers, counted on the observed cells.

    Without missing values these are the figures :func:`microagg.anonymize` reports. With
    missing values (NaN in either table; the original's own gaps, or cells left missing by
    the release), SSE/SST on z-scores is the mean over the columns of each column's loss on
    its observed cells (:func:`~microagg.metrics.headline.column_losses`; the same number
    when nothing is missing), SSE/SST in original units sums those cells, and the
    multivariate measures (DLD, IL1s, moments) use the records observed in every column,
    their count reported as ``complete_records``.
    """
    seen = np.isfinite(values) & np.isfinite(masked)
    if np.isinf(values).any() or np.isinf(masked).any():
        bad = int((np.isinf(values) | np.isinf(masked)).sum())
        raise SchemaError(f"The numeric quasi-identifiers hold {bad} infinite value(s); "
                          "the comparison needs finite values or missing ones (NaN).")
    complete = seen.all(axis=1)
    metrics: dict[str, Any] = {}
    if not seen.all():
        losses = column_losses(values, masked)
        kept = losses[np.isfinite(losses)]
        sse = np.nansum(np.where(seen, (values - masked) ** 2, 0.0))
        centered = np.where(seen, values - np.nanmean(np.where(seen, values, np.nan), axis=0),
                            0.0)
        sst = float((centered ** 2).sum())
        metrics.update({
            "information_loss": float(kept.mean()) if kept.size else 0.0,
            "information_loss_original_units": 100.0 * float(sse) / sst if sst else 0.0,
            "complete_records": int(complete.sum())})
    values, masked = values[complete], masked[complete]
    if len(values) < 2:
        return metrics
    scale = values.std(axis=0)
    scale[scale == 0] = 1.0
    center = values.mean(axis=0)
    scaled, masked_scaled = (values - center) / scale, (masked - center) / scale
    if "information_loss" not in metrics:
        metrics.update({
            "information_loss": information_loss(scaled, masked_scaled),
            "information_loss_original_units": information_loss(values, masked)})
    return metrics | {
        "dld_risk": dld_risk(scaled, masked_scaled, sample=(
            DLD_SAMPLE if len(values) > DLD_SAMPLE_ABOVE else None)),
        "il1s": il1s(values, masked),
        **moment_changes(values, masked),
    }
