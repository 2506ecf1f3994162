"""Clustering-based information loss (seed 001, section 3) and the classic utility figures
users of sdcMicro expect (changes in means, variances, covariances, correlations; IL1s)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_matrix

__all__ = ["clustering_information_loss", "il1s", "moment_changes"]


def clustering_information_loss(original: ArrayLike, masked: ArrayLike, *, n_clusters: int = 5,
                                random_state: int = 0) -> dict[str, float]:
    """How much a clustering of the masked data disagrees with the same clustering of the
    original: ``1 - index`` for the Rand index, the adjusted Rand index and the Jaccard
    pair index (seed 001, section 3: IL_RI, IL_ARI, IL_Jaccard).

    The clustering is scikit-learn's k-means with ``n_clusters`` clusters, ``n_init=10`` and
    a fixed ``random_state``, run on each table z-scored with the ORIGINAL's means and
    standard deviations (so that a masked column is not rescaled by its own, smaller spread).

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
