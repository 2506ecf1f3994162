"""Fuzzy microaggregation building blocks (seed 001, section 2.4): fuzzy c-means, its membership
formula, the adaptive at-least-k fuzzy partition and the random choice of representatives."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._groups import group_means
from ._jit import njit
from ._validation import (
    RandomState,
    check_k,
    check_labels,
    check_matrix,
    check_nonnegative,
    check_random_state,
    resolve_seed,
)

__all__ = [
    "FUZZY_STRATEGIES",
    "MAX_RECORDS",
    "FuzzyPartition",
    "adaptive_fuzzy_partition",
    "check_fuzzy_representatives",
    "fuzzy_c_means",
    "fuzzy_memberships",
    "fuzzy_partition",
    "fuzzy_random_aggregation",
    "random_representatives",
]


# ---------------------------------------------------------------------------------------------
# parameter checks (one message format: parameter, rule, value received)


def _check_real(value: Any, *, name: str, caller: str, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"The {name!r} parameter of {caller} must be a {rule}. "
                        f"Got {value!r} of type {type(value).__name__} instead.")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"The {name!r} parameter of {caller} must be a {rule}. "
                         f"Got {v} instead.")
    return v


def _check_m(m: Any, *, caller: str, name: str = "m") -> float:
    """The fuzzifier: a finite float > 1."""
    v = _check_real(m, name=name, caller=caller, rule="float > 1")
    if v <= 1.0:
        raise ValueError(f"The {name!r} parameter of {caller} must be a float > 1. "
                         f"Got {v} instead.")
    return v


def _check_int(value: Any, *, name: str, caller: str, lo: int, hi: int | None = None) -> int:
    rule = f"an int in {lo}..{hi}" if hi is not None else f"an int >= {lo}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"The {name!r} parameter of {caller} must be {rule}. "
                        f"Got {value!r} of type {type(value).__name__} instead.")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"The {name!r} parameter of {caller} must be {rule}. Got {v} instead.")
    return v


# ---------------------------------------------------------------------------------------------
# numba kernels: validation is assumed (finite, C-contiguous float64; centres feature-major)


@njit(cache=True)
def _power(r, e):  # pragma: no cover - numba
    """``r ** e`` for ``0 <= r <= 1``; exact for the common exponents 1 (m = 2) and 1/2 (m = 3)."""
    if e == 1.0:
        return r
    if r <= 0.0:
        return 0.0
    if e == 0.5:
        return np.sqrt(r)
    return np.exp(e * np.log(r))


@njit(cache=True)
def _membership_row(X, i, Vt, e, r, w):  # pragma: no cover - numba
    """Unnormalized memberships of record ``i`` to the centres (columns of ``Vt``).

    With ``d_j`` the squared distance to centre j and ``dmin`` the smallest: ``r[j] = dmin /
    d_j`` and ``w[j] = r[j] ** e`` (``e = 1 / (m - 1)``), so that ``u_j = w_j / sum(w)`` is
    Bezdek's ``1 / sum_l (d_j / d_l) ** (1 / (m - 1))`` (squared distances) and the nearest
    centre has ``w = 1``: no overflow, whatever ``m``. A record lying on centres
    (``dmin == 0``) gets ``w = r = 1`` on each of them and 0 elsewhere (membership shared
    equally among coincident centres). Returns ``(dmin, sum(w))``; ``sum(w) >= 1``.
    """
    p = X.shape[1]
    c = Vt.shape[1]
    for j in range(c):
        r[j] = 0.0
    for t in range(p):  # feature-major: the inner loop runs over the centres, contiguous
        xt = X[i, t]
        row = Vt[t]
        for j in range(c):
            d = xt - row[j]
            r[j] += d * d
    dmin = np.inf
    for j in range(c):
        if r[j] < dmin:
            dmin = r[j]
    tot = 0.0
    if dmin == 0.0:
        for j in range(c):
            r[j] = 1.0 if r[j] == 0.0 else 0.0
            w[j] = r[j]
            tot += w[j]
    else:
        for j in range(c):
            r[j] = dmin / r[j]
            w[j] = _power(r[j], e)
            tot += w[j]
    return dmin, tot


@njit(cache=True)
def _memberships_kernel(X, Vt, m):  # pragma: no cover - numba
    n = X.shape[0]
    c = Vt.shape[1]
    e = 1.0 / (m - 1.0)
    U = np.empty((n, c))
    r = np.empty(c)
    w = np.empty(c)
    for i in range(n):
        _, tot = _membership_row(X, i, Vt, e, r, w)
        for j in range(c):
            U[i, j] = w[j] / tot
    return U


@njit(cache=True)
def _fcm_pass(X, Vt, m, e, U, numT, den, first):  # pragma: no cover - numba
    """One sweep: memberships for the centres ``Vt`` into ``U`` and the sums of the next
    centres (``numT / den``). Returns the objective ``sum u^m d^2`` of (``U``, ``Vt``) and the
    largest change of a membership (0 on the first sweep).

    ``u_j ** m = w_j * r_j / sum(w) ** m`` (as ``w ** m = r ** (m / (m - 1)) = w r``), and the
    record's share of the objective is ``dmin * sum(w) ** (1 - m)``: one power per entry.
    """
    n, p = X.shape
    c = Vt.shape[1]
    r = np.empty(c)
    w = np.empty(c)
    um = np.empty(c)
    numT[:] = 0.0
    den[:] = 0.0
    objective = 0.0
    delta = 0.0
    for i in range(n):
        dmin, tot = _membership_row(X, i, Vt, e, r, w)
        scale = tot ** (-m)
        objective += dmin * tot * scale
        for j in range(c):
            um[j] = w[j] * r[j] * scale
            u = w[j] / tot
            if not first:
                change = abs(u - U[i, j])
                if change > delta:
                    delta = change
            U[i, j] = u
            den[j] += um[j]
        for t in range(p):
            xt = X[i, t]
            row = numT[t]
            for j in range(c):
                row[j] += um[j] * xt
    return objective, delta


@njit(cache=True)
def _fcm_kernel(X, V0, m, max_iter, tol):  # pragma: no cover - numba
    """Bezdek's alternating optimization from the centres ``V0``; see :func:`fuzzy_c_means`."""
    n, p = X.shape
    c = V0.shape[0]
    Vt = np.empty((p, c))
    for j in range(c):
        for t in range(p):
            Vt[t, j] = V0[j, t]
    U = np.empty((n, c))
    numT = np.empty((p, c))
    den = np.empty(c)
    e = 1.0 / (m - 1.0)
    objective, _ = _fcm_pass(X, Vt, m, e, U, numT, den, True)
    it = 0
    while it < max_iter:
        it += 1
        for j in range(c):
            if den[j] > 0.0:  # a centre no record belongs to (all u^m underflow) stays put
                for t in range(p):
                    Vt[t, j] = numT[t, j] / den[j]
        objective, delta = _fcm_pass(X, Vt, m, e, U, numT, den, False)
        if delta < tol:
            break
    V = np.empty((c, p))
    for j in range(c):
        for t in range(p):
            V[j, t] = Vt[t, j]
    return V, U, it, objective


# ---------------------------------------------------------------------------------------------
# fuzzy c-means


@dataclass(frozen=True, eq=False)
class FuzzyPartition:
    """The result of :func:`fuzzy_c_means`.

    Attributes
    ----------
    centers : ndarray of shape (n_clusters, n_features)
        The cluster centres.
    memberships : ndarray of shape (n_samples, n_clusters)
        Membership of each record to each cluster for these centres (Bezdek's formula, see
        :func:`fuzzy_memberships`); non-negative, rows sum to 1.
    n_iter : int
        Number of alternating-optimization iterations run.
    objective : float
        ``sum_ij u_ij ** m * ||x_i - v_j|| ** 2`` at (``memberships``, ``centers``).
    """

    centers: NDArray[np.float64]
    memberships: NDArray[np.float64]
    n_iter: int
    objective: float

    @property
    def labels(self) -> NDArray[np.intp]:
        """Hard assignment: the cluster of largest membership (ties: the lowest index)."""
        return np.argmax(self.memberships, axis=1).astype(np.intp)


def _kmeanspp(X: NDArray[np.float64], n_clusters: int, seed: int) -> NDArray[np.float64]:
    from sklearn.cluster import kmeans_plusplus

    centers, _ = kmeans_plusplus(X, n_clusters, random_state=seed)
    return np.ascontiguousarray(centers, dtype=np.float64)


def fuzzy_c_means(X: ArrayLike, n_clusters: int, *, m: float = 2.0, max_iter: int = 300,
                  tol: float = 1e-5, random_state: RandomState = None,
                  init: ArrayLike | None = None) -> FuzzyPartition:
    """Fuzzy c-means (Bezdek): a fuzzy partition minimizing ``sum u_ij^m ||x_i - v_j||^2``.

    Alternating optimization from ``init`` (or k-means++ centres, scikit-learn's
    :func:`~sklearn.cluster.kmeans_plusplus`): memberships for the centres (see
    :func:`fuzzy_memberships`), then each centre the ``u^m``-weighted mean of the records,
    until no membership changes by ``tol`` or more (Bezdek's termination rule) or
    ``max_iter`` iterations. Each step lowers the objective. A record lying exactly on a
    centre belongs to it with membership 1 (shared equally among coincident centres); a centre
    no record has a positive weight for keeps its place. Memory O(n_samples * n_clusters).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric data, finite (scale it first: distances are Euclidean).
    n_clusters : int
        Number of clusters ``c``, ``1 <= c <= n_samples``.
    m : float, default=2.0
        Fuzzifier, ``> 1``; close to 1 gives almost crisp memberships.
    max_iter : int, default=300
        Most iterations, ``>= 1``.
    tol : float, default=1e-5
        Stop when the largest change of a membership is below ``tol``.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds k-means++; unused when ``init`` is given.
    init : array-like of shape (n_clusters, n_features), optional
        Starting centres (warm start), e.g. the centres of an earlier run.

    Returns
    -------
    FuzzyPartition
        ``centers``, ``memberships`` (rows sum to 1), ``n_iter``, ``objective``.

    References
    ----------
    Bezdek, J. C. "Pattern Recognition with Fuzzy Objective Function Algorithms." Plenum, New
    York (1981); Bezdek, J. C., Ehrlich, R., Full, W. "FCM: The fuzzy c-means clustering
    algorithm." Computers & Geosciences 10(2-3), 191-203 (1984).

    Examples
    --------
    >>> X = [[0.0], [0.2], [10.0], [10.2]]
    >>> fcm = fuzzy_c_means(X, 2, init=[[0.0], [10.0]])
    >>> fcm.centers.round(2).ravel().tolist(), fcm.labels.tolist()
    ([0.1, 10.1], [0, 0, 1, 1])
    """
    caller = "fuzzy_c_means"
    A = check_matrix(X, caller=caller)
    n, p = A.shape
    c = _check_int(n_clusters, name="n_clusters", caller=caller, lo=1, hi=n)
    mm = _check_m(m, caller=caller)
    iters = _check_int(max_iter, name="max_iter", caller=caller, lo=1)
    tolerance = check_nonnegative(tol, name="tol", caller=caller)
    rng = check_random_state(random_state)
    if init is None:
        V0 = _kmeanspp(A, c, int(rng.integers(0, 2**31 - 1)))
    else:
        V0 = check_matrix(init, caller=caller, name="init")
        if V0.shape != (c, p):
            raise ValueError(f"The 'init' parameter of {caller} must have shape "
                             f"(n_clusters, n_features) = ({c}, {p}). Got {V0.shape} instead.")
    V, U, it, objective = _fcm_kernel(A, V0, mm, iters, tolerance)
    return FuzzyPartition(centers=V, memberships=U, n_iter=int(it), objective=float(objective))


def fuzzy_memberships(X: ArrayLike, centers: ArrayLike, m: float) -> NDArray[np.float64]:
    """Fuzzy c-means memberships of records to given centres.

    ``u_ij = 1 / sum_l (d_ij / d_il) ** (2 / (m - 1))`` with ``d`` the Euclidean distance; a
    record lying exactly on a centre belongs to it with membership 1, shared equally among
    coincident centres (the limit of the formula; no NaN).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    centers : array-like of shape (n_centers, n_features)
    m : float
        Fuzzifier, ``> 1``.

    Returns
    -------
    memberships : ndarray of shape (n_samples, n_centers)
        Non-negative; each row sums to 1.

    References
    ----------
    Bezdek, J. C. "Pattern Recognition with Fuzzy Objective Function Algorithms." Plenum, New
    York (1981).

    Examples
    --------
    >>> fuzzy_memberships([[1.0], [0.0]], [[0.0], [3.0]], 2.0).round(2).tolist()
    [[0.8, 0.2], [1.0, 0.0]]
    """
    caller = "fuzzy_memberships"
    A = check_matrix(X, caller=caller)
    V = check_matrix(centers, caller=caller, name="centers")
    if V.shape[1] != A.shape[1]:
        raise ValueError(f"The 'centers' parameter of {caller} must have {A.shape[1]} "
                         f"columns, as X has. Got {V.shape[1]} instead.")
    mm = _check_m(m, caller=caller)
    return _memberships_kernel(A, np.ascontiguousarray(V.T), mm)


# ---------------------------------------------------------------------------------------------
# adaptive at-least-k fuzzy c-means


def _compact(labels: NDArray[np.intp]) -> NDArray[np.intp]:
    """Labels renumbered 0..g-1 in the order the groups first appear (empty clusters dropped)."""
    values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(values.size, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(values.size)
    return rank[inverse.reshape(-1)]


def _all_at_least(labels: NDArray[np.intp], k: int) -> bool:
    counts = np.bincount(labels)
    return bool(counts[counts > 0].min() >= k)


def _dissolve_small(X: NDArray[np.float64], labels: NDArray[np.intp],
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
    return _compact(labels)


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
    m0 = _check_m(m, caller=caller)
    step = _check_real(m_step, name="m_step", caller=caller, rule="float > 0")
    if step <= 0:
        raise ValueError(f"The 'm_step' parameter of {caller} must be a float > 0. "
                         f"Got {step} instead.")
    top = _check_real(m_max, name="m_max", caller=caller, rule=f"float >= m={m0}")
    if top < m0:
        raise ValueError(f"The 'm_max' parameter of {caller} must be a float >= m={m0}. "
                         f"Got {top} instead.")
    seed, _ = resolve_seed(random_state)
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    n_m = int(np.floor((top - m0) / step + 1e-9)) + 1
    schedule = [m0 + i * step for i in range(n_m)]
    return _adaptive_search(A, k, schedule, seed)


def _adaptive_search(A: NDArray[np.float64], k: int, schedule: list[float], seed: int
                     ) -> NDArray[np.intp]:
    """Steps 3-5 of :func:`adaptive_fuzzy_partition`; validation is assumed, n >= 2k."""
    n = A.shape[0]
    c_max = n // k
    runs: list[tuple[NDArray[np.float64], NDArray[np.intp]]] = []

    def start(c: int) -> NDArray[np.float64]:
        # each c has its own k-means++ start, independent of the order of the search
        sub = int(np.random.SeedSequence([seed, c]).generate_state(1)[0] >> 1)
        return _kmeanspp(A, c, sub)

    centres_at: dict[int, NDArray[np.float64]] = {}  # latest centres run at each c

    def run(c: int, m: float, warm: bool) -> tuple[bool, NDArray[np.intp]]:
        V0 = centres_at[c] if warm and c in centres_at else start(c)
        V, U, _, _ = _fcm_kernel(A, V0, m, 300, 1e-5)
        labels = np.argmax(U, axis=1).astype(np.intp)
        runs.append((V, labels))
        centres_at[c] = V
        return _all_at_least(labels, k), labels

    best_c = 1
    best = np.zeros(n, dtype=np.intp)

    def climb(m: float, lo: int, hi: int) -> None:
        """Largest feasible c in [lo, hi) at ``m``: lo is feasible, hi is not (or > c_max)."""
        nonlocal best_c, best
        step = 1
        while lo + step < hi:  # doubling
            ok, labels = run(lo + step, m, warm=False)
            if not ok:
                hi = lo + step
                break
            lo, step = lo + step, 2 * step
            best_c, best = lo, labels
        while hi - lo > 1:  # bisection
            mid = (lo + hi) // 2
            ok, labels = run(mid, m, warm=False)
            if ok:
                lo = mid
                best_c, best = mid, labels
            else:
                hi = mid

    ok, labels = run(c_max, schedule[0], warm=False)  # the most groups possible
    if ok:
        return _compact(labels)
    climb(schedule[0], 1, c_max)
    for m in schedule[1:]:
        c_try = best_c + 1
        if c_try > c_max:
            break
        ok, labels = run(c_try, m, warm=True)  # raise m at the first infeasible c
        if ok:
            best_c, best = c_try, labels
            climb(m, c_try, c_max + 1)
    if best_c >= 2:
        return _compact(best)
    # last resort: repair the run that keeps the most groups
    chosen = best
    kept = 1
    for V, labels in runs:
        repaired = _dissolve_small(A, labels, V, k)
        g = int(repaired.max()) + 1
        if g > kept:
            chosen, kept = repaired, g
    return _compact(chosen)


def _check_threshold(threshold: float | None, caller: str) -> float | None:
    """``None`` or a float in [0, 1], else a ValueError naming the value."""
    if threshold is None:
        return None
    t = _check_real(threshold, name="threshold", caller=caller, rule="float in [0, 1]")
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"The 'threshold' parameter of {caller} must be a float in "
                         f"[0, 1]. Got {t} instead.")
    return t


def _draw_columns(weights: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.intp]:
    """One column per row, with probability proportional to the row's weights (one uniform
    number per row against the cumulative sums); never a column of weight 0."""
    cum = np.cumsum(weights, axis=1)
    draw = rng.random(weights.shape[0]) * cum[:, -1]
    chosen = (cum <= draw[:, None]).sum(axis=1)
    # draw * total may round up to the total: take the last column of positive weight
    over = chosen >= weights.shape[1]
    if over.any():
        chosen[over] = weights.shape[1] - 1 - np.argmax(weights[over, ::-1] > 0, axis=1)
    return chosen.astype(np.intp)


# ---------------------------------------------------------------------------------------------
# randomized fuzzy microaggregation: which group's representative each record gets


def random_representatives(values_scaled: ArrayLike, labels: ArrayLike, *, m: float = 2.0,
                           threshold: float | None = None, random_state: RandomState = None
                           ) -> NDArray[np.intp]:
    """For each record, draw the group whose representative it will be given (seed 001,
    section 2.4: "the assignment of records to clusters is not deterministic").

    The groups' centres are the means of ``values_scaled`` by ``labels``; each record's fuzzy
    c-means memberships to them (:func:`fuzzy_memberships`, fuzzifier ``m``) give the draw:

    * ``threshold=None``: a group with probability equal to the record's membership;
    * ``threshold=t``: uniformly among the groups whose membership is ``>= t``; a record with
      no membership that high keeps its own group.

    One uniform number per record against the cumulative sums of its row: O(n_samples *
    n_groups) time and memory.

    Parameters
    ----------
    values_scaled : array-like of shape (n_samples, n_features)
        The scaled quasi-identifiers the groups were formed on.
    labels : array-like of shape (n_samples,)
        Groups, consecutive integers from 0.
    m : float, default=2.0
        Fuzzifier, ``> 1``; close to 1, each record almost surely keeps its nearest group.
    threshold : float in [0, 1], optional
        Membership threshold of the uniform variant.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    chosen : ndarray of shape (n_samples,), dtype=intp
        The group drawn for each record.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. "Fuzzy microaggregation for microdata protection."
    Journal of Advanced Computational Intelligence and Intelligent Informatics 7(2), 153-159
    (2003); Torra, V. "A fuzzy microaggregation algorithm using fuzzy c-means." Artificial
    Intelligence Research and Development, IOS Press, 214-223 (2015).

    Examples
    --------
    >>> X = [[0.0], [0.1], [9.0], [9.1]]
    >>> random_representatives(X, [0, 0, 1, 1], m=1.05, random_state=0).tolist()
    [0, 0, 1, 1]
    """
    caller = "random_representatives"
    A = check_matrix(values_scaled, caller=caller, name="values_scaled")
    n = A.shape[0]
    lab = check_labels(labels, n_samples=n)
    mm = _check_m(m, caller=caller)
    t = _check_threshold(threshold, caller)
    rng = check_random_state(random_state)
    centers = group_means(A, lab)
    U = _memberships_kernel(A, np.ascontiguousarray(centers.T), mm)
    if t is None:
        weights = U
    else:
        weights = (U >= t).astype(np.float64)
        none = weights.sum(axis=1) == 0
        weights[none, lab[none]] = 1.0
    return _draw_columns(weights, rng)


# ---------------------------------------------------------------------------------------------
# the registered partitioner and aggregator


FUZZY_STRATEGIES = ("adjust", "repair")
"""How :func:`fuzzy_partition` reaches groups of at least k."""

MAX_RECORDS = 20_000
"""Largest file :func:`fuzzy_partition` takes: fuzzy c-means with c ~ n / k clusters holds an
n x c membership matrix and costs n c p per iteration, quadratic in n."""


def fuzzy_partition(X: ArrayLike, k: int, *, m: float | None = None, strategy: str = "adjust",
                    random_state: RandomState = None) -> NDArray[np.intp]:
    """Partitioner ``fuzzy``: fuzzy c-means clusters, hard-assigned, of at least k records.

    ``strategy="adjust"`` is :func:`adaptive_fuzzy_partition` (c and m adjusted until every
    cluster has at least k records, Domingo-Ferrer & Torra 2003). On skewed data fuzzy
    c-means gives outliers clusters of their own at every large c, so this keeps few, large
    clusters (Census, k = 3: 15 groups, SSE/SST about 42 %). ``strategy="repair"`` runs
    fuzzy c-means once with ``c = n // (2k)`` clusters and dissolves the clusters below k
    into the nearest surviving centre (Census, k = 3: about 135 groups, SSE/SST about 9 %;
    our addition, for when the adjusted partition loses too much).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    m : float, default=None
        Fuzzifier (> 1): the starting value for ``"adjust"`` (default 2.0), the value of the
        single run for ``"repair"`` (default 1.5: crisper clusters, fewer dissolved).
    strategy : {"adjust", "repair"}, default="adjust"
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. "Fuzzy microaggregation for microdata protection."
    J. Adv. Comput. Intell. Intell. Inform. 7(2) (2003); seed 001, section 2.4.
    """
    caller = "fuzzy"
    A = check_matrix(X, caller=caller)
    n = A.shape[0]
    k = check_k(k, n_samples=n, caller=caller)
    if strategy not in FUZZY_STRATEGIES:
        raise ValueError(f"The 'strategy' parameter of {caller} must be one of "
                         f"{', '.join(FUZZY_STRATEGIES)}. Got {strategy!r}.")
    if n > MAX_RECORDS:
        raise ValueError(
            f"The fuzzy method holds an n x c membership matrix with c ~ n/k clusters: "
            f"{n} records at k={k} would need about {8 * n * (n // k) / 2**30:.1f} GiB and "
            f"{n} x {n // k} distances per iteration. It is meant for up to {MAX_RECORDS} "
            "records; use another method (mdav, univariate-optimal) for larger files.")
    if strategy == "adjust":
        return adaptive_fuzzy_partition(A, k, m=2.0 if m is None else m,
                                        random_state=random_state)
    mm = _check_m(1.5 if m is None else m, caller=caller)
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    seed, _ = resolve_seed(random_state)
    fit = fuzzy_c_means(A, max(2, n // (2 * k)), m=mm, random_state=seed)
    return _compact(_dissolve_small(A, fit.labels, fit.centers, k))


def fuzzy_random_aggregation(values: ArrayLike, labels: ArrayLike, *, m: float = 2.0,
                             threshold: float | None = None, neighbours: int = 10,
                             random_state: RandomState = None) -> NDArray[np.float64]:
    """Aggregator ``fuzzy-random``: each record gets the mean of a group drawn by its fuzzy
    memberships (the randomized fuzzy microaggregation of seed 001, section 2.4).

    The group means are the candidate representatives. Each record's memberships to the
    ``neighbours`` nearest means (z-scored values; fuzzifier ``m``; the farther groups get
    membership 0, which keeps time and memory at O(n * neighbours)) give the draw: a group
    with probability equal to the membership, or uniformly among the groups whose
    membership is at least ``threshold``. A record does not always get its own group's
    mean, so an intruder can no longer intersect candidate groups reliably; in exchange,
    the published values are not k-anonymous (a mean may be drawn by fewer than k records)
    and the information loss grows.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns)
        Original-scale quasi-identifiers.
    labels : array-like of shape (n_samples,)
        The partition (groups of at least k).
    m : float, default=2.0
        Fuzzifier, > 1: near 1 each record draws its nearest group's mean (which the
        intersection attack guesses as well as the plain release: Census, per variable,
        k = 3, m = 1.5: 63 % re-identified against 50 %); 2 spreads the draw (22 %).
    threshold : float in [0, 1], default=None
        Uniform variant: draw among the groups with membership >= threshold.
    neighbours : int, default=10
        Number of nearest group means a record can draw.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    masked : ndarray of shape (n_samples, n_columns)
        Every row equal to one group's mean.

    References
    ----------
    Domingo-Ferrer & Torra (2003); Torra, V. "A fuzzy microaggregation algorithm using fuzzy
    c-means." CCIA 2015, IOS Press, 214-223.

    Examples
    --------
    >>> out = fuzzy_random_aggregation([[0.0], [1.0], [100.0], [101.0]], [0, 0, 1, 1],
    ...                                m=1.05, random_state=0)
    >>> out.ravel().tolist()
    [0.5, 0.5, 100.5, 100.5]
    """
    from scipy.spatial import cKDTree

    caller = "fuzzy-random"
    V = check_matrix(values, caller=caller, name="values")
    n = V.shape[0]
    lab = check_labels(labels, n_samples=n)
    mm = _check_m(m, caller=caller)
    nb = _check_int(neighbours, name="neighbours", caller=caller, lo=1)
    t = _check_threshold(threshold, caller)
    rng = check_random_state(random_state)
    means = group_means(V, lab)
    g = means.shape[0]
    spread = V.std(axis=0, ddof=1) if n > 1 else np.ones(V.shape[1])
    spread = np.where(spread > 0, spread, 1.0)
    Z, C = V / spread, means / spread
    q = min(nb, g)
    dist, near = cKDTree(C).query(Z, k=q)
    dist = np.asarray(dist, dtype=np.float64).reshape(n, q)
    near = np.asarray(near, dtype=np.intp).reshape(n, q)
    zero = dist <= 1e-12 * max(1.0, float(np.abs(Z).max()))
    with np.errstate(divide="ignore"):
        inv = np.where(zero, 0.0, dist ** (-2.0 / (mm - 1.0)))
    U = np.where(zero.any(axis=1, keepdims=True), zero.astype(np.float64), inv)
    U /= U.sum(axis=1, keepdims=True)
    weights = U if t is None else (U >= t).astype(np.float64)
    if t is not None:
        none = weights.sum(axis=1) == 0
        weights[none, 0] = 1.0  # nothing reaches the threshold: the nearest group
    return means[near[np.arange(n), _draw_columns(weights, rng)]]


def check_fuzzy_representatives(values: NDArray[np.float64], masked: NDArray[np.float64],
                                labels: NDArray[np.intp]) -> None:
    """Every published row must be one group's mean (raises :class:`InternalError`)."""
    from .exceptions import InternalError

    means = group_means(values, labels)
    tol = 1e-9 * np.maximum(1.0, np.abs(values).max(axis=0))
    from scipy.spatial import cKDTree

    _, nearest = cKDTree(means).query(masked, k=1)
    off = np.abs(masked - means[nearest]) > tol
    if off.any():
        raise InternalError(f"{int(off.any(axis=1).sum())} published rows are not a group "
                            "mean. Nothing was released. This is a bug in microagg.")
