"""colgen's last phase: regions around the groups the whole file's LP finds worst.

colgen's rounds cut the file into parts by a tree over the group centroids; at ``k = 10``
they gain nothing on Census or EIA (groups of 10-19 records, parts of 20-40 groups). What
the LP of the whole file teaches is **where** a partition is weak: with the duals ``u`` of
its restricted master (greedy column generation), a group's reduced cost ``SSE(S) - u(S)``
is its share of the partition's distance from the LP, ``SSE(P) - sum(u) = sum_S rc(S)``.
This phase solves a ball of whole groups around each group of highest reduced cost (its
nearest groups by centroid, :data:`REGION_GROUPS` of them or ``part_size`` records) by the
part solver of colgen (column generation and the integer master, started from the region's
groups, so a region never gets worse), and spends what time is left on mdav-ls's iterated
local search.

Measured on Census, k = 10 (z-scores; mdav-ls for 300 s, IL 11.7515 %, then regions of 150
records with 40 s each): the four regions around the groups of highest reduced cost took
the IL to 11.6316 % (two of four gained), six regions around random groups to 11.7248 %
(one of six), six around the groups of highest reduced cost at the k-NN point (a feasible
dual point that needs no LP) to 11.7515 % (none), and four rounds of colgen's tree parts of
150 records, 120 s each, to 11.7515 % (none).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .._base.groups import group_means, within_sse

if TYPE_CHECKING:
    from ..bounds._master import ColumnPool, Progress

__all__ = ["guided_regions", "solve_part", "sse_of"]

REGION_GROUPS = 15
"""Groups in a region (whole groups nearest the centre's centroid, up to ``15 k`` records or
colgen's ``part_size``)."""

REGION_SECONDS = 40.0
"""Most seconds a region's column generation and integer master take (Census, k = 10,
regions of about 150 records: 12-40 s)."""

LP_SHARE = 0.35
"""Share of the phase's time the whole file's LP may take (greedy pricing; Census, k = 10:
85 s to the LP's 11.315 %, EIA: 151 s)."""

MIN_SECONDS = 10.0
"""The phase runs only when at least this many seconds are left."""

PART_NODE_BUDGET = 200_000
"""Enumeration nodes per row in a part's pricing rounds, which serve to find columns, not to
prove a bound (the budget colgen was measured with, per row and group size until the pricing
took the groups of k rows alone; the bound uses more)."""


def sse_of(X: NDArray[np.float64], labels: NDArray[np.intp]) -> float:
    """SSE of a partition (labels any non-negative integers)."""
    return within_sse(X, np.unique(labels, return_inverse=True)[1].ravel())


def solve_part(Xp: NDArray[np.float64], start: NDArray[np.intp], k: int,
               seconds: float) -> NDArray[np.intp]:
    """Column generation on one part, then the integer master started from ``start``; the
    start when the integer master finds nothing better in time."""
    from ..bounds._integer import integer_master
    from ..bounds._master import enumeration_rounds

    t0 = time.perf_counter()
    n = Xp.shape[0]
    if n < 2 * k:
        return start
    pool, prog = _greedy_lp(Xp, start, k, 0.4 * seconds)
    enumeration_rounds(Xp, k, pool, prog, time_limit=0.15 * seconds, max_new=_max_new(n),
                       budget=PART_NODE_BUDGET, cuts=True)
    left = seconds - (time.perf_counter() - t0)
    found = integer_master(pool, max(left, 1.0), start)
    if found is None or sse_of(Xp, found) >= sse_of(Xp, start):
        return start
    return found


def guided_regions(A: NDArray[np.float64], labels: NDArray[np.intp], k: int,
                   part_size: int, deadline: float, rng: np.random.Generator
                   ) -> NDArray[np.intp]:
    """The phase of the module docstring until ``deadline`` (``time.perf_counter()``):
    returns labels whose SSE is at most that of ``labels``."""
    from .local_search import UNCAPPED_ROUNDS, _iterate, local_search

    if deadline - time.perf_counter() < MIN_SECONDS:
        return labels
    u = _whole_lp_duals(A, labels, k, LP_SHARE * (deadline - time.perf_counter()))
    labels = np.unique(labels, return_inverse=True)[1].ravel().astype(np.intp)
    size = min(part_size, REGION_GROUPS * k)
    done: set[bytes] = set()
    changed = False
    while time.perf_counter() < deadline:
        centre = _next_centre(A, labels, u, done)
        if centre is None:
            break
        rows = _ball(A, labels, centre, size)
        region = np.ascontiguousarray(A[rows])
        local = np.unique(labels[rows], return_inverse=True)[1].ravel().astype(np.intp)
        seconds = min(REGION_SECONDS, deadline - time.perf_counter())
        better = solve_part(region, local, k, seconds)
        if sse_of(region, better) < sse_of(region, local):
            labels = labels.copy()
            labels[rows] = better + int(labels.max()) + 1
            labels = np.unique(labels, return_inverse=True)[1].ravel().astype(np.intp)
            changed = True
    if changed:
        labels = local_search(A, labels, k, rng=rng)
    if time.perf_counter() < deadline:
        labels = _iterate(A, k, labels, within_sse(A, labels), rounds=UNCAPPED_ROUNDS,
                          rng=rng, deadline=deadline)
    return labels


def _greedy_lp(X: NDArray[np.float64], labels: NDArray[np.intp], k: int,
               seconds: float) -> tuple[ColumnPool, Progress]:
    """Greedy column generation (at most ``seconds``) on the LP of ``X``'s rows, its pool
    seeded with the groups of ``labels`` and every record's k-NN group: the pool and where
    the LP got to (its duals among them)."""
    from ..bounds._master import ColumnPool, column_generation
    from ..bounds._pricing import neighbours

    pool = ColumnPool(X)
    pool.add_partition(np.asarray(labels, dtype=np.intp))
    for row in neighbours(X, k)[1]:
        pool.add(row)
    prog = column_generation(X, k, pool, time_limit=seconds, exact_pricing=False,
                             width=3 * k + 10, max_new=_max_new(X.shape[0]))
    return pool, prog


def _max_new(n: int) -> int:
    """Most columns one pricing round adds to a master over ``n`` rows."""
    return max(n // 2, 50)


def _whole_lp_duals(A: NDArray[np.float64], labels: NDArray[np.intp], k: int,
                    seconds: float) -> NDArray[np.float64]:
    """Duals of the whole file's restricted master after greedy column generation
    (:func:`_greedy_lp`)."""
    duals = _greedy_lp(A, labels, k, seconds)[1].duals
    if duals is None:  # column_generation always solves the master once
        raise RuntimeError("the master LP gave no duals")
    return duals


def _next_centre(A: NDArray[np.float64], labels: NDArray[np.intp], u: NDArray[np.float64],
                 done: set[bytes]) -> int | None:
    """The group of highest reduced cost ``SSE(S) - u(S)`` not yet a centre (marked in
    ``done`` by its rows); ``None`` when every group has been one."""
    counts = np.bincount(labels)
    means = group_means(A, labels)
    spread = ((A - means[labels]) ** 2).sum(axis=1)
    rc = np.bincount(labels, weights=spread - u, minlength=counts.size)
    order = np.argsort(labels, kind="stable")
    members = np.split(order, np.cumsum(counts)[:-1])
    for g in np.argsort(-rc, kind="stable"):
        key = members[g].tobytes()
        if key not in done:
            done.add(key)
            return int(g)
    return None


def _ball(A: NDArray[np.float64], labels: NDArray[np.intp], centre: int,
          size: int) -> NDArray[np.intp]:
    """Rows of the whole groups nearest group ``centre`` by centroid (itself first), while
    they hold at most ``size`` records (the centre always)."""
    means = group_means(A, labels)
    counts = np.bincount(labels)
    rows: list[NDArray[np.intp]] = []
    held = 0
    dist = ((means - means[centre]) ** 2).sum(axis=1)
    dist[centre] = -1.0  # first even where another group's centroid is the same
    for g in np.argsort(dist, kind="stable"):
        if held and held + counts[g] > size:
            break
        rows.append(np.flatnonzero(labels == g))
        held += int(counts[g])
    return np.sort(np.concatenate(rows)).astype(np.intp)
