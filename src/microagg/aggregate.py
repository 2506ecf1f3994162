"""Aggregators: the representative that replaces each group's values (mean, median, mode).

Contract: ``f(values, labels, *, random_state=None, **params) -> masked`` where ``values`` is a
finite (n_samples, n_columns) float array on the ORIGINAL scale and ``labels`` a partition;
``masked`` has the same shape, and rows of one group are identical in every column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ._validation import RandomState, check_labels, check_matrix

__all__ = ["AGGREGATORS", "aggregate", "group_mean", "group_median", "group_mode"]


def _segments(labels: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Rows sorted by group (stable) and the start of each group in that order."""
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    starts = np.concatenate(([0], np.cumsum(counts)))
    return order, starts


def group_mean(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
               ) -> NDArray[np.float64]:
    """Replace each value by the mean of its group (the classic microaggregation centroid).

    Examples
    --------
    >>> group_mean([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1]).ravel().tolist()
    [2.0, 2.0, 15.0, 15.0]
    """
    V = check_matrix(values, caller="group_mean", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    counts = np.bincount(lab).astype(np.float64)
    sums = np.zeros((counts.size, V.shape[1]))
    np.add.at(sums, lab, V)
    return (sums / counts[:, None])[lab]


@njit(cache=True)
def _segment_stat(V, order, starts, stat):  # pragma: no cover - numba
    p = V.shape[1]
    g = starts.shape[0] - 1
    rep = np.empty((g, p))
    for j in range(p):
        for t in range(g):
            seg = np.empty(starts[t + 1] - starts[t])
            for u in range(seg.shape[0]):
                seg[u] = V[order[starts[t] + u], j]
            seg.sort()
            if stat == 0:  # median: mean of the two middle values for an even size
                h = seg.shape[0] // 2
                rep[t, j] = seg[h] if seg.shape[0] % 2 == 1 else 0.5 * (seg[h - 1] + seg[h])
            else:  # mode: most frequent value, the smallest on ties
                best = seg[0]
                best_run = 0
                u = 0
                while u < seg.shape[0]:
                    w = u
                    while w < seg.shape[0] and seg[w] == seg[u]:
                        w += 1
                    if w - u > best_run:
                        best_run = w - u
                        best = seg[u]
                    u = w
                rep[t, j] = best
    return rep


def group_median(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
                 ) -> NDArray[np.float64]:
    """Replace each value by the median of its group (mean of the two middle values if even).

    Examples
    --------
    >>> group_median([[1.0], [2.0], [9.0], [5.0], [6.0], [7.0]], [0, 0, 0, 1, 1, 1]).ravel().tolist()
    [2.0, 2.0, 2.0, 6.0, 6.0, 6.0]
    """
    V = check_matrix(values, caller="group_median", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    order, starts = _segments(lab)
    return _segment_stat(V, order, starts, 0)[lab]


def group_mode(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
               ) -> NDArray[np.float64]:
    """Replace each value by the most frequent value of its group (smallest on ties).

    Meant for discrete columns (counts, codes); the representative is always a value that
    occurs in the data.

    Examples
    --------
    >>> group_mode([[1.0], [2.0], [2.0], [5.0], [6.0], [7.0]], [0, 0, 0, 1, 1, 1]).ravel().tolist()
    [2.0, 2.0, 2.0, 5.0, 5.0, 5.0]
    """
    V = check_matrix(values, caller="group_mode", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    order, starts = _segments(lab)
    return _segment_stat(V, order, starts, 1)[lab]


AGGREGATORS: Mapping[str, Callable[..., NDArray[np.float64]]] = MappingProxyType({
    "mean": group_mean,
    "median": group_median,
    "mode": group_mode,
})
"""Registered aggregators by name (read-only)."""


def aggregate(values: ArrayLike, labels: ArrayLike, *, method: str = "mean",
              random_state: RandomState = None, **params: Any) -> NDArray[np.float64]:
    """Aggregate each group of ``values`` with the named aggregator (see :data:`AGGREGATORS`)."""
    try:
        func = AGGREGATORS[method]
    except KeyError:
        raise ValueError(
            f"Unknown aggregation {method!r}. Valid aggregations: {', '.join(sorted(AGGREGATORS))}."
        ) from None
    return func(values, labels, random_state=random_state, **params)
