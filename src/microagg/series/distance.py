"""Distances between time series of equal length: Euclidean and DTW with a Sakoe-Chiba band.

The DTW kernel is a numba loop that compares one series with many (one row of distances at a
time, never a matrix of all pairs); it returns what :func:`tslearn.metrics.dtw` returns, the
square root of the least sum of squared differences along a warping path. Validation is
assumed in the ``_`` functions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_int
from .._runtime.jit import njit

__all__ = ["DISTANCES", "check_band", "distances_to", "dtw_distance"]

DISTANCES = ("euclidean", "dtw")
"""The distances between series: pointwise Euclidean, or dynamic time warping."""


@njit(cache=True)
def _dtw_to_many(query, X, band):  # pragma: no cover - numba
    """DTW distance of ``query`` (L,) to every row of ``X`` (m, L); ``band < 0``: no band."""
    m, length = X.shape
    out = np.empty(m)
    prev = np.empty(length + 1)
    cur = np.empty(length + 1)
    for r in range(m):
        x = X[r]
        prev[0] = 0.0
        for j in range(1, length + 1):
            prev[j] = np.inf
        for i in range(1, length + 1):
            lo = 1 if band < 0 else max(1, i - band)
            hi = length if band < 0 else min(length, i + band)
            cur[lo - 1] = np.inf
            q = query[i - 1]
            for j in range(lo, hi + 1):
                d = q - x[j - 1]
                best = prev[j - 1]
                if prev[j] < best:
                    best = prev[j]
                if cur[j - 1] < best:
                    best = cur[j - 1]
                cur[j] = d * d + best
            if hi < length:
                cur[hi + 1] = np.inf
            prev, cur = cur, prev
        out[r] = np.sqrt(prev[length])
    return out


def _euclidean_to_many(query: NDArray[np.float64], X: NDArray[np.float64]
                       ) -> NDArray[np.float64]:
    diff = X - query
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def check_band(band: object, *, caller: str) -> int | None:
    """``band`` as an int >= 0 (the Sakoe-Chiba radius, in time points) or ``None``."""
    if band is None:
        return None
    return check_int(band, parameter="band", caller=caller, low=0, rule="None or an int >= 0")


def distances_to(query: NDArray[np.float64], X: NDArray[np.float64], distance: str,
                 band: int | None = None) -> NDArray[np.float64]:
    """Distances of one series ``query`` (L,) to each row of ``X`` (m, L): one row, O(m)
    memory. Validation is assumed (contiguous float64, equal lengths, a known distance)."""
    if distance == "euclidean":
        return _euclidean_to_many(query, X)
    return _dtw_to_many(query, X, -1 if band is None else band)


def dtw_distance(a: ArrayLike, b: ArrayLike, *, band: int | None = None) -> float:
    """Dynamic time warping distance between two series of equal length.

    Parameters
    ----------
    a, b : array-like of shape (length,)
        Two finite series.
    band : int or None, default=None
        Sakoe-Chiba radius: point ``i`` of ``a`` may only be matched with points ``j`` of ``b``
        with ``|i - j| <= band``; ``None``: any warping (``band=0`` is the Euclidean distance).

    Returns
    -------
    float
        The square root of the least sum of squared differences along a warping path, as
        :func:`tslearn.metrics.dtw` (with ``global_constraint="sakoe_chiba"``).

    References
    ----------
    Sakoe, H. and Chiba, S. "Dynamic programming algorithm optimization for spoken word
    recognition." IEEE Trans. ASSP 26(1) (1978); Nin, J. and Torra, V. "Extending
    microaggregation procedures for time series protection." RSCTC 2006, LNCS 4259.

    Examples
    --------
    >>> dtw_distance([0.0, 1.0, 2.0], [0.0, 0.0, 1.0])
    1.0
    >>> dtw_distance([0.0, 1.0, 2.0], [0.0, 0.0, 1.0], band=0)
    1.4142135623730951
    """
    A = np.ascontiguousarray(a, dtype=np.float64)
    B = np.ascontiguousarray(b, dtype=np.float64)
    if A.ndim != 1 or A.shape != B.shape or not A.size:
        raise ValueError(f"dtw_distance compares two 1-D series of the same length. Got shapes "
                         f"{A.shape} and {B.shape} instead.")
    if not (np.isfinite(A).all() and np.isfinite(B).all()):
        raise ValueError("dtw_distance: the series contain NaN or infinite values.")
    width = check_band(band, caller="dtw_distance")
    return float(distances_to(A, B[None, :], "dtw", width)[0])
