"""Utility and linkage risk of a time-series release: information loss on the series values,
the mean DTW distance to the published series, and nearest-published-series linkage."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .distance import distances_to

__all__ = ["mean_distance", "nearest_series_linkage"]


def mean_distance(original: NDArray[np.float64], published: NDArray[np.float64],
                  labels: NDArray[np.intp], distance: str, band: int | None) -> float:
    """Mean distance between each original series and its published series (one row of
    distances per group: O(n) memory). Validation is assumed."""
    total = 0.0
    for g in range(int(labels.max()) + 1):
        rows = np.flatnonzero(labels == g)
        total += float(distances_to(published[rows[0]], original[rows], distance, band).sum())
    return total / original.shape[0]


def nearest_series_linkage(original: NDArray[np.float64], published: NDArray[np.float64],
                           classes: NDArray[np.intp], distance: str, band: int | None
                           ) -> tuple[float, float]:
    """Record linkage by nearest published series.

    An intruder holding a record's original series links it to the nearest DISTINCT
    published series (by the release's distance). Returns ``(linkage, reidentification)``:
    ``linkage`` is the share of records whose nearest published series is their own (``1/t``
    when it is one of ``t`` series at exactly the nearest distance); ``reidentification``
    divides each such link by the number of records that share the published series (the
    intruder cannot tell them apart), the chance of naming the right row.

    Cost: ``n x g`` distances held at once (``g`` distinct series, about ``n / k``): DTW one
    row of ``n`` per published series, Euclidean by one matrix product (compared squared,
    with a relative tolerance of 1e-9 for ties). Validation is assumed.

    References
    ----------
    Nin, J. and Torra, V. "Towards the evaluation of time series protection methods."
    Information Sciences 179 (2009) (distance-based record linkage for series);
    Domingo-Ferrer, J. and Torra, V. Statistics and Computing 13 (2003).

    Examples
    --------
    >>> V = np.array([[0.0, 0.0], [1.0, 1.0], [9.0, 9.0], [10.0, 10.0]])
    >>> P = np.array([[0.5, 0.5], [0.5, 0.5], [9.5, 9.5], [9.5, 9.5]])
    >>> nearest_series_linkage(V, P, np.array([0, 0, 1, 1]), "euclidean", None)
    (1.0, 0.5)
    """
    n = original.shape[0]
    n_classes = int(classes.max()) + 1
    first = np.full(n_classes, n, dtype=np.intp)
    np.minimum.at(first, classes, np.arange(n))
    dist = _class_distances(original, published[first], distance, band)
    nearest = dist.min(axis=1)
    scale = (original * original).sum(axis=1) if distance == "euclidean" else nearest
    tol = 1e-9 * np.maximum(1.0, scale)
    ties = (dist <= (nearest + tol)[:, None]).sum(axis=1)
    own = dist[np.arange(n), classes] <= nearest + tol
    linked = own / ties
    sizes = np.bincount(classes)[classes]
    return float(linked.mean()), float((linked / sizes).mean())


def _class_distances(original: NDArray[np.float64], centres: NDArray[np.float64],
                     distance: str, band: int | None) -> NDArray[np.float64]:
    """(n, g) distances of every original series to every distinct published series: DTW
    one published series at a time; squared Euclidean by one matrix product (same order)."""
    if distance == "euclidean":
        sq = (original * original).sum(axis=1)[:, None] - 2.0 * (original @ centres.T)
        return np.maximum(sq + (centres * centres).sum(axis=1)[None, :], 0.0)
    dist = np.empty((original.shape[0], centres.shape[0]))
    for c in range(centres.shape[0]):
        dist[:, c] = distances_to(centres[c], original, distance, band)
    return dist
