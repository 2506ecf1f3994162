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


@njit(cache=True)
def _four_distances(vectors, columns, h0, g0, n_g, s0, s1, s2, s3):  # noqa: PLR0913 - one kernel, its arrays
    """Squared distances of vectors ``h0 .. h0 + 3`` (the last one repeated past the end)
    to the centroids ``g0 .. g0 + n_g - 1``, into ``s0 .. s3``."""
    last = vectors.shape[0] - 1
    i0, i1, i2, i3 = h0, min(h0 + 1, last), min(h0 + 2, last), min(h0 + 3, last)
    for b in range(n_g):
        s0[b] = 0.0
        s1[b] = 0.0
        s2[b] = 0.0
        s3[b] = 0.0
    for d in range(vectors.shape[1]):
        q0, q1, q2, q3 = vectors[i0, d], vectors[i1, d], vectors[i2, d], vectors[i3, d]
        row = columns[d, g0:g0 + n_g]
        for b in range(n_g):
            x = row[b]
            e0, e1, e2, e3 = x - q0, x - q1, x - q2, x - q3
            s0[b] += e0 * e0
            s1[b] += e1 * e1
            s2[b] += e2 * e2
            s3[b] += e3 * e3


@njit(cache=True)
def _near_pairs(row, h, g0, first, n_g, near, wide, found):
    """Positions ``b`` in ``first .. n_g - 1`` where the squared distance ``row[b]`` of
    vector ``h`` to centroid ``g0 + b`` is within either direction's skipping bound, into
    ``found``; returns how many (branch-free: most pairs are far)."""
    count = 0
    near_h, wide_h = near[h], wide[h]
    for b in range(first, n_g):
        g = g0 + b
        forward = near_h + wide[g]
        backward = near[g] + wide_h
        squared = row[b]
        found[count] = b
        count += (squared <= forward * forward) | (squared <= backward * backward)
    return count


@njit(cache=True)
def _scan_tiles(rows, vectors, starts, reach, row_spread, crowded, worker, n_workers):
    """Pairs of vectors ``(h, g >= h)`` for the tiles ``worker, worker + n_workers, ...``
    of four vectors: marks ``crowded`` in both directions."""
    n_vectors = vectors.shape[0]
    columns = np.ascontiguousarray(vectors.T)
    near = reach * (1.0 + SKIP_MARGIN)
    wide_rows = row_spread * (1.0 + SKIP_MARGIN)
    wide = wide_rows[starts[1:] - 1]
    tiles = np.empty((4, GROUP_TILE))
    found = np.empty(GROUP_TILE, dtype=np.intp)
    for h0 in range(4 * worker, n_vectors, 4 * n_workers):
        for g0 in range(h0, n_vectors, GROUP_TILE):
            n_g = min(GROUP_TILE, n_vectors - g0)
            _four_distances(vectors, columns, h0, g0, n_g, tiles[0], tiles[1], tiles[2],
                            tiles[3])
            for a in range(min(4, n_vectors - h0)):
                h = h0 + a
                for c in range(_near_pairs(tiles[a], h, g0, max(0, h - g0), n_g, near, wide,
                                           found)):
                    g = g0 + found[c]
                    gap = tiles[a, found[c]]
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
    measured once and serves both directions; ``n_workers`` threads take interleaved tiles,
    each marking its own copy of the answer.
    """
    marks = np.zeros((n_workers, vectors.shape[0]), dtype=np.bool_)
    for worker in prange(n_workers):
        _scan_tiles(rows, vectors, starts, reach, row_spread, marks[worker], worker,
                    n_workers)
    crowded = np.zeros(vectors.shape[0], dtype=np.bool_)
    for worker in range(n_workers):
        crowded |= marks[worker]
    return crowded
