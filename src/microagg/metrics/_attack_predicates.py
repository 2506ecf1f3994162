"""Singling-out predicates: conjunctions of ``column == v``, ``<= v``, ``>= v`` built from a
release and counted on a table. Validation is assumed (see :mod:`.attacks`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._attack_kernel import PARALLEL_WORK, SortedColumns, count_first, count_first_serial

__all__ = ["Predicates", "SortedColumns", "Table", "count_matches", "first_matches",
           "holds_on", "multivariate", "random_predicates", "sort_columns", "univariate"]

EQ, LE, GE = 0, 1, 2


class Predicates:
    """``m`` predicates of ``c`` conditions each: ``columns``, ``ops`` (0 ``==``, 1 ``<=``,
    2 ``>=``) and ``values``, all of shape (m, c). A predicate of fewer conditions repeats
    its first one (a conjunction is unchanged by a repeated condition)."""

    __slots__ = ("columns", "ops", "values")

    def __init__(self, columns: NDArray[np.intp], ops: NDArray[np.intp],
                 values: NDArray[np.float64]) -> None:
        self.columns, self.ops, self.values = columns, ops, values

    def __len__(self) -> int:
        return int(self.columns.shape[0])

    def take(self, keep: NDArray[np.intp] | NDArray[np.bool_]) -> Predicates:
        return Predicates(self.columns[keep], self.ops[keep], self.values[keep])


def _bounds(pred: Predicates) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each condition as an interval ``[low, high]`` (``==`` is ``[v, v]``, ``<=`` is
    ``[-inf, v]``, ``>=`` is ``[v, inf]``): two comparisons per cell."""
    low = np.where(pred.ops == LE, -np.inf, pred.values)
    high = np.where(pred.ops == GE, np.inf, pred.values)
    return low, high


Table = NDArray[np.float64] | SortedColumns
"""A table predicates are counted on: its float array, or its columns sorted once
(:class:`SortedColumns`, for a table counted on several times)."""


def sort_columns(X: Table) -> SortedColumns:
    """``X``'s columns sorted once (``X`` itself when it already is)."""
    return X if isinstance(X, SortedColumns) else SortedColumns(X)


def _scan(X: Table, pred: Predicates, at_most: int | None
          ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """How many rows of ``X`` each predicate matches (up to ``at_most``; all with
    ``None``), and the first row it matches (0 when none; exact when the count is below
    ``at_most``): :func:`._attack_kernel.count_first` on the columns sorted once (on
numba's threads for large work only, :data:`._attack_kernel.PARALLEL_WORK`)."""
    table = sort_columns(X)
    if len(pred) == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    low, high = _bounds(pred)
    limit = table.table.shape[0] + 1 if at_most is None else max(1, int(at_most))
    kernel = count_first if len(pred) * table.table.shape[0] > PARALLEL_WORK \
        else count_first_serial
    count, first = kernel(table.table, table.values, table.order, table.n_valid,
                          np.ascontiguousarray(pred.columns, dtype=np.intp),
                          np.ascontiguousarray(low), np.ascontiguousarray(high), limit)
    return np.asarray(count, dtype=np.intp), np.asarray(first, dtype=np.intp)


def count_matches(X: Table, pred: Predicates, at_most: int | None = None) -> NDArray[np.intp]:
    """How many rows of ``X`` each predicate matches (a NaN cell matches no condition);
    with ``at_most``, the counts stop there (``min(count, at_most)``: whether a predicate
    singles out one row needs ``at_most=2``, and the search of a predicate stops at its
    second match)."""
    return _scan(X, pred, at_most)[0]


def first_matches(X: Table, pred: Predicates) -> NDArray[np.intp]:
    """The first row of ``X`` each predicate matches (0 for a predicate matching none): for
    a predicate that singles out one row, that row."""
    return _scan(X, pred, None)[1]


def holds_on(rows: NDArray[np.float64], pred: Predicates) -> NDArray[np.bool_]:
    """Whether predicate ``i`` holds for row ``i`` of ``rows`` (shape (m, p))."""
    low, high = _bounds(pred)
    cells = np.take_along_axis(rows, pred.columns, axis=1)
    return np.asarray(((cells >= low) & (cells <= high)).all(axis=1), dtype=bool)


def univariate(X: NDArray[np.float64], categorical: NDArray[np.bool_]) -> Predicates:
    """Every one-condition predicate that singles out one row of ``X``: a value held by one
    row only (``==``), and for a numeric column ``<= min`` / ``>= max`` when one row holds
    the extreme (anonymeter's univariate queries)."""
    cols: list[int] = []
    ops: list[int] = []
    vals: list[float] = []
    for j in range(X.shape[1]):
        column = X[:, j]
        column = column[~np.isnan(column)]
        if column.size == 0:
            continue
        values, counts = np.unique(column, return_counts=True)
        rare = values[counts == 1]
        cols += [j] * rare.size
        ops += [EQ] * rare.size
        vals += rare.tolist()
        if not categorical[j] and values.size > 1:
            for op, at in ((LE, 0), (GE, -1)):
                if counts[at] == 1 and values[at] not in rare:
                    cols.append(j)
                    ops.append(op)
                    vals.append(float(values[at]))
    shape = (len(cols), 1)
    return Predicates(np.asarray(cols, dtype=np.intp).reshape(shape),
                      np.asarray(ops, dtype=np.intp).reshape(shape),
                      np.asarray(vals, dtype=np.float64).reshape(shape))


def _draw(X: NDArray[np.float64], categorical: NDArray[np.bool_], size: int, n_conditions: int,
          rng: np.random.Generator, *, marginal: bool) -> Predicates:
    """``size`` predicates on ``n_conditions`` distinct columns: the values of one random
    row of ``X`` (or, with ``marginal``, of an independent random row per column: the
    baseline's guess), ``==`` on a categorical column, ``<=`` or ``>=`` at random on a
    numeric one."""
    n, p = X.shape
    cols = np.argsort(rng.random((size, p)), axis=1)[:, :n_conditions].astype(np.intp)
    rows = rng.integers(0, n, size=(size, n_conditions) if marginal else (size, 1))
    rows = np.broadcast_to(rows, cols.shape)
    vals = X[rows, cols]
    ops = np.where(categorical[cols], EQ, rng.integers(LE, GE + 1, size=cols.shape))
    return Predicates(cols, ops.astype(np.intp), vals)


def multivariate(X: NDArray[np.float64], categorical: NDArray[np.bool_], n_predicates: int,
                 n_conditions: int, rng: np.random.Generator,
                 max_rounds: int = 10) -> Predicates:
    """Up to ``n_predicates`` distinct predicates of ``n_conditions`` conditions, each built
    from one row of ``X`` and singling out exactly that row in ``X`` (anonymeter's
    multivariate queries), drawn in rounds of ``n_predicates`` candidates (at most twice
    the rows of ``X``: a small file has few distinct predicates); a round that finds no new
    one ends the search."""
    kept: list[Predicates] = []
    seen: set[bytes] = set()
    total = 0
    size = max(1, min(n_predicates, 2 * X.shape[0]))
    table = sort_columns(X)
    for _ in range(max_rounds):
        cand = _draw(X, categorical, size, n_conditions, rng, marginal=False)
        cand = cand.take(np.flatnonzero(count_matches(table, cand, at_most=2) == 1))
        keys = [cand.columns[i].tobytes() + cand.ops[i].tobytes() + cand.values[i].tobytes()
                for i in range(len(cand))]
        fresh = []
        for i, key in enumerate(keys):
            if key not in seen:
                seen.add(key)
                fresh.append(i)
        cand = cand.take(np.asarray(fresh[:n_predicates - total], dtype=np.intp))
        kept.append(cand)
        total += len(cand)
        if total >= n_predicates or not len(cand):
            break
    return Predicates(np.concatenate([k.columns for k in kept]),
                      np.concatenate([k.ops for k in kept]),
                      np.concatenate([k.values for k in kept]))


def random_predicates(X: NDArray[np.float64], categorical: NDArray[np.bool_], size: int,
                      n_conditions: int, rng: np.random.Generator) -> Predicates:
    """The baseline's predicates: each column's value from its own random row of ``X``,
    not checked to single out anyone."""
    return _draw(X, categorical, size, n_conditions, rng, marginal=True)
