"""numba kernels of mdav-scale's local search (step 3): moves and swaps between near groups.
The neighbour lists are built in :mod:`._neighbour_lists`, the start in :mod:`._cbfs_kernels`.

Validation is assumed: ``X`` is finite, float64 and C-contiguous, ``labels`` numbers groups
0..g-1 and every group has between ``k`` and ``cap`` records. The records are expected in
an order that keeps near records near in memory (the blocks of a k-d tree, one after the
other): the search then reads memory almost sequentially.

The state of a partition is the column sums ``sums`` (g x p), the sizes ``count``, the
centroids ``cent``, the member lists ``members`` (g x cap, the first ``count[g]`` used),
each record's place ``slot`` in its group's list and its squared distance ``own`` to its
group's centroid. Moves and swaps keep all of it exact up to rounding; :func:`group_state`
rebuilds it from labels.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._runtime.jit import njit
from ._neighbour_lists import offer, sq_rows
from ._neighbour_lists import sq_between as _sq_point

__all__ = ["group_state", "near_groups", "sq_rows", "sweep"]


@njit(cache=True)
def group_state(X, labels, n_groups, cap):  # pragma: no cover - numba
    """Sums, sizes, centroids, member lists (n_groups x cap), each record's slot and its
    squared distance to its group's centroid."""
    n, p = X.shape
    sums = np.zeros((n_groups, p))
    count = np.zeros(n_groups, dtype=np.int64)
    members = np.full((n_groups, cap), -1, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    for i in range(n):
        g = labels[i]
        members[g, count[g]] = i
        slot[i] = count[g]
        count[g] += 1
        for j in range(p):
            sums[g, j] += X[i, j]
    cent = np.empty((n_groups, p))
    for g in range(n_groups):
        for j in range(p):
            cent[g, j] = sums[g, j] / count[g]
    own = np.empty(n)
    for i in range(n):
        own[i] = _sq_point(X, i, cent, labels[i])
    return sums, count, cent, members, slot, own


@njit(cache=True)
def _renew(X, g, state):  # pragma: no cover - numba
    """Group ``g``'s centroid and its members' distances to it, from its sums."""
    sums, count, cent, members, _, own = state
    for j in range(sums.shape[1]):
        cent[g, j] = sums[g, j] / count[g]
    for t in range(count[g]):
        own[members[g, t]] = _sq_point(X, members[g, t], cent, g)


@njit(cache=True)
def _apply(X, x, a, y, b, labels, state):  # pragma: no cover - numba
    """Move row ``x`` from group ``a`` to ``b`` (``y < 0``) or swap it with row ``y`` of ``b``."""
    sums, count, _, members, slot, _ = state
    p = X.shape[1]
    if y < 0:
        last = members[a, count[a] - 1]
        members[a, slot[x]] = last
        slot[last] = slot[x]
        members[a, count[a] - 1] = -1
        count[a] -= 1
        members[b, count[b]] = x
        slot[x] = count[b]
        count[b] += 1
        labels[x] = b
        for j in range(p):
            sums[a, j] -= X[x, j]
            sums[b, j] += X[x, j]
    else:
        sx = slot[x]
        sy = slot[y]
        members[a, sx] = y
        members[b, sy] = x
        slot[x] = sy
        slot[y] = sx
        labels[x] = b
        labels[y] = a
        for j in range(p):
            diff = X[x, j] - X[y, j]
            sums[a, j] -= diff
            sums[b, j] += diff
    _renew(X, a, state)
    _renew(X, b, state)


@njit(cache=True)
def _best_change(X, a, near, part, k, cap, tol, state, ey, ryb):  # pragma: no cover  # noqa: PLR0913 - numba kernel: one loop nest, kept whole for speed
    """The best move or swap of a record of group ``a`` with a group of ``near[a]`` in the
    same ``part``.

    Moving x (group A, centroid a, size nA) to B (b, nB) changes the SSE by
    ``nB/(nB+1) |x-b|^2 - nA/(nA-1) |x-a|^2`` (allowed while nA > k and nB < cap); swapping
    x with y of B by ``(|x-b|^2 - |x-a|^2) + (|y-a|^2 - |y-b|^2) - (1/nA + 1/nB) |x-y|^2``.
    The middle term depends on y alone (``ey``), and ``|x-y| <= |x-b| + |y-b|`` bounds the
    last one, so most pairs are ruled out without computing ``|x-y|``. The distances of
    records to their own centroids (``|x-a|^2``, ``|y-b|^2``) come from the state: they
    were a third of the distances computed here.
    Returns ``(delta, x, b, y)``; ``b = -1`` when no change lowers the SSE by more than ``tol``.
    """
    _, count, cent, members, _, own = state
    na = count[a]
    best = -tol
    best_x = -1
    best_b = -1
    best_y = -1
    for u in range(near.shape[1]):
        b = near[a, u]
        if b == a or b < 0 or part[b] != part[a]:
            continue
        nb = count[b]
        for v in range(nb):
            y = members[b, v]
            dyb = own[y]
            ey[v] = _sq_point(X, y, cent, a) - dyb
            ryb[v] = np.sqrt(dyb)
        c = 1.0 / na + 1.0 / nb
        can_move = na > k and nb < cap
        for t in range(na):
            x = members[a, t]
            dxb = _sq_point(X, x, cent, b)
            if can_move:
                delta = nb / (nb + 1.0) * dxb - na / (na - 1.0) * own[x]
                if delta < best:
                    best, best_x, best_b, best_y = delta, x, b, -1
            base = dxb - own[x]
            rxb = np.sqrt(dxb)
            for v in range(nb):
                lhs = base + ey[v]
                bound = rxb + ryb[v]
                if lhs - c * bound * bound >= best:
                    continue
                y = members[b, v]
                delta = lhs - c * sq_rows(X, x, y)
                if delta < best:
                    best, best_x, best_b, best_y = delta, x, b, y
    return best, best_x, best_b, best_y


@njit(cache=True)
def _mark(near, g, active):  # pragma: no cover - numba
    """Mark group ``g`` and its near groups active."""
    active[g] = True
    for u in range(near.shape[1]):
        if near[g, u] >= 0:
            active[near[g, u]] = True


@njit(cache=True)
def _near_across(near, part, a):  # pragma: no cover - numba
    """Whether one of group ``a``'s near groups lies in another part."""
    for u in range(near.shape[1]):
        if near[a, u] >= 0 and part[near[a, u]] != part[a]:
            return True
    return False


@njit(cache=True, parallel=True)
def sweep(X, labels, near, k, cap, tol, state, active, next_active, max_changes, part, by_part, part_starts):  # pragma: no cover  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """One pass over the ``active`` groups: each takes its best change (:func:`_best_change`)
    until none is left (at most ``max_changes`` per group). The groups a change touches and
    their near groups are marked in ``next_active``. Returns the SSE decrease and the number
    of changes.

    The groups are cut into parts (``part``; part ``q``'s groups, ascending, are
    ``by_part[part_starts[q]:part_starts[q + 1]]``) and a change joins two groups of one
    part only, so the parts are searched in parallel without touching each other's groups:
    the result does not depend on the number of threads. A group with a near group in
    another part is marked too: the next sweep, cut elsewhere, searches it again."""
    cap_members = state[3].shape[1]
    n_parts = part_starts.shape[0] - 1
    gains = np.zeros(n_parts)
    changed = np.zeros(n_parts, dtype=np.int64)
    for q in prange(n_parts):
        ey = np.empty(cap_members)
        ryb = np.empty(cap_members)
        for s in range(part_starts[q], part_starts[q + 1]):
            a = by_part[s]
            if not active[a]:
                continue
            for _ in range(max_changes):
                delta, x, b, y = _best_change(X, a, near, part, k, cap, tol, state, ey, ryb)
                if b < 0:
                    break
                _apply(X, x, a, y, b, labels, state)
                gains[q] -= delta
                changed[q] += 1
                _mark(near, a, next_active)  # (parts may mark one group: both write True)
                _mark(near, b, next_active)
            if n_parts > 1 and _near_across(near, part, a):  # the next sweep looks again
                next_active[a] = True
    return gains.sum(), changed.sum()


@njit(cache=True, parallel=True)
def near_groups(cent, labels, members, count, near_rec, depth, width, active):  # pragma: no cover
    """Each ``active`` group's ``width`` nearest groups (by centroid) among the groups of its
    members' first ``depth`` neighbours in the record lists ``near_rec``; -1 pads short
    lists (and fills the lists of inactive groups: a sweep does not read them)."""
    n_groups, p = cent.shape
    near_d = np.full((n_groups, width), np.inf)
    near_i = np.full((n_groups, width), -1, dtype=np.int64)
    for g in prange(n_groups):  # a group writes only its own lists
        if not active[g]:
            continue
        for s in range(count[g]):
            x = members[g, s]
            for t in range(depth):
                c = near_rec[x, t]
                if c < 0:
                    continue
                h = labels[c]
                if h == g:
                    continue
                d = 0.0
                for j in range(p):
                    diff = cent[g, j] - cent[h, j]
                    d += diff * diff
                if d < near_d[g, width - 1]:
                    offer(near_d, near_i, g, d, h)
    return near_i
