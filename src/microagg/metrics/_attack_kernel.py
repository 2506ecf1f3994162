"""numba kernel of :mod:`._attack_predicates`: how many rows of a table each conjunctive range
predicate matches, and the first one, from the table's columns sorted once. Validation is
assumed.

Each condition ``low <= x <= high`` on one column is a run of that column's sorted values
(two binary searches; a NaN cell, sorted last, is in no run). The predicate's most selective
condition, its shortest run, gives the candidate rows; only those are checked against the
other conditions. Time ``O(m c log n + sum of the shortest runs)`` for ``m`` predicates of
``c`` conditions on ``n`` rows, against ``O(m c n)`` for comparing every cell.
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numpy.typing import NDArray

from .._runtime.jit import njit

__all__ = ["PARALLEL_WORK", "SortedColumns", "count_first", "count_first_serial"]

PARALLEL_WORK = 50_000_000
"""Predicates times rows above which :func:`count_first` runs on numba's threads. Below,
the work (at most a few milliseconds: 2,000 predicates on 2,000 rows take 1-5 ms) is
smaller than waking the threads on a loaded machine (about 25 ms a call, measured on 2
shared cores), and :func:`count_first_serial` runs in the calling thread."""


class SortedColumns:
    """A table's columns sorted once: ``values`` (p, n) each column's sorted values (NaN
    last), ``order`` (p, n) the rows they come from, ``n_valid`` (p,) the non-NaN cells of
    each column, ``table`` (n, p) the table itself (C-contiguous float64)."""

    __slots__ = ("n_valid", "order", "table", "values")

    def __init__(self, X: NDArray[np.float64]) -> None:
        self.table = np.ascontiguousarray(X, dtype=np.float64)
        order = np.argsort(self.table, axis=0, kind="stable")
        self.order = np.ascontiguousarray(order.T, dtype=np.intp)
        self.values = np.ascontiguousarray(np.take_along_axis(self.table, order, axis=0).T)
        self.n_valid = (~np.isnan(self.table)).sum(axis=0).astype(np.intp)


@njit(cache=True)
def _run(values, n_valid, j, low, high):
    """The run ``[a, b)`` of column ``j``'s sorted values within ``[low, high]`` (an
    infinite bound of ``<=`` / ``>=`` needs no search)."""
    column = values[j, :n_valid[j]]
    a = 0 if low == -np.inf else np.searchsorted(column, low, side="left")
    b = column.shape[0] if high == np.inf else np.searchsorted(column, high, side="right")
    return a, b


@njit(cache=True)
def _holds(table, row, columns, low, high, i):
    """Whether row ``row`` of ``table`` meets every condition of predicate ``i``."""
    for k in range(columns.shape[1]):
        x = table[row, columns[i, k]]
        if not (x >= low[i, k] and x <= high[i, k]):  # a NaN cell meets none
            return False
    return True


@njit(cache=True)
def _count_one(table, values, order, n_valid, columns, low, high, at_most, i):  # noqa: PLR0913 - one kernel, its arrays
    """Predicate ``i``'s matching rows of ``table`` (counted up to ``at_most``) and the
    smallest of them (0 when none): the rows of its shortest run checked against its other
    conditions."""
    best, start, stop = -1, 0, 0
    for k in range(columns.shape[1]):
        if not low[i, k] <= high[i, k]:  # NaN or empty: no row
            return 0, 0
        a, b = _run(values, n_valid, columns[i, k], low[i, k], high[i, k])
        if best < 0 or b - a < stop - start:
            best, start, stop = k, a, b
            if a == b:
                return 0, 0
    j = columns[i, best]
    hits, smallest = 0, table.shape[0]
    for t in range(start, stop):
        row = order[j, t]
        if _holds(table, row, columns, low, high, i):
            hits += 1
            smallest = min(smallest, row)
            if hits >= at_most:
                break
    return hits, smallest if hits else 0


@njit(cache=True, parallel=True)
def count_first(table, values, order, n_valid, columns, low, high, at_most):
    """For each predicate ``i`` (conditions ``low[i, k] <= table[:, columns[i, k]] <=
    high[i, k]``): the rows of ``table`` it matches and the smallest of them (0 when none).
    ``values``, ``order``, ``n_valid`` are :class:`SortedColumns`' arrays of ``table``; a
    condition whose bound is NaN matches no row. The count stops at ``at_most`` (a caller
    asking only whether a predicate singles out one row needs no more than 2), and the
    smallest row is exact when the count is below it. Threads take the predicates in turn."""
    m = columns.shape[0]
    count = np.zeros(m, dtype=np.intp)
    first = np.zeros(m, dtype=np.intp)
    for i in prange(m):
        count[i], first[i] = _count_one(table, values, order, n_valid, columns, low, high,
                                         at_most, i)
    return count, first


@njit(cache=True)
def count_first_serial(table, values, order, n_valid, columns, low, high, at_most):
    """:func:`count_first` in the calling thread, for small work (see
    :data:`PARALLEL_WORK`)."""
    m = columns.shape[0]
    count = np.zeros(m, dtype=np.intp)
    first = np.zeros(m, dtype=np.intp)
    for i in range(m):
        count[i], first[i] = _count_one(table, values, order, n_valid, columns, low, high,
                                         at_most, i)
    return count, first
