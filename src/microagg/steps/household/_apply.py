"""The household step: household-level columns made consistent within every household, the
sampling weight treated once per household (:mod:`._weight`), and its verifier.

sdcMicro's household workflow (Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4), section
4.2): the household-level variables are taken out as one row per household
(``selectHouseholdData``), protected there, and merged back to every member
(``mergeHouseholdData``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from ...metrics._survey_checks import check_households, check_strata, check_weights
from ._level import household_level_columns, per_household, relinking, varying_households
from ._weight import microaggregate_weight, round_weight, weighted_loss
from .options import Household

__all__ = ["apply_household", "verify_household"]

_TOLERANCE = 1e-9
"""Relative tolerance of the verifier's comparisons of weights and weighted counts."""


def _roles(table: pd.DataFrame, options: Household, households: str | None,
           weights: str | None, strata: str | None) -> tuple[str, tuple[str, ...]]:
    """The household id checked, and the household-level columns (declared or detected,
    the weight and the strata first when given), every role checked before any work."""
    if households is None:
        raise SchemaError("The household step needs the household id column (the "
                          "'households' role: --household COL, households= in Python, role "
                          "= \"household\" in a schema).")
    check_households(table, households, caller="the household step")
    if weights is not None:
        check_weights(table, weights, caller="the household step")
    if strata is not None:
        check_strata(table, strata, (), caller="the household step")
    if options.total is not None:
        if options.total not in table.columns:
            raise SchemaError(f"Unknown column {options.total!r} in the 'total' option of step "
                              f"'household'; available: {', '.join(map(repr, table.columns))}.")
        if not pd.api.types.is_numeric_dtype(table[options.total]):
            raise SchemaError(f"The 'total' option of step 'household' names {options.total!r}, "
                              f"which is not numeric (dtype {table[options.total].dtype}).")
    declared = options.household_columns
    found = household_level_columns(table, households, None) if not declared else declared
    roles = tuple(c for c in (weights, strata) if c is not None)
    columns = (*roles, *(c for c in found if c not in roles and c != households))
    return households, columns


def _harmonized(table: pd.DataFrame, households: str, columns: tuple[str, ...]
                ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Where a household's members hold one value and missing values (a value suppressed for
    some members), the value is suppressed for every member; two different values are an
    error (:func:`household_level_columns`)."""
    out, spread = table.copy(), {}
    for column in columns:
        varying = varying_households(table, households, column)
        if varying.empty:
            continue
        rows = table[households].isin(varying).to_numpy()
        values = table.loc[rows].groupby(households)[column].nunique(dropna=True)
        if (values > 1).any():
            household_level_columns(table, households, [column])  # raises, naming one
        before = int(out[column].isna().sum())
        out.loc[rows, column] = None if out[column].dtype == object else np.nan
        spread[column] = int(out[column].isna().sum()) - before
    return out, spread


def apply_household(table: pd.DataFrame, options: Household, rng: np.random.Generator, *,
                    households: str | None = None, weights: str | None = None,
                    strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Household-level treatment of ``table`` (see :class:`.Household`).

    Every household-level column is made consistent within each household (a value missing
    for some members, e.g. suppressed by an earlier step, is made missing for all of them),
    and the weight is treated once per household and copied to every member. ``rng`` is not
    used (the treatments are deterministic); it is taken for the steps' common signature.

    Returns
    -------
    table : DataFrame
        A new table: same rows, order and index.
    details : dict
        JSON-ready: the household-level columns, the cells made missing so that housemates
        agree, the weight's treatment with the number of distinct weights before and after,
        the loss in weighted totals (per stratum), and the re-linking measure
        (:func:`.relinking`) of every household-level column before and after.
    """
    households, columns = _roles(table, options, households, weights, strata)
    out, spread = _harmonized(table, households, columns)
    details: dict[str, Any] = {"household_level_columns": list(columns),
                               "households": int(table[households].nunique()),
                               "cells_made_missing": spread, "weight": None}
    if weights is not None and options.weight != "keep":
        sizes = table.groupby(households, sort=False).size()
        level = [weights, *(c for c in (strata,) if c is not None)]

        def treat(hh: pd.DataFrame) -> pd.DataFrame:
            if options.weight == "round":
                assert options.precision is not None  # checked by the options
                return hh[[weights]].assign(**{weights: round_weight(
                    hh[weights], options.precision, column=weights)})
            return hh[[weights]].assign(**{weights: microaggregate_weight(
                hh[weights], sizes.loc[hh.index], hh[strata] if strata else None,
                options.k, column=weights)})

        out = per_household(out, households, level, treat)
        details["weight"] = {
            "column": weights, "treatment": options.weight, "k": options.k,
            "precision": options.precision, "strata": strata,
            "distinct_before": int(table[weights].nunique()),
            "distinct_after": int(out[weights].nunique()),
            "loss": weighted_loss(table, out, weights, strata, options.total)}
    elif weights is not None:
        details["weight"] = {"column": weights, "treatment": "keep",
                             "note": "published unchanged on purpose: where it identifies "
                                     "households, the household id is effectively published"}
    details["relinking"] = {c: {"before": relinking(table, households, c).to_dict(),
                                "after": relinking(out, households, c).to_dict()}
                            for c in columns}
    return out, details


def verify_household(options: Household, original: pd.DataFrame, published: pd.DataFrame, *,
                     households: str | None = None, weights: str | None = None,
                     strata: str | None = None) -> dict[str, Any]:
    """Re-derive the household step's promise from the published table (and the original).

    Checked: the same number of rows; every member of a household publishes the same values
    of the household-level columns (declared, or detected on the original); and the weight's
    treatment: ``microaggregate``, every published weight shared by at least ``k``
    households of its stratum and each stratum's weighted count of persons kept (relative
    tolerance 1e-9); ``round``, every weight a multiple of ``precision`` within half a
    precision of the original; ``keep``, the weight unchanged. The re-linking measure of every
    household-level column is reported (what the release must say), not judged.

    Returns
    -------
    dict
        ``model``, ``holds``, ``inconsistent`` (households varying, per column), ``weight``
        (the treatment's figures, with ``holds``) and ``relinking`` (per column).
    """
    households, columns = _roles(original, options, households, weights, strata)
    same_rows = len(original) == len(published) and original.index.equals(published.index)
    inconsistent = {c: int(varying_households(published, households, c).size)
                    for c in columns if c in published.columns}
    weight = None if weights is None else _verify_weight(options, original, published,
                                                         households, weights, strata)
    holds = (same_rows and not any(inconsistent.values())
             and len(inconsistent) == len(columns) and (weight is None or weight["holds"]))
    return {"model": "every member of a household publishes the same household-level values, "
                     "and the weight is treated as the step says",
            "holds": bool(holds), "same_rows": bool(same_rows), "inconsistent": inconsistent,
            "weight": weight,
            "relinking": {c: relinking(published, households, c).to_dict()
                          for c in columns if c in published.columns}}


def _verify_weight(options: Household, original: pd.DataFrame, published: pd.DataFrame,
                   households: str, weights: str, strata: str | None) -> dict[str, Any]:
    """The weight's promise, re-derived (see :func:`verify_household`)."""
    before = original[weights].to_numpy(np.float64)
    after = pd.to_numeric(published[weights], errors="coerce").to_numpy(np.float64)
    if options.weight == "keep":
        return {"treatment": "keep", "holds": bool(np.array_equal(before, after))}
    if options.weight == "round":
        p = float(options.precision or 1.0)
        on_grid = np.abs(after / p - np.round(after / p)) <= _TOLERANCE * np.maximum(1, after / p)
        near = np.abs(after - before) <= p / 2 * (1 + _TOLERANCE)
        return {"treatment": "round", "precision": p, "off_grid": int((~on_grid).sum()),
                "moved_too_far": int((~near).sum()), "holds": bool(on_grid.all() and near.all())}
    frame = pd.DataFrame({"h": published[households].to_numpy(), "w": after,
                          "s": published[strata].to_numpy() if strata else 0})
    sharing = frame.groupby(["s", "w"], dropna=False)["h"].nunique()
    fewest = int(sharing.min()) if sharing.size else 0
    kept = _counts_kept(original[weights], published[weights], original[strata]
                        if strata else None)
    return {"treatment": "microaggregate", "k": options.k,
            "fewest_households_per_weight": fewest,
            "weights_shared_by_fewer_than_k": int((sharing < options.k).sum()),
            "largest_stratum_count_change": kept,
            "holds": bool(fewest >= options.k and kept <= _TOLERANCE)}


def _counts_kept(before: pd.Series, after: pd.Series, stratum: pd.Series | None) -> float:
    """The largest relative change of a stratum's weighted count of persons."""
    key: Any = stratum.to_numpy() if stratum is not None else np.zeros(len(before))
    b = before.groupby(key).sum()
    a = pd.to_numeric(after, errors="coerce").groupby(key).sum()
    return float(((a - b).abs() / b.abs()).max())


def details_columns(details: Mapping[str, Any]) -> tuple[str, ...]:
    """The columns a run of the step changed (from its details)."""
    changed = [c for c, n in details.get("cells_made_missing", {}).items() if n]
    weight = details.get("weight") or {}
    if weight.get("treatment") not in (None, "keep"):
        changed.append(weight["column"])
    return tuple(changed)
