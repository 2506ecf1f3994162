"""numba kernels of mdav-scale's neighbour lists (step 1): k-d tree leaves, all pairs within
a leaf, and neighbour-of-neighbour refinement (NN-descent).

``X`` is finite, float64 and C-contiguous (:func:`kd_leaves` also takes a column-major
matrix, whose splits then read one column each). A list is a row of ``near_d`` (squared
distances, ascending) and ``near_i`` (its entries, -1 where short), 64- or 32-bit;
:func:`offer` keeps it sorted and free of repeats.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._runtime.jit import njit

__all__ = ["first_lists", "kd_leaves", "near_in_leaves", "offer", "refine_lists", "spread_sample",
           "sq_between", "sq_rows", "sq_to_point"]


@njit(cache=True)
def sq_between(A, i, B, g):  # pragma: no cover - numba
    """Squared distance of row ``i`` of ``A`` to row ``g`` of ``B``."""
    s = 0.0
    for j in range(A.shape[1]):
        diff = A[i, j] - B[g, j]
        s += diff * diff
    return s


@njit(cache=True)
def sq_to_point(X, i, point):  # pragma: no cover - numba
    """Squared distance of row ``i`` of ``X`` to the vector ``point``."""
    s = 0.0
    for j in range(X.shape[1]):
        diff = X[i, j] - point[j]
        s += diff * diff
    return s


@njit(cache=True)
def sq_rows(X, i, r):  # pragma: no cover - numba
    """Squared distance between rows ``i`` and ``r`` of ``X``."""
    return sq_between(X, i, X, r)


@njit(cache=True)
def offer(near_d, near_i, g, d, h):  # pragma: no cover - numba
    """Put entry ``h`` (a row, or a group in :func:`~._scale_kernels.near_groups`) at
    distance ``d`` into ``g``'s sorted list of nearest (if it belongs there and is not in it
    already)."""
    if d >= near_d[g, near_d.shape[1] - 1] or _listed(near_i, g, h):
        return
    _insert(near_d, near_i, g, d, h)


@njit(cache=True)
def _insert(near_d, near_i, g, d, h):  # pragma: no cover - numba
    """:func:`offer` for an entry known not to be in the list and to belong there."""
    t = near_d.shape[1] - 1
    while t > 0 and (near_d[g, t - 1] > d or (near_d[g, t - 1] == d and near_i[g, t - 1] > h)):
        near_d[g, t] = near_d[g, t - 1]
        near_i[g, t] = near_i[g, t - 1]
        t -= 1
    near_d[g, t] = d
    near_i[g, t] = h


@njit(cache=True)
def _listed(near_i, g, h):  # pragma: no cover - numba
    """Whether ``h`` is in ``g``'s list."""
    for t in range(near_i.shape[1]):
        if near_i[g, t] == h:
            return True
    return False


@njit(cache=True, parallel=True)
def near_in_leaves(X, order, starts, near_d, near_i):  # pragma: no cover - numba
    """Offer every pair of rows that share a leaf (``order[starts[l]:starts[l + 1]]``) to
    both rows' lists (:func:`offer`); called once per leaf partition, the lists keep the
    nearest over all partitions seen. The distances of a leaf come from one product of its
    rows with themselves, ``|x|^2 + |y|^2 - 2 x.y`` (computed apart, two nested loops took
    1.8 times as long at 10^5 x 10, leaves of 128, 2 threads; the lists came out the same),
    and each pair's once, offered to both rows (each row's list in turn took 10-15 % longer
    at 10^5 x 10, the lists the same). The caller keeps BLAS on one thread
    (:func:`~.scale.one_blas_thread`)."""
    p = X.shape[1]
    w = near_d.shape[1]
    for leaf in prange(starts.shape[0] - 1):  # a leaf writes only its own rows' lists
        lo = starts[leaf]
        m = starts[leaf + 1] - lo
        rows = np.empty((m, p))
        norm = np.empty(m)
        worst = np.empty(m)  # each row's last listed distance, kept up to date
        for t in range(m):
            r = order[lo + t]
            s = 0.0
            for j in range(p):
                v = X[r, j]
                rows[t, j] = v
                s += v * v
            norm[t] = s
            worst[t] = near_d[r, w - 1]
        inner = rows @ rows.T
        for s in range(m):
            g = order[lo + s]
            for t in range(s + 1, m):
                d = max(norm[s] + norm[t] - 2.0 * inner[s, t], 0.0)
                if d < worst[s]:
                    offer(near_d, near_i, g, d, order[lo + t])
                    worst[s] = near_d[g, w - 1]
                if d < worst[t]:
                    h = order[lo + t]
                    offer(near_d, near_i, h, d, g)
                    worst[t] = near_d[h, w - 1]


@njit(cache=True, parallel=True)
def first_lists(X, starts, near_d, near_i):  # pragma: no cover - numba
    """Each row's list from the rows of its leaf, where the leaves are the contiguous row
    ranges ``starts[l]:starts[l + 1]`` of ``X`` (the first tree's, in leaf order): the
    ``near_d.shape[1]`` nearest of the leaf's other rows, written over the lists (the -1
    and ``inf`` of a short leaf too). What :func:`near_in_leaves` gives on empty lists
    (ties by row), where it made 40-50 % of all the lists' offers; here each row keeps its
    nearest in a small buffer of its own: 0.041-0.043 s instead of 0.045-0.049 s at 10^5 x
    10 records, 2 threads, the same lists (bit for bit on both generators of
    ``bench_quality_scale.py``; two rows' order could differ where the leaf product's two
    halves differ in the last bit, or where their distances agree to 32-bit precision,
    which is what :func:`near_in_leaves` compares with)."""
    p = X.shape[1]
    w = near_d.shape[1]
    for leaf in prange(starts.shape[0] - 1):
        lo = starts[leaf]
        m = starts[leaf + 1] - lo
        rows = X[lo:lo + m]
        norm = np.empty(m)
        for t in range(m):
            s = 0.0
            for j in range(p):
                s += rows[t, j] * rows[t, j]
            norm[t] = s
        inner = rows @ rows.T
        best_d = np.full(w, np.inf)
        best_i = np.full(w, -1, dtype=np.int64)
        for s in range(m):
            best_d[:] = np.inf
            best_i[:] = -1
            for t in range(m):
                d = max(norm[s] + norm[t] - 2.0 * inner[s, t], 0.0)
                if t == s or d >= best_d[w - 1]:
                    continue
                u = w - 1
                while u > 0 and best_d[u - 1] > d:
                    best_d[u] = best_d[u - 1]
                    best_i[u] = best_i[u - 1]
                    u -= 1
                best_d[u] = d
                best_i[u] = lo + t
            for u in range(w):
                near_d[lo + s, u] = best_d[u]
                near_i[lo + s, u] = best_i[u]


WIDTH_SAMPLE = 256
"""Rows whose range decides a split's column in :func:`kd_leaves` when a node has more than
twice as many: ``order[lo + t * m // WIDTH_SAMPLE]`` for t < WIDTH_SAMPLE (reading every
row's every column took half the tree's time; the split itself still reads one column of
every row)."""


@njit(cache=True)
def _widest_column(P, order, lo, hi):  # pragma: no cover - numba
    """The column of ``P`` with the largest range over the rows ``order[lo:hi]``, or over
    :data:`WIDTH_SAMPLE` of them spread evenly when there are more than twice as many."""
    p = P.shape[1]
    lows = np.full(p, np.inf)
    highs = np.full(p, -np.inf)
    m = hi - lo
    sampled = m > 2 * WIDTH_SAMPLE
    for t in range(WIDTH_SAMPLE if sampled else m):
        r = order[lo + t * m // WIDTH_SAMPLE] if sampled else order[lo + t]
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
def spread_sample(values, size):  # pragma: no cover - numba
    """``size`` of ``values`` spread evenly: ``values[t * m // size]`` for ``t < size``
    (a copy; deterministic)."""
    m = values.shape[0]
    sample = np.empty(size, dtype=values.dtype)
    for t in range(size):
        sample[t] = values[t * m // size]
    return sample


MEDIAN_SAMPLE = 255
"""Keys, spread evenly over a node of more than :data:`SAMPLED_SPLIT_ROWS` rows, that
bracket its median for :func:`_median` (smaller nodes: a selection among all keys)."""

MEDIAN_WINDOW = 32
"""Sample ranks on each side of the median's expected place that bracket it (4 standard
deviations of a sample of :data:`MEDIAN_SAMPLE`: about 12.5 % of the node on each side)."""

SAMPLED_SPLIT_ROWS = 4 * MEDIAN_SAMPLE
"""Rows above which :func:`_median` brackets the median with a sample."""


@njit(cache=True)
def _median(keys, r):  # pragma: no cover - numba
    """The ``r``-th smallest of ``keys`` (from 0), exactly: what
    ``np.partition(keys, r)[r]`` gives. From :data:`SAMPLED_SPLIT_ROWS` keys on, two
    quantiles of :data:`MEDIAN_SAMPLE` evenly spread keys bracket it, one pass counts the
    keys below the bracket and gathers those within, and the selection runs among these
    (about a quarter of the keys); should the bracket miss (rarely), among all. A rotated
    tree of 10^5 x 10 records (2 threads) takes 0.0137 s, 0.0155-0.0163 s with a selection
    among all keys of every node. (Splitting at the sample's median itself took 0.0104 s,
    but halves a few per cent off push subtrees over the leaf size and halve their leaves:
    mdav-scale's IL at 10^6 rose from 7.747 % to 7.767 %.)"""
    m = keys.shape[0]
    if m > SAMPLED_SPLIT_ROWS:
        sample = np.sort(spread_sample(keys, MEDIAN_SAMPLE))
        at = r * MEDIAN_SAMPLE // m
        low = sample[max(0, at - MEDIAN_WINDOW)]
        high = sample[min(MEDIAN_SAMPLE - 1, at + MEDIAN_WINDOW)]
        below = 0
        inside = np.empty(m)
        n_inside = 0
        for t in range(m):
            v = keys[t]
            if v < low:
                below += 1
            elif v <= high:
                inside[n_inside] = v
                n_inside += 1
        if below <= r < below + n_inside:
            return np.partition(inside[:n_inside], r - below)[r - below]
    return np.partition(keys.copy(), r)[r]


@njit(cache=True)
def _split_at_median(P, order, lo, hi, axis):  # pragma: no cover - numba
    """Reorder ``order[lo:hi]`` so that its first half holds the rows of the smallest values
    in column ``axis`` (ties at the median in their current order): O(m), deterministic."""
    m = hi - lo
    half = m // 2
    keys = np.empty(m)
    for t in range(m):
        keys[t] = P[order[lo + t], axis]
    median = _median(keys, half - 1)
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


TOP_RANGES = 8
"""Subtrees that :func:`kd_leaves` splits one after the other before it builds them in
parallel."""


@njit(cache=True)
def _leaves_of(P, order, lo, hi, leaf_size, starts):  # pragma: no cover - numba
    """Recursive median splits of ``order[lo:hi]`` on the widest column until every leaf has
    at most ``leaf_size`` rows, left leaf first; writes the leaf starts into ``starts`` and
    returns how many."""
    stack = np.empty(((hi - lo) // max(1, leaf_size // 2) + 64, 2), dtype=np.int64)
    n_leaves = 0
    stack[0, 0] = lo
    stack[0, 1] = hi
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        if b - a <= leaf_size:
            starts[n_leaves] = a
            n_leaves += 1
            continue
        _split_at_median(P, order, a, b, _widest_column(P, order, a, b))
        mid = a + (b - a) // 2
        stack[top, 0] = mid  # right first: the left leaf comes out first
        stack[top, 1] = b
        stack[top + 1, 0] = a
        stack[top + 1, 1] = mid
        top += 2
    return n_leaves


@njit(cache=True, parallel=True)
def kd_leaves(P, leaf_size):  # pragma: no cover - numba
    """Recursive median splits of the rows of ``P`` on their widest column until every leaf
    has at most ``leaf_size`` rows; returns the rows in leaf order and the leaf starts
    (``starts[-1] == n``). Leaves come left to right, so near rows are near in the order.
    The top :data:`TOP_RANGES` subtrees are split first, level by level, the ranges of a
    level in parallel, then built in parallel (the same leaves as one after the other)."""
    n = P.shape[0]
    order = np.arange(n)
    ranges = np.empty((2 * TOP_RANGES, 2), dtype=np.int64)
    ranges[0, 0] = 0
    ranges[0, 1] = n
    n_ranges = 1
    while n_ranges < TOP_RANGES:
        for r in prange(n_ranges):  # each range reorders only its own rows
            lo = ranges[r, 0]
            hi = ranges[r, 1]
            if hi - lo > leaf_size:
                _split_at_median(P, order, lo, hi, _widest_column(P, order, lo, hi))
        split = np.empty((2 * n_ranges, 2), dtype=np.int64)
        m = 0
        for r in range(n_ranges):
            lo = ranges[r, 0]
            hi = ranges[r, 1]
            if hi - lo <= leaf_size:
                split[m, 0] = lo
                split[m, 1] = hi
                m += 1
                continue
            mid = lo + (hi - lo) // 2
            split[m, 0] = lo
            split[m, 1] = mid
            split[m + 1, 0] = mid
            split[m + 1, 1] = hi
            m += 2
        if m == n_ranges:
            break
        ranges[:m] = split[:m]
        n_ranges = m
    offsets = np.zeros(n_ranges + 1, dtype=np.int64)
    for r in range(n_ranges):
        offsets[r + 1] = offsets[r] + (ranges[r, 1] - ranges[r, 0]) // max(1, leaf_size // 2) + 2
    found = np.empty(offsets[n_ranges], dtype=np.int64)
    counts = np.zeros(n_ranges, dtype=np.int64)
    for r in prange(n_ranges):  # each subtree reorders only its own rows
        counts[r] = _leaves_of(P, order, ranges[r, 0], ranges[r, 1], leaf_size,
                               found[offsets[r]:offsets[r + 1]])
    starts = np.empty(counts.sum() + 1, dtype=np.int64)
    t = 0
    for r in range(n_ranges):
        starts[t:t + counts[r]] = found[offsets[r]:offsets[r] + counts[r]]
        t += counts[r]
    starts[t] = n
    return order, starts


@njit(cache=True, parallel=True)
def refine_lists(X, near_d, near_i, sources, depth):  # pragma: no cover - numba
    """One round of neighbour-of-neighbour refinement (NN-descent): every row's list is
    offered the first ``depth`` entries of the lists of its first ``sources`` neighbours;
    returns the new lists (the old are only read). An entry already listed is passed over
    before its distance is computed (most are: neighbours share neighbours)."""
    n, width = near_i.shape
    new_d = near_d.copy()
    new_i = near_i.copy()
    for i in prange(n):
        for t in range(sources):
            c = near_i[i, t]
            if c < 0:
                continue
            for u in range(depth):
                c2 = near_i[c, u]
                if c2 < 0 or c2 == i or _listed(new_i, i, c2):
                    continue
                d = sq_rows(X, i, c2)
                if d < new_d[i, width - 1]:
                    _insert(new_d, new_i, i, d, c2)
    return new_d, new_i

