"""Exact pricing by anchored enumeration with pruning (validation assumed done).

For each row ``i`` it finds ``rho_i = min rc(T) / k`` over the groups ``T`` of exactly ``k``
rows holding ``i``, by depth-first enumeration over the rows that can be in such a group, or,
where the enumeration exceeds its node budget, falls back to the anchored lower bound of that
row. Either way ``sum(u) + sum_i rho_i`` is a proved lower bound on the SSE of every
partition into groups of ``k`` or more rows, and ``u + rho`` is dual feasible for the LP over
groups of ``k .. 2k-1`` rows; when every row is enumerated and no group of negative reduced
cost is left it is the LP optimum. With the duals of subset-row cuts
(:mod:`microagg.bounds._cuts`) ``rc'`` adds the duals of the cuts a group turns on,
``rho_i`` is ``min rc'(T) / k`` less a share of the cuts' gaps (below), and the bound is
less the cuts' duals.

**Groups of k rows suffice.** For a group ``S`` of ``s >= k`` rows and ``T`` a uniformly
random subset of ``k`` of its rows, ``E[SSE(T)] = (k-1)/(s-1) SSE(S)`` (each pair of ``S`` is
in ``T`` with probability ``k(k-1) / (s(s-1))``, and ``SSE = (1/(2|S|)) sum_{i,j} d_ij^2``) and
``E[u(T)] = (k/s) u(S)``, so ``rc(S)/s - E[rc(T)]/k = SSE(S) (s-k) / (s k (s-1)) >= 0``. With
``rc(T) >= sum_{j in T} rho_j`` for every ``T`` of ``k`` rows (``rho_j <= rc(T)/k`` when ``j`` is
in ``T``), ``rc(S) >= (s/k) E[rc(T)] >= (s/k) E[sum_{j in T} rho_j] = sum_{j in S} rho_j``.
Summed over the groups of a partition, ``SSE(P) = sum(u) + sum_S rc(S) >= sum(u) +
sum_i rho_i``; and at ``u + rho`` every group of any size has ``rc >= 0``. The LP over
the groups of ``k`` rows therefore equals the LP over ``k .. 2k-1`` rows (the uniform mix of a
larger group's ``k``-subsets covers its rows once and costs ``(s/k)(k-1)/(s-1) SSE(S) <=
SSE(S)``), and the pricing enumerates ``k``-row groups only, where the Aloise et al. (2014)
model lists ``k .. 2k-1``: at k = 10 one size instead of ten, and the largest, costliest
sizes are gone (Census k = 10, one round at the k-NN point: 259 s -> 26 s, bound 9.0307 ->
9.0346 % of the SST, since the minimum over ``k``-row groups is never below the minimum over
all sizes).

**With cuts, larger groups only where they hold a cut's three rows.** A cut counts in a
group holding two or more of its three rows (``rc' = rc + `` its dual). If a group ``S`` of
``s > k`` rows holds at most two rows of every cut with a positive dual, a cut with two
rows in ``S`` counts in ``T`` exactly when ``T`` holds both, with probability ``k(k-1) /
(s(s-1))``, so ``(s/k) E[pen(T)] = (k-1)/(s-1) pen(S) <= pen(S)`` and, with the SSE and
dual parts above, ``rc'(S) >= (s/k) E[rc'(T)] >= sum_{j in S} rho_j``: such an ``S`` is
dominated by its ``k``-subsets, as every larger group is without cuts. Only a group holding
all three rows of a cut can have ``rc'(S) < sum_{j in S} rho_j`` (four rows at k = 3 that
hold a cut: the mix of their triples turns it on with weight 4/3). So ``rho`` comes from the
groups of ``k`` rows alone, and then, cut by cut, the least ``gap_c = rc'(S) - sum_{j in S}
rho_j`` over the groups ``S`` of ``k + 1 .. 2k-1`` rows that hold the cut's three rows (an
enumeration from a partial group of those three, below 0 only); where it is negative each
of the three rows gives up ``gap_c / 3``, which every such group feels in full, and lowering
``rho`` never breaks another group's constraint. Pricing every size row by row, as before,
took most of a round's time: Census k = 4 at a point with 164 cuts, 5.2 s a round of which
0.5 s for the groups of ``k``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import prange
from numpy.typing import NDArray

from .._runtime.jit import njit
from ._cuts import CutDuals
from ._enumeration import candidates, enumerate_groups
from ._pricing import sse_of

_CHUNK = 48
"""Rows priced in one parallel call, between two looks at the clock (48 // k until a row
priced one group size: Census k = 10, three rounds 25.1 / 20.0 / 33.7 s with 4 rows a call,
22.4 / 17.0 / 28.7 s with 48, the two threads kept busier)."""
NODE_BUDGET = 20_000_000
"""Most enumeration nodes (partial groups and last rows tried) per row (per row and group
size before the pricing took the groups of k rows alone) before a row falls back to its
anchored bound. Set before the completion bound (Census k = 4 at near-optimal duals:
200,000 left 1,061 of 1,080 rows to the anchored bound, 20,000,000 none, in 31 s on 2
cores); with it no row of Census at k = 5 or 10 reaches it at the k-NN point
(benchmarks/bench_pricing.py)."""


@njit(cache=True, parallel=True)
def _price_all(X, u, table, k, incumbent, budget, rows, cuts):  # pragma: no cover
    """Per row of ``rows``: ``rho_i = min rc'(T) / k`` over the groups ``T`` of ``k`` rows
    holding it (exact, or its anchored lower bound where the enumeration ran out of nodes),
    whether exact, the best group found below the incumbent and its ``rc' / k``. Rows are
    independent: a row writes only its own entries."""
    n = rows.shape[0]
    rho = np.empty(n)
    value = np.full(n, np.inf)
    exact = np.ones(n, dtype=np.bool_)
    groups = np.full((n, k), -1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    for r in prange(n):
        i = rows[r]
        best = incumbent[i]  # rc' / k of a known group holding i: an upper bound on rho_i
        cand, low = candidates(X, i, u, table, k, best)
        found, arg, nodes = enumerate_groups(X, u, table, i, cand, k, best * k, budget, cuts, none)
        if nodes > budget:
            exact[r] = False
            best = min(best, low)
        elif found / k < best:
            best = value[r] = found / k
            groups[r] = arg
        rho[r] = best
    return rho, exact, groups, value


@njit(cache=True, parallel=True)
def _price_cuts(X, v, table, k, top, budget, cuts, which):  # pragma: no cover
    """Per cut of ``which``: the least ``rc'`` at the row duals ``v`` below 0 (else 0) over
    the groups of ``k + 1 .. top`` rows that hold its three rows (exact, or the anchored
    lower bound of its first row where an enumeration ran out of nodes), whether exact, and
    that group. Cuts are independent: a cut writes only its own entries."""
    rows = cuts[2]
    m = which.shape[0]
    gap = np.zeros(m)
    exact = np.ones(m, dtype=np.bool_)
    groups = np.full((m, top), -1, dtype=np.int64)
    for r in prange(m):
        q = which[r]
        i = rows[q, 0]
        forced = rows[q, 1:3].copy()
        best = 0.0
        floor = 0.0
        for s in range(max(k + 1, 3), top + 1):
            cand, low = candidates(X, i, v, table, s, best / s)
            found, arg, nodes = enumerate_groups(X, v, table, i, cand, s, best, budget, cuts,
                                                 forced)
            if nodes > budget:
                exact[r] = False
                floor = min(floor, s * low)
            elif found < best:
                best = found
                groups[r, :] = -1
                groups[r, :s] = arg
        gap[r] = min(best, floor)
    return gap, exact, groups


class Pricing(NamedTuple):
    """One exact pricing round at duals ``u`` (:func:`exact_pricing`)."""

    bound: float
    """``sum(u) - sum(sigma) + sum_i rho_i``: a proved lower bound on every partition's
    SSE (``sigma``: the cuts' duals, if any)."""
    exact: bool
    """Whether every row was enumerated within its node budget."""
    found: list[NDArray[np.intp]]
    """The groups of negative reduced cost found (columns for the master LP)."""
    rho: NDArray[np.float64]
    """Per row, ``min rc'(T) / k`` over the groups of ``k`` rows holding it (or a lower bound
    on it), less a third of each negative ``gap_c`` of the cuts holding it (module
    docstring)."""
    groups: list[NDArray[np.intp]]
    """Every row's best group of ``k`` rows found below its incumbent, whatever its sign
    (distinct, sorted): near-tight at ``u + rho``, so good incumbents for a round near
    there."""


def exact_pricing(X: NDArray[np.float64], u: NDArray[np.float64], table: NDArray[np.float64],  # noqa: PLR0913 - the point, the data and keyword-only options
                  k: int, incumbent: NDArray[np.float64], budget: int = NODE_BUDGET, *,
                  deadline: float = np.inf, cuts: CutDuals | None = None,
                  feasible: bool = False) -> Pricing:
    """Proved bound ``sum(u) - sum(sigma) + sum_i rho_i``, whether every row was exact, the
    groups of negative reduced cost found, ``rho`` and every row's best group
    (:class:`Pricing`).

    Each ``rho_i`` is at most ``rc'(T) / k`` for every group ``T`` of ``k`` rows holding
    ``i``, so without cuts ``u + rho`` is a feasible point of the dual (no group of any size
    has negative reduced cost there: the module docstring) whose sum is the bound. With the
    duals ``sigma`` of subset-row cuts (:mod:`microagg.bounds._cuts`), ``rc'`` adds those of
    the cuts a group turns on, and the groups of more than ``k`` rows that hold a cut's three
    rows (the others are dominated: module docstring) are priced cut by cut at ``u + rho``;
    where the least of them holding cut ``c`` has ``rc' = gap_c < 0``, the three rows of
    ``c`` each give up ``gap_c / 3`` of their ``rho`` (each such group holds all three), so
    that ``(u + rho, sigma)`` is dual feasible for the LP with the cuts.

    ``incumbent[i]`` must be ``rc'(T) / k`` of some group ``T`` of ``k`` rows holding ``i``
    (or ``+inf``): only groups below it are searched. ``budget`` is the most nodes per row
    (and per cut and size) (Census k = 4 at near-optimal duals: 200,000 left 1,061 of 1,080
    rows to their anchored bound, 20,000,000 none, in 31 s on 2 cores). Rows are priced in
    chunks; past ``deadline`` (``time.perf_counter()``) the rows and cuts left get their
    anchored lower bound (no enumeration), so a round cut short still gives a proved bound.
    ``feasible``: ``(u, sigma)`` is dual feasible, so no group of ``k`` rows has a negative
    ``rc'`` and a row's anchored fall-back below 0 is raised to 0 (before the cuts' gaps).
    """
    n = X.shape[0]
    arrays = _no_cuts(n) if cuts is None else cuts
    rho, exact, best, value = _in_chunks(
        lambda rows, nodes: _price_all(X, u, table, k, incumbent, nodes, rows, arrays),
        n, budget, deadline)
    if feasible:
        np.maximum(rho, 0.0, out=rho)
    found = [np.sort(g).astype(np.intp) for g, v in zip(best, value, strict=True) if v < -1e-12]
    groups = {g.tobytes(): g for g in (np.sort(g).astype(np.intp) for g in best if g[0] >= 0)}
    paid = 0.0
    if cuts is not None:
        top = min(2 * k - 1, table.shape[1])
        lifted = u + rho
        gap, whole, big = _in_chunks(
            lambda which, nodes: _price_cuts(X, lifted, table, k, top, nodes, arrays, which),
            cuts.sigma.shape[0], budget, deadline)
        np.add.at(rho, cuts.rows[gap < 0].ravel(), np.repeat(gap[gap < 0] / 3.0, 3))
        exact = np.concatenate([exact, whole])
        for g in big:
            group = np.sort(g[g >= 0]).astype(np.intp)
            if group.size and _reduced_cost(X, u, group, arrays) < -1e-12:
                found.append(group)
        paid = float(cuts.sigma.sum())
    return Pricing(float(u.sum() + rho.sum()) - paid, bool(exact.all()), found, rho,
                   list(groups.values()))


def _in_chunks(price: Callable[[NDArray[np.int64], int], tuple[NDArray, ...]], count: int,
               budget: int, deadline: float) -> tuple[NDArray, ...]:
    """``price(items, budget)`` over ``0 .. count - 1`` in chunks of :data:`_CHUNK`, the
    outputs joined; past ``deadline`` the items left are priced with no nodes (their
    anchored bounds)."""
    parts = []
    for lo in range(0, count, _CHUNK):
        if time.perf_counter() > deadline:
            parts.append(price(np.arange(lo, count, dtype=np.int64), 0))
            break
        parts.append(price(np.arange(lo, min(lo + _CHUNK, count), dtype=np.int64), budget))
    if not parts:
        parts.append(price(np.zeros(0, dtype=np.int64), budget))
    return tuple(np.concatenate([p[t] for p in parts]) for t in range(len(parts[0])))


def _reduced_cost(X: NDArray[np.float64], u: NDArray[np.float64], group: NDArray[np.intp],
                  cuts: CutDuals) -> float:
    """``rc'`` of ``group`` at the row duals ``u``: its SSE less their sum, plus the duals of
    the cuts holding two or more of its rows."""
    inside = np.isin(cuts.rows, group).sum(axis=1) >= 2
    return sse_of(X, group) - float(u[group].sum()) + float(cuts.sigma[inside].sum())


def _no_cuts(n: int) -> CutDuals:
    """No cuts, in the kernels' types."""
    return CutDuals(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                    np.zeros((0, 3), dtype=np.int64), np.zeros(0))
