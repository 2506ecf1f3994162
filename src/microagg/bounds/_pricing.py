"""Pricing for the set-partitioning LP: heuristic column search, the certified lower bound on
the reduced cost, and brute-force exact pricing for tiny instances (tests only)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from numpy.typing import NDArray

from .._runtime.jit import njit
from ..partition._neighbour_lists import sq_to_point

__all__ = ["brute_force_columns", "brute_force_min_rc", "greedy_columns", "knn_sums",
           "neighbours", "rc_lower_bound", "sse_of"]


def sse_of(X: NDArray[np.float64], members: NDArray[np.intp]) -> float:
    """SSE of one group: squared distances of its rows to their mean."""
    block = X[members]
    return float(((block - block.mean(axis=0)) ** 2).sum())


def neighbours(X: NDArray[np.float64], width: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Squared distances and indices of each row's ``width`` nearest rows (itself first)."""
    from sklearn.neighbors import NearestNeighbors  # loaded when used

    width = min(width, X.shape[0])
    dist, idx = NearestNeighbors(n_neighbors=width).fit(X).kneighbors(X)
    # a duplicate may come before the row itself: put the row first, keep the rest sorted
    for i in np.flatnonzero(idx[:, 0] != np.arange(X.shape[0])):
        pos = int(np.flatnonzero(idx[i] == i)[0]) if (idx[i] == i).any() else width - 1
        idx[i, 1:pos + 1] = idx[i, :pos].copy()
        dist[i, 1:pos + 1] = dist[i, :pos].copy()
        idx[i, 0], dist[i, 0] = i, 0.0
    return np.ascontiguousarray(dist**2), np.ascontiguousarray(idx, dtype=np.intp)


def knn_sums(X: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``D[i, s - k]``: sum of the ``s - 1`` smallest squared distances from row ``i`` to the
    other rows, for every size ``s`` in ``k .. min(2k - 1, n)``."""
    n = X.shape[0]
    top = min(2 * k - 1, n)
    sq, _ = neighbours(X, top)
    cum = np.cumsum(sq[:, 1:], axis=1)  # cum[:, t - 1]: the t nearest other rows
    return np.ascontiguousarray(cum[:, k - 2:top - 1])


def rc_lower_bound(knn: NDArray[np.float64], u: NDArray[np.float64], k: int) -> float:
    """A proved lower bound on ``min rc(S) = SSE(S) - sum_{i in S} u_i`` over ``|S| in [k, 2k-1]``.

    For a group ``S`` of size ``s`` with mean ``c``,
    ``SSE(S) = (1 / (2s)) sum_{i, j in S} ||x_i - x_j||^2
    = sum_{i in S} (1 / (2s)) sum_{j in S, j != i} ||x_i - x_j||^2``.
    The inner sum has ``s - 1`` terms, so it is at least ``D_i(s - 1)``, the sum of the
    ``s - 1`` smallest squared distances from ``i`` to any other row. Hence
    ``rc(S) >= sum_{i in S} a_i(s)`` with ``a_i(s) = D_i(s - 1) / (2s) - u_i``, and the right
    side over all ``S`` of size ``s`` is smallest when ``S`` holds the ``s`` rows of smallest
    ``a_i(s)``. The minimum of that over ``s`` bounds ``min rc`` from below.

    Parameters
    ----------
    knn : ndarray of shape (n_samples, n_sizes)
        :func:`knn_sums` of the data.
    u : ndarray of shape (n_samples,)
        Dual values (any real numbers: the bound holds for every ``u``).
    k : int
        Minimum group size.

    Returns
    -------
    float
    """
    best = np.inf
    for col in range(knn.shape[1]):
        s = k + col
        a = knn[:, col] / (2.0 * s) - u
        best = min(best, float(np.partition(a, s - 1)[:s].sum()))
    return best


POLISH_STEPS = 50
"""Most exchanges :func:`_polish` makes on one group (each lowers its reduced cost, so the
loop ends anyway; Census k = 10 at the duals of 5 and 40 s of column generation: 0.8 and
1.1 exchanges a row on average, at most 9 and 11)."""


@njit(cache=True)
def _grow(X, u, nbr, k, start):  # pragma: no cover - numba
    """Greedy group around ``start`` among its neighbours: best reduced cost, size, and the
    members' places in ``nbr[start]`` in the order they joined (the group is
    ``nbr[start, slots[:size]]``)."""
    width = nbr.shape[1]
    top = min(2 * k - 1, width)
    used = np.zeros(width, dtype=np.bool_)
    mean = X[start].copy()
    slots = np.zeros(top, dtype=np.int64)
    used[0] = True
    sse = 0.0
    usum = u[start]
    best_rc = np.inf
    best_size = 0
    for size in range(1, top):
        pick = -1
        pick_delta = np.inf
        pick_d = 0.0
        for t in range(1, width):
            if used[t]:
                continue
            d = sq_to_point(X, nbr[start, t], mean)
            delta = size / (size + 1.0) * d - u[nbr[start, t]]
            if delta < pick_delta:
                pick, pick_delta, pick_d = t, delta, d
        if pick < 0:
            break
        used[pick] = True
        slots[size] = pick
        j = nbr[start, pick]
        sse += size / (size + 1.0) * pick_d
        usum += u[j]
        for f in range(X.shape[1]):
            mean[f] += (X[j, f] - mean[f]) / (size + 1.0)
        if size + 1 >= k and sse - usum < best_rc:
            best_rc = sse - usum
            best_size = size + 1
    return best_rc, best_size, slots


@njit(cache=True)
def _best_swap(X, u, row, slots, size, inside, mean, k):  # pragma: no cover - numba
    """The drop (while ``size > k``) or swap that lowers the reduced cost of the group
    ``row[slots[:size]]`` most, its first member staying: ``(change, position of the member
    left, place in row of the row taken or -1)``, ``(0, -1, -1)`` if none lowers it."""
    best, out_q, in_t = 0.0, -1, -1
    without = np.empty(mean.shape[0])
    for q in range(1, size):
        m = row[slots[q]]
        drop = u[m] - size / (size - 1.0) * sq_to_point(X, m, mean)
        if size > k and drop < best:
            best, out_q, in_t = drop, q, -1
        for f in range(mean.shape[0]):
            without[f] = (size * mean[f] - X[m, f]) / (size - 1.0)
        for t in range(1, row.shape[0]):
            if not inside[t]:
                swap = drop + (size - 1.0) / size * sq_to_point(X, row[t], without) - u[row[t]]
                if swap < best:
                    best, out_q, in_t = swap, q, t
    return best, out_q, in_t


@njit(cache=True)
def _best_add(X, u, row, size, inside, mean):  # pragma: no cover - numba
    """The row of ``row`` outside the group whose joining lowers its reduced cost most:
    ``(change, place in row)``, ``(0, -1)`` if none lowers it."""
    best, in_t = 0.0, -1
    for t in range(1, row.shape[0]):
        if not inside[t]:
            add = size / (size + 1.0) * sq_to_point(X, row[t], mean) - u[row[t]]
            if add < best:
                best, in_t = add, t
    return best, in_t


@njit(cache=True)
def _exchange_gain(X, u, row, slots, size, inside, mean, k, top):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """The exchange that lowers the reduced cost of the group ``row[slots[:size]]`` (mean
    ``mean``) most: a member other than the first swapped for a row of ``row`` outside it,
    dropped (while ``size > k``), or a row added (while ``size < top``). With ``s`` members,
    dropping ``m`` changes the SSE by ``-s/(s-1) |x_m - mean|^2``, adding ``j`` by
    ``s/(s+1) |x_j - mean|^2``, and a swap by the first with ``s - 1`` for ``s`` in the
    second, at the mean without ``m``. Returns ``(change, position of the member left or
    -1, place in row of the row added or -1)``."""
    best, out_q, in_t = _best_swap(X, u, row, slots, size, inside, mean, k)
    if size < top:
        add, t = _best_add(X, u, row, size, inside, mean)
        if add < best:
            best, out_q, in_t = add, -1, t
    return best, out_q, in_t


@njit(cache=True)
def _polish(X, u, row, k, slots, size, rc, tol):  # pragma: no cover - numba
    """Best exchanges (:func:`_exchange_gain`) on the group ``row[slots[:size]]`` of reduced
    cost ``rc`` while one lowers it by more than ``tol``; the first member (the row the group
    grew from) stays. Returns the reduced cost, the places in ``row`` and the size."""
    p = X.shape[1]
    top = slots.shape[0]
    inside = np.zeros(row.shape[0], dtype=np.bool_)
    mean = np.zeros(p)
    for q in range(size):
        inside[slots[q]] = True
        for f in range(p):
            mean[f] += X[row[slots[q]], f] / size
    for _ in range(POLISH_STEPS):
        change, q, t = _exchange_gain(X, u, row, slots, size, inside, mean, k, top)
        if change >= -tol:
            break
        rc += change
        if q >= 0:  # the member leaves: the last takes its place
            m = row[slots[q]]
            inside[slots[q]] = False
            for f in range(p):
                mean[f] = (size * mean[f] - X[m, f]) / (size - 1.0)
            size -= 1
            slots[q] = slots[size]
        if t >= 0:
            inside[t] = True
            slots[size] = t
            for f in range(p):
                mean[f] = (size * mean[f] + X[row[t], f]) / (size + 1.0)
            size += 1
    return rc, slots, size


@njit(cache=True)
def _greedy_all(X, u, nbr, k, tol):  # pragma: no cover - numba
    """:func:`_grow` from every row, then :func:`_polish`; rows whose group has reduced cost
    < ``-tol``."""
    n = X.shape[0]
    top = min(2 * k - 1, nbr.shape[1])
    cols = np.full((n, top), -1, dtype=np.int64)
    rcs = np.empty(n)
    for i in range(n):
        rc, size, slots = _grow(X, u, nbr, k, i)
        if size > 0:
            rc, slots, size = _polish(X, u, nbr[i], k, slots, size, rc, tol)
        rcs[i] = rc
        if rc < -tol:
            for t in range(size):
                cols[i, t] = nbr[i, slots[t]]
    return cols, rcs


def greedy_columns(X: NDArray[np.float64], u: NDArray[np.float64], nbr: NDArray[np.intp],
                   k: int, tol: float) -> tuple[list[NDArray[np.intp]], float]:
    """Negative-reduced-cost groups found greedily from each row, and the best reduced cost."""
    cols, rcs = _greedy_all(X, u, nbr.astype(np.int64), k, tol)
    found = [np.sort(row[row >= 0]).astype(np.intp) for row in cols if row[0] >= 0]
    return found, float(rcs.min()) if rcs.size else 0.0


def brute_force_columns(n: int, k: int) -> list[tuple[int, ...]]:
    """Every subset of ``range(n)`` of size ``k .. 2k - 1`` (tiny ``n`` only)."""
    if n > 14:
        raise ValueError(f"brute force is for n_samples <= 14. Got n_samples={n}.")
    return [S for s in range(k, min(2 * k - 1, n) + 1) for S in combinations(range(n), s)]


def brute_force_min_rc(X: NDArray[np.float64], u: NDArray[np.float64],
                       k: int) -> tuple[float, tuple[int, ...]]:
    """Exact ``min rc(S)`` over ``|S| in [k, 2k-1]`` by enumeration, and the minimising group."""
    best = np.inf
    arg: tuple[int, ...] = ()
    for S in brute_force_columns(X.shape[0], k):
        rc = sse_of(X, np.asarray(S)) - float(u[list(S)].sum())
        if rc < best:
            best, arg = rc, S
    return best, arg


def knn_table(X: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """``T[i, t]``: sum of the ``t`` smallest squared distances from row ``i`` to the other
    rows, ``t = 0 .. min(2k - 2, n - 1)``."""
    sq, _ = neighbours(X, min(2 * k - 1, X.shape[0]))
    out = np.zeros((X.shape[0], sq.shape[1]))
    out[:, 1:] = np.cumsum(sq[:, 1:], axis=1)
    return out


@njit(cache=True)
def _star(X, i, u, table, s, d2, e):  # pragma: no cover - numba
    """``e_ij(s)`` for every ``j`` (``+inf`` at ``i``) and the bound of ``rc / s`` at ``i``."""
    n, p = X.shape
    for j in range(n):
        acc = 0.0
        for f in range(p):
            diff = X[i, f] - X[j, f]
            acc += diff * diff
        d2[j] = acc
        e[j] = (acc + table[j, s - 2]) / (2.0 * s) - u[j]
    e[i] = np.inf
    part = np.partition(e, s - 2)
    total = table[i, s - 1] / (2.0 * s) - u[i]
    for q in range(s - 1):
        total += part[q]
    return total / s, part[s - 2]


@njit(cache=True)
def _anchored(X, u, table, k):  # pragma: no cover - numba
    """Per-row ``rho_i`` of :func:`anchored_bound` and a supergradient of the bound in ``u``."""
    n = X.shape[0]
    rho = np.empty(n)
    grad = np.ones(n)
    d2 = np.empty(n)
    e = np.empty(n)
    for i in range(n):
        rho[i], cut = _star(X, i, u, table, k, d2, e)
        grad[i] -= 1.0 / k
        taken = 0
        for j in range(n):  # the k - 1 rows of the minimum (ties: the first ones)
            if taken < k - 1 and e[j] < cut:
                grad[j] -= 1.0 / k
                taken += 1
        for j in range(n):
            if taken < k - 1 and e[j] == cut:
                grad[j] -= 1.0 / k
                taken += 1
    return rho, grad


def anchored_bound(X: NDArray[np.float64], u: NDArray[np.float64], table: NDArray[np.float64],
                   k: int) -> tuple[float, NDArray[np.float64]]:
    """A proved lower bound on the SSE of every partition into groups of ``k .. 2k-1`` rows.

    For any partition ``P`` and any ``u``, ``SSE(P) = sum(u) + sum_{S in P} rc(S)
    = sum(u) + sum_i rc(S_i) / |S_i|`` (``S_i`` the group of row ``i``), so
    ``SSE(P) >= sum(u) + sum_i rho_i`` for any ``rho_i <= min_{S containing i} rc(S) / |S|``,
    and also for any ``rho_i`` at most that minimum over the groups of ``k`` rows alone
    (:mod:`microagg.bounds._exact`). For ``S`` of size ``s`` holding ``i``, ``SSE(S) = sum_{j in S} (1/(2s)) sum_{l in S, l != j}
    d_jl^2``; the term of ``i`` is at least ``T_i(s-1) / (2s)`` (its ``s-1`` nearest rows) and
    the term of each ``j != i`` at least ``(d_ij^2 + T_j(s-2)) / (2s)`` (``i`` plus ``s-2``
    other rows). So ``rc(S) >= T_i(s-1)/(2s) - u_i + sum_{j in S, j != i} e_ij(s)`` with
    ``e_ij(s) = (d_ij^2 + T_j(s-2))/(2s) - u_j``, whose minimum over ``S`` takes the ``s-1``
    smallest ``e_ij(s)``; ``rho_i`` is that at ``s = k`` divided by ``k``: groups of ``k``
    rows suffice (:func:`~microagg.bounds._exact.exact_pricing`). ``T`` is
    :func:`knn_table`. O(n^2 p) per call.

    Returns
    -------
    bound : float
    grad : ndarray of shape (n_samples,)
        A supergradient of the bound (a concave function of ``u``).
    """
    rho, grad = _anchored(X, u, table, k)
    return float(u.sum() + rho.sum()), grad
