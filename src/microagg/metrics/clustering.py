"""Clustering-based information loss (seed 001, section 3) and the classic utility figures
users of sdcMicro expect (changes in means, variances, covariances, correlations; IL1s)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._base.validation import RandomState, check_matrix, resolve_seed
from .._runtime.jit import njit

__all__ = [
    "clustering_information_loss",
    "fuzzy_clustering_information_loss",
    "fuzzy_rand_index",
    "il1s",
    "moment_changes",
]


def clustering_information_loss(original: ArrayLike, masked: ArrayLike, *, n_clusters: int = 5,
                                random_state: int = 0) -> dict[str, float]:
    """How much a clustering of the masked data disagrees with the same clustering of the
    original: ``1 - index`` for the Rand index, the adjusted Rand index and the Jaccard
    pair index (seed 001, section 3: IL_RI, IL_ARI, IL_Jaccard).

    The clustering is scikit-learn's k-means with ``n_clusters`` clusters, ``n_init=10`` and
    a fixed ``random_state``, run on each table z-scored with the ORIGINAL's means and
    standard deviations (so that a masked column is not rescaled by its own, smaller spread).

    Parameters
    ----------
    original : array-like of shape (n_samples, n_features)
        The original numeric quasi-identifiers.
    masked : array-like of shape (n_samples, n_features)
        The same records as published, in the same order.
    n_clusters : int, default=5
        The number of k-means clusters.
    random_state : int, default=0
        The seed of k-means (the same on both tables).

    Returns
    -------
    dict
        ``il_rand``, ``il_ari``, ``il_jaccard`` (0: the same clusters; the ARI-based one can
        exceed 1 when the agreement is worse than chance).

    Examples
    --------
    >>> X = [[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]]
    >>> clustering_information_loss(X, X, n_clusters=3)["il_ari"]
    0.0
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score, rand_score
    from sklearn.metrics.cluster import pair_confusion_matrix

    A = check_matrix(original, caller="clustering_information_loss", name="original")
    B = check_matrix(masked, caller="clustering_information_loss", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) \
            or not 2 <= n_clusters <= A.shape[0]:
        raise ValueError(f"The 'n_clusters' parameter must be an int in 2..{A.shape[0]}. "
                         f"Got {n_clusters!r}.")
    centre = A.mean(axis=0)
    spread = A.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)

    def clusters(M: np.ndarray) -> np.ndarray:
        model = KMeans(n_clusters=int(n_clusters), n_init=10, random_state=random_state)
        return model.fit_predict((M - centre) / spread)

    a, b = clusters(A), clusters(B)
    pairs = pair_confusion_matrix(a, b)  # [[TN, FP], [FN, TP]] over ordered pairs
    tp, fp, fn = pairs[1, 1], pairs[0, 1], pairs[1, 0]
    jaccard = tp / (tp + fp + fn) if tp + fp + fn else 1.0
    return {"il_rand": float(1.0 - rand_score(a, b)),
            "il_ari": float(1.0 - adjusted_rand_score(a, b)),
            "il_jaccard": float(1.0 - jaccard)}


def il1s(original: ArrayLike, masked: ArrayLike) -> float:
    """IL1s of sdcMicro (Yancey, Winkler & Creecy 2002): the mean over records and columns of
    ``|x - x'| / (sqrt(2) s)``, with ``s`` the original column's standard deviation (ddof=1;
    constant columns count 0).

    Parameters
    ----------
    original : array-like of shape (n_samples, n_features)
        The original numeric quasi-identifiers.
    masked : array-like of shape (n_samples, n_features)
        The same records as published, in the same order.

    Examples
    --------
    >>> round(il1s([[0.0], [2.0]], [[1.0], [1.0]]), 12)  # s = sqrt(2): 1 / (sqrt(2) sqrt(2))
    0.5
    """
    A = check_matrix(original, caller="il1s", name="original")
    B = check_matrix(masked, caller="il1s", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    s = A.std(axis=0, ddof=1) if A.shape[0] > 1 else np.zeros(A.shape[1])
    terms = np.where(s > 0, np.abs(A - B) / (np.sqrt(2.0) * np.where(s > 0, s, 1.0)), 0.0)
    return float(terms.mean())


def moment_changes(original: ArrayLike, masked: ArrayLike) -> dict[str, float]:
    """Mean absolute relative change of the means and variances (per column), and mean
    absolute change of the covariances (relative) and correlations (absolute) over column
    pairs, in percent for the relative ones.

    Parameters
    ----------
    original : array-like of shape (n_samples, n_features)
        The original numeric quasi-identifiers.
    masked : array-like of shape (n_samples, n_features)
        The same records as published, in the same order.

    Examples
    --------
    >>> moment_changes([[1.0], [3.0]], [[2.0], [2.0]])["variance_change_pct"]
    100.0
    """
    A = check_matrix(original, caller="moment_changes", name="original")
    B = check_matrix(masked, caller="moment_changes", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")

    def relative(x: np.ndarray, y: np.ndarray) -> float:
        ok = np.abs(x) > 0
        return float(100 * np.mean(np.abs(y[ok] - x[ok]) / np.abs(x[ok]))) if ok.any() else 0.0

    out = {
        "mean_change_pct": relative(A.mean(axis=0), B.mean(axis=0)),
        "variance_change_pct": relative(A.var(axis=0, ddof=1), B.var(axis=0, ddof=1)),
    }
    if A.shape[1] > 1:
        iu = np.triu_indices(A.shape[1], k=1)
        out["covariance_change_pct"] = relative(np.cov(A, rowvar=False)[iu],
                                                np.cov(B, rowvar=False)[iu])
        with np.errstate(invalid="ignore", divide="ignore"):
            ca = np.atleast_2d(np.corrcoef(A, rowvar=False))[iu]
            cb = np.atleast_2d(np.corrcoef(B, rowvar=False))[iu]
        ok = np.isfinite(ca) & np.isfinite(cb)
        out["correlation_change"] = float(np.mean(np.abs(cb[ok] - ca[ok]))) if ok.any() else 0.0
    return out


# ---------------------------------------------------------------------------------------------
# fuzzy partitions (seed 001, section 3: "in the case of fuzzy clustering, f(X) and f(X') will
# be fuzzy partitions")


@njit(cache=True)
def _top_two(U):  # pragma: no cover - numba
    """Per row: the largest membership, its column (first one on ties) and the second largest
    (0 for a single column)."""
    n, c = U.shape
    first = np.empty(n)
    where = np.empty(n, dtype=np.int64)
    second = np.zeros(n)
    for a in range(n):
        best = U[a, 0]
        at = 0
        other = 0.0
        for j in range(1, c):
            x = U[a, j]
            if x > best:
                other = best
                best = x
                at = j
            elif x > other:
                other = x
        first[a] = best
        where[a] = at
        second[a] = other
    return first, where, second


@njit(cache=True)
def _same_different(U, x, y, first, where, second):  # pragma: no cover - numba
    """Campello's degrees for the pair (x, y): same cluster ``max_i min(U[x,i], U[y,i])`` and
    different clusters ``max_{i != j} min(U[x,i], U[y,j])``, the latter in O(1) from the top
    two memberships of each row."""
    same = 0.0
    for j in range(U.shape[1]):
        t = min(U[x, j], U[y, j])
        if t > same:
            same = t
    if where[x] != where[y]:
        different = min(first[x], first[y])
    else:
        different = max(min(first[x], second[y]), min(second[x], first[y]))
    return same, different


@njit(cache=True)
def _fuzzy_pair_sums(U, V):  # pragma: no cover - numba
    """Campello's fuzzy a, b, c, d over the unordered pairs of records, pair by pair."""
    n = U.shape[0]
    fu, wu, su = _top_two(U)
    fv, wv, sv = _top_two(V)
    a = b = c = d = 0.0
    for x in range(n):
        ra = rb = rc = rd = 0.0
        for y in range(x + 1, n):
            same_u, diff_u = _same_different(U, x, y, fu, wu, su)
            same_v, diff_v = _same_different(V, x, y, fv, wv, sv)
            ra += min(same_u, same_v)
            rb += min(same_u, diff_v)
            rc += min(diff_u, same_v)
            rd += min(diff_u, diff_v)
        a += ra
        b += rb
        c += rc
        d += rd
    return a, b, c, d


def _check_memberships(M: ArrayLike, *, name: str, caller: str) -> np.ndarray:
    A = check_matrix(M, caller=caller, name=name)
    if A.min() < 0.0 or A.max() > 1.0 + 1e-9:
        raise ValueError(f"The {name!r} parameter of {caller} must hold memberships in [0, 1]. "
                         f"Got values in [{A.min()}, {A.max()}] instead.")
    return A


def fuzzy_rand_index(U: ArrayLike, V: ArrayLike) -> float:
    """Campello's fuzzy Rand index of two fuzzy partitions of the same records.

    For a pair of records (x, y), the degree to which partition U puts them together is
    ``max_i min(U[x, i], U[y, i])`` and apart ``max_{i != j} min(U[x, i], U[y, j])``;
    likewise for V. Over the unordered pairs, with ``min`` as conjunction, ``a`` sums
    together-in-U and together-in-V, ``b`` together-in-U and apart-in-V, ``c`` apart-in-U and
    together-in-V, ``d`` apart in both; the index is ``(a + d) / (a + b + c + d)``.

    For crisp (one-hot) memberships this is the Rand index. For fuzzy ones it is below 1 even
    for ``V = U`` (a pair can be together and apart to some degree at once): compare indexes
    computed on the same original. O(n_samples^2 * n_clusters) time, pair by pair; memory
    O(n_samples * n_clusters).

    Parameters
    ----------
    U : array-like of shape (n_samples, n_clusters_U)
        Memberships in [0, 1] (rows of a fuzzy partition sum to 1; not required).
    V : array-like of shape (n_samples, n_clusters_V)

    Returns
    -------
    float
        In [0, 1]; 1.0 when there are fewer than two records.

    References
    ----------
    Campello, R. J. G. B. "A fuzzy extension of the Rand index and other related indexes for
    clustering and classification assessment." Pattern Recognition Letters 28(7), 833-841
    (2007).

    Examples
    --------
    >>> fuzzy_rand_index([[1, 0], [1, 0], [0, 1]], [[1, 0], [0, 1], [0, 1]])  # crisp: Rand
    0.3333333333333333
    """
    caller = "fuzzy_rand_index"
    A = _check_memberships(U, name="U", caller=caller)
    B = _check_memberships(V, name="V", caller=caller)
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"U has {A.shape[0]} rows but V has {B.shape[0]}: both must describe "
                         "the same records.")
    if A.shape[0] < 2:
        return 1.0
    a, b, c, d = _fuzzy_pair_sums(A, B)
    total = a + b + c + d
    return float((a + d) / total) if total > 0 else 1.0


def fuzzy_clustering_information_loss(original: ArrayLike, masked: ArrayLike, *,
                                      n_clusters: int = 5, m: float = 2.0,
                                      random_state: RandomState = 0, max_records: int = 2000,
                                      relative: bool = True) -> float:
    """How much a fuzzy c-means clustering of the masked data disagrees with the same
    clustering of the original, by Campello's fuzzy Rand index (seed 001, section 3).

    Both tables are z-scored with the ORIGINAL's means and standard deviations (as in
    :func:`clustering_information_loss`). Fuzzy c-means (:func:`microagg.partition.fuzzy.fuzzy_c_means`,
    ``n_clusters``, fuzzifier ``m``, k-means++ seeded by ``random_state``) is run on the
    original; both fuzzy partitions compared are then fuzzy c-means runs started from those
    centres, one on each table, so that identical tables get identical partitions. With more
    than ``max_records`` rows, both are evaluated on the same fixed random sample of
    ``max_records`` rows (drawn with ``random_state``): the index costs O(n^2) pairs.

    Campello's index of a fuzzy partition with itself is below 1, so ``1 - FRI`` would not
    vanish for an untouched release. ``relative=True`` (default) measures the loss against the
    original's agreement with itself: ``1 - FRI(U, U') / FRI(U, U)``, 0 when masked equals
    original (it can be slightly negative when the masked partition is crisper than the
    original's). ``relative=False`` returns ``1 - FRI(U, U')``. Both reduce to ``1 - Rand``
    for crisp memberships.

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_features)
        The table before and after masking, rows aligned.
    n_clusters : int, default=5
        Clusters of the fuzzy c-means, ``2 <= n_clusters <= n_samples`` (and at most
        ``max_records``).
    m : float, default=2.0
        Fuzzifier, ``> 1``.
    random_state : None, int or numpy.random.Generator, default=0
        Seeds k-means++ and the sample.
    max_records : int, default=2000
        Largest number of rows evaluated, ``>= 2``.
    relative : bool, default=True
        Measure against the original's agreement with itself (see above).

    Returns
    -------
    float

    References
    ----------
    Campello, R. J. G. B. "A fuzzy extension of the Rand index and other related indexes for
    clustering and classification assessment." Pattern Recognition Letters 28(7), 833-841
    (2007); Bezdek, J. C. "Pattern Recognition with Fuzzy Objective Function Algorithms."
    Plenum (1981).

    Examples
    --------
    >>> X = [[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]]
    >>> fuzzy_clustering_information_loss(X, X, n_clusters=3)
    0.0
    """
    from .._base.constraints import check_int
    from ..partition._fuzzy_cmeans import check_m, fuzzy_c_means

    caller = "fuzzy_clustering_information_loss"
    A = check_matrix(original, caller=caller, name="original")
    B = check_matrix(masked, caller=caller, name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    n = A.shape[0]
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) \
            or not 2 <= n_clusters <= n:
        raise ValueError(f"The 'n_clusters' parameter must be an int in 2..{n}. "
                         f"Got {n_clusters!r}.")
    mm = check_m(m, caller=caller)
    cap = check_int(max_records, parameter="max_records", caller=caller, low=2)
    seed, rng = resolve_seed(random_state)
    centre = A.mean(axis=0)
    spread = A.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    Az = (A - centre) / spread
    Bz = (B - centre) / spread
    if n > cap:
        rows = np.sort(rng.choice(n, size=cap, replace=False))
        Az, Bz = Az[rows], Bz[rows]
    c = min(int(n_clusters), Az.shape[0])
    start = fuzzy_c_means(Az, c, m=mm, random_state=seed).centers
    u_original = fuzzy_c_means(Az, c, m=mm, init=start).memberships
    u_masked = fuzzy_c_means(Bz, c, m=mm, init=start).memberships
    agreement = fuzzy_rand_index(u_original, u_masked)
    if not relative:
        return float(1.0 - agreement)
    return float(1.0 - agreement / fuzzy_rand_index(u_original, u_original))
