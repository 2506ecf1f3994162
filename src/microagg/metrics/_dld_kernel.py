"""numba kernel of :func:`microagg.metrics.dld_risk` for grouped releases: which published
vectors have an original other than their nearest own record within reach. Validation is
assumed.

A microaggregated release publishes one vector per group, and almost always the group's own
nearest record is the nearest original of all, alone. :func:`crowded_vectors` proves it
vector by vector: an original ``j`` of group ``g`` is at least ``|U[h] - U[g]| - spread[g]``
from vector ``h`` (the triangle inequality, ``spread[g]`` the farthest member of ``g`` from
``U[g]``), so a whole group is skipped unless its centroid is within ``reach[h] + spread[g]``
of ``U[h]``; the members of the remaining groups are measured exactly, the farthest first,
until the bound rules the rest out. One pass over the ``G (G + 1) / 2`` centroid pairs
(vectorized over ``g``, each pair serving both directions) plus a few members per vector: on
10,000 groups of 5 in 10 dimensions the remaining groups are about 1.6 % of the pairs.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numpy.typing import NDArray

from .._runtime.jit import njit

__all__ = ["SKIP_MARGIN", "crowded_vectors"]

SKIP_MARGIN = 1e-8
"""Relative room on the group-skipping bound, far above the rounding of the distances."""


GROUP_TILE = 256
"""The centroid distances are summed four vectors x GROUP_TILE groups at a time (8 KiB, in
the first-level cache): each column of the centroids read serves four vectors."""


@njit(cache=True)
def _has_other_within(rows, row_spread, lo, hi, skip, vectors, h, squared_gap, near,  # noqa: PLR0913 - one kernel, its arrays
                      limit):
    """Whether a row ``rows[lo:hi]`` other than row ``skip`` is at squared distance
    ``<= limit`` from ``vectors[h]``, whose centroid is at squared distance ``squared_gap``.
    The rows go by decreasing ``row_spread`` (their distance to their centroid): once the
    triangle inequality rules one out it rules out all the nearer ones."""
    p = vectors.shape[1]
    for t in range(hi - 1, lo - 1, -1):
        bound = near + row_spread[t]
        if squared_gap > bound * bound:
            return False
        if t == skip:
            continue
        squared = 0.0
        for d in range(p):
            diff = rows[t, d] - vectors[h, d]
            squared += diff * diff
        if squared <= limit:
            return True
    return False


FILTER_SLACK = 1e-5
"""Relative and absolute room (times the largest squared norm) on the single-precision
filter of the centroid pairs: its rounding is at most about 1.5e-6 of the squared norms
(``(2 p + 4) 2**-24`` for ``p`` columns up to 10; more columns widen it, see
:func:`_filter_room`), so no pair that the double-precision test keeps is filtered out."""


@njit(cache=True)
def _four_flags(columns, filtered, queries, h0, g0, n_g, dots, flags):
    """Which centroids ``g0 .. g0 + n_g - 1`` may lie within either direction's skipping
    bound of the vectors ``h0 .. h0 + 3`` (``queries``, the last one repeated past the
    end), into ``flags[a, b]``: single-precision squared distances ``|q|^2 + |c|^2 - 2 q.c``
    (one multiply-add per pair and column, eight pairs per instruction) against the bounds
    widened by :data:`FILTER_SLACK`; the flags past ``n_g`` are cleared."""
    norms, near, wide, room = filtered[1], filtered[2], filtered[3], filtered[4]
    last = near.shape[0] - 1
    for b in range(n_g):
        dots[0, b] = 0.0
        dots[1, b] = 0.0
        dots[2, b] = 0.0
        dots[3, b] = 0.0
    for d in range(columns.shape[0]):
        q0, q1, q2, q3 = queries[0, d], queries[1, d], queries[2, d], queries[3, d]
        row = columns[d, g0:g0 + n_g]
        for b in range(n_g):
            x = row[b]
            dots[0, b] += x * q0
            dots[1, b] += x * q1
            dots[2, b] += x * q2
            dots[3, b] += x * q3
    grow = np.float32(1.0 + FILTER_SLACK)
    two = np.float32(2.0)
    for a in range(4):
        h = min(h0 + a, last)
        norm_h, near_h, wide_h = norms[h], near[h], wide[h]
        for b in range(n_g):
            g = g0 + b
            bound = max(near_h + wide[g], near[g] + wide_h)
            squared = norm_h + norms[g] - two * dots[a, b]
            flags[a, b] = squared <= bound * bound * grow + room
        flags[a, n_g:] = 0


@njit(cache=True)
def _flagged(flags, first, found):
    """Positions ``b >= first`` of the set ``flags`` (read eight at a time: most are clear,
    about 1.6 % are set on 10,000 groups of 5 in 10 columns), into ``found``; how many."""
    words = flags.view(np.uint64)
    count = 0
    for w in range(words.shape[0]):
        if words[w] != 0:
            for b in range(max(8 * w, first), 8 * w + 8):
                if flags[b]:
                    found[count] = b
                    count += 1
    return count


@njit(cache=True)
def _gap(vectors, h, g):
    """Squared distance of vectors ``h`` and ``g``, in double precision."""
    squared = 0.0
    for d in range(vectors.shape[1]):
        diff = vectors[g, d] - vectors[h, d]
        squared += diff * diff
    return squared


@njit(cache=True)
def _filter_room(vectors, reach, row_spread, starts):
    """The centroids and the skipping bounds in single precision, scaled by one power of two
    that brings the largest magnitude near 1 (no overflow, whatever the data's scale), and
    the absolute room that covers the filter's rounding."""
    peak = np.abs(vectors).max() if vectors.size else 0.0
    scale = 1.0
    if peak > 0:
        scale = 2.0 ** -min(max(np.ceil(np.log2(peak)), -1000.0), 1022.0)
    columns = np.ascontiguousarray((vectors * scale).T).astype(np.float32)
    norms = np.zeros(vectors.shape[0], dtype=np.float32)
    for d in range(columns.shape[0]):
        norms += columns[d] * columns[d]
    near = (reach * (1.0 + SKIP_MARGIN) * scale).astype(np.float32)
    wide = (row_spread[starts[1:] - 1] * (1.0 + SKIP_MARGIN) * scale).astype(np.float32)
    p = max(vectors.shape[1], 10)
    room = np.float32(2.0 * float(norms.max() if norms.size else 0.0)
                      * FILTER_SLACK * p / 10.0 + 1e-30)
    return columns, norms, near, wide, room


@njit(cache=True)
def _scan_tiles(rows, vectors, starts, reach, row_spread, filtered, crowded, worker,  # noqa: PLR0913 - one kernel, its arrays
                n_workers):
    """Pairs of vectors ``(h, g >= h)`` for the tiles ``worker, worker + n_workers, ...``
    of four vectors: the single-precision filter (``filtered``, from :func:`_filter_room`),
    then the double-precision test of each pair it keeps; marks ``crowded`` in both
    directions."""
    n_vectors = vectors.shape[0]
    columns = filtered[0]
    near = reach * (1.0 + SKIP_MARGIN)
    wide_rows = row_spread * (1.0 + SKIP_MARGIN)
    wide = wide_rows[starts[1:] - 1]
    dots = np.empty((4, GROUP_TILE), dtype=np.float32)
    flags = np.zeros((4, GROUP_TILE), dtype=np.uint8)
    queries = np.empty((4, columns.shape[0]), dtype=np.float32)
    found = np.empty(GROUP_TILE, dtype=np.intp)
    for h0 in range(4 * worker, n_vectors, 4 * n_workers):
        for a in range(4):
            queries[a] = columns[:, min(h0 + a, n_vectors - 1)]
        for g0 in range(h0, n_vectors, GROUP_TILE):
            n_g = min(GROUP_TILE, n_vectors - g0)
            _four_flags(columns, filtered, queries, h0, g0, n_g, dots, flags)
            for a in range(min(4, n_vectors - h0)):
                h = h0 + a
                for c in range(_flagged(flags[a], max(0, h - g0), found)):
                    g = g0 + found[c]
                    gap = _gap(vectors, h, g)
                    bound = near[h] + wide[g]
                    if gap <= bound * bound and not crowded[h] and _has_other_within(
                            rows, wide_rows, starts[g], starts[g + 1], starts[h], vectors, h,
                            gap, near[h], reach[h] * reach[h]):
                        crowded[h] = True
                    bound = near[g] + wide[h]
                    if g != h and gap <= bound * bound and not crowded[g] and \
                            _has_other_within(rows, wide_rows, starts[h], starts[h + 1],
                                              starts[g], vectors, g, gap, near[g],
                                              reach[g] * reach[g]):
                        crowded[g] = True


@njit(cache=True, parallel=True)
def crowded_vectors(rows: NDArray[np.float64], vectors: NDArray[np.float64],
                    starts: NDArray[np.intp], reach: NDArray[np.float64],
                    row_spread: NDArray[np.float64], n_workers: int) -> NDArray[np.bool_]:
    """For each published vector ``h``: whether an original row other than its nearest own
    one lies at squared distance ``<= reach[h] ** 2`` from ``vectors[h]``.

    ``rows[starts[g]:starts[g + 1]]`` are the originals published as ``vectors[g]``, by
    increasing distance ``row_spread`` to it (the nearest first). Each pair of vectors is
    measured once and serves both directions, first in single precision with room for its
    rounding (a filter that keeps every pair the exact test could keep), then exactly;
    ``n_workers`` threads take interleaved tiles, each marking its own copy of the answer.
    """
    marks = np.zeros((n_workers, vectors.shape[0]), dtype=np.bool_)
    filtered = _filter_room(vectors, reach, row_spread, starts)
    for worker in prange(n_workers):
        _scan_tiles(rows, vectors, starts, reach, row_spread, filtered, marks[worker], worker,
                    n_workers)
    crowded = np.zeros(vectors.shape[0], dtype=np.bool_)
    for worker in range(n_workers):
        crowded |= marks[worker]
    return crowded
