"""Exact pricing by anchored enumeration with pruning (validation assumed done).

For each row ``i`` it finds ``rho_i = min_{S containing i, |S| in [k, 2k-1]} rc(S) / |S|`` by
depth-first enumeration over the rows that can be in such a group, or, where the enumeration
exceeds its node budget, falls back to the anchored lower bound of that row. Either way
``sum(u) + sum_i rho_i`` is a proved lower bound (see
:func:`~microagg.bounds._pricing.anchored_bound`); when every row is enumerated and no group
of negative reduced cost is left it equals the LP optimum.
"""

from __future__ import annotations

import time

import numpy as np
from numba import prange
from numpy.typing import NDArray

from .._jit import njit

_CHUNK = 48  # row x group size pairs priced between two looks at the clock
NODE_BUDGET = 20_000_000
"""Most enumeration nodes per row and group size before a row falls back to its anchored
bound (Census k = 4 at near-optimal duals: 200,000 left 1,061 of 1,080 rows to the anchored
bound, 20,000,000 none, in 31 s on 2 cores)."""


@njit(cache=True)
def _candidates(X, i, u, table, s, target):  # pragma: no cover - numba
    """Rows ``j`` that may share a size-``s`` group with ``i`` whose ``rc / s < target``,
    sorted by ``u`` descending, and the anchored lower bound of ``rc / s`` at ``i``."""
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
    cand = np.flatnonzero(keep)
    order = np.argsort(-u[cand])
    return cand[order], low


@njit(cache=True)
def _completion(X, u, table, cand, lo, centre, m, s, w, low):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Completion bound of a partial group ``P`` (``m`` rows, centroid ``centre``) that takes
    ``rest = s - m`` more rows from ``cand[lo:]``: fills ``w[lo:]`` with each row's share ``w_j = (m/s) |x_j - c_P|^2 + T_j(rest - 1) / (2s) - u_j`` and ``low[:rest]``
    with the ``rest`` smallest, ascending; returns their sum.

    For ``S = P + Q`` (``|Q| = q = s - m``), ``SSE(S) = SSE(P) + (q/s) SSE(Q)
    + (m/s) sum_{j in Q} |x_j - c_P|^2`` (the identity ``SSE(P+Q) = SSE(P) + SSE(Q) +
    (mq/s)|c_P - c_Q|^2`` with ``sum_{j in Q} |x_j - c_P|^2 = SSE(Q) + q |c_Q - c_P|^2``), and
    ``SSE(Q) >= sum_{j in Q} T_j(q - 1) / (2q)`` (the k-NN bound), so ``rc(S) >= rc(P) +
    sum_{j in Q} w_j`` and the ``rest`` smallest ``w_j`` bound every completion."""
    p = X.shape[1]
    rest = int(s - m)
    for t in range(rest):
        low[t] = np.inf
    for t in range(lo, cand.shape[0]):
        j = cand[t]
        d = 0.0
        for f in range(p):
            diff = X[j, f] - centre[f]
            d += diff * diff
        v = m / s * d + table[j, rest - 1] / (2.0 * s) - u[j]
        w[t] = v
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
def _bound_node(X, u, table, cand, lo, centre, m, s, rc, best, shares, low, kept):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Whether a partial group of ``m`` rows (``rc(P) = rc``, two or more rows to come from
    ``cand[lo:]``) can still reach a group below ``best`` by :func:`_completion`; if so,
    ``kept`` holds ``rc``, the sum of the smallest shares, of all but the largest of them,
    and that largest (a next row whose share exceeds it is not among them)."""
    total = _completion(X, u, table, cand, lo, centre, m, s, shares, low)
    if rc + total >= best:
        return False
    rest = int(s - m)
    kept[0] = rc
    kept[1] = total
    kept[2] = total - low[rest - 1]
    kept[3] = low[rest - 1]
    return True


@njit(cache=True)
def _next_row(kept, share, best):  # pragma: no cover - numba
    """0 to go on with a next row of share ``share`` under a node :func:`_bound_node` kept,
    1 to pass over this row, 2 to leave the node (no row of it can reach ``best`` any more)."""
    if share > kept[3]:
        return 1 if kept[0] + share + kept[2] >= best else 0
    return 2 if kept[0] + kept[1] >= best else 0


@njit(cache=True)
def _enumerate(X, u, table, i, cand, s, best, budget):  # pragma: no cover  # noqa: C901, PLR0912, PLR0915 - numba kernel: one depth-first loop, kept whole for speed
    """Smallest ``rc(S)`` over ``S = {i} + (s - 1) of cand`` below ``best``; nodes used.

    Prunes a partial group ``P`` with ``SSE(S) >= SSE(P)`` and ``u(S) <= u(P) +`` the next
    ``r`` values of ``u`` (``cand`` is sorted by ``u`` descending), then, where two or more
    rows are still to come, with :func:`_completion`'s bound, which also rules out each
    next row whose share with the smallest of the others reaches ``best`` (:func:`_next_row`).
    """
    c = cand.shape[0]
    p = X.shape[1]
    r_need = s - 1
    arg = np.full(s, -1, dtype=np.int64)
    if c < r_need:
        return best, arg, 0
    pref = np.zeros(c + 1)
    for t in range(c):
        pref[t + 1] = pref[t] + u[cand[t]]
    pos = np.full(s, -1, dtype=np.int64)
    means = np.zeros((s, p))
    sse = np.zeros(s)
    usum = np.zeros(s)
    means[0] = X[i]
    usum[0] = u[i]
    shares = np.empty((s, c))  # per depth of a bounded node: its next rows' shares
    kept = np.zeros((s, 4))  # and what _bound_node kept
    bounded = np.zeros(s, dtype=np.bool_)
    low = np.empty(s)
    bounded[0] = r_need >= 2
    if bounded[0] and not _bound_node(X, u, table, cand, 0, means[0], 1.0, s, -u[i], best,
                                      shares[0], low, kept[0]):
        return best, arg, 0
    nodes = 0
    depth = 1
    pos[1] = -1
    while depth >= 1:
        pos[depth] += 1
        t = pos[depth]
        left = r_need - depth  # picks after this one
        if t > c - 1 - left or nodes > budget:
            depth -= 1
            continue
        nodes += 1
        up = depth - 1
        if bounded[up]:
            verdict = _next_row(kept[up], shares[up, t], best)
            if verdict == 2:
                depth -= 1
            if verdict:
                continue
        j = cand[t]
        d = 0.0
        for f in range(p):
            diff = X[j, f] - means[up, f]
            d += diff * diff
        sse[depth] = sse[up] + depth / (depth + 1.0) * d
        usum[depth] = usum[up] + u[j]
        if sse[depth] - usum[depth] - (pref[t + 1 + left] - pref[t + 1]) >= best:
            continue
        for f in range(p):
            means[depth, f] = means[up, f] + (X[j, f] - means[up, f]) / (depth + 1.0)
        if left == 0:
            best = sse[depth] - usum[depth]
            for q in range(s):
                arg[q] = i if q == 0 else cand[pos[q]]
            continue
        bounded[depth] = left >= 2
        if bounded[depth] and not _bound_node(X, u, table, cand, t + 1, means[depth],
                                              depth + 1.0, s, sse[depth] - usum[depth],
                                              best, shares[depth], low, kept[depth]):
            continue
        depth += 1
        pos[depth] = t
    return best, arg, nodes


@njit(cache=True, parallel=True)
def _price_all(X, u, table, k, incumbent, budget, rows):  # pragma: no cover - numba
    """Per row of ``rows``: ``rho_i`` (exact or its anchored lower bound), whether exact,
    best group. Rows are independent: a row writes only its own entries."""
    n = rows.shape[0]
    top = min(2 * k - 1, X.shape[0])
    rho = np.empty(n)
    exact = np.ones(n, dtype=np.bool_)
    groups = np.full((n, top), -1, dtype=np.int64)
    for r in prange(n):
        i = rows[r]
        best = incumbent[i]  # rc / s of a known group holding i: an upper bound on rho_i
        lowest = np.inf
        for s in range(k, top + 1):
            cand, low = _candidates(X, i, u, table, s, best)
            value, arg, nodes = _enumerate(X, u, table, i, cand, s, best * s, budget)
            if nodes > budget:
                exact[r] = False
                lowest = min(lowest, low)
            elif value / s < best:
                best = value / s
                groups[r, :] = -1
                groups[r, :s] = arg
        rho[r] = min(best, lowest)
    return rho, exact, groups


def exact_pricing(X: NDArray[np.float64], u: NDArray[np.float64], table: NDArray[np.float64],
                  k: int, incumbent: NDArray[np.float64], budget: int = NODE_BUDGET,
                  deadline: float = np.inf
                  ) -> tuple[float, bool, list[NDArray[np.intp]], NDArray[np.float64]]:
    """Proved bound ``sum(u) + sum_i rho_i``, whether every row was exact, the groups of
    negative reduced cost found, and ``rho``.

    Each ``rho_i`` is at most ``rc(S) / |S|`` for every group ``S`` holding ``i``, so
    ``u + rho`` is a feasible point of the dual (no group has negative reduced cost there)
    whose sum is the bound.

    ``incumbent[i]`` must be ``rc(S) / |S|`` of some group ``S`` of ``k .. 2k-1`` rows
    holding ``i`` (or ``+inf``): only groups below it are searched. ``budget`` is the most
    nodes per row and group size (Census k = 4 at near-optimal duals: 200,000 left 1,061 of
    1,080 rows to their anchored bound, 20,000,000 none, in 31 s on 2 cores). Rows are
    priced in chunks; past ``deadline`` (``time.perf_counter()``) the rows left get their
    anchored lower bound (no enumeration), so a round cut short still gives a proved bound.
    """
    n = X.shape[0]
    parts = []
    chunk = max(2, _CHUNK // k)  # larger groups take longer to enumerate
    for lo in range(0, n, chunk):
        if time.perf_counter() > deadline:
            parts.append(_price_all(X, u, table, k, incumbent, 0,
                                    np.arange(lo, n, dtype=np.int64)))
            break
        rows = np.arange(lo, min(lo + chunk, n), dtype=np.int64)
        parts.append(_price_all(X, u, table, k, incumbent, budget, rows))
    rho = np.concatenate([p[0] for p in parts])
    exact = np.concatenate([p[1] for p in parts])
    groups = np.concatenate([p[2] for p in parts])
    found = [np.sort(g[g >= 0]).astype(np.intp) for g, r in zip(groups, rho, strict=True)
             if g[0] >= 0 and r < -1e-12]
    return float(u.sum() + rho.sum()), bool(exact.all()), found, rho
