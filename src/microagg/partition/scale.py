"""mdav-scale: MDAV-quality partitions of large files in near-linear time.

Exact MDAV costs O(n^2 p / k) (about 4.5 minutes at 10^6 x 10 records) and blocking it
(:mod:`~microagg.partition.blocking`) buys speed with information loss at the block borders.
mdav-scale takes another way:

1. **Neighbour lists.** Every record gets a list of :data:`CANDIDATES` near records: the
   records are cut into leaves of at most :data:`LEAF_SIZE` by k-d trees, the first on the
   data, the others on random rotations of it (their borders fall elsewhere), and all pairs
   within a leaf are compared; then ``rounds`` of NN-descent offer each record the
   neighbours of its :data:`REFINE_SOURCES` nearest listed ones. Deeper trees cut more
   true neighbours apart (with 4 trees the lists held 84 % of the 8 nearest at 10^4
   records, 67 % at 10^6), so the number of trees grows with the depth
   (:func:`trees_for`: 4 at 10^4 records, 8 at 10^6, 84 % again).
   O(n p (trees LEAF_SIZE + rounds REFINE_SOURCES DEPTH)), trees O(log n).
2. **Start: CBFS on the lists.** As in CBFS (Laszlo & Mukherjee 2005), the record farthest
   from the centroid of the unassigned records forms a group with its k - 1 nearest
   unassigned records; the nearest are looked up in its list (and its neighbours' lists
   when that runs short) instead of by a pass over every record. The centroid is renewed
   each time an eighth of the records left has been grouped. The few records left at the
   end join the group of the nearest listed record that has room (under 2k - 1 records);
   those that find none are grouped by exact MDAV (or join their nearest group when fewer
   than k). With exact lists this is CBFS; with these lists its IL is a few per cent above
   MDAV's.
3. **Local search.** Records move, or swap, between a group and its ``neighbours`` nearest
   groups (by centroid) among the groups that hold its members' listed neighbours, whenever
   that lowers the SSE, while every group keeps k..2k-1 records (the moves and swaps of
   ``mdav-ls``). Sweeps repeat over the groups that changed, and their near groups, until
   one gains less than ``tol`` of the SSE or ``sweeps`` have run (:data:`SWEEPS` by
   default; the quality mode's :data:`QUALITY_PARAMS` search until ``tol``). Each sweep is
   O(n (p k neighbours)). A sweep
   cuts the groups into :data:`SWEEP_PARTS` slabs across a random direction of their
   centroids and searches the slabs in parallel, each change within one slab (the next
   sweep cuts elsewhere), so the result does not depend on the number of threads.

Memory is O(n (p + CANDIDATES)); nothing is quadratic in n.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Constraint, Interval, validate_params
from .._base.validation import RandomState, check_k, check_magnitude, check_matrix, resolve_seed
from ._cbfs_kernels import greedy_groups
from ._neighbour_lists import first_lists, kd_leaves, near_in_leaves, refine_lists
from ._scale_kernels import group_state, near_groups, sweep
from .blocking import blocked_partition
from .mdav import mdav

__all__ = ["CANDIDATES", "CONSTRAINTS", "LEAF_SIZE", "NEIGHBOURS", "QUALITY_PARAMS",
           "REFINE_SOURCES", "REFINE_TREES", "ROUNDS", "SWEEPS", "mdav_scale", "refine_groups",
           "trees_for"]

LEAF_SIZE = 128
"""Records per k-d tree leaf when the neighbour lists are built (step 1)."""

CANDIDATES = 8
"""Length of each record's neighbour list (step 1); ``k + 3`` when that is longer."""

TREES = 4
"""k-d trees whose leaves give the first neighbour lists (step 1) at depth
:data:`TREES_DEPTH` or less; more on deeper trees (:func:`trees_for`)."""

TREES_DEPTH = 6.5
"""Levels of the k-d tree (log2 of records per leaf) that :data:`TREES` trees serve."""

REFINE_TREES = 3
"""k-d trees for the neighbour lists of :func:`refine_groups` (the engines' second pass),
whatever the block's size: its start is already good away from the first borders, and fewer
trees cost little there. Measured on 10^6 x 10 Gaussian records, k = 5, first blocks of
100,000 (IL 8.025 %), second pass over blocks of 100,000: 6 trees (``trees_for``) 7.879 %
in 14.4 s; 4 trees 7.880 %, 12.6 s; 3 trees 7.883 %, 11.6 s; 2 trees 7.890 %, 10.2 s."""

ROUNDS = 1
"""Default rounds of neighbour-of-neighbour refinement of the lists (step 1)."""

SWEEPS = 2
"""Default most local-search sweeps (step 3). The first sweeps take most of what the search
gains: at 10^5 Gaussian records (k = 5) the start's IL 12.85 % falls to 12.20 % after one
sweep and 11.93 % after two, exact MDAV's being 12.48 % (the quality mode's
:data:`QUALITY_PARAMS`: 11.62 % after nine). One sweep is about a sixth faster (at 10^5,
5x exact MDAV's speed in four rounds of six on 2 cores; at 10^6 IL 7.890 % against
7.745 % with two and 7.993 % for exact MDAV)."""

QUALITY_PARAMS: Mapping[str, int] = {"rounds": 2, "sweeps": 100}
"""What the quality mode (``refine=SECONDS``) sets besides its time limit: two rounds of
refinement and sweeps until one gains less than ``tol`` (IL 11.62 % at 10^5 records above,
in about twice the time)."""

DEPTH = 8
"""Entries of the lists used by the refinement and by the search for near groups."""

REFINE_SOURCES = 4
"""Neighbours whose lists (their first :data:`DEPTH` entries) a refinement round offers
to each record. Measured at 10^5 x 10 records, k = 5, default parameters: 8 sources (64
entries) gave IL 11.909 % (Gaussian) and 5.601 % (correlated), 4 sources 11.931 % and
5.605 % with the round in 0.10 s instead of 0.16-0.20 s, 3 sources 11.944 % and 5.604 %."""

NEIGHBOURS = 12
"""Default number of near groups searched around each group (step 3)."""

CONSTRAINTS: Mapping[str, tuple[Constraint, ...]] = {
    "neighbours": (Interval(int, 1, None, closed="left"),),
    "sweeps": (Interval(int, 0, None, closed="left"),),
    "rounds": (Interval(int, 0, None, closed="left"),),
    "tol": (Interval(float, 0, None, closed="left"),),
    "time_limit": (None, Interval(float, 0, None, closed="neither")),
}
"""The allowed values of the parameters (the registry entry uses them too)."""

SWEEP_PARTS = 2
"""Slabs of groups searched in parallel by each local-search sweep (step 3); a change joins
two groups of one slab, and each sweep cuts the slabs across a new random direction. Fixed,
not the number of threads, so that the result does not depend on the machine. Once a sweep
with slabs gains too little, the sweeps go on without them (one slab) until one of those
gains too little too, so the search ends where the plain search would stop."""

SLAB_GROUPS = 1_000
"""Fewest groups for which the sweeps are cut into slabs (fewer: one slab, as before)."""

_EXACT_LEFTOVERS = 20_000  # records left over grouped by exact MDAV (more: in blocks of this)

ONE_BLAS_THREAD_ROWS = 20_000
"""Fewest records for which :func:`one_blas_thread` holds BLAS to one thread."""


@contextmanager
def one_blas_thread(n: int) -> Iterator[None]:
    """BLAS on one thread while mdav-scale runs on ``n`` records (from
    :data:`ONE_BLAS_THREAD_ROWS`; below, the limit's 10 ms would weigh).

    numba's threads already take every core; a BLAS call inside them (the leaf products of
    the neighbour lists) or between them (the rotations, the slabs' projections) started
    BLAS threads of their own, and OpenBLAS's keep spinning for a while after each call, so
    the kernel that ran next shared its cores with them. Measured at 10^5 x 10 records, 2
    cores: a k-d tree after a rotation 0.035-0.11 s, 0.021-0.027 s with BLAS on one thread;
    mdav-scale 1.77-2.50 s (mean 2.19), 1.74-1.95 s (1.85), alternated in fresh processes.
    """
    if n < ONE_BLAS_THREAD_ROWS:
        yield
        return
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _rotation(rng: np.random.Generator, p: int) -> NDArray[np.float64]:
    """A random orthogonal p x p matrix (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((p, p)))
    return np.asarray(q * np.where(np.diag(r) < 0, -1.0, 1.0), dtype=np.float64)


def trees_for(n: int) -> int:
    """k-d trees for the neighbour lists of ``n`` records: :data:`TREES` per
    :data:`TREES_DEPTH` levels of depth, at least :data:`TREES`.

    Measured on 10-column Gaussian data, k = 5 (share of the 8 nearest in the lists; IL of
    mdav-scale; seconds on 2 cores): at 10^6 records 4 trees 67 %, IL 7.742 %, 29.0 s;
    6 trees 78 %, 7.640 %, 30.4 s; 8 trees 84 %, 7.595 %, 31.8 s; 12 trees 7.564 %, 33.8 s.
    At 10^5, 6 trees: IL 11.669 % against 11.770 % with 4, 2.04 s against 1.93 s.

    >>> [trees_for(n) for n in (10_000, 100_000, 1_000_000, 100_000_000)]
    [4, 6, 8, 12]
    """
    depth = math.log2(max(n, 2) / LEAF_SIZE)
    return max(TREES, round(TREES * depth / TREES_DEPTH))


def _near_lists(Xs: NDArray[np.float64], starts: NDArray[np.int64], width: int,
                rng: np.random.Generator, trees: int, rounds: int
                ) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """Step 1 on ``Xs`` in the leaf order of the first tree (leaves ``starts``) and
    ``trees - 1`` rotated ones, then ``rounds`` of refinement: each row's ``width`` nearest
    rows found, by distance (-1 pads short lists). The lists hold 32-bit distances and
    rows (64-bit rows from 2^31 records): half the memory that the later steps read again
    and again (the same lists as 64-bit ones at 10^5 records, compared row by row; the
    local search's sums and distances stay 64-bit)."""
    n, p = Xs.shape
    near_d = np.empty((n, width), dtype=np.float32)
    near_i = np.empty((n, width), dtype=np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    first_lists(Xs, starts, near_d, near_i)
    for _ in range(trees - 1):
        rotated = (_rotation(rng, p).T @ Xs.T).T  # column-major: a split reads one column
        order, leaves = kd_leaves(rotated, LEAF_SIZE)
        near_in_leaves(Xs, order, leaves, near_d, near_i)
    for _ in range(rounds):
        near_d, near_i = refine_lists(Xs, near_d, near_i, min(REFINE_SOURCES, width),
                                      min(DEPTH, width))
    return near_d, near_i


def _start(Xs: NDArray[np.float64], k: int, starts: NDArray[np.int64],
           rng: np.random.Generator, rounds: int = ROUNDS
           ) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """Steps 1-2 on ``Xs`` in leaf order (``starts``): the labels and the neighbour lists."""
    near_d, near_i = _near_lists(Xs, starts, max(CANDIDATES, k + 3), rng,
                                  trees_for(Xs.shape[0]), rounds)
    labels, g = greedy_groups(Xs, near_i, near_d, k)
    left = _join_near_groups(labels, np.flatnonzero(labels < 0), near_i, g, 2 * k - 1)
    if left.size >= k:  # the records no seed could reach: MDAV, in blocks if they are many
        rest = np.ascontiguousarray(Xs[left])
        labels[left] = g + (mdav(rest, k) if left.size <= _EXACT_LEFTOVERS else
                            blocked_partition(rest, k, block_size=_EXACT_LEFTOVERS, n_jobs=1))
    elif left.size:  # fewer than k: each joins the group of its nearest grouped record
        done = np.flatnonzero(labels >= 0)
        for i in left:
            labels[i] = labels[done[np.argmin(((Xs[done] - Xs[i]) ** 2).sum(axis=1))]]
    return labels, near_i


def _join_near_groups(labels: NDArray[np.int64], left: NDArray[np.int64],
                      near_i: NDArray[np.int32], n_groups: int, most: int) -> NDArray[np.int64]:
    """Each record in ``left`` joins the group of the first record of its list that has one
    with room (under ``most`` records), in place; returns those that found none. (Grouping
    the leftovers among themselves, scattered as they are, cost 0.6 % of IL at 10^5.)"""
    size = np.bincount(labels[labels >= 0], minlength=n_groups)
    unjoined = []
    for i in left:
        for c in near_i[i]:
            if c >= 0 and labels[c] >= 0 and size[labels[c]] < most:
                labels[i] = labels[c]
                size[labels[c]] += 1
                break
        else:
            unjoined.append(i)
    return np.asarray(unjoined, dtype=np.int64)


def _parts(cent: NDArray[np.float64], rng: np.random.Generator, n_parts: int
           ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Cut the groups into ``n_parts`` slabs of equal counts across a random direction of
    their centroids: each group's part, the groups by part (ascending within each) and the
    parts' starts in that order. One part draws no direction."""
    if n_parts == 1:
        g = cent.shape[0]
        return (np.zeros(g, dtype=np.int64), np.arange(g, dtype=np.int64),
                np.array([0, g], dtype=np.int64))
    rank = np.argsort(cent @ rng.standard_normal(cent.shape[1]), kind="stable")
    part = np.empty(cent.shape[0], dtype=np.int64)
    part[rank] = np.arange(cent.shape[0]) * n_parts // cent.shape[0]
    by_part = np.argsort(part, kind="stable").astype(np.int64)
    starts = np.searchsorted(part[by_part], np.arange(n_parts + 1)).astype(np.int64)
    return part, by_part, starts


class _Search(NamedTuple):
    """How long step 3 searches: near groups per group, most sweeps, the gain under which it
    stops (a fraction of the SSE) and the ``time.perf_counter()`` after which no sweep
    starts."""

    neighbours: int
    sweeps: int
    tol: float
    deadline: float

    @classmethod
    def from_now(cls, neighbours: int, sweeps: int, tol: float, time_limit: float | None
                 ) -> _Search:
        """The public parameters, with ``time_limit`` seconds counted from now."""
        deadline = math.inf if time_limit is None else time.perf_counter() + float(time_limit)
        return cls(int(neighbours), int(sweeps), float(tol), deadline)


def _improve(Xs: NDArray[np.float64], labels: NDArray[np.int64], near_rec: NDArray[np.int32],
             k: int, rng: np.random.Generator, search: _Search) -> NDArray[np.int64]:
    """Step 3: sweeps of moves and swaps between near groups (in place; returns labels)
    within the limits of ``search``: first over :data:`SWEEP_PARTS` slabs of groups cut
    across a random direction drawn from ``rng`` (from :data:`SLAB_GROUPS` groups), then,
    once one gains too little, over one slab until one of those gains too little too."""
    neighbours, sweeps, tol, deadline = search
    n_groups = int(labels.max()) + 1
    if n_groups < 2 or sweeps == 0:
        return labels
    rank = _rank_by_first_row(labels, n_groups)
    inverse = np.empty(n_groups, dtype=np.int64)
    inverse[rank] = np.arange(n_groups)
    labels[:] = rank[labels]
    cap = max(2 * k - 1, int(np.bincount(labels).max()))
    state = group_state(Xs, labels, n_groups, cap)
    sums, count = state[0], state[1]
    sse = float((Xs * Xs).sum() - ((sums * sums).sum(axis=1) / count).sum())
    spread = float(((Xs - Xs.mean(axis=0)) ** 2).sum()) / Xs.shape[0]
    if spread == 0.0:  # all records alike: nothing can improve
        return labels
    active = np.ones(n_groups, dtype=np.bool_)
    width = min(neighbours, n_groups - 1)
    slabs = SWEEP_PARTS if n_groups >= SLAB_GROUPS else 1
    for _ in range(sweeps):
        if time.perf_counter() > deadline:
            break
        near = near_groups(state[2], labels, state[3], count, near_rec,
                           min(DEPTH, near_rec.shape[1]), width, active)
        next_active = np.zeros(n_groups, dtype=np.bool_)
        # a change must gain more than rounding in the running sums could fake
        gain, changes = sweep(Xs, labels, near, k, cap, 1e-9 * spread, state, active,
                              next_active, 2 * k, *_parts(state[2], rng, slabs))
        sse -= gain
        if changes == 0 or gain <= tol * sse:
            if slabs == 1:
                break
            slabs = 1  # the cut hid some changes: go on without it until it stops again
        active = next_active
    labels[:] = inverse[labels]
    return labels


def _rank_by_first_row(labels: NDArray[np.int64], n_groups: int) -> NDArray[np.int64]:
    """A new number for each group, in the order of its first row: with the rows in leaf
    order, near groups get near numbers, so the search reads their centroids and member
    lists from near places in memory (two sweeps at 10^5 x 10 took 9 % longer with CBFS's
    numbers, which follow the seeds from the outside in)."""
    first = np.full(n_groups, labels.shape[0], dtype=np.int64)
    np.minimum.at(first, labels, np.arange(labels.shape[0]))
    rank = np.empty(n_groups, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(n_groups)
    return rank


def mdav_scale(X: ArrayLike, k: int, *, random_state: RandomState = None,
               neighbours: int = NEIGHBOURS, sweeps: int = SWEEPS, tol: float = 1e-3,
               rounds: int = ROUNDS, time_limit: float | None = None) -> NDArray[np.intp]:
    """Partition a large file with MDAV's quality or better in near-linear time (mdav-scale).

    CBFS on approximate neighbour lists, then a local search of moves and swaps between
    groups with near centroids (module docstring). The local search never raises the SSE,
    and on the benchmark files (10^5 and 10^6 records, 10 columns, k = 5) the result has a
    lower information loss than exact MDAV at a fraction of its time.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the random rotations of the k-d trees.
    neighbours : int, default=12
        Near groups searched around each group, ``>= 1``; more is slower and a little better.
    sweeps : int, default=2
        Most local-search sweeps, ``>= 0`` (0: the CBFS start alone). The quality mode
        (``refine=``) searches until ``tol`` stops it (:data:`QUALITY_PARAMS`).
    tol : float, default=1e-3
        Stop once a sweep lowers the SSE by less than this fraction of it, ``>= 0``.
    rounds : int, default=1
        Rounds of neighbour-of-neighbour refinement of the neighbour lists, ``>= 0``; each
        costs about a tenth of the run and finds more true neighbours (the quality mode: 2).
    time_limit : float, default=None
        Seconds after which no further sweep starts (``> 0``; the start is always completed:
        the quality mode's ``refine`` budget on large data); ``None``: no limit.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Group of each record, consecutive from 0; every group has at least k records (and,
        except for groups of the start that were larger, at most 2k - 1).

    References
    ----------
    Laszlo, M. and Mukherjee, S. "Minimum spanning tree partitioning algorithm for
    microaggregation." IEEE TKDE 17(7) (2005) (CBFS); Domingo-Ferrer, J. and Torra, V.
    "Ordinal, continuous and heterogeneous k-anonymity through microaggregation." Data Min.
    Knowl. Disc. 11 (2005) (MDAV, the baseline); the local search is that of ``mdav-ls``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> labels = mdav_scale(X, 5, random_state=0)
    >>> int(np.bincount(labels).min()) >= 5
    True
    """
    A = check_matrix(X, caller="mdav-scale")
    check_magnitude(A, caller="mdav-scale")
    k = check_k(k, n_samples=A.shape[0], caller="mdav-scale")
    validate_params({"neighbours": neighbours, "sweeps": sweeps, "tol": tol, "rounds": rounds,
                     "time_limit": time_limit}, CONSTRAINTS, caller="mdav-scale")
    search = _Search.from_now(neighbours, sweeps, tol, time_limit)
    n = A.shape[0]
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    _, rng = resolve_seed(random_state)
    with one_blas_thread(n):
        order, starts = kd_leaves(A, LEAF_SIZE)
        Xs = np.ascontiguousarray(A[order])  # leaf order: near records near in memory
        labels, near_rec = _start(Xs, k, starts, rng, int(rounds))
        labels = _improve(Xs, labels, near_rec, k, rng, search)
    out = np.empty(n, dtype=np.intp)
    out[order] = labels
    if np.bincount(out).min() == 0:  # consecutive from 0 (a gap has never been seen)
        _, out = np.unique(out, return_inverse=True)
    return out.ravel().astype(np.intp)


def refine_groups(X: ArrayLike, labels: ArrayLike, k: int, *,  # noqa: PLR0913 - mdav-scale's parameters, which the engines pass on by name
                  random_state: RandomState = None, neighbours: int = NEIGHBOURS,
                  sweeps: int = SWEEPS, tol: float = 1e-3, rounds: int = ROUNDS,
                  time_limit: float | None = None) -> NDArray[np.intp]:
    """Improve a partition found elsewhere by mdav-scale's local search (step 3).

    The engines that work block by block (blocked, file, Dask) group each block on its own,
    so records near a block border are grouped with neighbours on their side only. They
    then gather whole groups into new blocks whose borders fall elsewhere (a block tree on
    rotated group centroids) and call this on each: neighbour lists over the records given,
    then moves and swaps between near groups. The lists come from :data:`REFINE_TREES` k-d
    trees whatever the block's size (the start is good away from the first borders, and
    fewer trees cost little IL there). Groups keep their labels; none falls below
    ``k``, none present disappears, and the SSE never rises.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers of whole groups; must be finite.
    labels : array-like of shape (n_samples,)
        Integer group of each record (any numbering); every group has at least ``k``
        records.
    k : int
        Minimum group size, ``k >= 2``.
    random_state, neighbours, sweeps, tol, rounds, time_limit
        As for :func:`mdav_scale` (``time_limit`` counts from this call).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        The improved labels, drawn from the labels given.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(600, 3))
    >>> start = np.repeat(np.arange(120), 5)          # groups of 5 in the rows' order
    >>> better = refine_groups(X, start, 5, random_state=0)
    >>> from microagg.metrics import sse
    >>> bool(sse(X, better) < sse(X, start)), int(np.bincount(better).min())
    (True, 5)
    """
    A = check_matrix(X, caller="refine_groups")
    check_magnitude(A, caller="refine_groups")
    validate_params({"neighbours": neighbours, "sweeps": sweeps, "tol": tol, "rounds": rounds,
                     "time_limit": time_limit}, CONSTRAINTS, caller="refine_groups")
    given = np.asarray(labels)
    if given.shape != (A.shape[0],) or not np.issubdtype(given.dtype, np.integer):
        raise ValueError(f"labels must be {A.shape[0]} integers, one per row of X; got "
                         f"shape {given.shape} of {given.dtype}.")
    names, local = np.unique(given, return_inverse=True)
    sizes = np.bincount(local.ravel())
    if sizes.size and int(sizes.min()) < k:
        raise ValueError(f"Every group must have at least k={k} records to be refined; "
                         f"group {names[int(np.argmin(sizes))].item()!r} has {int(sizes.min())}.")
    if names.size < 2:
        return given.astype(np.intp)
    search = _Search.from_now(neighbours, sweeps, tol, time_limit)
    _, rng = resolve_seed(random_state)
    with one_blas_thread(A.shape[0]):
        order, starts = kd_leaves(A, LEAF_SIZE)
        Xs = np.ascontiguousarray(A[order])
        _, near_rec = _near_lists(Xs, starts, max(CANDIDATES, k + 3), rng, REFINE_TREES,
                                  int(rounds))
        improved = _improve(Xs, local.ravel().astype(np.int64)[order], near_rec, k, rng,
                            search)
    out = np.empty(A.shape[0], dtype=np.intp)
    out[order] = names[improved]
    return out
