"""Optimal univariate microaggregation (Hansen & Mukherjee 2003) and its use on one projection.

On one variable the optimal k-partition (minimum within-group sum of squares, groups of at
least k) is solvable exactly: some optimal partition consists of groups of consecutive
values in sorted order with k..2k-1 records each, and the best cut of the sorted values is a
shortest path in a graph whose node b means "the b smallest values are grouped" and whose
edge a -> b (k <= b - a <= 2k - 1) costs the SSE of the values a..b-1 (seed 001, section 2.1,
reference [24]). :func:`optimal_univariate` solves it in O(n k) time after an
O(n log n) sort (none when the values come sorted) and O(n) memory.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_choice, check_k, check_matrix
from .._runtime.jit import njit

__all__ = ["PROJECTIONS", "optimal_univariate", "projected_optimal_univariate"]

PROJECTIONS = ("pca", "sum")
"""How :func:`projected_optimal_univariate` maps several columns onto one line."""


@njit(cache=True)
def _sorted_cut(x, k, max_size):  # pragma: no cover - numba  # noqa: C901, PLR0912 - numba kernel: one loop nest, kept whole for speed
    """Shortest path over sorted ``x``: group number of each sorted position and the SSE.

    Segment SSEs come from prefix sums of ``x - x[middle]`` (shifting keeps the sums small
    and the subtraction well conditioned); each node looks back over the k possible sizes of
    its last group, so the work is n * k.
    """
    n = x.shape[0]
    shift = x[n // 2]
    s1 = np.zeros(n + 1)
    s2 = np.zeros(n + 1)
    for i in range(n):
        d = x[i] - shift
        s1[i + 1] = s1[i] + d
        s2[i + 1] = s2[i] + d * d
    best = np.full(n + 1, np.inf)
    back = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0.0
    for b in range(k, n + 1):
        lo = max(b - max_size, 0)
        for a in range(b - k, lo - 1, -1):  # shortest last group first: it wins ties
            if a != 0 and a < k:
                continue
            s = b - a
            t1 = s1[b] - s1[a]
            sse = (s2[b] - s2[a]) - t1 * t1 / s
            if sse < 0.0:
                sse = 0.0
            c = best[a] + sse
            if c < best[b]:
                best[b] = c
                back[b] = a
    groups = np.empty(n, dtype=np.intp)
    if best[n] == np.inf:  # no split into sizes k..max_size exists
        groups[:] = -1
        return groups, np.inf
    n_groups = 0
    b = n
    while b > 0:
        n_groups += 1
        b = back[b]
    g = n_groups - 1
    b = n
    while b > 0:
        a = back[b]
        for i in range(a, b):
            groups[i] = g
        g -= 1
        b = a
    # the exact SSE of the chosen groups (the prefix-sum differences lose digits when the
    # values are large compared with their spread)
    total = 0.0
    start = 0
    for i in range(1, n + 1):
        if i == n or groups[i] != groups[start]:
            m = 0.0
            for j in range(start, i):
                m += x[j]
            m /= i - start
            for j in range(start, i):
                total += (x[j] - m) * (x[j] - m)
            start = i
    return groups, total


def optimal_univariate(x: ArrayLike, k: int, *, assume_sorted: bool = False,
                       max_size: int | None = None) -> tuple[NDArray[np.intp], float]:
    """Optimal univariate microaggregation: minimum-SSE groups of at least ``k`` values.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        One finite numeric variable.
    k : int
        Minimum group size, ``2 <= k <= n_samples``.
    assume_sorted : bool, default=False
        Skip the sort when ``x`` is known to be non-decreasing (checked in O(n)).
    max_size : int, default=None
        Largest group allowed; ``None`` means ``2k - 1``, which loses nothing (a group of
        2k or more can always be split without raising the SSE). ``max_size=k`` asks for
        groups of exactly k (then ``n`` must be a multiple of ``k``).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Group of each value, numbered from the smallest values up; every group holds
        k..2k-1 values that are consecutive in sorted order.
    sse : float
        The minimum within-group sum of squares.

    Notes
    -----
    Among partitions of equal SSE, the one whose groups (read from the largest values down)
    are shortest is returned. Tied values may be split between two neighbouring groups when
    that is optimal; equal values then get different representatives, which is still
    optimal and still at least ``k`` per group.

    References
    ----------
    Hansen, S. L. and Mukherjee, S. "A polynomial algorithm for optimal univariate
    microaggregation." IEEE TKDE 15(4), 1043-1044 (2003). Seed 001, section 2.1, Table 3.

    Examples
    --------
    The Age column of seed 001, Table 3, at k = 3:

    >>> labels, sse = optimal_univariate([24, 31, 32, 57, 49, 43, 39, 20, 51], 3)
    >>> labels.tolist()
    [0, 0, 1, 2, 2, 1, 1, 0, 2]
    """
    values = np.asarray(x)
    if values.ndim != 1:
        raise ValueError(f"optimal_univariate expects one variable (a 1-d array). Got an "
                         f"array of shape {values.shape}.")
    column = check_matrix(values.reshape(-1, 1), caller="optimal_univariate", name="x")[:, 0]
    n = column.shape[0]
    k = check_k(k, n_samples=n, caller="optimal_univariate")
    if max_size is None:
        top = 2 * k - 1
    elif isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) \
            or max_size < k:
        raise ValueError(f"The 'max_size' parameter must be an int >= k={k} (or None for "
                         f"2k-1={2 * k - 1}). Got {max_size!r}.")
    else:
        top = int(max_size)
    if assume_sorted:
        if column.shape[0] > 1 and bool(np.any(column[1:] < column[:-1])):
            first = int(np.argmax(column[1:] < column[:-1]))
            raise ValueError(f"assume_sorted=True but x decreases at position {first + 1} "
                             f"({column[first]!r} > {column[first + 1]!r}).")
        groups, sse = _sorted_cut(np.ascontiguousarray(column), k, top)
        _check_feasible(sse, n, k, top)
        return groups, float(sse)
    order = np.argsort(column, kind="stable")
    groups, sse = _sorted_cut(np.ascontiguousarray(column[order]), k, top)
    _check_feasible(sse, n, k, top)
    labels = np.empty_like(groups)
    labels[order] = groups
    return labels, float(sse)


def _check_feasible(sse: float, n: int, k: int, top: int) -> None:
    if not np.isfinite(sse):
        raise ValueError(f"{n} values cannot be cut into groups of {k}..{top} records; "
                         f"raise max_size (None allows up to 2k-1={2 * k - 1}).")


def _projection(A: NDArray[np.float64], projection: str) -> NDArray[np.float64]:
    if A.shape[1] == 1:
        return A[:, 0]
    if projection == "sum":
        return A.sum(axis=1)
    centred = A - A.mean(axis=0)
    # first right singular vector = first principal axis; sign fixed for determinism
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axis = vt[0] * (1.0 if vt[0][np.argmax(np.abs(vt[0]))] >= 0 else -1.0)
    return np.asarray(centred @ axis, dtype=np.float64)


def projected_optimal_univariate(X: ArrayLike, k: int, *, projection: str = "pca",
                                 max_size: int | None = None,
                                 random_state: RandomState = None) -> NDArray[np.intp]:
    """Partitioner ``univariate-optimal``: the exact optimum on one column; on several, the
    optimum of one projection of them.

    With one column (the per-variable microaggregation of seed 001, Table 3) the partition is
    optimal (:func:`optimal_univariate`). With several, the records are projected onto one
    line, the first principal axis (``"pca"``) or the sum of the scaled columns (``"sum"``),
    and the projection is cut optimally: fast (O(n p^2 + n k)), but only a heuristic for the
    multivariate problem (seed 001, section 2.6).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    projection : {"pca", "sum"}, default="pca"
        The line for several columns (ignored with one).
    max_size : int, default=None
        Largest group (``None``: 2k-1); ``max_size=k`` gives groups of exactly k, as in
        seed 001's Table 3.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Hansen & Mukherjee, IEEE TKDE 15(4) (2003); seed 001, sections 2.1 and 2.6.
    """
    A = check_matrix(X, caller="univariate-optimal")
    k = check_k(k, n_samples=A.shape[0], caller="univariate-optimal")
    check_choice(projection, PROJECTIONS, name="projection", caller="univariate-optimal")
    labels, _ = optimal_univariate(_projection(A, projection), k, max_size=max_size)
    return labels
