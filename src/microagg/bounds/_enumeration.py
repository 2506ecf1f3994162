"""The enumeration kernels of the exact pricing (:mod:`microagg.bounds._exact`, where the
bound they serve is proved): for a row ``i`` and a group size ``s``, the groups of ``s`` rows
holding ``i`` (and, for the cuts' larger groups, a cut's rows) whose reduced cost ``rc'`` is
below a target, searched depth first with a completion bound. Validation is assumed done;
``cuts`` are the kernels' arrays of :class:`~microagg.bounds._cuts.CutDuals`."""

from __future__ import annotations

import numpy as np

from .._runtime.jit import njit

__all__ = ["candidates", "completion_shares", "enumerate_groups"]


@njit(cache=True)
def candidates(X, i, u, table, s, target):  # pragma: no cover - numba
    """Rows ``j`` that may share a size-``s`` group with ``i`` whose ``rc / s < target``
    (ascending; :func:`enumerate_groups` orders them), and the anchored lower bound of
    ``rc / s`` at ``i``."""
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
def completion_shares(X, u, table, cand, src, lo, hi, centre, m, s, w, low):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
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
    rows to come) may still take below ``best``: :func:`completion_shares`, then :func:`_keep`."""
    total = completion_shares(X, u, table, cand, src, lo, src.shape[0], centre, m, s, w, low)
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
    """The root of :func:`enumerate_groups` (``{i}``, ``s - 1 >= 2`` rows to come): the shares
    computed once, the candidates and their shares put in share order, then :func:`_keep`.
    Returns the reordered candidates and how many positions ``dst`` holds."""
    everything = np.arange(cand.shape[0])
    total = completion_shares(X, u, table, cand, everything, 0, cand.shape[0], X[i], 1.0, s,
                              w, low)
    order = np.argsort(w)
    w[:] = w[order]
    return cand[order], _keep(everything, 0, s - 1, -u[i], total, best, w, low, kept, dst)


@njit(cache=True)
def _force(X, u, cand, forced, lists, lens, idx, group, cuts, free):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Put the rows ``forced`` into the partial group of :func:`enumerate_groups` (depths ``1 ..
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
    """The root of :func:`enumerate_groups`: its list (:func:`_first_rows`), then the rows
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
def enumerate_groups(X, u, table, i, cand, s, best, budget, cuts, forced):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Smallest ``rc'(S)`` over ``S = {i} + forced + the rest of s rows from cand`` below
    ``best``; nodes used. ``forced`` (rows of ``cand``; empty: none) start the partial
    group (:func:`_force`), which then takes its other rows as without them.

    Depth first over the candidates in the order of their shares in ``{i}``'s completion
    (:func:`completion_shares`: the most promising first). A node with two or more rows to
    come keeps only the rows that its completion bound leaves possible
    (:func:`_next_rows`), so the lists shrink with the depth; with one row to come every
    row left is tried directly.
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
