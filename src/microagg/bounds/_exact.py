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

from .._jit import njit
from ._cuts import CutDuals

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


@njit(cache=True)
def _candidates(X, i, u, table, s, target):  # pragma: no cover - numba
    """Rows ``j`` that may share a size-``s`` group with ``i`` whose ``rc / s < target``
    (ascending; :func:`_enumerate` orders them), and the anchored lower bound of ``rc / s``
    at ``i``."""
    n, p = X.shape
    e = np.empty(n)
    for j in range(n):
        acc = 0.0
        for f in range(p):
            diff = X[i, f] - X[j, f]
            acc += diff * diff
        e[j] = (acc + table[j, s - 2]) / (2.0 * s) - u[j]
    e[i] = np.inf
    small = np.sort(np.partition(e, s - 2)[: s - 1])
    base = table[i, s - 1] / (2.0 * s) - u[i]
    low = (base + small.sum()) / s
    rest = base + small[: s - 2].sum()
    keep = np.zeros(n, dtype=np.bool_)
    for j in range(n):
        if j == i:
            continue
        forced = base + small.sum() if e[j] <= small[s - 2] else rest + e[j]
        keep[j] = forced < target * s
    return np.flatnonzero(keep), low


@njit(cache=True)
def _shares(X, u, table, cand, src, lo, hi, centre, m, s, w, low):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Completion bound of a partial group ``P`` (``m`` rows, centroid ``centre``) that takes
    ``rest = s - m`` more rows from ``cand[src[lo:hi]]``: stores each row's share ``w_j =
    (m/s) |x_j - c_P|^2 + T_j(rest - 1) / (2s) - u_j`` at ``w[src[t]]`` and the ``rest``
    smallest, ascending, in ``low[:rest]``; returns their sum.

    For ``S = P + Q`` (``|Q| = q = s - m``), ``SSE(S) = SSE(P) + (q/s) SSE(Q)
    + (m/s) sum_{j in Q} |x_j - c_P|^2`` (the identity ``SSE(P+Q) = SSE(P) + SSE(Q) +
    (mq/s)|c_P - c_Q|^2`` with ``sum_{j in Q} |x_j - c_P|^2 = SSE(Q) + q |c_Q - c_P|^2``), and
    ``SSE(Q) >= sum_{j in Q} T_j(q - 1) / (2q)`` (the k-NN bound), so ``rc(S) >= rc(P) +
    sum_{j in Q} w_j`` and the ``rest`` smallest ``w_j`` bound every completion."""
    p = X.shape[1]
    rest = int(s - m)
    for t in range(rest):
        low[t] = np.inf
    for t in range(lo, hi):
        j = cand[src[t]]
        d = 0.0
        for f in range(p):
            diff = X[j, f] - centre[f]
            d += diff * diff
        v = m / s * d + table[j, rest - 1] / (2.0 * s) - u[j]
        w[src[t]] = v
        if v < low[rest - 1]:
            q = rest - 1
            while q > 0 and low[q - 1] > v:
                low[q] = low[q - 1]
                q -= 1
            low[q] = v
    total = 0.0
    for t in range(rest):
        total += low[t]
    return total


@njit(cache=True)
def _next_rows(X, u, table, cand, src, lo, centre, m, s, rc, best, w, low, kept, dst):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """The rows of ``src[lo:]`` that a partial group of ``m`` rows (``rc(P) = rc``, two or more
    rows to come) may still take below ``best``: :func:`_shares`, then :func:`_keep`."""
    total = _shares(X, u, table, cand, src, lo, src.shape[0], centre, m, s, w, low)
    return _keep(src, lo, int(s - m), rc, total, best, w, low, kept, dst)


@njit(cache=True)
def _keep(src, lo, rest, rc, total, best, w, low, kept, dst):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Of the rows ``src[lo:]`` whose shares are in ``w`` (the ``rest`` smallest in ``low``,
    summing to ``total``), those a completion below ``best`` may take: a row ``j`` goes with
    the smallest shares of the others, ``rc + w_j + (the rest - 1 smallest) < best``, or is
    one of them. Writes them to ``dst`` in ``src``'s order and returns how many (-1: no
    completion can reach ``best``). ``kept`` holds ``rc``, the sum of the ``rest``
    smallest shares, of all but the largest of them, and that largest
    (:func:`_next_row` checks a row again once ``best`` has fallen)."""
    if rc + total >= best:
        return -1
    largest = low[rest - 1]
    kept[0] = rc
    kept[1] = total
    kept[2] = total - largest
    kept[3] = largest
    n = 0
    for t in range(lo, src.shape[0]):
        if w[src[t]] <= largest or rc + w[src[t]] + kept[2] < best:
            dst[n] = src[t]
            n += 1
    return n


@njit(cache=True)
def _next_row(kept, share, best):  # pragma: no cover - numba
    """0 to go on with a next row of share ``share`` under a node whose :func:`_next_rows`
    kept ``kept``, 1 to pass over this row, 2 to leave the node (none of its rows can reach
    ``best`` any more)."""
    if share > kept[3]:
        return 1 if kept[0] + share + kept[2] >= best else 0
    return 2 if kept[0] + kept[1] >= best else 0


@njit(cache=True)
def _taken(i, cand, lists, idx, depth, arg, value, best):  # pragma: no cover - numba
    """``value`` if it is below ``best``, with the rows taken down to ``depth`` in
    ``arg[:depth + 1]`` (the last row, if any, is already in place); else ``best``."""
    if value >= best:
        return best
    arg[0] = i
    for e in range(1, depth + 1):
        arg[e] = cand[lists[e - 1, idx[e]]]
    return value


@njit(cache=True)
def _cut_gain(j, path, m, cuts):  # pragma: no cover - numba
    """The duals of the cuts that row ``j`` turns on when it joins the rows ``path[:m]``:
    those holding ``j`` and exactly one of them (a cut counts once two of its rows are in)."""
    ptr, idx, rows, sigma = cuts
    gain = 0.0
    for t in range(ptr[j], ptr[j + 1]):
        c = idx[t]
        hits = 0
        for e in range(3):
            r = rows[c, e]
            if r != j:
                for d in range(m):
                    if path[d] == r:
                        hits += 1
                        break
        if hits == 1:
            gain += sigma[c]
    return gain


@njit(cache=True)
def _last_row(X, u, cand, rows, mean, m, rc, best, arg, path, cuts):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """The group of ``m`` rows ``path[:m]`` (centroid ``mean``, ``rc'(P) = rc``) completed by
    each row of ``cand[rows]`` in turn: the smallest ``rc'`` below ``best`` (its row in
    ``arg[m]``), or ``rc`` itself when ``rows`` is empty (the group is whole)."""
    if rows.shape[0] == 0:
        return rc
    p = X.shape[1]
    scale = m / (m + 1.0)
    for t in range(rows.shape[0]):
        x = cand[rows[t]]
        d = 0.0
        for f in range(p):
            diff = X[x, f] - mean[f]
            d += diff * diff
        value = rc + scale * d - u[x]
        if value < best:
            value += _cut_gain(x, path, m, cuts)
        if value < best:
            best = value
            arg[m] = x
    return best


@njit(cache=True)
def _group_of(X, u, i, s):  # pragma: no cover - numba
    """The state of a partial group that holds row ``i`` alone, per depth (rows taken):
    centroids, SSEs, dual sums, the rows themselves and the duals of the cuts turned on."""
    means = np.zeros((s, X.shape[1]))
    means[0] = X[i]
    usum = np.zeros(s)
    usum[0] = u[i]
    path = np.full(s, -1, dtype=np.int64)
    path[0] = i
    return means, np.zeros(s), usum, path, np.zeros(s)


@njit(cache=True)
def _add_row(X, u, j, depth, group, cuts):  # pragma: no cover - numba
    """Row ``j`` joins the partial group of ``depth`` rows (:func:`_group_of`): its SSE, dual
    sum, centroid and cut duals at ``depth`` from those at ``depth - 1``; returns its
    ``rc'``."""
    means, sse, usum, path, pen = group
    d = 0.0
    for f in range(X.shape[1]):
        diff = X[j, f] - means[depth - 1, f]
        d += diff * diff
    sse[depth] = sse[depth - 1] + depth / (depth + 1.0) * d
    usum[depth] = usum[depth - 1] + u[j]
    for f in range(X.shape[1]):
        means[depth, f] = means[depth - 1, f] + (X[j, f] - means[depth - 1, f]) / (depth + 1.0)
    pen[depth] = pen[depth - 1] + _cut_gain(j, path, depth, cuts)
    path[depth] = j
    return sse[depth] - usum[depth] + pen[depth]


@njit(cache=True)
def _first_rows(X, u, table, cand, i, s, best, w, low, kept, dst):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """The root of :func:`_enumerate` (``{i}``, ``s - 1 >= 2`` rows to come): the shares
    computed once, the candidates and their shares put in share order, then :func:`_keep`.
    Returns the reordered candidates and how many positions ``dst`` holds."""
    everything = np.arange(cand.shape[0])
    total = _shares(X, u, table, cand, everything, 0, cand.shape[0], X[i], 1.0, s, w, low)
    order = np.argsort(w)
    w[:] = w[order]
    return cand[order], _keep(everything, 0, s - 1, -u[i], total, best, w, low, kept, dst)


@njit(cache=True)
def _force(X, u, cand, forced, lists, lens, idx, group, cuts, free):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Put the rows ``forced`` into the partial group of :func:`_enumerate` (depths ``1 ..
    len(forced)``, each its own one-entry list) and the other rows of the root's list into
    ``free``; returns ``rc'`` of the partial group and how many rows ``free`` holds, or
    ``-1`` rows when a forced row is not in the root's list (no group below the target
    holds it)."""
    f = forced.shape[0]
    nf = 0
    seen = 0
    for t in range(lens[0]):
        pos = lists[0, t]
        hit = False
        for e in range(f):
            hit = hit or cand[pos] == forced[e]
        if hit:
            seen += 1
        else:
            free[nf] = pos
            nf += 1
    if seen < f:
        return 0.0, -1
    rc = 0.0
    for e in range(f):
        pos = 0
        while cand[pos] != forced[e]:
            pos += 1
        rc = _add_row(X, u, forced[e], e + 1, group, cuts)
        lists[e, 0] = pos
        lens[e] = 1
        idx[e + 1] = 0
    return rc, nf


@njit(cache=True)
def _root(X, u, table, i, cand, forced, s, best, group, cuts, shares, low, kept, lists, lens, idx):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """The root of :func:`_enumerate`: its list (:func:`_first_rows`), then the rows
    ``forced`` (if any) join the partial group (:func:`_force`) and the rows left that a
    completion below ``best`` may take become the list of the last forced depth. Returns the
    candidates in share order, the first depth to enumerate (0: no group below ``best``;
    ``s``: the forced rows make the group whole) and the partial group's ``rc'``."""
    lists[0] = np.arange(cand.shape[0])
    lens[0] = cand.shape[0]
    if s >= 3:
        cand, lens[0] = _first_rows(X, u, table, cand, i, s, best, shares[0], low, kept[0],
                                    lists[0])
    f = forced.shape[0]
    if lens[0] < s - 1 or f == 0:
        return cand, (0 if lens[0] < s - 1 else 1), 0.0
    free = np.empty(lens[0], dtype=np.int64)
    rc, nf = _force(X, u, cand, forced, lists, lens, idx, group, cuts, free)
    if nf < 0 or f + 1 == s:
        return cand, (0 if nf < 0 else s), rc
    lens[f] = _next_rows(X, u, table, cand, free[:nf], 0, group[0][f], f + 1.0, s, rc, best,
                         shares[f], low, kept[f], lists[f])
    return cand, (0 if lens[f] < s - 1 - f else f + 1), rc


@njit(cache=True)
def _enumerate(X, u, table, i, cand, s, best, budget, cuts, forced):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Smallest ``rc'(S)`` over ``S = {i} + forced + the rest of s rows from cand`` below
    ``best``; nodes used. ``forced`` (rows of ``cand``; empty: none) start the partial
    group (:func:`_force`), which then takes its other rows as without them.

    Depth first over the candidates in the order of their shares in ``{i}``'s completion
    (:func:`_shares`: the most promising first). A node with two or more rows to come keeps
    only the rows that its completion bound leaves possible (:func:`_next_rows`), so the
    lists shrink with the depth; with one row to come every row left is tried directly.
    ``rc'`` adds the duals ``cuts`` of the subset-row cuts a group turns on
    (:mod:`microagg.bounds._cuts`; empty arrays: none): they only grow as rows join, so the
    completion bounds, which leave them out, still hold at a partial group's ``rc'``.
    """
    c = cand.shape[0]
    arg = np.full(s, -1, dtype=np.int64)
    if c < s - 1:
        return best, arg, 0
    group = _group_of(X, u, i, s)
    means, path = group[0], group[3]
    shares = np.empty((s, c))  # per depth: the next rows' shares
    kept = np.zeros((s, 4))
    lists = np.empty((s, c), dtype=np.int64)  # per depth: the rows it may take next
    lens = np.zeros(s, dtype=np.int64)
    idx = np.full(s, -1, dtype=np.int64)  # per depth: where in its parent's list it is
    low = np.empty(s)
    cand, first, rc = _root(X, u, table, i, cand, forced, s, best, group, cuts, shares, low,
                            kept, lists, lens, idx)
    if first == 0 or first == s:  # nothing below best, or the forced rows make it whole
        return (best if first == 0 else _taken(i, cand, lists, idx, s - 1, arg, rc, best),
                arg, int(first == s))
    nodes = 0
    depth = first
    while depth >= first:
        up = depth - 1
        idx[depth] += 1
        left = s - 1 - depth  # rows to come after this one
        if idx[depth] >= lens[up] - left or nodes > budget:
            idx[depth] = -1
            depth -= 1
            continue
        nodes += 1
        t = lists[up, idx[depth]]
        verdict = _next_row(kept[up], shares[up, t], best) if s >= 3 else 0
        if verdict:
            if verdict == 2:
                idx[depth] = -1
                depth -= 1
            continue
        rc = _add_row(X, u, cand[t], depth, group, cuts)
        if left <= 1:  # the last row (or none): every one left, directly
            rest = lists[up, idx[depth] + 1:lens[up]] if left else lists[up, :0]
            nodes += rest.shape[0]
            value = _last_row(X, u, cand, rest, means[depth], depth + 1, rc, best, arg,
                              path, cuts)
            best = _taken(i, cand, lists, idx, depth, arg, value, best)
            continue
        lens[depth] = _next_rows(X, u, table, cand, lists[up, :lens[up]], idx[depth] + 1,
                                 means[depth], depth + 1.0, s, rc, best, shares[depth], low,
                                 kept[depth], lists[depth])
        if lens[depth] >= left:
            depth += 1
    return best, arg, nodes


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
        cand, low = _candidates(X, i, u, table, k, best)
        found, arg, nodes = _enumerate(X, u, table, i, cand, k, best * k, budget, cuts, none)
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
            cand, low = _candidates(X, i, v, table, s, best / s)
            found, arg, nodes = _enumerate(X, v, table, i, cand, s, best, budget, cuts, forced)
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
    """Every row's best group of ``k`` rows found below its incumbent, whatever its sign,
    and each cut's least larger group below 0 (distinct, sorted): near-tight at
    ``u + rho``, so good incumbents (those of ``k`` rows) for a round near there."""


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
            if g[0] >= 0:
                group = np.sort(g[g >= 0]).astype(np.intp)
                groups[group.tobytes()] = group
                if _reduced_cost(X, u, group, arrays) < -1e-12:
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
    rows = X[group]
    sse = float(((rows - rows.mean(axis=0)) ** 2).sum())
    inside = np.isin(cuts.rows, group).sum(axis=1) >= 2
    return sse - float(u[group].sum()) + float(cuts.sigma[inside].sum())


def _no_cuts(n: int) -> CutDuals:
    """No cuts, in the kernels' types."""
    return CutDuals(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                    np.zeros((0, 3), dtype=np.int64), np.zeros(0))
