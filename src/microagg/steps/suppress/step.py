"""The suppression steps in a plan (:data:`microagg.steps.STEPS` ``"suppress"`` and
``"suppress_risk"``): the adapters from a :class:`~microagg.steps._state.PlanState` and the
request's roles to the cores (:func:`~.core.apply_suppress`,
:func:`~.risk.apply_suppress_risk`, :mod:`.verify`), and the checkers that refuse what they
cannot run before any step does (sdcMicro's ``localSuppression`` and ``localSupp``, Templ,
Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).

A suppressed cell is a missing value of its column's own dtype (a category column keeps its
categories; text and codes become missing): published empty in CSV, null in Parquet, system
missing in SPSS and Stata, value labels kept (:mod:`microagg.io`).

Two counts of k appear in a release with a ``suppress`` step. The step's check counts its
keys under the step's ``missing`` semantics (``"any"``, sdcMicro's: a missing value matches
every value; ``"category"``: it is a category), within strata: that is what the verdict
relies on. ``checks["k_anonymity"]`` counts all the plan's keys on the whole table with a
missing value as a category of its own; the step's check reports that figure on its keys
too (``achieved_missing_as_category``), and the release carries a note when it is below
the step's k.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .core import _check_households, apply_suppress
from .options import SuppressRisk, SuppressToK
from .risk import apply_suppress_risk
from .verify import verify_suppress, verify_suppress_risk

if TYPE_CHECKING:  # pragma: no cover
    from .._plan import Plan
    from .._state import PlanState, StepRoles

__all__ = ["apply_suppress_risk_step", "apply_suppress_step", "check_suppress_risk_step",
           "check_suppress_step", "household_level_of", "verify_suppress_risk_step",
           "verify_suppress_step"]

_JOINED = "\x1fstrata"
"""The name of the column that joins several strata columns into one (the cores take one)."""


def _with_strata(table: pd.DataFrame, strata: tuple[str, ...]) -> tuple[pd.DataFrame, str | None]:
    """``table`` and the one strata column the cores read: none, the one, or several joined
    into one more column (each combination of their values a stratum)."""
    if len(strata) <= 1:
        return table, strata[0] if strata else None
    parts = table.loc[:, list(strata)]
    joined = parts.astype(str).agg("\x1f".join, axis=1).where(parts.notna().all(axis=1))
    return table.assign(**{_JOINED: joined.to_numpy(dtype=object)}), _JOINED


def _where(options: SuppressToK | SuppressRisk, position: int) -> str:
    return f"Step {position} of the plan ({options.name})"


def _check_keys(options: SuppressToK | SuppressRisk, table: pd.DataFrame, position: int,
                plan: Plan) -> None:
    """Keys the table has, categorical unless an earlier step of the plan changes them."""
    where = _where(options, position)
    absent = [key for key in options.keys if key not in table.columns]
    if absent:
        raise SchemaError(f"{where} names key(s) {absent!r} that the table does not have; its "
                          f"columns are {[str(c) for c in table.columns]!r}.")
    earlier = {c for step in plan.steps[:position - 1] for c in step.columns}
    for key in options.keys:
        dtype = table[key].dtype
        if key in earlier or not pd.api.types.is_numeric_dtype(dtype) \
                or pd.api.types.is_bool_dtype(dtype):
            continue
        raise SchemaError(
            f"{where}: key {key!r} is numeric ({dtype}, {table[key].nunique()} distinct "
            "values); local suppression blanks categories of categorical keys. Give it as "
            f"categories (df[{key!r}].astype('category'), or type = \"categorical\" in the "
            "schema), or band it in an earlier step.")


def _check_strata(options: SuppressToK | SuppressRisk, table: pd.DataFrame, position: int,
                  roles: StepRoles | None, largest: int) -> None:
    """Strata complete, and each at least as large as the largest k."""
    where = _where(options, position)
    strata = () if roles is None else tuple(s for s in roles.strata if s in table.columns)
    work, column = _with_strata(table.loc[:, list(strata)], strata)
    if column is None:
        if len(table) < largest:
            raise SchemaError(f"{where}: k={largest} is larger than the table, which has "
                              f"{len(table)} record(s); k must be in [2, {len(table)}].")
        return
    holes = int(work[column].isna().sum())
    if holes:
        raise SchemaError(f"{where}: the strata {list(strata)!r} have {holes} record(s) "
                          "with a missing value; every record needs its stratum.")
    counts = work[column].value_counts()
    if int(counts.min()) < largest:
        smallest = counts.idxmin()
        label = work.loc[work[column] == smallest, list(strata)].iloc[0].tolist()
        raise SchemaError(f"{where}: k={largest} is larger than stratum {label!r} of "
                          f"{list(strata)!r}, which has {int(counts.min())} record(s); k must "
                          f"be in [2, {int(counts.min())}] (the smallest stratum).")


def check_suppress_step(options: SuppressToK, table: pd.DataFrame, position: int, plan: Plan,
                        *, roles: StepRoles | None = None) -> None:
    """Refuse, before any step runs: keys the table lacks, a numeric key, k above the table
    or a stratum, household-level keys without the release's household column or that vary
    within a household (the options refused an importance naming other columns, and
    household keys with the exact mode, when they were built)."""
    _check_keys(options, table, position, plan)
    _check_strata(options, table, position, roles, max(k for _, k in options.requirements))
    if not options.household_keys:
        return
    household = None if roles is None else roles.household
    if household is None:
        raise SchemaError(f"{_where(options, position)} declares household_keys "
                          f"{list(options.household_keys)!r} but the release has no "
                          "household column; give households= (a schema's role = "
                          "\"household\", the CLI's --households).")
    try:
        _check_households(table, options, household)
    except ValueError as error:
        raise SchemaError(f"{_where(options, position)}: {error}") from None


def household_level_of(options: SuppressToK, table: pd.DataFrame, roles: StepRoles
                       ) -> tuple[str, ...]:
    """The household-level keys, blanked for every member of a household at once (the
    verifier checks them constant within each household)."""
    del table, roles  # the step's own option
    return options.household_keys


def check_suppress_risk_step(options: SuppressRisk, table: pd.DataFrame, position: int,
                             plan: Plan, *, roles: StepRoles | None = None) -> None:
    """Refuse, before any step runs: keys the table lacks, a numeric key, strata with a
    missing value."""
    _check_keys(options, table, position, plan)
    _check_strata(options, table, position, roles, 1)


def _k_as_category(published: pd.DataFrame, keys: tuple[str, ...]) -> int:
    """The smallest class of identical published keys, a missing value a category (the
    release's count, :func:`microagg._pipeline.verify.published_classes`)."""
    from ..._pipeline.verify import published_classes

    classes = published_classes(published, list(keys))
    return int(np.bincount(classes).min()) if classes.size else 0


def apply_suppress_step(state: PlanState, options: SuppressToK,
                        rng: np.random.Generator) -> PlanState:
    """Local suppression to k on the working table, with the request's strata (several:
    joined) and household column; the details of :func:`~.core.apply_suppress` recorded."""
    assert state.roles is not None  # PlanState.start
    table, strata = _with_strata(state.table, state.roles.strata)
    published, details = apply_suppress(table, options, rng, households=state.roles.household,
                                        weights=state.roles.weight, strata=strata)
    published = published.loc[:, list(state.table.columns)]
    notes = []
    k = options.required_k
    as_category = _k_as_category(published, options.keys)
    if options.missing == "any" and k is not None and as_category < k:
        notes.append(f"Step {len(state.history) + 1} of the plan (suppress) makes "
                     f"{list(options.keys)} {k}-anonymous with a missing value matching any "
                     f"value (sdcMicro's rule); counted with a missing value as a category of "
                     f"its own, as checks['k_anonymity'] counts, they are {as_category}-"
                     "anonymous. Use missing='category' for k under that count.")
    return state.after_step(options, published, details=details, notes=notes)


def apply_suppress_risk_step(state: PlanState, options: SuppressRisk,
                             rng: np.random.Generator) -> PlanState:
    """Risk-threshold suppression on the working table, with the request's weight and
    strata (several: joined); the details of :func:`~.risk.apply_suppress_risk` recorded."""
    assert state.roles is not None
    table, strata = _with_strata(state.table, state.roles.strata)
    published, details = apply_suppress_risk(table, options, rng, weights=state.roles.weight,
                                             strata=strata)
    return state.after_step(options, published.loc[:, list(state.table.columns)],
                            details=details)


def _households(published: pd.DataFrame, original: pd.DataFrame,
                household: str | None) -> tuple[pd.DataFrame, str | None]:
    """``published`` with the household column (from the original, rows in the same order,
    when the release drops it), or ``None`` where neither table has it."""
    if household is None or household in published.columns:
        return published, household
    if household in original.columns and len(original) == len(published):
        return published.assign(**{household: original[household].to_numpy()}), household
    return published, None


def verify_suppress_step(options: SuppressToK, original: pd.DataFrame,
                         published: pd.DataFrame, roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~.verify.verify_suppress` on the published table with the request's strata and
    household column, and the step's keys counted as ``checks["k_anonymity"]`` counts them
    (``achieved_missing_as_category``)."""
    table, strata = _with_strata(published, roles.strata)
    table, household = _households(table, original, roles.household)
    result = dict(verify_suppress(options, original, table, households=household,
                                  strata=strata))
    subsets = result["subsets"]
    result.update({
        "required": options.required_k,
        "achieved": min(s["achieved"] for s in subsets),
        "achieved_missing_as_category": _k_as_category(published, options.keys),
        "households_checked": bool(options.household_keys) and household is not None,
        "counted": f"required/achieved: missing={options.missing!r}"
                   f"{', within strata' if strata else ''}; achieved_missing_as_category: a "
                   "missing value a category of its own, on the whole table, as "
                   "checks['k_anonymity'] counts"})
    if options.household_keys and household is None:
        result["holds"] = False
        result["households_varying"] = None
    return result


def verify_suppress_risk_step(options: SuppressRisk, original: pd.DataFrame,
                              published: pd.DataFrame, roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~.verify.verify_suppress_risk` on the published table with the request's
    weight and strata."""
    table, strata = _with_strata(published, roles.strata)
    weight = roles.weight if roles.weight in published.columns else None
    result = dict(verify_suppress_risk(options, original, table, weights=weight,
                                       strata=strata))
    result.update({"required": options.threshold, "achieved": result["max_risk"]})
    return result
