"""The restricted master LP of column generation and its loop (validation assumed done)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csc_matrix

from ._cuts import SubsetRowCuts, incidence
from ._exact import NODE_BUDGET, exact_pricing
from ._lp import MasterLP, MasterSolution
from ._pricing import (
    brute_force_min_rc,
    greedy_columns,
    knn_sums,
    knn_table,
    neighbours,
    rc_lower_bound,
    sse_of,
)

_TOL = 1e-9
LIFT_GAIN = 0.02
"""Lifting rounds go on while each raises the bound by at least this share of it."""
CUT_GAP = 1e-3
"""Cuts are separated once the LP is within this share of the proved bound, even while
pricing at its duals still finds a few negative groups (Census k = 4: the LP at 6.0020 %
of the SST, equal to the bound to 4 digits, from 90 s to the end of a 120-s bound, while
every second round at its duals added 3-11 groups, so none was separated)."""


@dataclass
class ColumnPool:
    """Distinct groups (sorted row indices) and their SSE."""

    X: NDArray[np.float64]
    members: list[NDArray[np.intp]] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    index: dict[bytes, int] = field(default_factory=dict)
    """Each group's column, by the bytes of its sorted rows."""
    lp: MasterLP | None = field(default=None, repr=False, compare=False)
    """The master LP over these columns, kept between solves (:func:`solve_master`)."""

    def add(self, group: NDArray[np.intp]) -> bool:
        """Add one group; False when it was there already."""
        group = np.sort(np.asarray(group, dtype=np.intp))
        key = group.tobytes()
        if key in self.index:
            return False
        self.index[key] = len(self.members)
        self.members.append(group)
        self.costs.append(sse_of(self.X, group))
        return True

    def add_partition(self, labels: NDArray[np.intp]) -> None:
        """Add every group of a partition."""
        for group in groups_of(labels):
            self.add(group)

    def column_of(self, group: NDArray[np.intp]) -> int | None:
        """The column of ``group`` (any order of its rows), ``None`` if it is not in the pool."""
        return self.index.get(np.sort(np.asarray(group, dtype=np.intp)).tobytes())

    def matrix(self) -> csc_matrix:
        """The n x (number of columns) 0/1 incidence matrix."""
        return incidence(self.members, self.X.shape[0])


def groups_of(labels: NDArray[np.intp]) -> list[NDArray[np.intp]]:
    """The rows of each group of ``labels``, by label."""
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(labels[order])) + 1)


def solve_master(pool: ColumnPool, cuts: SubsetRowCuts | None = None) -> MasterSolution:
    """Solve ``min c x, A x = 1, x >= 0`` (and ``C x <= 1``, the subset-row ``cuts``) with
    HiGHS, in the pool's model, kept between solves (:class:`~microagg.bounds._lp.MasterLP`;
    a new model when the cuts are another object's)."""
    if pool.lp is None or not pool.lp.fits(cuts):
        pool.lp = MasterLP(pool.X.shape[0], cuts)
    return pool.lp.solve(pool.members, pool.costs, cuts)


@dataclass
class Progress:
    """What the loop reached."""

    lp_value: float = np.inf
    certified: float = -np.inf
    duals: NDArray[np.float64] | None = None
    min_rc_bound: float = -np.inf
    exact: bool = False
    iterations: int = 0
    history: list[tuple[float, float]] = field(default_factory=list)


def column_generation(X: NDArray[np.float64], k: int, pool: ColumnPool, *, time_limit: float,
                      exact_pricing: bool, width: int, max_new: int) -> Progress:
    """Alternate master LP and pricing until pricing finds nothing or time is up.

    After every LP the Lagrangian bound ``sum(u) + m * min(0, L)`` is computed, with ``L``
    the exact minimum reduced cost (``exact_pricing``) or :func:`rc_lower_bound`, and
    ``m = n // k`` the most groups a partition can have; the best bound seen is kept.
    """
    start = time.perf_counter()
    n = X.shape[0]
    m = n // k
    knn = knn_sums(X, k)
    _, nbr = neighbours(X, min(n, max(width, 2 * k)))
    prog = Progress()
    while True:
        value, u, _, _ = solve_master(pool)
        prog.iterations += 1
        prog.lp_value, prog.duals = value, u
        if exact_pricing:
            low, best = brute_force_min_rc(X, u, k)
            new = [np.asarray(best, dtype=np.intp)] if low < -_TOL else []
        else:
            low = rc_lower_bound(knn, u, k)
            new, _ = greedy_columns(X, u, nbr, k, _TOL * max(1.0, abs(value)))
        bound = float(u.sum()) + m * min(0.0, low)
        if bound > prog.certified:
            prog.certified, prog.min_rc_bound = bound, low
        prog.history.append((value, bound))
        added = sum(pool.add(g) for g in _cheapest(X, u, new, max_new))
        if added == 0:
            prog.exact = exact_pricing
            break
        if time.perf_counter() - start > time_limit:
            break
    return prog


def enumeration_rounds(X: NDArray[np.float64], k: int, pool: ColumnPool, prog: Progress, *,  # noqa: PLR0913 - keyword-only options of the rounds
                       time_limit: float, max_new: int, smooth: bool = False,
                       budget: int = NODE_BUDGET, cuts: bool = False) -> float:
    """Rounds of master LP and :func:`~microagg.bounds._exact.exact_pricing`; best bound.

    Each round's ``sum(u) + sum_i rho_i`` is proved whatever ``u`` is (rows whose enumeration
    ran out of nodes use their anchored lower bound), so the best over the rounds is kept;
    when every row was enumerated at the LP's own duals and no negative column is left the LP
    is optimal. A round cut off by the time limit still gives a proved bound (the rows it
    did not reach count with their anchored lower bound).

    With ``smooth``, two kinds of rounds alternate around a stability centre, which is
    always a feasible dual point whose sum is the best bound so far: a round at ``u``
    proves ``sum(u + rho)`` and makes ``u + rho`` dual feasible
    (:func:`~microagg.bounds._exact.exact_pricing`).

    * **Lifting** rounds price at the centre itself and move it to its ``u + rho``: the
      bound never falls (at a feasible point every ``rho_i >= 0``). The first is at the
      k-NN point ``u_i = T_i(k-1) / (2k)``, feasible by the k-NN bound's own argument
      (``SSE(S) >= u(S)`` for every group); they go on while each gains at least
      ``LIFT_GAIN`` of the bound (Census k = 5, 570 s: 6.15 % of the SST after the first,
      6.72 after four, in 334 s; smoothed rounds alone reached 6.45 in the 570 s).
    * **Smoothed** rounds (Wentges' dual smoothing) price at ``centre + alpha (duals -
      centre)`` after the master LP and add the negative groups they find to it, which is
      what moves the LP. ``alpha`` starts at 1/2, doubles after a round that beats the best
      (whose ``u + rho`` becomes the centre, and lifting resumes), halves after one that
      does not, and returns to 1 when a smoothed point finds no negative column. Far from
      the LP optimum (k >= 4 on the benchmark files) the duals' own bound is far below
      zero, while the smoothed points keep the candidate sets small.

    ``budget`` is the most enumeration nodes per row (``exact_pricing``).

    With ``cuts``, a round at the LP's own duals that finds no negative group (the LP over
    the groups is optimal, or nearly: rows out of nodes), or any round once the LP is within
    ``CUT_GAP`` of the best bound, separates subset-row cuts at the LP's point
    (:mod:`microagg.bounds._cuts`) and the rounds go on with them, the dual points then
    holding the cuts' duals ``sigma`` beside ``u`` (the k-NN point's are 0); the loop ends
    when none is violated.

    References
    ----------
    Wentges, P. "Weighted Dantzig-Wolfe decomposition for linear mixed-integer programming."
    International Transactions in Operational Research 4(2) (1997).
    """
    deadline = time.perf_counter() + time_limit
    table = knn_table(X, k)
    # the k-NN point: dual feasible (the k-NN bound), with no cut duals
    center = _Point(table[:, k - 1] / (2.0 * k), np.zeros(0))
    best, alpha, lifting = -np.inf, (0.5 if smooth else 1.0), smooth
    pricer = _Pricer(X, k, pool, table, deadline, max_new, budget,
                     cuts=SubsetRowCuts(X.shape[0]) if cuts else None)
    while time.perf_counter() < deadline:
        if lifting:
            bound, lifted = pricer.lift(center)
            lifting = bound > best + LIFT_GAIN * abs(bound)
            if bound > best:
                best, center = bound, lifted
            continue
        lp = solve_master(pool, pricer.cuts)
        prog.iterations += 1
        prog.lp_value, prog.duals = lp.value, lp.u
        duals = _Point(lp.u, lp.sigma)
        point = center.toward(duals, alpha) if alpha < 1.0 else duals
        bound, exact, added, rho = pricer.round(point)
        prog.history.append((lp.value, bound))
        if bound > best:
            best = bound
            if smooth:
                center, alpha, lifting = point.lifted(rho), min(1.0, 2.0 * alpha), True
        elif smooth:
            alpha /= 2.0
        if added == 0 and point is not duals:
            alpha = 1.0  # nothing negative at the smoothed point: price at the duals
        elif (added == 0 or lp.value - best <= CUT_GAP * abs(lp.value)) \
                and pricer.separate(lp.x):
            continue
        elif added == 0:
            prog.exact = exact  # nothing negative at the duals: optimal if every row exact
            break
    return best


class _Point(NamedTuple):
    """A dual point: the rows' ``u`` and the cuts' ``sigma`` (cuts added after it was made
    count with 0)."""

    u: NDArray[np.float64]
    sigma: NDArray[np.float64]

    def padded(self, cuts: int) -> NDArray[np.float64]:
        """``sigma`` over ``cuts`` cuts."""
        return np.concatenate([self.sigma, np.zeros(cuts - self.sigma.size)])

    def toward(self, other: _Point, alpha: float) -> _Point:
        """``self + alpha (other - self)``."""
        sigma = self.padded(other.sigma.size)
        return _Point(self.u + alpha * (other.u - self.u), sigma + alpha * (other.sigma - sigma))

    def lifted(self, rho: NDArray[np.float64]) -> _Point:
        """``(u + rho, sigma)``: dual feasible after a round at this point."""
        return _Point(self.u + rho, self.sigma)

    def value(self) -> float:
        """The dual objective ``sum(u) - sum(sigma)``."""
        return float(self.u.sum() - self.sigma.sum())


@dataclass
class _Pricer:
    """The exact pricing rounds of :func:`enumeration_rounds` on one data set."""

    X: NDArray[np.float64]
    k: int
    pool: ColumnPool
    table: NDArray[np.float64]
    deadline: float
    max_new: int
    budget: int
    carried: list[NDArray[np.intp]] = field(default_factory=list)
    """The last round's best groups: near-tight at its ``u + rho``, where the next round
    prices or near it, so good incumbents (Census k = 10, the second and third lifting
    rounds: 36.8 -> 18.8 s and 55.7 -> 30.3 s, ``benchmarks/bench_pricing.py --carry``)."""

    cuts: SubsetRowCuts | None = None
    """The master's subset-row cuts (``None``: none are separated)."""

    def round(self, point: _Point | NDArray[np.float64], feasible: bool = False
              ) -> tuple[float, bool, int, NDArray[np.float64]]:
        """Exact pricing at ``point`` (or row duals alone): its proved bound (less a rounding
        margin), whether every row was exact, how many of the negative groups found were
        new to the pool, and ``rho`` (``(u + rho, sigma)`` is dual feasible and its
        objective is the bound). The incumbents come from the pool and :attr:`carried`,
        which this round's best groups then replace. ``feasible``: ``point`` is dual
        feasible (:meth:`lift`)."""
        if not isinstance(point, _Point):
            point = _Point(point, np.zeros(0))
        u = point.u
        duals = None if self.cuts is None else self.cuts.duals(point.padded(len(self.cuts)))
        inc = incumbents(self.pool, u, self.k, self.carried,
                         None if duals is None or self.cuts is None else (self.cuts, point.sigma))
        priced = exact_pricing(self.X, u, self.table, self.k, inc, self.budget,
                               deadline=self.deadline, cuts=duals, feasible=feasible)
        self.carried = priced.groups
        added = sum(self.pool.add(g)
                    for g in _cheapest(self.X, u, priced.found, self.max_new))
        return _less_margin(priced.bound, u), priced.exact, added, priced.rho

    def lift(self, center: _Point | NDArray[np.float64]) -> tuple[float, _Point]:
        """:meth:`round` at a dual feasible ``center`` (a previous round's ``u + rho``): its
        bound and lifted point. There no group has a negative reduced cost, so the pricing
        raises a row's anchored fall-back to 0 (``feasible``). With cuts their gaps can
        make ``sum(rho)`` negative; then the centre itself is kept (``rho = 0``: both are
        dual feasible), so the bound is at least the centre's dual objective, less the
        rounding margin."""
        if not isinstance(center, _Point):
            center = _Point(center, np.zeros(0))
        rho = self.round(center, feasible=True)[3]
        lifted = center.lifted(rho if rho.sum() > 0 else np.zeros_like(rho))
        return _less_margin(lifted.value(), lifted.u), lifted

    def separate(self, x: NDArray[np.float64]) -> int:
        """Subset-row cuts violated at the master's ``x``, added to :attr:`cuts` (0 without
        cuts)."""
        return 0 if self.cuts is None else self.cuts.separate(self.pool.members, x)


def _less_margin(bound: float, u: NDArray[np.float64]) -> float:
    """``bound`` less ``1e-9 (|bound| + sum |u|)``, for the rounding of the sums."""
    return bound - 1e-9 * (abs(bound) + float(np.abs(u).sum()))


def incumbents(pool: ColumnPool, u: NDArray[np.float64], k: int,
               carried: Sequence[NDArray[np.intp]] = (),
               cuts: tuple[SubsetRowCuts, NDArray[np.float64]] | None = None,
               ) -> NDArray[np.float64]:
    """Per row, the least ``rc(S) / k`` over the groups of ``k`` rows holding it, of the pool
    and ``carried`` (a previous round's best groups): what the exact pricing searches below
    (:func:`~microagg.bounds._exact.exact_pricing`). With ``cuts`` (the cuts and their
    duals ``sigma``), ``rc'`` adds the duals of the cuts each group turns on."""
    inc = np.full(pool.X.shape[0], np.inf)
    sized = [(g, c) for g, c in zip(pool.members, pool.costs, strict=True) if g.size == k]
    sized += [(g, sse_of(pool.X, g)) for g in carried if g.size == k]
    groups = [g for g, _ in sized]
    costs = np.asarray([c for _, c in sized])
    if cuts is not None:
        costs = costs + cuts[0].penalties(groups, _Point(u, cuts[1]).padded(len(cuts[0])))
    for group, cost in zip(groups, costs, strict=True):
        np.minimum.at(inc, group, (cost - float(u[group].sum())) / k)
    return inc


def _cheapest(X: NDArray[np.float64], u: NDArray[np.float64], groups: list[NDArray[np.intp]],
              limit: int) -> list[NDArray[np.intp]]:
    """The ``limit`` groups of lowest reduced cost."""
    if len(groups) <= limit:
        return groups
    rc = np.array([sse_of(X, g) - float(u[g].sum()) for g in groups])
    return [groups[i] for i in np.argsort(rc, kind="stable")[:limit]]
