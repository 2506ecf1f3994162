"""Fuzzy microaggregation building blocks (seed 001, section 2.4): fuzzy c-means, its membership
formula, the adaptive at-least-k fuzzy partition and the random choice of representatives.

Fuzzy c-means lives in ``_fuzzy_cmeans``, its numba kernels in ``_fuzzy_kernels``, the adaptive
partition in ``_fuzzy_adaptive``; this module is their public face, with the registered
partitioner (``fuzzy``) and aggregator (``fuzzy-random``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_int
from .._base.groups import group_means
from .._base.validation import (
    RandomState,
    check_k,
    check_labels,
    check_matrix,
    check_random_state,
    resolve_seed,
)
from ._fuzzy_adaptive import adaptive_fuzzy_partition, compact, dissolve_small
from ._fuzzy_cmeans import FuzzyPartition, check_m, check_real, fuzzy_c_means, fuzzy_memberships
from ._fuzzy_kernels import memberships_kernel

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


def _check_threshold(threshold: float | None, caller: str) -> float | None:
    """``None`` or a float in [0, 1], else a ValueError naming the value."""
    if threshold is None:
        return None
    t = check_real(threshold, name="threshold", caller=caller, rule="float in [0, 1]")
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
    mm = check_m(m, caller=caller)
    t = _check_threshold(threshold, caller)
    rng = check_random_state(random_state)
    centers = group_means(A, lab)
    U = memberships_kernel(A, np.ascontiguousarray(centers.T), mm)
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
    mm = check_m(1.5 if m is None else m, caller=caller)
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    seed, _ = resolve_seed(random_state)
    fit = fuzzy_c_means(A, max(2, n // (2 * k)), m=mm, random_state=seed)
    return compact(dissolve_small(A, fit.labels, fit.centers, k))


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
    mm = check_m(m, caller=caller)
    nb = check_int(neighbours, parameter="neighbours", caller=caller, low=1)
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
    from ..exceptions import InternalError

    means = group_means(values, labels)
    tol = 1e-9 * np.maximum(1.0, np.abs(values).max(axis=0))
    from scipy.spatial import cKDTree

    _, nearest = cKDTree(means).query(masked, k=1)
    off = np.abs(masked - means[nearest]) > tol
    if off.any():
        raise InternalError(f"{int(off.any(axis=1).sum())} published rows are not a group "
                            "mean. Nothing was released. This is a bug in microagg.")
