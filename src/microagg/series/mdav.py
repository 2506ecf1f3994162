"""MDAV on time series (Nin & Torra 2006): Euclidean MDAV on the series matrix, or an MDAV
whose farthest-record and nearest-records steps use DTW distances computed on demand.

Importing this module loads neither pandas nor scikit-learn (the partition registry imports
it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_choice, check_k, check_matrix
from . import distance as _distance
from .distance import DISTANCES, check_band

__all__ = ["series_mdav"]


def series_mdav(X: ArrayLike, k: int, *, random_state: RandomState = None,
                distance: str = "euclidean", band: int | None = None) -> NDArray[np.intp]:
    """Partition time series with MDAV under the Euclidean or the DTW distance.

    With ``distance="euclidean"`` this is exact MDAV on the (n_series, length) matrix (the
    Euclidean distance between series is the distance between rows). With ``"dtw"`` it is
    MDAV whose steps use DTW: while at least ``3k`` series remain, take the series ``r``
    farthest (DTW) from the pointwise mean of the remaining series, the series ``s``
    farthest from ``r``, and form a group with ``r`` and its ``k - 1`` DTW-nearest series,
    then one with ``s`` and its ``k - 1`` nearest among the rest; with ``2k..3k-1`` left,
    one group around the farthest series and the rest; fewer, one group. Every distance is
    computed on demand from one series to the remaining ones: memory stays O(n_series),
    never a matrix of all pairs; time is about ``3 n^2 / (4k)`` DTW computations.

    Parameters
    ----------
    X : array-like of shape (n_series, length)
        One series per row, on a common time grid; must be finite. Do not scale the
        columns one by one (that distorts the series' shapes).
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused (the method is deterministic; ties go to the lowest row); accepted so that
        every partitioner has the same signature.
    distance : {"euclidean", "dtw"}, default="euclidean"
        Distance between series.
    band : int or None, default=None
        Sakoe-Chiba radius of DTW in time points (``None``: no band; ignored, and refused
        when not ``None``, for the Euclidean distance).

    Returns
    -------
    labels : ndarray of shape (n_series,), dtype=intp
        Group of each series, numbered in the order groups are formed; every group has k
        series except possibly the last (< 2k).

    References
    ----------
    Nin, J. and Torra, V. "Extending microaggregation procedures for time series
    protection." RSCTC 2006, LNCS 4259; Nin, J. and Torra, V. "Towards the
    evaluation of time series protection methods." Information Sciences 179 (2009);
    Domingo-Ferrer, J. and Torra, V. Data Min. Knowl. Disc. 11 (2005) for MDAV.

    Examples
    --------
    >>> X = [[0, 0, 1], [0, 1, 1], [0, 0, 0], [9, 9, 9], [9, 8, 9], [8, 9, 9]]
    >>> series_mdav(X, 3, distance="dtw", band=1).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    A = check_matrix(X, caller="series_mdav")
    k = check_k(k, n_samples=A.shape[0], caller="series_mdav")
    check_choice(distance, DISTANCES, name="distance", caller="series_mdav")
    width = check_band(band, caller="series_mdav")
    if distance == "euclidean":
        if width is not None:
            raise ValueError("The 'band' parameter of series_mdav applies to "
                             f"distance='dtw' only. Got band={width} with "
                             "distance='euclidean'.")
        from ..partition.mdav import mdav  # here: the partition registry imports this module

        return mdav(A, k)
    return _dtw_mdav(A, k, width)


def _nearest(d: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Positions of the ``k`` smallest of ``d``, ties to the lowest position."""
    return np.argsort(d, kind="stable")[:k]


def _dtw_mdav(X: NDArray[np.float64], k: int, band: int | None) -> NDArray[np.intp]:
    """MDAV with on-demand DTW distances (validation assumed)."""
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.intp)
    remaining = np.arange(n)
    group = 0

    def distances(query: NDArray[np.float64], rows: NDArray[np.intp]) -> NDArray[np.float64]:
        return _distance.distances_to(query, np.ascontiguousarray(X[rows]), "dtw", band)

    while remaining.size >= 3 * k:
        rows = remaining
        r = rows[int(np.argmax(distances(X[rows].mean(axis=0), rows)))]
        d_r = distances(X[r], rows)
        members = rows[_nearest(d_r, k)]
        keep = ~np.isin(rows, members)
        labels[members] = group
        rest, d_rest = rows[keep], d_r[keep]
        s = rest[int(np.argmax(d_rest))]
        members = rest[_nearest(distances(X[s], rest), k)]
        labels[members] = group + 1
        remaining = rest[~np.isin(rest, members)]
        group += 2
    if remaining.size >= 2 * k:
        rows = remaining
        r = rows[int(np.argmax(distances(X[rows].mean(axis=0), rows)))]
        members = rows[_nearest(distances(X[r], rows), k)]
        labels[members] = group
        remaining = rows[~np.isin(rows, members)]
        group += 1
    labels[remaining] = group
    return labels
