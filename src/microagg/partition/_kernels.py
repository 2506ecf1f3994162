"""numba kernels shared by the partitioners: distances, farthest record and pair, k nearest,
group taking, removal.

Validation is assumed: every array here is finite float64 and C-contiguous.

The fixed-size kernels (MDAV family, MD, CBFS, V-MDAV) keep the records that are still
unassigned in a *feature-major* work array ``Xt`` of shape (n_features, n_samples) whose first
``m`` columns are the unassigned records, and ``index[:m]`` their original row numbers. A
distance pass is then a vectorizable sweep over contiguous memory; removing a group costs
O(k * n_features) (each removed column is overwritten by the last active one), so the order
of the active columns changes, and every comparison breaks ties on ``index``:

    **ties are broken in favour of the record with the lowest row index.**

Memory is O(n_samples * n_features): no n x n matrix is ever built.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._runtime.jit import njit

__all__ = [
    "active_sums",
    "assign_to_nearest_centroid",
    "claim_nearest",
    "distance_pass",
    "farthest",
    "farthest_pair",
    "insert_sorted",
    "make_workspace",
    "remove_flagged",
    "sq_dist_one",
    "take_group",
]

# below this many active records a distance pass runs on one thread (starting the threads
# would cost more than it saves); measured on a 2-core machine, see benchmarks/
_PARALLEL_MIN = 8_192
_N_CHUNKS = 8


@njit(cache=True)
def make_workspace(X):  # pragma: no cover - numba
    """Feature-major copy of ``X`` and the identity index: the state of the kernels.

    Always a copy (the kernels reorder it in place); ``np.ascontiguousarray(X.T)`` would
    return a view of a single-column ``X``.
    """
    Xt = np.empty((X.shape[1], X.shape[0]))
    for j in range(X.shape[1]):
        Xt[j] = X[:, j]
    return Xt, np.arange(X.shape[0])


@njit(cache=True)
def _column_sum(row, m):  # pragma: no cover - numba
    """Sum of ``row[:m]`` with four interleaved partial sums (vectorizable, deterministic)."""
    a0 = a1 = a2 = a3 = 0.0
    nb = m // 4
    for b in range(nb):
        a0 += row[4 * b]
        a1 += row[4 * b + 1]
        a2 += row[4 * b + 2]
        a3 += row[4 * b + 3]
    for i in range(4 * nb, m):
        a0 += row[i]
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def active_sums(Xt, m, out):  # pragma: no cover - numba
    """Column sums of the first ``m`` active records into ``out``."""
    for j in range(Xt.shape[0]):
        out[j] = _column_sum(Xt[j], m)


@njit(cache=True)
def _sq_dist_range(Xt, lo, hi, point, out_all):  # pragma: no cover - numba
    """``out[i] = sum_j (Xt[j, i] - point[j])**2`` for ``lo <= i < hi``.

    Features are added in feature order, four per sweep (the same left-to-right sum as a
    plain loop over features), so a record's value does not depend on the other records:
    duplicated records get bit-identical distances. Rows are sliced first so that the loops
    run from 0 and vectorize.
    """
    p = Xt.shape[0]
    out = out_all[lo:hi]
    w = hi - lo
    j = 0
    first = True
    while j + 4 <= p:
        r0 = Xt[j, lo:hi]
        r1 = Xt[j + 1, lo:hi]
        r2 = Xt[j + 2, lo:hi]
        r3 = Xt[j + 3, lo:hi]
        c0 = point[j]
        c1 = point[j + 1]
        c2 = point[j + 2]
        c3 = point[j + 3]
        if first:
            for i in range(w):
                a = r0[i] - c0
                b = r1[i] - c1
                c = r2[i] - c2
                d = r3[i] - c3
                out[i] = a * a + b * b + c * c + d * d
            first = False
        else:
            for i in range(w):
                a = r0[i] - c0
                b = r1[i] - c1
                c = r2[i] - c2
                d = r3[i] - c3
                out[i] = out[i] + a * a + b * b + c * c + d * d
        j += 4
    while j < p:
        r0 = Xt[j, lo:hi]
        c0 = point[j]
        if first:
            for i in range(w):
                a = r0[i] - c0
                out[i] = a * a
            first = False
        else:
            for i in range(w):
                a = r0[i] - c0
                out[i] = out[i] + a * a
        j += 1


@njit(cache=True)
def _before(d1, r1, d2, r2):  # pragma: no cover - numba
    """Order of the nearest-neighbour search: smaller distance, then lower row index."""
    return d1 < d2 or (d1 == d2 and r1 < r2)


@njit(cache=True)
def insert_sorted(nd, nr, ni, filled, need, di, ri, i):  # pragma: no cover - numba
    """Insert (di, ri, i) into the sorted buffers if it belongs there; return the new fill."""
    if filled == need and not _before(di, ri, nd[need - 1], nr[need - 1]):
        return filled
    t = filled if filled < need else need - 1
    while t > 0 and _before(di, ri, nd[t - 1], nr[t - 1]):
        nd[t] = nd[t - 1]
        nr[t] = nr[t - 1]
        ni[t] = ni[t - 1]
        t -= 1
    nd[t] = di
    nr[t] = ri
    ni[t] = i
    return filled + 1 if filled < need else filled


@njit(cache=True)
def _scan_range(dist, lo, hi, excluded, index, seed, need, nd, nr, ni, want_far):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Best ``need`` (distance, row) of ``lo..hi`` into sorted buffers ``nd/nr/ni``, and the
    farthest position (largest distance, lowest row on ties) when ``want_far``.

    Returns ``(filled, farthest)``; excluded positions and the seed itself are skipped.
    """
    filled = 0
    far = -1
    far_d = -1.0
    for i in range(lo, hi):
        if excluded[i]:
            continue
        if i == seed:
            continue
        di = dist[i]
        if want_far and (di > far_d or (di == far_d and index[i] < index[far])):
            far_d = di
            far = i
        if need == 0:
            continue
        if filled == need and di > nd[need - 1]:
            continue
        filled = insert_sorted(nd, nr, ni, filled, need, di, index[i], i)
    return filled, far


@njit(cache=True, parallel=True)
def _pass_parallel(Xt, m, point, dist, excluded, index, seed, need, want_far,  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
                   cd, cr, ci, cfill, cfar):  # pragma: no cover - numba
    n_chunks = cd.shape[0]
    step = (m + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        lo = min(m, c * step)
        hi = min(m, lo + step)
        _sq_dist_range(Xt, lo, hi, point, dist)
        f, far = _scan_range(dist, lo, hi, excluded, index, seed, need,
                             cd[c], cr[c], ci[c], want_far)
        cfill[c] = f
        cfar[c] = far


@njit(cache=True)
def distance_pass(Xt, m, point, dist, excluded, index, seed, need, want_far, out):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """One sweep over the ``m`` active records: their distances to ``point`` into ``dist``;
    the ``need`` nearest non-excluded positions other than ``seed`` into ``out[:need]``
    (sorted by distance, then row index); returns the farthest non-excluded position other
    than ``seed`` (-1 when ``want_far`` is False or there is none).

    From ``_PARALLEL_MIN`` records on, the sweep is cut into chunks computed and scanned in
    parallel, and their candidates merged: the result is the same as one sequential scan.
    """
    n_chunks = _N_CHUNKS if m >= _PARALLEL_MIN else 1
    width = max(need, 1)
    cd = np.full((n_chunks, width), np.inf)
    cr = np.full((n_chunks, width), np.iinfo(np.int64).max, dtype=np.int64)
    ci = np.full((n_chunks, width), -1, dtype=np.int64)
    cfill = np.zeros(n_chunks, dtype=np.int64)
    cfar = np.full(n_chunks, -1, dtype=np.int64)
    if n_chunks == 1:
        _sq_dist_range(Xt, 0, m, point, dist)
        f, far = _scan_range(dist, 0, m, excluded, index, seed, need, cd[0], cr[0], ci[0],
                             want_far)
        cfill[0] = f
        cfar[0] = far
    else:
        _pass_parallel(Xt, m, point, dist, excluded, index, seed, need, want_far,
                       cd, cr, ci, cfill, cfar)
    if need > 0:
        bd = np.full(need, np.inf)
        br = np.full(need, np.iinfo(np.int64).max, dtype=np.int64)
        filled = 0
        for c in range(n_chunks):
            for t in range(cfill[c]):
                filled = insert_sorted(bd, br, out, filled, need, cd[c, t], cr[c, t], ci[c, t])
        if filled < need:
            raise ValueError("distance_pass: fewer candidates than needed")
    far = -1
    if want_far:
        for c in range(n_chunks):
            f = cfar[c]
            if f >= 0 and (far < 0 or dist[f] > dist[far]
                           or (dist[f] == dist[far] and index[f] < index[far])):
                far = f
    return far


@njit(cache=True)
def farthest(dist, m, excluded, index):  # pragma: no cover - numba
    """Position of the largest ``dist[:m]`` not ``excluded``; the lowest ``index`` wins ties."""
    best = -1
    best_d = -1.0
    for i in range(m):
        di = dist[i]
        if di < best_d or excluded[i]:
            continue
        if di > best_d or index[i] < index[best]:
            best_d = di
            best = i
    return best


@njit(cache=True)
def remove_flagged(Xt, index, m, flagged, positions, where):  # pragma: no cover - numba
    """Remove the active ``positions`` (all flagged) from the first ``m``; return the new ``m``.

    Each removed column is overwritten by the last active one (O(len(positions) * p)) and the
    flags are cleared; ``where`` (row index -> position, or empty) is kept up to date.
    Positions are processed from the highest down, so a column that is moved is never one
    still waiting to be removed.
    """
    p = Xt.shape[0]
    track = where.shape[0] > 0
    order = np.sort(positions)
    for t in range(order.shape[0] - 1, -1, -1):
        q = order[t]
        last = m - 1
        if q != last:
            for j in range(p):
                Xt[j, q] = Xt[j, last]
            index[q] = index[last]
            if track:
                where[index[q]] = q
        flagged[q] = False
        flagged[last] = False
        m -= 1
    return m


@njit(cache=True)
def sq_dist_one(Xt, i, point):  # pragma: no cover - numba
    """Squared distance of active record ``i`` to ``point``: bit-identical to a distance pass."""
    d = 0.0
    for j in range(Xt.shape[0]):
        diff = Xt[j, i] - point[j]
        d = d + diff * diff
    return d


@njit(cache=True)
def claim_nearest(Xt, index, n, dist, taken, seed, k, near, labels, label):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Give ``label`` to ``seed`` and its ``k - 1`` nearest records not yet ``taken``, and
    mark them taken (``near`` receives the k - 1 positions). Positions are rows: for the
    kernels that keep every record in place and flag the assigned ones."""
    point = Xt[:, seed].copy()
    taken[seed] = True
    labels[seed] = label
    distance_pass(Xt, n, point, dist, taken, index, -1, k - 1, False, near)
    for t in range(k - 1):
        taken[near[t]] = True
        labels[near[t]] = label


@njit(cache=True)
def assign_to_nearest_centroid(X, labels, n_groups, rows):  # pragma: no cover - numba
    """Give each row in ``rows`` the label of the nearest group centroid (lowest label on ties).

    Centroids are those of the groups as formed before any of ``rows`` joins (the end game of
    MD / MDAV-1 / CBFS / V-MDAV: each leftover record goes to its closest group).
    """
    n, p = X.shape
    cent = np.zeros((n_groups, p))
    count = np.zeros(n_groups)
    for i in range(n):
        g = labels[i]
        if g >= 0:
            count[g] += 1.0
            for j in range(p):
                cent[g, j] += X[i, j]
    for g in range(n_groups):
        for j in range(p):
            cent[g, j] /= count[g]
    for t in range(rows.shape[0]):
        i = rows[t]
        best = -1
        best_d = np.inf
        for g in range(n_groups):
            d = 0.0
            for j in range(p):
                diff = X[i, j] - cent[g, j]
                d += diff * diff
            if d < best_d:
                best_d = d
                best = g
        labels[i] = best


@njit(cache=True)
def take_group(Xt, index, m, dist, flagged, seed, k, group, labels, label, want_far):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Give ``label`` to ``seed`` and its ``k - 1`` nearest unflagged records and flag them.

    ``dist`` is left holding the squared distances from ``seed``; ``group`` receives the
    positions. Returns the farthest unflagged record from ``seed`` once the group is taken
    (-1 when ``want_far`` is False).
    """
    point = Xt[:, seed].copy()
    group[0] = seed
    far = distance_pass(Xt, m, point, dist, flagged, index, seed, k - 1, want_far, group[1:])
    for t in range(k):
        flagged[group[t]] = True
        labels[index[group[t]]] = label
    if want_far and flagged[far]:  # only when (nearly) all distances tie
        far = farthest(dist, m, flagged, index)
    return far


@njit(cache=True)
def farthest_pair(Xt, index, m, dist, flagged):  # pragma: no cover - numba
    """The two active records farthest apart, as (position, position), lower row first.

    Exact in O(m log m + pairs checked): with ``c`` the centroid, ``d(a, b) <= d(a, c) +
    d(b, c)``, so scanning records by decreasing distance to ``c`` the search for a partner
    of ``a`` stops as soon as that bound falls below the best pair found. The first guess is
    MDAV's pair (farthest from ``c``, then farthest from it). Ties: the pair with the
    lowest (smaller row, larger row) wins.
    """
    p = Xt.shape[0]
    centroid = np.empty(p)
    active_sums(Xt, m, centroid)
    for j in range(p):
        centroid[j] /= m
    no_neighbours = np.empty(0, dtype=np.int64)
    distance_pass(Xt, m, centroid, dist, flagged, index, -1, 0, False, no_neighbours)
    dc = np.sqrt(dist[:m])
    order = np.argsort(-dc, kind="mergesort")
    a0 = order[0]
    point = Xt[:, a0].copy()
    b0 = distance_pass(Xt, m, point, dist, flagged, index, a0, 0, True, no_neighbours)
    best_d = dist[b0]
    best_lo = min(index[a0], index[b0])
    best_hi = max(index[a0], index[b0])
    best_a = a0 if index[a0] < index[b0] else b0
    best_b = b0 if best_a == a0 else a0
    slack = 1e-9 * (1.0 + dc[order[0]])
    for u in range(m):
        a = order[u]
        if 2.0 * dc[a] + slack < np.sqrt(best_d):
            break
        point = Xt[:, a].copy()
        for v in range(u + 1, m):
            b = order[v]
            if dc[a] + dc[b] + slack < np.sqrt(best_d):
                break
            d = sq_dist_one(Xt, b, point)
            lo = min(index[a], index[b])
            hi = max(index[a], index[b])
            if d > best_d or (d == best_d and (lo < best_lo or (lo == best_lo and hi < best_hi))):
                best_d = d
                best_lo = lo
                best_hi = hi
                best_a = a if index[a] < index[b] else b
                best_b = b if best_a == a else a
    return best_a, best_b
