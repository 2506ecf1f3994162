"""The adaptive at-least-k fuzzy c-means partition (seed 001, section 2.4; Domingo-Ferrer &
Torra 2003). Public through :mod:`microagg.partition.fuzzy`."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from ._fuzzy_cmeans import check_m, check_real, kmeanspp
from ._fuzzy_kernels import fcm_kernel

__all__ = ["adaptive_fuzzy_partition", "compact", "dissolve_small"]


def compact(labels: NDArray[np.intp]) -> NDArray[np.intp]:
    """Labels renumbered 0..g-1 in the order the groups first appear (empty clusters dropped)."""
    values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(values.size, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(values.size)
    return rank[inverse.reshape(-1)]


def _all_at_least(labels: NDArray[np.intp], k: int) -> bool:
    counts = np.bincount(labels)
    return bool(counts[counts > 0].min() >= k)


def dissolve_small(X: NDArray[np.float64], labels: NDArray[np.intp],
                   centers: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Last resort: dissolve the smallest cluster below ``k`` (ties: lowest index), move each of
    its records to the nearest remaining centre, repeat until every cluster has >= k records."""
    labels = labels.copy()
    c = centers.shape[0]
    alive = np.bincount(labels, minlength=c) > 0
    while True:
        counts = np.bincount(labels, minlength=c)
        small = np.flatnonzero(alive & (counts < k))
        if small.size == 0 or alive.sum() == 1:
            break
        victim = small[np.argmin(counts[small])]
        alive[victim] = False
        rows = np.flatnonzero(labels == victim)
        keep = np.flatnonzero(alive)
        d2 = ((X[rows, None, :] - centers[None, keep, :]) ** 2).sum(axis=2)
        labels[rows] = keep[np.argmin(d2, axis=1)]
    return compact(labels)


def adaptive_fuzzy_partition(X: ArrayLike, k: int, *, m: float = 2.0, m_step: float = 0.25,
                             m_max: float = 4.0, random_state: RandomState = None
                             ) -> NDArray[np.intp]:
    """Adaptive at-least-k fuzzy c-means: the hard partition of a fuzzy c-means run whose
    clusters all have at least ``k`` records, with as many clusters as could be found.

    Domingo-Ferrer and Torra (2003) run fuzzy c-means and, while some cluster has fewer than
    ``k`` records, adjust the fuzzifier and the number of clusters: ``m`` is raised (by
    ``m_step``, up to ``m_max``), then ``c`` is lowered. We could not find the paper's text
    (only its abstract), so this is our reading of that loop, with the one-by-one decrease of
    ``c`` replaced by a search:

    1. ``n_samples < 2k``: one group.
    2. A run ``(c, m)`` is *feasible* when the hard assignment of its records (largest
       membership; clusters left empty are dropped) has no cluster below ``k``.
    3. Start at ``c = floor(n_samples / k)`` (the most groups possible) and the starting
       ``m``; if feasible, done. Otherwise, at the starting ``m``, ``c = 2, 4, 8, ...`` until one is infeasible,
       then bisection between the last feasible and the first infeasible ``c`` (``c = 1`` is
       always feasible): the largest feasible ``c`` when feasibility is monotone in ``c``,
       else a feasible ``c`` whose ``c + 1`` is not. Each ``c`` starts from its own k-means++
       centres (seeded by ``random_state`` and ``c``).
    4. Then ``m`` is raised step by step at ``c + 1``, the first infeasible number of
       clusters, each run warm-started from the centres of the previous ``m``. When some ``m``
       makes ``c + 1`` feasible, the search of step 3 resumes upwards at that ``m`` from
       ``c + 1``, and raising ``m`` goes on from the new boundary.
    5. Result: the feasible run with the most clusters (at the smallest ``m`` reaching it).
       Last resort, when no ``c >= 2`` was feasible (e.g. an outlier that every run leaves
       alone): among the runs made, the one that keeps the most groups after a repair that
       dissolves the smallest cluster below ``k``, moves its records to the nearest remaining
       centre, and repeats until every group has at least ``k`` records.

    Every fuzzy c-means run uses :func:`fuzzy_c_means`'s defaults (``max_iter=300``,
    ``tol=1e-5``). On data with outliers the hard clusters of fuzzy c-means are very uneven,
    so the largest feasible ``c`` can be far below ``n_samples / k`` (on the Census benchmark
    12 to 16 groups at ``k = 3``, depending on the seed).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers (e.g. z-scores); must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    m : float, default=2.0
        Starting fuzzifier, ``> 1``.
    m_step : float, default=0.25
        Increment of ``m``, ``> 0``.
    m_max : float, default=4.0
        Largest fuzzifier tried, ``>= m``.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the k-means++ starts; the same seed gives the same labels.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Groups 0..g-1 numbered in order of first appearance, every group with at least ``k``
        records (no upper bound).

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. "Fuzzy microaggregation for microdata protection."
    Journal of Advanced Computational Intelligence and Intelligent Informatics 7(2), 153-159
    (2003); Domingo-Ferrer, J. and Torra, V. "Towards fuzzy c-means based microaggregation."
    In: Soft Methods in Probability and Statistics, 289-294, Physica (2002).

    Examples
    --------
    >>> X = [[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [9.0], [9.1], [9.2]]
    >>> adaptive_fuzzy_partition(X, 3, random_state=0).tolist()
    [0, 0, 0, 1, 1, 1, 2, 2, 2]
    """
    caller = "adaptive_fuzzy_partition"
    A = check_matrix(X, caller=caller)
    n = A.shape[0]
    k = check_k(k, n_samples=n, caller=caller)
    m0 = check_m(m, caller=caller)
    step = check_real(m_step, name="m_step", caller=caller, rule="float > 0")
    if step <= 0:
        raise ValueError(f"The 'm_step' parameter of {caller} must be a float > 0. "
                         f"Got {step} instead.")
    top = check_real(m_max, name="m_max", caller=caller, rule=f"float >= m={m0}")
    if top < m0:
        raise ValueError(f"The 'm_max' parameter of {caller} must be a float >= m={m0}. "
                         f"Got {top} instead.")
    seed, _ = resolve_seed(random_state)
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    n_m = int(np.floor((top - m0) / step + 1e-9)) + 1
    schedule = [m0 + i * step for i in range(n_m)]
    return _adaptive_search(A, k, schedule, seed)


class _Search:
    """The state of steps 3-5 of :func:`adaptive_fuzzy_partition` (validation is assumed,
    n >= 2k): every run made, the latest centres at each ``c``, the feasible run with the
    most clusters."""

    def __init__(self, A: NDArray[np.float64], k: int, seed: int):
        self.A, self.k, self.seed = A, k, seed
        self.c_max = A.shape[0] // k
        self.runs: list[tuple[NDArray[np.float64], NDArray[np.intp]]] = []
        self.centres_at: dict[int, NDArray[np.float64]] = {}  # latest centres run at each c
        self.best_c = 1
        self.best = np.zeros(A.shape[0], dtype=np.intp)

    def _start(self, c: int) -> NDArray[np.float64]:
        # each c has its own k-means++ start, independent of the order of the search
        sub = int(np.random.SeedSequence([self.seed, c]).generate_state(1)[0] >> 1)
        return kmeanspp(self.A, c, sub)

    def run(self, c: int, m: float, warm: bool) -> tuple[bool, NDArray[np.intp]]:
        """One fuzzy c-means run; whether its hard clusters all have k records, its labels."""
        V0 = self.centres_at[c] if warm and c in self.centres_at else self._start(c)
        V, U, _, _ = fcm_kernel(self.A, V0, m, 300, 1e-5)
        labels = np.argmax(U, axis=1).astype(np.intp)
        self.runs.append((V, labels))
        self.centres_at[c] = V
        return _all_at_least(labels, self.k), labels

    def climb(self, m: float, lo: int, hi: int) -> None:
        """Largest feasible c in [lo, hi) at ``m``: lo is feasible, hi is not (or > c_max)."""
        step = 1
        while lo + step < hi:  # doubling
            ok, labels = self.run(lo + step, m, warm=False)
            if not ok:
                hi = lo + step
                break
            lo, step = lo + step, 2 * step
            self.best_c, self.best = lo, labels
        while hi - lo > 1:  # bisection
            mid = (lo + hi) // 2
            ok, labels = self.run(mid, m, warm=False)
            if ok:
                lo = mid
                self.best_c, self.best = mid, labels
            else:
                hi = mid

    def repaired(self) -> NDArray[np.intp]:
        """Last resort: the run that keeps the most groups after :func:`dissolve_small`."""
        chosen = self.best
        kept = 1
        for V, labels in self.runs:
            repaired = dissolve_small(self.A, labels, V, self.k)
            g = int(repaired.max()) + 1
            if g > kept:
                chosen, kept = repaired, g
        return compact(chosen)


def _adaptive_search(A: NDArray[np.float64], k: int, schedule: list[float], seed: int
                     ) -> NDArray[np.intp]:
    """Steps 3-5 of :func:`adaptive_fuzzy_partition`; validation is assumed, n >= 2k."""
    search = _Search(A, k, seed)
    ok, labels = search.run(search.c_max, schedule[0], warm=False)  # the most groups possible
    if ok:
        return compact(labels)
    search.climb(schedule[0], 1, search.c_max)
    for m in schedule[1:]:
        c_try = search.best_c + 1
        if c_try > search.c_max:
            break
        ok, labels = search.run(c_try, m, warm=True)  # raise m at the first infeasible c
        if ok:
            search.best_c, search.best = c_try, labels
            search.climb(m, c_try, search.c_max + 1)
    if search.best_c >= 2:
        return compact(search.best)
    return search.repaired()
