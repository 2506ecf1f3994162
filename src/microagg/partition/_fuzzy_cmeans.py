"""Fuzzy c-means (Bezdek) and its membership formula, with the parameter checks of the fuzzy
methods (one message format: parameter, rule, value received). Public through
:mod:`microagg.partition.fuzzy`."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_int
from .._base.validation import RandomState, check_matrix, check_nonnegative, check_random_state
from ._fuzzy_kernels import fcm_kernel, memberships_kernel

__all__ = ["FuzzyPartition", "check_m", "check_real", "fuzzy_c_means",
           "fuzzy_memberships", "kmeanspp"]


def check_real(value: Any, *, name: str, caller: str, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"The {name!r} parameter of {caller} must be a {rule}. "
                        f"Got {value!r} of type {type(value).__name__} instead.")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"The {name!r} parameter of {caller} must be a {rule}. "
                         f"Got {v} instead.")
    return v


def check_m(m: Any, *, caller: str, name: str = "m") -> float:
    """The fuzzifier: a finite float > 1."""
    v = check_real(m, name=name, caller=caller, rule="float > 1")
    if v <= 1.0:
        raise ValueError(f"The {name!r} parameter of {caller} must be a float > 1. "
                         f"Got {v} instead.")
    return v


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


def kmeanspp(X: NDArray[np.float64], n_clusters: int, seed: int) -> NDArray[np.float64]:
    """k-means++ starting centres (scikit-learn's), C-contiguous float64."""
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
    c = check_int(n_clusters, parameter="n_clusters", caller=caller, low=1, high=n)
    mm = check_m(m, caller=caller)
    iters = check_int(max_iter, parameter="max_iter", caller=caller, low=1)
    tolerance = check_nonnegative(tol, name="tol", caller=caller)
    rng = check_random_state(random_state)
    if init is None:
        V0 = kmeanspp(A, c, int(rng.integers(0, 2**31 - 1)))
    else:
        V0 = check_matrix(init, caller=caller, name="init")
        if V0.shape != (c, p):
            raise ValueError(f"The 'init' parameter of {caller} must have shape "
                             f"(n_clusters, n_features) = ({c}, {p}). Got {V0.shape} instead.")
    V, U, it, objective = fcm_kernel(A, V0, mm, iters, tolerance)
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
    mm = check_m(m, caller=caller)
    return memberships_kernel(A, np.ascontiguousarray(V.T), mm)
