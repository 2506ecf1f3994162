"""Local suppression to k-anonymity as a step: checks, strata, households, the heuristic or
the exact mode, and the details a steward reads (sdcMicro's ``localSuppression``, Templ,
Kowarik & Meindl 2015, J. Stat. Softw. 67(4))."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .counts import class_sizes, encode
from .exact import exact_blanks
from .heuristic import greedy_blanks
from .options import SuppressToK

__all__ = ["apply_suppress", "missingness_details"]


def _check_columns(table: pd.DataFrame, names: tuple[str, ...], step: str) -> None:
    absent = [name for name in names if name not in table.columns]
    if absent:
        raise ValueError(f"Step {step!r} names column(s) {absent!r} that the table does not "
                         f"have; its columns are {list(table.columns)!r}.")


def group_codes(table: pd.DataFrame, column: str | None, what: str,
                step: str) -> NDArray[np.int64] | None:
    """Codes >= 0 of a strata or household column (none missing), or ``None``."""
    if column is None:
        return None
    _check_columns(table, (column,), step)
    codes = pd.factorize(table[column], sort=True)[0].astype(np.int64)
    if (codes < 0).any():
        raise ValueError(f"The {what} column {column!r} of step {step!r} has "
                         f"{int((codes < 0).sum())} missing value(s); every record needs "
                         f"one.")
    return codes


def importance_rank(table: pd.DataFrame, keys: tuple[str, ...],
                    importance: tuple[str, ...]) -> NDArray[np.int64]:
    """``rank[j]``, higher = less important: the given order, else sdcMicro's default (more
    categories = less important, ties in key order)."""
    if importance:
        return np.asarray([importance.index(key) for key in keys], dtype=np.int64)
    categories = [table[key].nunique(dropna=True) for key in keys]
    order = sorted(range(len(keys)), key=lambda j: (categories[j], j))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def _check_households(table: pd.DataFrame, options: SuppressToK,
                      households: str | None) -> NDArray[np.int64] | None:
    if not options.household_keys:
        return None
    if households is None:
        raise ValueError(f"Step {options.name!r} declares household_keys "
                         f"{list(options.household_keys)!r} but the release has no household "
                         "column; give households=.")
    if options.mode == "exact":
        raise ValueError(f"Step {options.name!r}: mode='exact' does not take household_keys "
                         f"{list(options.household_keys)!r}; use mode='heuristic'.")
    codes = group_codes(table, households, "household", options.name)
    for key in options.household_keys:
        values = pd.factorize(table[key], use_na_sentinel=False)[0]
        frame = pd.DataFrame({"h": codes, "v": values})
        varying = frame.groupby("h")["v"].nunique()
        bad = varying[varying > 1]
        if len(bad):
            where = table[households].iloc[int(np.flatnonzero(codes == bad.index[0])[0])]
            raise ValueError(f"The household-level key {key!r} of step {options.name!r} "
                             f"varies within {len(bad)} household(s) of {households!r} (e.g. "
                             f"household {where!r}); a household-level key must be constant "
                             f"within each household.")
    return codes


def _satisfied(current: NDArray[np.int64], requirements: Any, missing: str,
               strata: NDArray[np.int64] | None) -> bool:
    return all(class_sizes(current[:, list(subset)], missing, strata).min(initial=k) >= k
               for subset, k in requirements)


def _heuristic(codes: NDArray[np.int64], options: SuppressToK, rank: NDArray[np.int64],
               groups: list[NDArray[np.intp]], strata: NDArray[np.int64] | None,
               homes: NDArray[np.int64] | None) -> NDArray[np.int64]:
    """Greedy rounds over strata and required subsets (and household spreading) until every
    requirement holds: a blank never shrinks a class under ``"any"`` except by ``freqCalc``'s
    all-missing rule, so the rounds are repeated until the recount agrees."""
    current = codes.copy()
    hh_cols = [options.keys.index(key) for key in options.household_keys]
    for _ in range(4 * len(options.keys) + 4):
        if _satisfied(current, options.requirements, options.missing, strata):
            return current
        before = int((current < 0).sum())
        for rows in groups:
            for subset, k in options.requirements:
                cols = np.asarray(subset, dtype=np.intp)
                part = current[np.ix_(rows, cols)]
                mask = greedy_blanks(part, k, options.missing, rank[cols])
                part[mask] = -1
                current[np.ix_(rows, cols)] = part
        if homes is not None:
            for j in hh_cols:  # a household-level key is blanked for every member at once
                blanked = np.unique(homes[(current[:, j] < 0) & (codes[:, j] >= 0)])
                current[np.isin(homes, blanked), j] = -1
        if int((current < 0).sum()) == before:
            break
    if not _satisfied(current, options.requirements, options.missing, strata):
        raise RuntimeError("local suppression did not reach k on every required subset; "
                           "this is a bug, please report it")
    return current


def apply_suppress(table: pd.DataFrame, options: SuppressToK, rng: np.random.Generator, *,
                   households: str | None = None, weights: str | None = None,
                   strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Blank the fewest key cells so that every record's class holds at least k records.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; the keys categorical (object, category, or numbers read as
        factors), missing as NaN/None.
    options : SuppressToK
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic); taken for the step contract.
    households, weights, strata : str, optional
        The release's household, weight and strata columns (weights are not used by
        k-anonymity; strata: k within each stratum, as sdcMicro's ``strataVar``).

    Returns
    -------
    published : pandas.DataFrame
        A new table, same rows, order and index; only the keys changed (cells set missing).
    details : dict
        Per column the cells suppressed, their share and the association of the new
        missingness with the other keys; the mode's certificate.

    References
    ----------
    Templ, M., Kowarik, A., Meindl, B. "Statistical Disclosure Control for Micro-Data Using
    the R Package sdcMicro." J. Stat. Softw. 67(4), 2015.
    """
    del rng, weights
    _check_columns(table, options.keys, options.name)
    strata_codes = group_codes(table, strata, "strata", options.name)
    homes = _check_households(table, options, households)
    codes = encode(table, options.keys)
    groups = [np.arange(len(table))] if strata_codes is None else \
        [np.flatnonzero(strata_codes == s) for s in range(int(strata_codes.max(initial=-1)) + 1)]
    largest = max(k for _, k in options.requirements)
    for rows in groups:
        if 0 < len(rows) < largest:
            label = "the table" if strata is None else \
                f"stratum {table[strata].iloc[int(rows[0])]!r} of {strata!r}"
            raise ValueError(f"Step {options.name!r}: k={largest} is larger than {label}, "
                             f"which has {len(rows)} record(s); k must be <= {len(rows)}.")
    rank = importance_rank(table, options.keys, options.importance)
    current = _heuristic(codes, options, rank, groups, strata_codes, homes)
    certificate = None
    if options.mode == "exact":
        current, certificate = _exact(codes, current, options, groups)
    blank = (current < 0) & (codes >= 0)
    published = table.copy()
    for j, key in enumerate(options.keys):
        if blank[:, j].any():
            column = published[key]
            if isinstance(column.dtype, pd.CategoricalDtype):
                published[key] = column.where(~blank[:, j])
            else:
                published[key] = column.astype(object).where(~blank[:, j], None) \
                    if column.dtype.kind not in "fcM" else column.where(~blank[:, j])
    details: dict[str, Any] = {
        "model": f"k-anonymity on {list(options.keys)}, missing={options.missing!r}",
        "mode": options.mode, "cells_suppressed": int(blank.sum()),
        "columns": missingness_details(table, options.keys, blank)}
    if certificate is not None:
        details["exact"] = certificate
    return published, details


def _exact(codes: NDArray[np.int64], start: NDArray[np.int64], options: SuppressToK,
           groups: list[NDArray[np.intp]]) -> tuple[NDArray[np.int64], dict[str, Any]]:
    """The exact mode per stratum (time budget shared), the heuristic as first incumbent."""
    current = codes.copy()
    parts = []
    budget = options.time_limit / max(len(groups), 1)
    for rows in groups:
        sub = codes[rows]
        mask, info = exact_blanks(sub, list(options.requirements), options.missing, budget,
                                  start=(start[rows] < 0) & (sub >= 0))
        block = sub.copy()
        block[mask] = -1
        current[rows] = block
        parts.append(info)
    cells = sum(p["cells"] for p in parts)
    bound = sum(p["lower_bound"] for p in parts)
    return current, {"optimal": all(p["optimal"] for p in parts), "cells": cells,
                     "lower_bound": bound, "gap": (cells - bound) / cells if cells else 0.0,
                     "seconds": round(sum(p["seconds"] for p in parts), 3),
                     "status": sorted({p["status"] for p in parts})}


def missingness_details(table: pd.DataFrame, keys: tuple[str, ...],
                        blank: NDArray[np.bool_]) -> dict[str, Any]:
    """Per key: cells suppressed, share of the records, missing before and after, and for
    each other key the chi-square test of "suppressed here" against its original categories
    (p-value and Cramér's V): a small p-value says the new missing values are not at random
    with respect to that key."""

    n = len(table)
    out: dict[str, Any] = {}
    for j, key in enumerate(keys):
        before = int(table[key].isna().sum())
        association = {}
        for other in keys:
            if other == key or not blank[:, j].any() or blank[:, j].all():
                continue
            cats = pd.factorize(table[other], use_na_sentinel=False)[0]
            found = blank_association(pd.crosstab(blank[:, j], cats).to_numpy(), n)
            if found is not None:
                association[other] = found
        cells = int(blank[:, j].sum())
        out[key] = {"cells_suppressed": cells, "share": cells / n if n else 0.0,
                    "missing_before": before, "missing_after": before + cells,
                    "association": association}
    return out


def blank_association(cross: Any, n: int) -> dict[str, float] | None:
    """The chi-square test and Cramer's V of a key's blanked cells against another key's
    categories (``cross``: 2 x categories counts of ``n`` records; empty categories left out),
    or ``None`` when fewer than two categories remain."""
    from scipy.stats import chi2_contingency

    cross = cross[:, cross.sum(axis=0) > 0]
    if cross.shape[1] < 2:
        return None
    chi2, p, _, _ = chi2_contingency(cross, correction=False)
    v = float(np.sqrt(chi2 / (n * (min(cross.shape) - 1))))
    return {"p_value": float(p), "cramers_v": round(v, 4)}
