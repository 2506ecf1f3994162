"""The sorting framework of seed 003 (MultiDSort, Meansort, pairwise-systematic) and MHM.

Orderings turn the records into a sequence; two ways of cutting a sequence into groups live
here: the pairwise-systematic (P-S) microaggregation of seed 003, and the optimal
segmentation of an ordering by the Hansen-Mukherjee shortest path (MHM).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_choice, check_k, check_matrix
from .._runtime.jit import njit
from ._kernels import claim_nearest, distance_pass, make_workspace

__all__ = [
    "ORDERINGS",
    "meansort_order",
    "meansort_ps",
    "mhm",
    "mhm_segment",
    "minmax_normalize",
    "multidsort_order",
    "multidsort_ps",
    "npn_order",
]

_GROW = ("sse", "nearest")
_NORMALIZE = ("minmax", "none")


def minmax_normalize(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Seed 003, Eq. 4: each column to [0, 1]; constant columns become 0."""
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    span[span == 0] = 1.0
    return np.ascontiguousarray((X - lo) / span)


def normalized(X: NDArray[np.float64], normalize: str, *, caller: str) -> NDArray[np.float64]:
    """``X`` min-max normalized (``"minmax"``) or as given (``"none"``)."""
    check_choice(normalize, _NORMALIZE, name="normalize", caller=caller)
    return minmax_normalize(X) if normalize == "minmax" else X


@njit(cache=True)
def _rank_sum_keys(X, rows):  # pragma: no cover - numba
    """MultiDSort keys (Algorithm 1): per attribute, each record's 1-based position in the
    stable ascending sort of the given ``rows``; summed over the attributes."""
    m = rows.shape[0]
    key = np.zeros(m)
    col = np.empty(m)
    for j in range(X.shape[1]):
        for t in range(m):
            col[t] = X[rows[t], j]
        order = np.argsort(col, kind="mergesort")
        for pos in range(m):
            key[order[pos]] += pos + 1
    return key


def multidsort_order(X: ArrayLike) -> NDArray[np.intp]:
    """MultiDSort (seed 003, Algorithm 1): order records by the sum of their per-attribute ranks.

    Ranks are 1-based positions in a stable ascending sort of each attribute, so ties keep
    row order; records with equal rank sums also keep row order.

    Examples
    --------
    Seed 003, Tables I-III: the sorted table is rows 4, 3, 5, 2, 1 (1-based).

    >>> X = [[5, 6], [3, 10], [1, 3], [2, 1], [4, 2]]
    >>> (multidsort_order(X) + 1).tolist()
    [4, 3, 5, 2, 1]
    """
    A = check_matrix(X, caller="multidsort_order")
    key = _rank_sum_keys(A, np.arange(A.shape[0]))
    return np.argsort(key, kind="stable").astype(np.intp)


def meansort_keys(X: ArrayLike) -> NDArray[np.float64]:
    """Meansort sort function (seed 003, Eq. 5): ``SF_j = sum_i (y_ij - mean_i)``.

    Examples
    --------
    Seed 003, Table IV:

    >>> meansort_keys([[5, 6], [3, 10], [1, 3], [2, 1], [4, 2]]).round(1).tolist()
    [3.6, 5.6, -3.4, -4.4, -1.4]
    """
    A = check_matrix(X, caller="meansort_keys")
    return (A - A.mean(axis=0)).sum(axis=1)


def meansort_order(X: ArrayLike) -> NDArray[np.intp]:
    """Meansort: records in ascending ``SF`` (Eq. 5), ties in row order.

    ``SF_j`` differs from the row sum only by a constant, so the order is that of the row
    sums, and re-sorting a subset (as P-S does after removing groups) never changes the
    relative order: Meansort is sorted once.

    Examples
    --------
    Seed 003, Table V: rows 4, 3, 5, 1, 2 (1-based).

    >>> (meansort_order([[5, 6], [3, 10], [1, 3], [2, 1], [4, 2]]) + 1).tolist()
    [4, 3, 5, 1, 2]
    """
    return np.argsort(meansort_keys(X), kind="stable").astype(np.intp)


@njit(cache=True)
def _grow(Xt, index, n, taken, seed, k, grow_sse, labels, label):  # pragma: no cover - numba  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Form a group of ``seed`` and ``k - 1`` more unassigned records, mark and label them.

    ``grow_sse``: add, one at a time, the record whose inclusion increases the group's SSE
    least, i.e. the one nearest to the group's current centroid (the increase is
    ``s / (s + 1) * |x - c|^2`` for a group of size s). Otherwise: the seed's k - 1 nearest.
    Ties go to the lowest row index.
    """
    p = Xt.shape[0]
    dist = np.empty(n)
    if not grow_sse:
        claim_nearest(Xt, index, n, dist, taken, seed, k, np.empty(k - 1, dtype=np.int64),
                      labels, label)
        return
    taken[seed] = True
    labels[seed] = label
    centroid = Xt[:, seed].copy()
    one = np.empty(1, dtype=np.int64)
    for size in range(1, k):
        distance_pass(Xt, n, centroid, dist, taken, index, -1, 1, False, one)
        e = one[0]
        taken[e] = True
        labels[e] = label
        for j in range(p):
            centroid[j] += (Xt[j, e] - centroid[j]) / (size + 1)


@njit(cache=True)
def _ps_kernel(X, k, multid, grow_sse):  # pragma: no cover - numba  # noqa: C901, PLR0912 - numba kernel: one loop nest, kept whole for speed
    """Pairwise-systematic microaggregation (seed 003, Algorithm 2); see :func:`meansort_ps`."""
    n = X.shape[0]
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    taken = np.zeros(n, dtype=np.bool_)
    global_order = np.argsort(X.sum(axis=1), kind="mergesort")  # Meansort, sorted once
    m = n
    g = 0
    while m >= 2 * k:
        rows = np.empty(m, dtype=np.int64)
        t = 0
        if multid:
            for i in range(n):
                if not taken[i]:
                    rows[t] = i
                    t += 1
            key = _rank_sum_keys(X, rows)
            order = np.argsort(key, kind="mergesort")
            sorted_rows = rows[order]
        else:
            for u in range(n):
                i = global_order[u]
                if not taken[i]:
                    rows[t] = i
                    t += 1
            sorted_rows = rows
        first = sorted_rows[0]
        _grow(Xt, index, n, taken, first, k, grow_sse, labels, g)
        g += 1
        m -= k
        if m + k < 3 * k:  # 2k..3k-1 records were left: one group, then the rest
            break
        last = -1
        for u in range(sorted_rows.shape[0] - 1, -1, -1):  # last record not just taken
            if not taken[sorted_rows[u]]:
                last = sorted_rows[u]
                break
        _grow(Xt, index, n, taken, last, k, grow_sse, labels, g)
        g += 1
        m -= k
    if m > 0:
        for i in range(n):
            if not taken[i]:
                labels[i] = g
    return labels


def _ps(X: ArrayLike, k: int, *, multid: bool, grow: str, normalize: str, caller: str
        ) -> NDArray[np.intp]:
    A = check_matrix(X, caller=caller)
    k = check_k(k, n_samples=A.shape[0], caller=caller)
    check_choice(grow, _GROW, name="grow", caller=caller)
    A = normalized(A, normalize, caller=caller)
    return _ps_kernel(A, k, multid, grow == "sse")


_PS_DOC = """

    Pairwise-systematic (P-S) microaggregation, seed 003 Algorithm 2: while at least 3k
    records remain, sort them ({sort}); the first record and its k-1 companions form a
    group, then the last record (the last one not just grouped) and its k-1 companions. If
    2k..3k-1 remain, sort them, group the first record with k-1 companions and put the rest
    in a last group; fewer than 2k form the last group. Every group has k records except the
    last (k..2k-1).

    Companions: ``grow="sse"`` (default) takes the paper literally ("its k-1 nearest records
    that cause less SSE"): records are added one at a time, each time the one that increases
    the group's SSE least, which is the one nearest to the group's current centroid.
    ``grow="nearest"`` takes the seed's k-1 nearest records. Ties go to the lowest row index.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric quasi-identifiers (finite).
    k : int
        Minimum group size, ``k >= 2``.
    grow : {{"sse", "nearest"}}, default="sse"
    normalize : {{"minmax", "none"}}, default="minmax"
        ``"minmax"`` rescales each column to [0, 1] first (seed 003, Eq. 4), as the paper
        does; ``"none"`` uses ``X`` as given (e.g. the z-scores of a release).
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Seed 003: "Microaggregation Sorting Framework for K-Anonymity Statistical Disclosure
    Control in Cloud Computing", sections V-B to V-D.
    """


def multidsort_ps(X: ArrayLike, k: int, *, grow: str = "sse", normalize: str = "minmax",
                  random_state: RandomState = None) -> NDArray[np.intp]:
    return _ps(X, k, multid=True, grow=grow, normalize=normalize, caller="multidsort_ps")


def meansort_ps(X: ArrayLike, k: int, *, grow: str = "sse", normalize: str = "minmax",
                random_state: RandomState = None) -> NDArray[np.intp]:
    return _ps(X, k, multid=False, grow=grow, normalize=normalize, caller="meansort_ps")


multidsort_ps.__doc__ = "MultiDSort + P-S microaggregation." + _PS_DOC.format(
    sort="MultiDSort, Algorithm 1, recomputed on the remaining records at every step")
meansort_ps.__doc__ = "Meansort + P-S microaggregation." + _PS_DOC.format(
    sort="Meansort, Eq. 5; its order never changes, so it is sorted once")


@njit(cache=True)
def npn_order_kernel(X):  # pragma: no cover - numba
    """Nearest point next: start at the record farthest from the centroid, then repeatedly
    go to the nearest unvisited record (ties: lowest row index)."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    visited = np.zeros(n, dtype=np.bool_)
    dist = np.empty(n)
    order = np.empty(n, dtype=np.intp)
    centroid = np.empty(p)
    for j in range(p):
        centroid[j] = X[:, j].mean()
    no_neighbours = np.empty(0, dtype=np.int64)
    current = distance_pass(Xt, n, centroid, dist, visited, index, -1, 0, True, no_neighbours)
    one = np.empty(1, dtype=np.int64)
    for t in range(n):
        order[t] = current
        visited[current] = True
        if t + 1 < n:
            point = Xt[:, current].copy()
            distance_pass(Xt, n, point, dist, visited, index, -1, 1, False, one)
            current = one[0]
    return order


def npn_order(X: ArrayLike) -> NDArray[np.intp]:
    """Nearest-point-next ordering (Domingo-Ferrer et al. 2006): start at the record farthest
    from the centroid, then always move to the nearest unvisited record.

    Examples
    --------
    >>> npn_order([[0.0], [10.0], [1.0], [9.0]]).tolist()  # rows 0 and 1 tie: row 0 first
    [0, 2, 3, 1]
    """
    return npn_order_kernel(check_matrix(X, caller="npn_order"))


@njit(cache=True)
def _segment_kernel(X, order, k):  # pragma: no cover - numba
    n, p = X.shape
    best = np.full(n + 1, np.inf)
    back = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0.0
    mean = np.empty(p)
    for b in range(k, n + 1):
        # grow the segment [b - s, b) backwards, keeping its SSE exactly (Welford)
        sse = 0.0
        for j in range(p):
            mean[j] = 0.0
        for s in range(1, min(2 * k - 1, b) + 1):
            x = order[b - s]
            delta2 = 0.0
            for j in range(p):
                d = X[x, j] - mean[j]
                mean[j] += d / s
                delta2 += d * (X[x, j] - mean[j])
            sse += delta2
            a = b - s
            if s >= k and (a == 0 or a >= k) and best[a] + sse < best[b]:
                best[b] = best[a] + sse
                back[b] = a
    labels = np.empty(n, dtype=np.intp)
    cuts = []
    b = n
    while b > 0:
        cuts.append(b)
        b = back[b]
    g = 0
    start = 0
    for t in range(len(cuts) - 1, -1, -1):
        stop = cuts[t]
        for u in range(start, stop):
            labels[order[u]] = g
        g += 1
        start = stop
    return labels, best[n]


def mhm_segment(X: ArrayLike, order: ArrayLike, k: int) -> tuple[NDArray[np.intp], float]:
    """Optimal cut of an ordering into consecutive groups of k..2k-1 records (minimum SSE).

    The Hansen-Mukherjee shortest path on the ordering: node b is "the first b records of the
    order are grouped", an edge a -> b (k <= b - a <= 2k - 1) costs the SSE of the records
    order[a:b]. O(n k p); exact for the given order. Among equal costs, the shortest last
    group is kept.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Groups numbered along the order.
    sse : float
        The minimum total within-group sum of squares.

    References
    ----------
    Hansen, S. L. and Mukherjee, S. "A polynomial algorithm for optimal univariate
    microaggregation." IEEE TKDE 15(4) (2003); Domingo-Ferrer, J., Martínez-Ballesté, A.,
    Mateo-Sanz, J. M., Sebé, F. "Efficient multivariate data-oriented microaggregation."
    The VLDB Journal 15 (2006).

    Examples
    --------
    >>> labels, cost = mhm_segment([[0.0], [1.0], [2.0], [10.0], [11.0]], [0, 1, 2, 3, 4], 2)
    >>> labels.tolist(), cost
    ([0, 0, 0, 1, 1], 2.5)
    """
    A = check_matrix(X, caller="mhm_segment")
    k = check_k(k, n_samples=A.shape[0], caller="mhm_segment")
    idx = np.asarray(order, dtype=np.intp)
    if idx.shape != (A.shape[0],) or not np.array_equal(np.sort(idx), np.arange(A.shape[0])):
        raise ValueError(f"order must be a permutation of 0..{A.shape[0] - 1}.")
    labels, cost = _segment_kernel(A, idx, k)
    return labels, float(cost)


def mhm(X: ArrayLike, k: int, *, ordering: str = "npn", random_state: RandomState = None
        ) -> NDArray[np.intp]:
    """MHM: order the records with a heuristic, then cut the order optimally (Hansen-Mukherjee).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    ordering : {"npn", "mdav", "md", "cbfs"}, default="npn"
        A key of :data:`ORDERINGS`: nearest point next, or the groups of MDAV, MD or CBFS
        laid end to end (see :func:`order_from_groups`).
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Groups of k..2k-1 consecutive records of the ordering.

    References
    ----------
    Domingo-Ferrer, J., Martínez-Ballesté, A., Mateo-Sanz, J. M., Sebé, F. "Efficient
    multivariate data-oriented microaggregation." The VLDB Journal 15, 355-369 (2006).
    """
    A = check_matrix(X, caller="mhm")
    k = check_k(k, n_samples=A.shape[0], caller="mhm")
    check_choice(ordering, tuple(sorted(ORDERINGS)), name="ordering", caller="mhm")
    labels, _ = mhm_segment(A, ORDERINGS[ordering](A, k), k)
    return labels


def order_from_groups(X: NDArray[np.float64], labels: NDArray[np.intp], *, paired: bool
                      ) -> NDArray[np.intp]:
    """Turn a partition into an ordering for MHM, keeping each group's records together.

    ``paired`` (MDAV, MD: groups are formed two at a time on opposite sides, labels 0, 1,
    2, 3...): even-labelled groups in creation order, then odd-labelled ones in reverse, so
    the order walks from one extreme of the file to the other. Otherwise groups follow their
    creation order. Inside a group, records go from the farthest from the file's centroid to
    the nearest (reversed for the groups of the second half), ties by row index.
    """
    centre = X.mean(axis=0)
    depth = ((X - centre) ** 2).sum(axis=1)
    n_groups = int(labels.max()) + 1
    if paired:
        sequence = list(range(0, n_groups, 2)) + list(range(1, n_groups, 2))[::-1]
    else:
        sequence = list(range(n_groups))
    back = set(range(1, n_groups, 2)) if paired else set()
    parts = []
    for g in sequence:
        rows = np.flatnonzero(labels == g)
        key = depth[rows] if g in back else -depth[rows]
        parts.append(rows[np.lexsort((rows, key))])
    return np.concatenate(parts).astype(np.intp)


def _order_by(method: str, paired: bool) -> Callable[[NDArray[np.float64], int], NDArray[np.intp]]:
    """An ordering made of the groups of a registered partitioner."""

    def order(X: NDArray[np.float64], k: int) -> NDArray[np.intp]:
        from . import PARTITIONERS

        return order_from_groups(X, PARTITIONERS[method](X, k), paired=paired)

    return order


ORDERINGS = {
    "npn": lambda X, k: npn_order(X),
    "mdav": _order_by("mdav", paired=True),
    "md": _order_by("md", paired=True),
    "cbfs": _order_by("cbfs", paired=False),
}
"""Orderings for :func:`mhm`: ``f(X, k) -> permutation``."""
