"""numba kernels of mdav-scale's start (step 2): CBFS on neighbour lists.

``X`` is finite, float64 and C-contiguous, in an order that keeps near records near in
memory; ``cand`` / ``cand_d`` are the neighbour lists of :mod:`._neighbour_lists`.
"""

from __future__ import annotations

import numpy as np

from .._runtime.jit import njit
from ._neighbour_lists import spread_sample, sq_rows

__all__ = ["greedy_groups"]


@njit(cache=True)
def _take(pick, pick_d, filled, need, d, r):  # pragma: no cover - numba
    """Insert row ``r`` at squared distance ``d`` into the sorted ``pick`` buffer (ties: lower
    row first) unless it is there already or does not belong; returns the new fill."""
    for t in range(filled):
        if pick[t] == r:
            return filled
    if filled == need and (d > pick_d[need - 1] or (d == pick_d[need - 1] and r > pick[need - 1])):
        return filled
    t = filled if filled < need else need - 1
    while t > 0 and (pick_d[t - 1] > d or (pick_d[t - 1] == d and pick[t - 1] > r)):
        pick[t] = pick[t - 1]
        pick_d[t] = pick_d[t - 1]
        t -= 1
    pick[t] = r
    pick_d[t] = d
    return filled + 1 if filled < need else filled


@njit(cache=True)
def _gather(X, r, cand, cand_d, labels, pick, pick_d):  # pragma: no cover - numba
    """The ``len(pick)`` nearest unassigned neighbours of ``r`` found in its candidate list,
    and if that is short, in its candidates' lists (two hops); returns how many were found."""
    need = pick.shape[0]
    filled = 0
    width = cand.shape[1]
    for t in range(width):
        c = cand[r, t]
        if c >= 0 and labels[c] < 0:
            filled = _take(pick, pick_d, filled, need, cand_d[r, t], c)
    if filled == need:
        return filled
    for t in range(width):
        c = cand[r, t]
        if c < 0:
            continue
        for u in range(width):
            c2 = cand[c, u]
            if c2 >= 0 and c2 != r and labels[c2] < 0:
                filled = _take(pick, pick_d, filled, need, sq_rows(X, r, c2), c2)
    return filled


SEED_SHARE = 8
"""From :data:`SEED_SORT_ALL` candidate seeds on, only about the farthest ``1 / SEED_SHARE``
of them (up to a cut found in a sample, :func:`_share_cut`, and all ties with it) are
sorted at each renewal of the centroid: a renewal groups an eighth of the records left,
for which CBFS went through at most 4.5 % of the sorted seeds (10^5 Gaussian records, 10
columns, k = 5); sorting all of them took two thirds of its time. Should the share run out
first, the centroid is renewed there."""

SEED_SORT_ALL = 2_000
"""Fewest candidate seeds for which only a share is sorted (:data:`SEED_SHARE`)."""


CUT_SAMPLE = 1_024
"""Values, spread evenly over the candidate seeds, whose ``1 / SEED_SHARE`` quantile is the
cut of the share (:func:`_share_cut`). Selecting the exact quantile among all candidates
took a fifth of CBFS's time: at 10^5 x 10 records (k = 5, best of seven) CBFS took 0.044 s
instead of 0.056 s (Gaussian; correlated 0.043 s instead of 0.054 s), with the same groups
on both generators of ``bench_quality_scale.py``: it goes through a few per cent of the
share, which only has to hold them."""


@njit(cache=True)
def _share_cut(d):  # pragma: no cover - numba
    """The ``1 / SEED_SHARE`` quantile of ``d`` (ascending) among :data:`CUT_SAMPLE` of its
    values spread evenly: a share of about ``1 / SEED_SHARE`` of the candidates, found
    without selecting among all of them (``d`` holds at least :data:`SEED_SORT_ALL` values,
    more than the sample, so the sampled places differ)."""
    sample = spread_sample(d, CUT_SAMPLE)
    return np.partition(sample, CUT_SAMPLE // SEED_SHARE)[CUT_SAMPLE // SEED_SHARE]


@njit(cache=True)
def _seeds(X, rest, seedless):  # pragma: no cover - numba
    """The rows of ``rest`` (the unassigned rows, ascending) that may seed a group, farthest
    from the centroid of ``rest`` first (ties: lower row first); from
    :data:`SEED_SORT_ALL` of them on, only about the farthest :data:`SEED_SHARE`-th
    (:func:`_share_cut`). Returns them and whether some were left out."""
    p = X.shape[1]
    m = rest.shape[0]
    centroid = np.zeros(p)
    n_seeds = 0
    for t in range(m):
        i = rest[t]
        for j in range(p):
            centroid[j] += X[i, j]
        if not seedless[i]:
            n_seeds += 1
    for j in range(p):
        centroid[j] /= m
    rows = np.empty(n_seeds, dtype=np.int64)
    d = np.empty(n_seeds)
    u = 0
    for t in range(m):
        i = rest[t]
        if not seedless[i]:
            rows[u] = i
            s = 0.0
            for j in range(p):
                diff = X[i, j] - centroid[j]
                s += diff * diff
            d[u] = -s
            u += 1
    share = n_seeds >= SEED_SORT_ALL
    if share:  # the farthest share and its ties, still by row
        keep = d <= _share_cut(d)
        rows = rows[keep]
        d = d[keep]
    return rows[np.argsort(d, kind="mergesort")], share


@njit(cache=True)
def greedy_groups(X, cand, cand_d, k):  # pragma: no cover - numba
    """CBFS on neighbour lists: the unassigned record farthest from the centroid of the
    unassigned records forms a group with its ``k - 1`` nearest unassigned neighbours found
    by :func:`_gather`. The centroid and the order are renewed whenever an eighth of the
    records left has been grouped. A record whose lists hold too few unassigned records is
    passed over as a seed (it may still join a group). Returns the labels (-1: left over)
    and the number of groups."""
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    pick = np.empty(k - 1, dtype=np.int64)
    pick_d = np.empty(k - 1)
    seedless = np.zeros(n, dtype=np.bool_)
    rest = np.arange(n)
    m = n
    g = 0
    while m >= k:
        rest = rest[labels[rest] < 0]  # ascending, as the centroid's sum was always taken
        seq, share = _seeds(X, rest, seedless)
        if seq.size == 0:
            break
        stop_at = m - max(m // 8, k)
        progressed = False
        for r in seq:
            if labels[r] >= 0:
                continue
            if _gather(X, r, cand, cand_d, labels, pick, pick_d) < k - 1:
                seedless[r] = True
                continue
            labels[r] = g
            for t in range(k - 1):
                labels[pick[t]] = g
            g += 1
            m -= k
            progressed = True
            if m <= stop_at or m < k:
                break
        if not progressed and not share:  # (a share without a group: its seeds are
            break                           # seedless now, the next share holds others)
    return labels, g
