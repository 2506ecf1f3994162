"""numba kernels of mdav-scale: k-d tree leaves, neighbour lists, CBFS on the lists, and the
local search of moves and swaps between near groups.

Validation is assumed: ``X`` is finite, float64 and C-contiguous, ``labels`` numbers groups
0..g-1 and every group has between ``k`` and ``cap`` records. The records are expected in
an order that keeps near records near in memory (the blocks of a k-d tree, one after the
other): the search then reads memory almost sequentially.

The state of a partition is the column sums ``sums`` (g x p), the sizes ``count``, the
centroids ``cent``, the member lists ``members`` (g x cap, the first ``count[g]`` used) and
each record's place ``slot`` in its group's list. Moves and swaps keep all of it exact up to
rounding; :func:`group_state` rebuilds it from labels.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import njit

__all__ = [
    "greedy_groups",
    "group_state",
    "kd_leaves",
    "near_groups",
    "near_in_leaves",
    "refine_lists",
    "sq_rows",
    "sweep",
]


@njit(cache=True)
def group_state(X, labels, n_groups, cap):  # pragma: no cover - numba
    """Sums, sizes, centroids, member lists (n_groups x cap) and each record's slot."""
    n, p = X.shape
    sums = np.zeros((n_groups, p))
    count = np.zeros(n_groups, dtype=np.int64)
    members = np.full((n_groups, cap), -1, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = labels[i]
        members[g, count[g]] = i
        slot[i] = count[g]
        count[g] += 1
        for j in range(p):
            sums[g, j] += X[i, j]
    cent = np.empty((n_groups, p))
    for g in range(n_groups):
        for j in range(p):
            cent[g, j] = sums[g, j] / count[g]
    return sums, count, cent, members, slot


@njit(cache=True)
def _sq_point(X, i, c, g):  # pragma: no cover - numba
    """Squared distance of row ``i`` of ``X`` to row ``g`` of ``c``."""
    s = 0.0
    for j in range(X.shape[1]):
        diff = X[i, j] - c[g, j]
        s += diff * diff
    return s


@njit(cache=True)
def sq_rows(X, i, r):  # pragma: no cover - numba
    """Squared distance between rows ``i`` and ``r`` of ``X``."""
    s = 0.0
    for j in range(X.shape[1]):
        diff = X[i, j] - X[r, j]
        s += diff * diff
    return s


@njit(cache=True)
def _centroid(sums, count, cent, g):  # pragma: no cover - numba
    for j in range(sums.shape[1]):
        cent[g, j] = sums[g, j] / count[g]


@njit(cache=True)
def _apply(X, x, a, y, b, labels, state):  # pragma: no cover - numba
    """Move row ``x`` from group ``a`` to ``b`` (``y < 0``) or swap it with row ``y`` of ``b``."""
    sums, count, cent, members, slot = state
    p = X.shape[1]
    if y < 0:
        last = members[a, count[a] - 1]
        members[a, slot[x]] = last
        slot[last] = slot[x]
        members[a, count[a] - 1] = -1
        count[a] -= 1
        members[b, count[b]] = x
        slot[x] = count[b]
        count[b] += 1
        labels[x] = b
        for j in range(p):
            sums[a, j] -= X[x, j]
            sums[b, j] += X[x, j]
    else:
        sx = slot[x]
        sy = slot[y]
        members[a, sx] = y
        members[b, sy] = x
        slot[x] = sy
        slot[y] = sx
        labels[x] = b
        labels[y] = a
        for j in range(p):
            diff = X[x, j] - X[y, j]
            sums[a, j] -= diff
            sums[b, j] += diff
    _centroid(sums, count, cent, a)
    _centroid(sums, count, cent, b)


@njit(cache=True)
def _best_change(X, a, near, k, cap, tol, state, dxa, ey, ryb):  # pragma: no cover  # noqa: C901, PLR0913 - numba kernel: one loop nest, kept whole for speed
    """The best move or swap of a record of group ``a`` with a group of ``near[a]``.

    Moving x (group A, centroid a, size nA) to B (b, nB) changes the SSE by
    ``nB/(nB+1) |x-b|^2 - nA/(nA-1) |x-a|^2`` (allowed while nA > k and nB < cap); swapping
    x with y of B by ``(|x-b|^2 - |x-a|^2) + (|y-a|^2 - |y-b|^2) - (1/nA + 1/nB) |x-y|^2``.
    The middle term depends on y alone (``ey``), and ``|x-y| <= |x-b| + |y-b|`` bounds the
    last one, so most pairs are ruled out without computing ``|x-y|``.
    Returns ``(delta, x, b, y)``; ``b = -1`` when no change lowers the SSE by more than ``tol``.
    """
    _, count, cent, members, _ = state
    na = count[a]
    for t in range(na):
        dxa[t] = _sq_point(X, members[a, t], cent, a)
    best = -tol
    best_x = -1
    best_b = -1
    best_y = -1
    for u in range(near.shape[1]):
        b = near[a, u]
        if b == a or b < 0:
            continue
        nb = count[b]
        for v in range(nb):
            y = members[b, v]
            dyb = _sq_point(X, y, cent, b)
            ey[v] = _sq_point(X, y, cent, a) - dyb
            ryb[v] = np.sqrt(dyb)
        c = 1.0 / na + 1.0 / nb
        can_move = na > k and nb < cap
        for t in range(na):
            x = members[a, t]
            dxb = _sq_point(X, x, cent, b)
            if can_move:
                delta = nb / (nb + 1.0) * dxb - na / (na - 1.0) * dxa[t]
                if delta < best:
                    best, best_x, best_b, best_y = delta, x, b, -1
            base = dxb - dxa[t]
            rxb = np.sqrt(dxb)
            for v in range(nb):
                lhs = base + ey[v]
                bound = rxb + ryb[v]
                if lhs - c * bound * bound >= best:
                    continue
                y = members[b, v]
                delta = lhs - c * sq_rows(X, x, y)
                if delta < best:
                    best, best_x, best_b, best_y = delta, x, b, y
    return best, best_x, best_b, best_y


@njit(cache=True)
def sweep(X, labels, near, k, cap, tol, state, active, next_active, max_changes):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """One pass over the ``active`` groups: each takes its best change (:func:`_best_change`)
    until none is left (at most ``max_changes`` per group). The groups a change touches and
    their near groups are marked in ``next_active``. Returns the SSE decrease and the number
    of changes."""
    count = state[1]
    cap_members = state[3].shape[1]
    dxa = np.empty(cap_members)
    ey = np.empty(cap_members)
    ryb = np.empty(cap_members)
    gain = 0.0
    changes = 0
    n_groups = count.shape[0]
    for a in range(n_groups):
        if not active[a]:
            continue
        for _ in range(max_changes):
            delta, x, b, y = _best_change(X, a, near, k, cap, tol, state, dxa, ey, ryb)
            if b < 0:
                break
            _apply(X, x, a, y, b, labels, state)
            gain -= delta
            changes += 1
            for g in (a, b):
                next_active[g] = True
                for u in range(near.shape[1]):
                    h = near[g, u]
                    if h >= 0:
                        next_active[h] = True
    return gain, changes


@njit(cache=True)
def _offer(near_d, near_i, g, d, h):  # pragma: no cover - numba
    """Put group ``h`` at distance ``d`` into ``g``'s sorted list of nearest (if it belongs
    there and is not in it already)."""
    w = near_d.shape[1]
    if d >= near_d[g, w - 1]:
        return
    for t in range(w):
        if near_i[g, t] == h:
            return
    t = w - 1
    while t > 0 and (near_d[g, t - 1] > d or (near_d[g, t - 1] == d and near_i[g, t - 1] > h)):
        near_d[g, t] = near_d[g, t - 1]
        near_i[g, t] = near_i[g, t - 1]
        t -= 1
    near_d[g, t] = d
    near_i[g, t] = h


@njit(cache=True, parallel=True)
def near_in_leaves(cent, order, starts, near_d, near_i):  # pragma: no cover  # noqa: C901 - numba kernel: one loop nest, kept whole for speed
    """Offer every pair of groups that share a leaf (``order[starts[l]:starts[l + 1]]``) to
    both groups' lists of nearest centroids (:func:`_offer`); called once per leaf
    partition, the lists keep the nearest over all partitions seen."""
    p = cent.shape[1]
    w = near_d.shape[1]
    widest = 0
    for leaf in range(starts.shape[0] - 1):
        widest = max(widest, starts[leaf + 1] - starts[leaf])
    for leaf in prange(starts.shape[0] - 1):  # a leaf writes only its own rows' lists
        buf = np.empty((p, widest))  # the leaf's points, feature-major
        dist = np.empty(widest)
        lo = starts[leaf]
        m = starts[leaf + 1] - lo
        for t in range(m):
            for j in range(p):
                buf[j, t] = cent[order[lo + t], j]
        for s in range(m):
            g = order[lo + s]
            for t in range(m):
                dist[t] = 0.0
            for j in range(p):
                c = buf[j, s]
                row = buf[j]
                for t in range(m):
                    diff = row[t] - c
                    dist[t] += diff * diff
            worst = near_d[g, w - 1]
            for t in range(m):
                if dist[t] < worst and t != s:
                    _offer(near_d, near_i, g, dist[t], order[lo + t])
                    worst = near_d[g, w - 1]


@njit(cache=True)
def _widest_column(P, order, lo, hi):  # pragma: no cover - numba
    """The column of ``P`` with the largest range over the rows ``order[lo:hi]``."""
    p = P.shape[1]
    lows = np.full(p, np.inf)
    highs = np.full(p, -np.inf)
    for t in range(lo, hi):
        r = order[t]
        for j in range(p):
            v = P[r, j]
            lows[j] = min(lows[j], v)
            highs[j] = max(highs[j], v)
    axis = 0
    for j in range(1, p):
        if highs[j] - lows[j] > highs[axis] - lows[axis]:
            axis = j
    return axis


@njit(cache=True)
def _split_at_median(P, order, lo, hi, axis):  # pragma: no cover - numba
    """Reorder ``order[lo:hi]`` so that its first half holds the rows of the smallest values
    in column ``axis`` (ties at the median in their current order): O(m), deterministic."""
    m = hi - lo
    half = m // 2
    keys = np.empty(m)
    for t in range(m):
        keys[t] = P[order[lo + t], axis]
    median = np.partition(keys.copy(), half - 1)[half - 1]
    ties = half
    for t in range(m):
        if keys[t] < median:
            ties -= 1
    seg = np.empty(m, dtype=np.int64)
    left = 0
    right = half
    for t in range(m):
        v = keys[t]
        if v < median or (v == median and ties > 0):
            if v == median:
                ties -= 1
            seg[left] = order[lo + t]
            left += 1
        else:
            seg[right] = order[lo + t]
            right += 1
    order[lo:hi] = seg


@njit(cache=True)
def kd_leaves(P, leaf_size):  # pragma: no cover - numba
    """Recursive median splits of the rows of ``P`` on their widest column until every leaf
    has at most ``leaf_size`` rows; returns the rows in leaf order and the leaf starts
    (``starts[-1] == n``). Leaves come left to right, so near rows are near in the order."""
    n = P.shape[0]
    order = np.arange(n)
    stack = np.empty((2 * (n // max(1, leaf_size // 2)) + 64, 2), dtype=np.int64)
    starts = np.empty(n + 1, dtype=np.int64)
    n_leaves = 0
    stack[0, 0] = 0
    stack[0, 1] = n
    top = 1
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        if hi - lo <= leaf_size:
            starts[n_leaves] = lo
            n_leaves += 1
            continue
        _split_at_median(P, order, lo, hi, _widest_column(P, order, lo, hi))
        mid = lo + (hi - lo) // 2
        stack[top, 0] = mid  # right first: the left leaf comes out first
        stack[top, 1] = hi
        stack[top + 1, 0] = lo
        stack[top + 1, 1] = mid
        top += 2
    starts[n_leaves] = n
    return order, starts[:n_leaves + 1].copy()


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


@njit(cache=True)
def _seeds(X, labels, seedless, m):  # pragma: no cover - numba
    """The unassigned rows that may seed a group, farthest from the centroid of the ``m``
    unassigned rows first (ties: lower row first)."""
    n, p = X.shape
    centroid = np.zeros(p)
    n_seeds = 0
    for i in range(n):
        if labels[i] < 0:
            for j in range(p):
                centroid[j] += X[i, j]
            if not seedless[i]:
                n_seeds += 1
    for j in range(p):
        centroid[j] /= m
    rows = np.empty(n_seeds, dtype=np.int64)
    d = np.empty(n_seeds)
    t = 0
    for i in range(n):
        if labels[i] < 0 and not seedless[i]:
            rows[t] = i
            s = 0.0
            for j in range(p):
                diff = X[i, j] - centroid[j]
                s += diff * diff
            d[t] = -s
            t += 1
    return rows[np.argsort(d, kind="mergesort")]


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
    m = n
    g = 0
    while m >= k:
        seq = _seeds(X, labels, seedless, m)
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
        if not progressed:
            break
    return labels, g


@njit(cache=True, parallel=True)
def refine_lists(X, near_d, near_i, depth):  # pragma: no cover - numba
    """One round of neighbour-of-neighbour refinement (NN-descent): every row's list is
    offered the first ``depth`` entries of the lists of its first ``depth`` neighbours;
    returns the new lists (the old are only read)."""
    n, width = near_i.shape
    new_d = near_d.copy()
    new_i = near_i.copy()
    for i in prange(n):
        for t in range(depth):
            c = near_i[i, t]
            if c < 0:
                continue
            for u in range(depth):
                c2 = near_i[c, u]
                if c2 < 0 or c2 == i:
                    continue
                d = sq_rows(X, i, c2)
                if d < new_d[i, width - 1]:
                    _offer(new_d, new_i, i, d, c2)
    return new_d, new_i


@njit(cache=True, parallel=True)
def near_groups(cent, labels, members, count, near_rec, depth, width, active):  # pragma: no cover
    """Each ``active`` group's ``width`` nearest groups (by centroid) among the groups of its
    members' first ``depth`` neighbours in the record lists ``near_rec``; -1 pads short
    lists (and fills the lists of inactive groups: a sweep does not read them)."""
    n_groups, p = cent.shape
    near_d = np.full((n_groups, width), np.inf)
    near_i = np.full((n_groups, width), -1, dtype=np.int64)
    for g in prange(n_groups):  # a group writes only its own lists
        if not active[g]:
            continue
        for s in range(count[g]):
            x = members[g, s]
            for t in range(depth):
                c = near_rec[x, t]
                if c < 0:
                    continue
                h = labels[c]
                if h == g:
                    continue
                d = 0.0
                for j in range(p):
                    diff = cent[g, j] - cent[h, j]
                    d += diff * diff
                if d < near_d[g, width - 1]:
                    _offer(near_d, near_i, g, d, h)
    return near_i
