"""Rank swapping of numeric columns (Moore 1996), with its verifier: the window and the
exact marginals.

For one column (within one stratum) with n non-missing values sorted by rank, and the window
``w = floor(p * n / 100)``: going up the ranks, each value not yet swapped is exchanged with
one chosen uniformly among the values not yet swapped whose rank is in ``(i, i + w]``; a
value with no such partner stays. Every column is swapped on its own (as sdcMicro's
``rankSwap`` does for its ``P`` rule), ties in rank order of the rows. The column's values
are only permuted: every marginal statistic (mean, quantiles, the whole distribution) is
kept exactly; the links between columns are not. Missing values stay in their rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._runtime.jit import njit
from ._common import check_columns, numeric_values, strata_codes
from .options import RankSwap

__all__ = ["apply_rank_swap", "rank_distance", "verify_rank_swap"]


@njit(cache=True)
def _fenwick_add(tree: NDArray[np.int64], position: int, delta: int) -> None:
    n = tree.size - 1
    while position <= n:
        tree[position] += delta
        position += position & -position


@njit(cache=True)
def _fenwick_prefix(tree: NDArray[np.int64], position: int) -> int:
    total = 0
    while position > 0:
        total += tree[position]
        position -= position & -position
    return total


@njit(cache=True)
def _fenwick_find(tree: NDArray[np.int64], target: int) -> int:
    """The 0-based position of the ``target``-th free slot (1-based count)."""
    n = tree.size - 1
    step = 1
    while step * 2 <= n:
        step *= 2
    position = 0
    while step > 0:
        if position + step <= n and tree[position + step] < target:
            position += step
            target -= tree[position]
        step //= 2
    return position


@njit(cache=True)
def _swap_partners(n: int, window: int, u: NDArray[np.float64]) -> NDArray[np.int64]:
    """``partner[i]``: the rank whose value goes to rank i (Moore's rank swap, O(n log n))."""
    tree = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        tree[i] += 1
        parent = i + (i & -i)
        if parent <= n:
            tree[parent] += tree[i]
    free = np.ones(n, dtype=np.bool_)
    partner = np.arange(n)
    for i in range(n):
        if not free[i]:
            continue
        free[i] = False
        _fenwick_add(tree, i + 1, -1)
        before = _fenwick_prefix(tree, i + 1)
        count = _fenwick_prefix(tree, min(n - 1, i + window) + 1) - before
        if count == 0:
            continue
        k = min(int(u[i] * count), count - 1)
        j = _fenwick_find(tree, before + k + 1)
        free[j] = False
        _fenwick_add(tree, j + 1, -1)
        partner[i] = j
        partner[j] = i
    return partner


def apply_rank_swap(table: pd.DataFrame, options: RankSwap, rng: np.random.Generator, *,
                    households: str | None = None, weights: str | None = None,
                    strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rank swapping of ``options.variables``, within each stratum when ``strata`` is given:
    a new table (same rows, order and index) and details.

    ``households`` and ``weights`` are not used (values move between persons, unweighted).

    Returns
    -------
    published : pandas.DataFrame
    details : dict
        Per column: ``window`` (ranks, per stratum), ``records_changed``,
        ``share_changed``, ``max_rank_distance`` (achieved), ``missing``.

    References
    ----------
    Moore, R. A. "Controlled data-swapping techniques for masking public use microdata
    sets." Statistical Research Division Report RR96/04, US Census Bureau, 1996.
    """
    check_columns(table, options.variables, step=options.name)
    stratum, labels = strata_codes(table, strata)
    values = {c: numeric_values(table, c, step=options.name, varying=False)
              for c in options.variables}
    published = table.copy()
    details: dict[str, Any] = {"p": options.p, "strata": strata, "columns": {}}
    for column, x in values.items():
        out = x.copy()
        windows = {}
        for s, label in enumerate(labels):
            rows = np.flatnonzero((stratum == s) & ~np.isnan(x))
            window = int(np.floor(options.p * rows.size / 100.0))
            windows[label] = window
            order = rows[np.argsort(x[rows], kind="stable")]
            partner = _swap_partners(rows.size, window, rng.random(rows.size))
            out[order] = x[order][partner]
        published[column] = pd.Series(out, index=table.index, name=column)
        present = ~np.isnan(x)
        changed = int((out[present] != x[present]).sum())
        distance = rank_distance(x, out, stratum, len(labels))
        details["columns"][column] = {
            "window": windows, "records_changed": changed,
            "share_changed": changed / max(int(present.sum()), 1),
            "max_rank_distance": distance, "missing": int((~present).sum())}
    return published, details


def rank_distance(before: NDArray[np.float64], after: NDArray[np.float64],
                  stratum: NDArray[np.intp], n_strata: int) -> int:
    """The largest rank distance between each row's old and new value, ties counted in the
    swap's favour (a value's rank is any position it holds among the sorted original
    values of its stratum)."""
    worst = 0
    for s in range(n_strata):
        rows = (stratum == s) & ~np.isnan(before) & ~np.isnan(after)
        if not rows.any():
            continue
        ranked = np.sort(before[rows])
        old, new = before[rows], after[rows]
        lo_old = np.searchsorted(ranked, old, "left")
        hi_old = np.searchsorted(ranked, old, "right") - 1
        lo_new = np.searchsorted(ranked, new, "left")
        hi_new = np.searchsorted(ranked, new, "right") - 1
        gap = np.maximum(0, np.maximum(lo_new - hi_old, lo_old - hi_new))
        worst = max(worst, int(gap.max()))
    return worst


def verify_rank_swap(options: RankSwap, original: pd.DataFrame, published: pd.DataFrame, *,
                     households: str | None = None, weights: str | None = None,
                     strata: str | None = None) -> dict[str, Any]:
    """Check rank swapping on the output: within each stratum, every column's published
    values are exactly its original values (the same multiset), missing cells stay, and no
    value moved farther than the window ``floor(p * n / 100)`` ranks."""
    stratum, labels = strata_codes(original, strata)
    report: dict[str, Any] = {"model": f"rank swap: marginals kept exactly within each "
                              f"stratum, values at most {options.p:g} % of the records "
                              f"apart in rank", "columns": {}}
    holds = True
    for column in options.variables:
        x = original[column].to_numpy(np.float64, na_value=np.nan)
        y = published[column].to_numpy(np.float64, na_value=np.nan)
        moved = int((np.isnan(x) != np.isnan(y)).sum())
        same, window_ok, worst_excess = True, True, 0
        for s in range(len(labels)):
            rows = (stratum == s) & ~np.isnan(x)
            window = int(np.floor(options.p * rows.sum() / 100.0))
            same &= bool(np.array_equal(np.sort(x[rows]), np.sort(y[rows])))
            mine = np.where(stratum == s, 0, -1)
            distance = rank_distance(x, y, mine.astype(np.intp), 1)
            worst_excess = max(worst_excess, distance - window)
            window_ok &= distance <= window
        entry: dict[str, Any] = {"marginal_kept": same, "missing_moved": moved,
                 "max_rank_distance_over_window": int(worst_excess),
                 "window_kept": bool(window_ok)}
        entry["holds"] = bool(same and window_ok and moved == 0)
        holds &= entry["holds"]
        report["columns"][column] = entry
    report["holds"] = bool(holds)
    return report
