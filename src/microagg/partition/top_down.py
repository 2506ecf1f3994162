"""Seed 000's k-partitions: top-down (c-means++ subsets, then recursive farthest-pair splits)
and the bottom-up comparator it is measured against (random seeds, nearest records)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from .._runtime.jit import njit
from ._kernels import assign_to_nearest_centroid, claim_nearest, farthest_pair, make_workspace
from .sorting import normalized

__all__ = ["bottom_up", "top_down"]


@njit(cache=True)
def _split(X, k):  # pragma: no cover - numba
    """One split of Algorithm 3 on the rows of ``X`` (at least 2k of them).

    The farthest pair (i, j); i and its k-1 nearest form group 0, j and its k-1 nearest among
    the rest group 1; every other record joins the group whose centroid (of its first k
    records) is nearer, group 0 on ties. Returns 0/1 labels.
    """
    n, p = X.shape
    Xt, index = make_workspace(X)
    dist = np.empty(n)
    no_flags = np.zeros(n, dtype=np.bool_)
    i, j = farthest_pair(Xt, index, n, dist, no_flags)
    taken = np.zeros(n, dtype=np.bool_)
    labels = np.full(n, -1, dtype=np.intp)
    near = np.empty(k - 1, dtype=np.int64)
    claim_nearest(Xt, index, n, dist, taken, i, k, near, labels, 0)
    if taken[j]:  # only when (almost) every distance ties: any free record will do
        j = np.flatnonzero(~taken)[0]
    claim_nearest(Xt, index, n, dist, taken, j, k, near, labels, 1)
    c0 = np.zeros(p)
    c1 = np.zeros(p)
    for r in range(n):
        if labels[r] == 0:
            c0 += X[r]
        elif labels[r] == 1:
            c1 += X[r]
    c0 /= k
    c1 /= k
    for r in range(n):
        if labels[r] < 0:
            d0 = 0.0
            d1 = 0.0
            for f in range(p):
                d0 += (X[r, f] - c0[f]) ** 2
                d1 += (X[r, f] - c1[f]) ** 2
            labels[r] = 0 if d0 <= d1 else 1
    return labels


def _subsets(X: NDArray[np.float64], k: int, c: int, seed: int) -> NDArray[np.intp]:
    """Algorithm 2 (c-means++) with scikit-learn, then subsets below k merged into the
    subset with the nearest centroid (repeatedly, smallest first) so none is left under k."""
    c = min(c, X.shape[0] // k)
    if c <= 1:
        return np.zeros(X.shape[0], dtype=np.intp)
    from sklearn.cluster import KMeans, kmeans_plusplus  # lazy: keeps sklearn out of the import

    # plain k-means++ seeding (one trial per centre: the paper's roulette wheel), then Lloyd
    centres, _ = kmeans_plusplus(X, c, random_state=seed, n_local_trials=1)
    model = KMeans(n_clusters=c, init=centres, n_init=1, max_iter=300, random_state=seed)
    labels = model.fit_predict(X).astype(np.intp)
    while True:
        counts = np.bincount(labels, minlength=c)
        alive = np.flatnonzero(counts > 0)
        small = alive[counts[alive] < k]
        if small.size == 0:
            break
        g = small[np.argmin(counts[small])]
        centre = X[labels == g].mean(axis=0)
        others = alive[alive != g]
        cents = np.stack([X[labels == h].mean(axis=0) for h in others])
        labels[labels == g] = others[int(np.argmin(((cents - centre) ** 2).sum(axis=1)))]
    return np.unique(labels, return_inverse=True)[1].astype(np.intp)


def _prepared(X: ArrayLike, k: int, c: int, normalize: str, random_state: RandomState, *,
              caller: str) -> tuple[NDArray[np.float64], int, NDArray[np.intp],
                                    np.random.Generator]:
    """Checked, normalized data, k, the c-means++ subsets and the call's Generator (the
    common first steps of :func:`top_down` and :func:`bottom_up`)."""
    A = check_matrix(X, caller=caller)
    k = check_k(k, n_samples=A.shape[0], caller=caller)
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
        raise ValueError(f"The 'c' parameter of {caller} must be an int >= 1. Got {c!r} instead.")
    A = normalized(A, normalize, caller=caller)
    seed, rng = resolve_seed(random_state)
    return A, k, _subsets(A, k, int(c), seed % (2**32)), rng


def top_down(X: ArrayLike, k: int, *, c: int = 1, normalize: str = "minmax",
             random_state: RandomState = None) -> NDArray[np.intp]:
    """Top-down k-partition (seed 000, Algorithms 1-3).

    1. Normalize each column to [0, 1] (Eq. 7) unless ``normalize="none"``.
    2. Cut the records into ``c`` subsets by c-means++ (Algorithm 2): k-means++ seeding with
       one candidate per centre, then Lloyd iterations (scikit-learn's ``KMeans``, up to 300
       iterations, seeded from ``random_state``). A subset below k records is merged into the
       subset with the nearest centroid; ``c`` is capped at ``n // k``.
    3. In each subset (Algorithm 3): while a group has 2k records or more, split it around its
       farthest pair: each end and its k-1 nearest records form a group of k, every other
       record joins the group whose centroid is nearer; recurse. Groups of k..2k-1 are final.

    The paper precomputes one n x n distance matrix; we compute distances per split (the
    farthest pair exactly, with a triangle-inequality bound), so memory stays O(n p).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    c : int, default=1
        Number of c-means++ subsets; 1 skips the pre-partition (the result is then
        deterministic).
    normalize : {"minmax", "none"}, default="minmax"
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the c-means++ pre-partition.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Every group has k..2k-1 records.

    References
    ----------
    Seed 000, section 3.2 (Algorithms 1-3).
    """
    A, k, subsets, _ = _prepared(X, k, c, normalize, random_state, caller="top_down")
    labels = np.empty(A.shape[0], dtype=np.intp)
    next_label = 0
    pending = [np.flatnonzero(subsets == s) for s in range(int(subsets.max()) + 1)]
    while pending:
        rows = pending.pop()
        if rows.size < 2 * k:
            labels[rows] = next_label
            next_label += 1
            continue
        halves = _split(np.ascontiguousarray(A[rows]), k)
        pending.append(rows[halves == 1])
        pending.append(rows[halves == 0])
    return labels


@njit(cache=True)
def _grow_from_random_seeds(X, k, visit):  # pragma: no cover - numba
    """Bottom-up groups on the rows of ``X``: seeds taken in the order ``visit`` (a random
    permutation), skipping records already grouped; each seed claims its k-1 nearest free
    records. The fewer than k records left join the group with the nearest centroid."""
    n = X.shape[0]
    Xt, index = make_workspace(X)
    dist = np.empty(n)
    taken = np.zeros(n, dtype=np.bool_)
    labels = np.full(n, -1, dtype=np.intp)
    near = np.empty(k - 1, dtype=np.int64)
    free = n
    g = 0
    for t in range(n):
        if free < k:
            break
        s = visit[t]
        if taken[s]:
            continue
        claim_nearest(Xt, index, n, dist, taken, s, k, near, labels, g)
        g += 1
        free -= k
    if free > 0:
        assign_to_nearest_centroid(X, labels, g, np.flatnonzero(~taken))
    return labels


def bottom_up(X: ArrayLike, k: int, *, c: int = 1, normalize: str = "minmax",
              random_state: RandomState = None) -> NDArray[np.intp]:
    """Bottom-up k-partition: the comparator of seed 000 (after Song et al., 2019).

    1. Normalize (Eq. 7) and cut the records into ``c`` subsets with the same c-means++
       pre-partition as :func:`top_down` ("before searching for equivalence classes, they
       split datasets into several parts to reduce the search size").
    2. In each subset, visit the records in a random order; each record not yet grouped is a
       seed and forms a group with its k-1 nearest ungrouped records ("the bottom-up steps
       are highly dependent on random sampling").
    3. When fewer than k records are left in a subset, each joins the group of that subset
       whose centroid is nearest, so groups have k..2k-1 records.

    Seed 000 describes the comparator in two sentences and the original paper (Song, Ma,
    Tian & Al-Rodhaan, IEEE Access 7, 2019) was not available to us: steps 2 and 3 (seed =
    a uniformly random free record, growth by nearest records, leftovers to the nearest
    centroid) are our reading, not a transcription. Expect it to lose to :func:`top_down`
    and MDAV in information loss: the seeds ignore the data's shape by design.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    c : int, default=1
        Number of c-means++ subsets (capped at ``n // k``).
    normalize : {"minmax", "none"}, default="minmax"
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the pre-partition and the order in which seeds are drawn.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Every group has k..2k-1 records.

    References
    ----------
    Seed 000, sections 1 and 4.2; Song et al., IEEE Access 7 (2019) 75434-75445.
    """
    A, k, subsets, rng = _prepared(X, k, c, normalize, random_state, caller="bottom_up")
    labels = np.empty(A.shape[0], dtype=np.intp)
    next_label = 0
    for s in range(int(subsets.max()) + 1):
        rows = np.flatnonzero(subsets == s)
        local = _grow_from_random_seeds(np.ascontiguousarray(A[rows]), k,
                                        rng.permutation(rows.size))
        labels[rows] = local + next_label
        next_label += int(local.max()) + 1
    return labels
