"""Lower bounds on the SSE of any k-partition, and the certified gap of a partition."""

from __future__ import annotations

import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from ._certify import ascend
from ._master import ColumnPool, column_generation, enumeration_rounds
from ._pricing import knn_sums, neighbours

__all__ = ["METHODS", "BoundResult", "certified_gap", "knn_bound", "lower_bound"]

METHODS = ("column-generation", "knn")
_EXACT_MAX_N = 14  # brute-force pricing below this size: every column is enumerated
SEED_SHARE, SEED_SECONDS = 0.3, 36.0
"""The starting partitions get ``SEED_SHARE`` of the time limit, at most ``SEED_SECONDS``
(their share of a 2-minute bound): three mdav-ls runs of 12 s are near their best on the
benchmark files, and a longer bound is better spent on the enumeration rounds (Census
k = 4, 570 s on an Intel Xeon, before the lifting rounds: 171 s of seeds left the bound at
6.0015)."""


@dataclass(frozen=True)
class BoundResult:
    """A lower bound on the SSE of every partition of ``X`` into groups of >= k records.

    Attributes
    ----------
    bound : float
        The certified lower bound (proved; never the heuristic LP value unless
        ``lp_certified``): the largest of the k-NN bound and the Lagrangian bounds.
    lp_value : float
        Value of the restricted master LP at the last iteration, with the subset-row cuts
        separated by then. It is that LP's value (a lower bound) only when
        ``lp_certified``; otherwise an upper estimate of it.
    lp_certified : bool
        Pricing proved that no column of negative reduced cost is left (exact pricing) and
        no subset-row cut is violated.
    knn_bound : float
        The k-nearest-neighbour bound ``sum_i D_i(k-1) / (2k)``.
    lagrangian_bound : float
        ``sum(u) + (n // k) * min(0, L)``, the best over the iterations (``-inf`` for knn).
    anchored_bound : float
        The best :func:`~microagg.bounds._pricing.anchored_bound` found by supergradient
        ascent (``-inf`` for knn).
    enumeration_bound : float
        The best ``sum(u) + sum_i rho_i`` with ``rho_i`` from exact anchored enumeration
        (:mod:`microagg.bounds._exact`), the anchored bound where it ran out of nodes
        (``-inf`` for knn and tiny inputs).
    min_rc_bound : float
        ``L``: the proved lower bound on the minimum reduced cost at that iteration.
    best_sse : float
        Lowest SSE among the starting partitions (``inf`` when none was built).
    n_columns, iterations : int
    seconds : float
    method : str
    """

    bound: float
    lp_value: float
    lp_certified: bool
    knn_bound: float
    lagrangian_bound: float
    anchored_bound: float
    enumeration_bound: float
    min_rc_bound: float
    best_sse: float
    n_columns: int
    iterations: int
    seconds: float
    method: str


def knn_bound(X: ArrayLike, k: int) -> float:
    """The k-NN lower bound on the SSE of any partition into groups of >= k records.

    A group ``S`` of size ``s`` has ``SSE(S) = sum_{i in S} (1/(2s)) sum_{j in S} d_ij^2``,
    and the inner sum is at least ``D_i(s-1)``, the sum of the ``s-1`` smallest squared
    distances from ``i``; ``D_i(s-1)/(2s)`` does not decrease with ``s``, so
    ``SSE >= sum_i D_i(k-1) / (2k)`` for every partition.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The records (on the scale the SSE is measured in).
    k : int
        Minimum group size.

    Examples
    --------
    >>> knn_bound([[0.0], [1.0], [10.0], [11.0]], 2)
    1.0
    """
    A = check_matrix(X, caller="knn_bound")
    k = check_k(k, n_samples=A.shape[0], caller="knn_bound")
    return float(knn_sums(A, k)[:, 0].sum() / (2 * k))


def lower_bound(X: ArrayLike, k: int, *, method: str = "column-generation",
                time_limit: float = 60.0, random_state: RandomState = None,
                initial_partitions: Sequence[ArrayLike] | None = None) -> BoundResult:
    """Certified lower bound on the SSE of any partition of ``X`` into groups of >= k records.

    Groups of ``2k`` or more records can be split without raising the SSE, so the optimum is
    a partition into groups of ``k .. 2k-1`` records: the set-partitioning problem
    ``min sum_S c_S x_S, sum_{S containing i} x_S = 1, x binary`` with ``c_S = SSE(S)``.
    Its LP relaxation is solved by column generation (HiGHS, through ``highspy``, on a
    restricted master started from the groups of MDAV, mdav-ls from several seeds and every
    record's k-NN group; greedy pricing around every record, each group then improved by
    exchanges with its record's neighbours). Heuristic pricing cannot prove the LP optimal,
    so the certified bound is Lagrangian: with duals ``u`` and ``L`` a proved lower bound on
    ``min_S SSE(S) - u(S)`` (:func:`~microagg.bounds._pricing.rc_lower_bound`), every
    partition ``P`` has ``SSE(P) = sum(u) + sum_{S in P} rc(S) >= sum(u) + |P| min(0, L)``
    and ``|P| <= n // k``. A second Lagrangian bound spreads each group's reduced cost over
    its rows (:func:`~microagg.bounds._pricing.anchored_bound`, valid for every ``u``) and is
    raised by supergradient ascent from the k-NN point and the LP duals; with ``rho_i``
    found exactly by enumeration (:mod:`microagg.bounds._exact`, the anchored bound for rows
    whose enumeration runs out of nodes) it is the strong one, and its rounds add the
    negative groups they find to the LP; they price at points between the k-NN point and
    the LP's duals (dual smoothing), where the bound stays high while the LP converges. The
    bound returned is the largest of these and the k-NN bound: each is proved for every
    partition. The enumeration takes the groups of exactly ``k`` records, which suffice
    (the LP over them equals the LP over ``k .. 2k-1``: :mod:`microagg.bounds._exact`).
    Once the LP is optimal, subset-row cuts (:mod:`microagg.bounds._cuts`) raise it above
    the LP relaxation, where it mixes ``k``-record groups in place of larger ones; with
    their duals the larger groups that hold a cut's three records are priced too, cut by
    cut. Within 2 minutes it certifies colgen's partitions within 5 % in 8 of the 12 cases
    of Census, Tarragona and EIA at k = 3, 4, 5, 10 (EIA k = 3 within 1.8 % with the cuts,
    8.5 % without), in 10 minutes 11 (EIA k = 5 within 4.0 %, Tarragona k = 10 within
    2.0 %, Census k = 10 within 4.4 % of colgen's 10-minute partition); EIA k = 10 stays at
    6.3 %: its LP without cuts is at most 5.2 % below the best partition found, and at
    k = 10 a round priced with the cuts' duals does not finish in the time (see
    benchmarks/results/bounds-2026.md).
    On ``n_samples <= 14`` pricing is exact (enumeration) and the LP value is certified.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``2 <= k <= n_samples``.
    method : {"column-generation", "knn"}, default="column-generation"
    time_limit : float, default=60.0
        Seconds in all: starting partitions take up to 30 % (at most 36 s), greedy column
        generation a quarter of what is left, enumeration rounds 95 % of the rest, the
        ascent the rest; the k-NN table, the last LP and one bound evaluation may overrun it.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds of the mdav-ls starting partitions.
    initial_partitions : sequence of array-like of shape (n_samples,), optional
        Labels of further partitions whose groups (of >= k records) seed the master LP.

    Returns
    -------
    BoundResult

    References
    ----------
    Aloise, D., Hansen, P., Rocha, C. and Santi, E. "Column generation bounds for numerical
    microaggregation." Journal of Global Optimization 60(2) (2014).
    Castro, J., Gentile, C. and Spagnolo-Arrizabalaga, E. "An algorithm for the
    microaggregation problem using column generation." Computers & Operations Research (2022).

    Examples
    --------
    >>> X = [[0.0], [1.0], [10.0], [11.0], [20.0], [21.0]]
    >>> res = lower_bound(X, 2, random_state=0)
    >>> res.lp_certified, round(res.bound, 6)
    (True, 1.5)
    """
    A = check_matrix(X, caller="lower_bound")
    k = check_k(k, n_samples=A.shape[0], caller="lower_bound")
    if method not in METHODS:
        raise ValueError(f"The 'method' parameter of lower_bound must be one of {METHODS}. "
                         f"Got {method!r} instead.")
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) \
            or not 0 < time_limit < np.inf:
        raise ValueError("The 'time_limit' parameter of lower_bound must be a number of "
                         f"seconds > 0. Got {time_limit!r} instead.")
    labels = _check_partitions(initial_partitions, A.shape[0], k)
    _, rng = resolve_seed(random_state)
    return _lower_bound(A, k, method, float(time_limit), rng, labels)


def _check_partitions(parts: Sequence[ArrayLike] | None, n: int,
                      k: int) -> list[NDArray[np.intp]]:
    out = []
    for pos, part in enumerate(parts or ()):
        lab = np.asarray(part)
        if lab.shape != (n,) or lab.dtype.kind not in "iu":
            raise ValueError(f"initial_partitions[{pos}] must be integer labels of shape ({n},). "
                             f"Got dtype {lab.dtype} and shape {lab.shape} instead.")
        sizes = np.unique(lab, return_counts=True)[1]
        if sizes.min() < k:
            raise ValueError(f"initial_partitions[{pos}] has a group of {sizes.min()} records; "
                             f"every group must have >= k={k}.")
        out.append(lab.astype(np.intp))
    return out


def _lower_bound(A: NDArray[np.float64], k: int, method: str, time_limit: float,
                 rng: np.random.Generator, parts: list[NDArray[np.intp]],
                 pool: ColumnPool | None = None) -> BoundResult:
    """Worker of :func:`lower_bound`; input validated. ``pool``: an empty pool of ``A`` to
    fill (its columns stay there afterwards: benchmarks/bench_global_master.py solves the
    integer master over them)."""
    t0 = time.perf_counter()
    knn = float(knn_sums(A, k)[:, 0].sum() / (2 * k))
    if method == "knn":
        none = -np.inf
        return BoundResult(knn, np.nan, False, knn, none, none, none, none, np.inf, 0, 0,
                           time.perf_counter() - t0, method)
    pool = ColumnPool(A) if pool is None else pool
    best = _seed_pool(pool, A, k, parts, rng, min(SEED_SHARE * time_limit, SEED_SECONDS))
    exact = A.shape[0] <= _EXACT_MAX_N
    left = max(time_limit - (time.perf_counter() - t0), 0.0)
    max_new = max(A.shape[0] // 2, 50)
    prog = column_generation(A, k, pool, time_limit=left if exact else 0.25 * left,
                             exact_pricing=exact,
                             width=3 * k + 10, max_new=max_new)
    enumerated = -np.inf
    if not exact:
        left = max(time_limit - (time.perf_counter() - t0), 0.0)
        enumerated = enumeration_rounds(A, k, pool, prog, time_limit=0.95 * left,
                                        max_new=max_new, smooth=True, cuts=True)
    left = max(time_limit - (time.perf_counter() - t0), 0.0)
    anchored, _ = ascend(A, k, prog.duals, min(best, prog.lp_value), left)
    bound = max(knn, prog.certified, anchored, enumerated)
    return BoundResult(bound, prog.lp_value, prog.exact, knn, prog.certified, anchored,
                       enumerated, prog.min_rc_bound, best, len(pool.members), prog.iterations,
                       time.perf_counter() - t0,
                       method)


def _seed_pool(pool: ColumnPool, A: NDArray[np.float64], k: int,
               parts: list[NDArray[np.intp]], rng: np.random.Generator, budget: float) -> float:
    """Groups of MDAV, mdav-ls (3 seeds), the given partitions and k-NN groups; best SSE."""
    from ..metrics import sse
    from ..partition import partition
    from ..partition.local_search import quality_mode

    found = [partition(A, k, method="mdav"), *parts]
    for _ in range(3):
        seed = int(rng.integers(0, 2**31 - 1))
        found.append(quality_mode(A, k, time_limit=max(budget / 3, 0.1), random_state=seed))
    for lab in found:
        pool.add_partition(np.asarray(lab, dtype=np.intp))
    _, nbr = neighbours(A, k)
    for row in nbr:
        pool.add(row)
    return min(sse(A, lab) for lab in found)


def certified_gap(X: ArrayLike, labels: ArrayLike, k: int, bound: float | BoundResult | None = None,
                  **kwargs: object) -> float:
    """Certified optimality gap of a partition, in percent: ``100 * (1 - LB / SSE)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,)
        A partition into groups of >= k records.
    k : int
    bound : float, BoundResult or None
        A lower bound already computed on the same ``X`` and ``k``; ``None`` computes
        :func:`lower_bound` (``kwargs`` passed on, the partition added to its start).
    **kwargs
        Options of :func:`lower_bound` when ``bound`` is ``None``.

    Returns
    -------
    float
        The partition's SSE is at most this many percent above the optimum's.

    Examples
    --------
    >>> certified_gap([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1], 2, bound=0.5)
    50.0
    """
    from ..metrics import sse

    A = check_matrix(X, caller="certified_gap")
    k = check_k(k, n_samples=A.shape[0], caller="certified_gap")
    lab = _check_partitions([labels], A.shape[0], k)[0]
    if bound is None:
        bound = lower_bound(A, k, initial_partitions=[lab], **kwargs)  # type: ignore[arg-type]
    lb = bound.bound if isinstance(bound, BoundResult) else float(bound)
    value = sse(A, lab)
    if value <= 0.0:
        return 0.0
    return float(100.0 * (1.0 - lb / value))
