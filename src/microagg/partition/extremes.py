"""Partitioners seeded at extreme records: MD (maximum distance), TFRP and k-Ward."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_choice, check_k, check_matrix
from .._runtime.jit import njit
from ._kernels import (
    assign_to_nearest_centroid,
    claim_nearest,
    distance_pass,
    farthest,
    farthest_pair,
    make_workspace,
    remove_flagged,
    take_group,
)
from .second_stage import decompose_groups

__all__ = ["kward", "md", "tfrp"]


@njit(cache=True)
def _md_kernel(X, k):  # pragma: no cover - numba
    """MD of Domingo-Ferrer & Mateo-Sanz (2002); see :func:`md`."""
    n = X.shape[0]
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    dist = np.empty(n)
    flagged = np.zeros(n, dtype=np.bool_)
    pair = np.empty(2 * k, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    m = n
    g = 0
    while m >= 2 * k:
        r, s = farthest_pair(Xt, index, m, dist, flagged)
        take_group(Xt, index, m, dist, flagged, r, k, pair[:k], labels, g, False)
        if flagged[s]:  # all remaining distances tie: any unassigned record will do
            s = farthest(dist, m, flagged, index)
        take_group(Xt, index, m, dist, flagged, s, k, pair[k:], labels, g + 1, False)
        g += 2
        m = remove_flagged(Xt, index, m, flagged, pair, no_where)
    if m >= k:
        for i in range(m):
            labels[index[i]] = g
    elif m > 0:
        rows = index[:m].copy()
        assign_to_nearest_centroid(X, labels, g, rows)
    return labels


def md(X: ArrayLike, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition records with MD (maximum distance, Domingo-Ferrer & Mateo-Sanz 2002).

    While at least ``2k`` records remain: find the two records farthest apart, ``r`` (the
    one with the lower row index) and ``s``; ``r`` and its ``k - 1`` nearest form a group,
    then ``s`` and its ``k - 1`` nearest among the rest. If ``k .. 2k-1`` records remain
    they form a group; fewer than ``k`` each join the group whose centroid is nearest.

    The farthest pair is searched exactly each step (quadratic in the worst case, usually
    far less thanks to a triangle-inequality bound, see ``_kernels.farthest_pair``); MD is meant for
    files of up to some tens of thousands of records.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. "Practical data-oriented microaggregation for
    statistical disclosure control." IEEE TKDE 14(1), 189-201 (2002); described in seed 003,
    section IV.
    """
    X = check_matrix(X, caller="md")
    k = check_k(k, n_samples=X.shape[0], caller="md")
    return _md_kernel(X, k)


@njit(cache=True)
def _tfrp_kernel(X, k, low, high):  # pragma: no cover - numba
    """Stage 1 of TFRP; see :func:`tfrp`."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    taken = np.zeros(n, dtype=np.bool_)
    d_low = np.empty(n)
    d_high = np.empty(n)
    dist = np.empty(n)
    none = np.empty(0, dtype=np.int64)
    distance_pass(Xt, n, np.full(p, low), d_low, taken, index, -1, 0, False, none)
    distance_pass(Xt, n, np.full(p, high), d_high, taken, index, -1, 0, False, none)
    near = np.empty(k - 1, dtype=np.int64)
    m = n
    g = 0
    while m >= k:
        ref = d_low if g % 2 == 0 else d_high
        seed = farthest(ref, n, taken, index)
        claim_nearest(Xt, index, n, dist, taken, seed, k, near, labels, g)
        g += 1
        m -= k
    if m > 0:
        assign_to_nearest_centroid(X, labels, g, np.flatnonzero(~taken))
    return labels


def tfrp(X: ArrayLike, k: int, *, stage: int = 2, random_state: RandomState = None
         ) -> NDArray[np.intp]:
    """Partition records with TFRP (two fixed reference points, Chang, Li & Huang 2007).

    Stage 1 (TFRP-1): ``G1`` has every attribute equal to the smallest value of the whole
    file (over all attributes), ``G2`` the largest. Alternately, the unassigned record
    farthest from ``G1``, then from ``G2``, and its ``k - 1`` nearest unassigned records form
    a group, until fewer than ``k`` remain; those join the group with the nearest centroid.
    The reference points never move, so their distances are computed once.
    Stage 2 (TFRP-2): every group, in creation order, is dissolved if sending each of its
    records to the nearest other group of fewer than ``4k - 1`` records lowers the SSE (see
    :func:`microagg.partition.second_stage.decompose_groups`).

    This reading (scalar extremes, farthest seeds, alternation) reproduces the published
    TFRP-1 results on Census and Tarragona to every printed digit; our TFRP-2 is within 0.03
    of the published values (see ``docs/reproductions/seed003.md``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    stage : {1, 2}, default=2
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Chang, C.-C., Li, Y.-C., Huang, W.-H. "TFRP: An efficient microaggregation algorithm for
    statistical disclosure control." Journal of Systems and Software 80 (2007); described in
    seed 003, section IV.
    """
    X = check_matrix(X, caller="tfrp")
    k = check_k(k, n_samples=X.shape[0], caller="tfrp")
    check_choice(stage, (1, 2), name="stage", caller="tfrp")
    labels = _tfrp_kernel(X, k, float(X.min()), float(X.max()))
    if stage == 2:
        labels = decompose_groups(X, labels, reverse=False, max_size=4 * k - 1)
    return labels


@njit(cache=True)
def _ward_cost(sums, count, a, b):  # pragma: no cover - numba
    """Increase of the SSE when clusters a and b merge: na nb / (na + nb) |ca - cb|^2."""
    na = count[a]
    nb = count[b]
    d = 0.0
    for j in range(sums.shape[1]):
        diff = sums[a, j] / na - sums[b, j] / nb
        d += diff * diff
    return na * nb / (na + nb) * d


@njit(cache=True)
def _best_partner(sums, count, alive, a):  # pragma: no cover - numba
    best = -1
    best_cost = np.inf
    for b in range(count.shape[0]):
        if b == a or not alive[b]:
            continue
        c = _ward_cost(sums, count, a, b)
        if c < best_cost:
            best_cost = c
            best = b
    return best, best_cost


@njit(cache=True)
def _kward_kernel(X, k):  # pragma: no cover - numba  # noqa: C901, PLR0912 - numba kernel: one loop nest, kept whole for speed
    """One level of k-Ward: two seed groups, singletons, constrained Ward merging."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    dist = np.empty(n)
    flagged = np.zeros(n, dtype=np.bool_)
    labels = np.full(n, -1, dtype=np.intp)
    pair = np.empty(2 * k, dtype=np.int64)
    r, s = farthest_pair(Xt, index, n, dist, flagged)
    take_group(Xt, index, n, dist, flagged, r, k, pair[:k], labels, 0, False)
    if flagged[s]:
        s = farthest(dist, n, flagged, index)
    take_group(Xt, index, n, dist, flagged, s, k, pair[k:], labels, 1, False)
    # clusters: 0, 1 (the seed groups, already >= k) and one singleton per other record
    n_clusters = n - 2 * k + 2
    sums = np.zeros((n_clusters, p))
    count = np.zeros(n_clusters)
    owner = np.empty(n, dtype=np.int64)
    c = 2
    for i in range(n):
        if labels[i] < 0:
            labels[i] = c
            c += 1
        owner[i] = labels[i]
        count[labels[i]] += 1.0
        for j in range(p):
            sums[labels[i], j] += X[i, j]
    alive = np.ones(n_clusters, dtype=np.bool_)
    partner = np.full(n_clusters, -1, dtype=np.int64)
    cost = np.full(n_clusters, np.inf)
    for a in range(n_clusters):
        if count[a] < k:
            partner[a], cost[a] = _best_partner(sums, count, alive, a)
    while True:
        a = -1
        for u in range(n_clusters):  # the cheapest merge involving a cluster below k
            if alive[u] and count[u] < k and (a < 0 or cost[u] < cost[a]):
                a = u
        if a < 0:
            break
        b = partner[a]
        keep, gone = (a, b) if a < b else (b, a)
        for j in range(p):
            sums[keep, j] += sums[gone, j]
        count[keep] += count[gone]
        alive[gone] = False
        for u in range(n_clusters):
            if not alive[u] or count[u] >= k:
                continue
            if u == keep or partner[u] == keep or partner[u] == gone:
                partner[u], cost[u] = _best_partner(sums, count, alive, u)
            else:
                c2 = _ward_cost(sums, count, u, keep)
                if c2 < cost[u]:
                    partner[u] = keep
                    cost[u] = c2
        for i in range(n):
            if owner[i] == gone:
                owner[i] = keep
    return owner


def kward(X: ArrayLike, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition records with k-Ward (Domingo-Ferrer & Mateo-Sanz 2002).

    The two records farthest apart and their ``k - 1`` nearest form two groups; every other
    record starts as its own cluster. Ward's rule then merges, at each step, the pair of
    clusters whose union increases the SSE least, among the pairs with at least one cluster
    below ``k`` records (two clusters of ``k`` or more never merge), until every cluster has
    at least ``k``. Every cluster of ``2k`` or more records is partitioned again the same
    way. Ties go to the lowest cluster number.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Domingo-Ferrer, J. and Mateo-Sanz, J. M. "Practical data-oriented microaggregation for
    statistical disclosure control." IEEE TKDE 14(1), 189-201 (2002). The restriction on
    merging and the recursion follow seed 003's summary; the original text was not available.
    """
    A = check_matrix(X, caller="kward")
    k = check_k(k, n_samples=A.shape[0], caller="kward")
    labels = np.zeros(A.shape[0], dtype=np.intp)
    pending = [np.arange(A.shape[0])]
    next_label = 1
    while pending:
        rows = pending.pop()
        if rows.size < 2 * k:
            continue
        sub = np.unique(_kward_kernel(np.ascontiguousarray(A[rows]), k),
                        return_inverse=True)[1]
        if sub.max() == 0:  # nothing split: stop here
            continue
        for g in range(int(sub.max()) + 1):
            part = rows[sub == g]
            if g > 0:
                labels[part] = next_label
                next_label += 1
            pending.append(part)
    return np.unique(labels, return_inverse=True)[1].astype(np.intp)
