"""The integer master: the set-partitioning problem restricted to the columns generated, solved
by HiGHS's branch and bound (the "restricted master heuristic" of column generation; see
Joncour, Michel, Sadykov, Sverdlov and Vanderbeck, "Column generation based primal
heuristics", Electron. Notes Discrete Math. 36 (2010))."""

from __future__ import annotations

import numpy as np
from highspy import HighsVarType, SolutionStatus
from numpy.typing import NDArray

from ._lp import add_columns, partitioning_model
from ._master import ColumnPool, groups_of

__all__ = ["integer_master"]


def integer_master(pool: ColumnPool, time_limit: float,
                   start: NDArray[np.intp] | None = None) -> NDArray[np.intp] | None:
    """The lowest-SSE partition made of the pool's groups that HiGHS finds within
    ``time_limit`` seconds, as labels; ``None`` when it finds none in time (and no
    ``start`` was given).

    Every row must lie in exactly one chosen group: ``min c x, A x = 1, x in {0, 1}``.
    ``start``: labels of a partition whose groups are all in the pool, given to HiGHS as
    its first incumbent; a part too large to solve in time returns at least it (the start
    itself when HiGHS returns nothing). The answer is checked (each row covered once)
    before it is returned."""
    width = len(pool.members)
    model = partitioning_model(pool.X.shape[0])
    model.setOptionValue("time_limit", max(float(time_limit), 1.0))
    add_columns(model, pool.matrix(), np.asarray(pool.costs), upper=1.0)
    model.changeColsIntegrality(width, np.arange(width, dtype=np.int32),
                                np.full(width, int(HighsVarType.kInteger), dtype=np.uint8))
    if start is not None:
        chosen = _columns_of(pool, start)
        model.setSolution(chosen.size, chosen.astype(np.int32), np.ones(chosen.size))
    model.run()
    found = None
    if model.getInfo().primal_solution_status == int(SolutionStatus.kSolutionStatusFeasible):
        found = _partition_of(pool, np.asarray(model.getSolution().col_value))
    if found is None and start is not None:
        return np.unique(start, return_inverse=True)[1].ravel().astype(np.intp)
    return found


def _partition_of(pool: ColumnPool, x: NDArray[np.float64]) -> NDArray[np.intp] | None:
    """Labels of the columns chosen in ``x``; ``None`` unless they cover each row once."""
    labels = np.full(pool.X.shape[0], -1, dtype=np.intp)
    for g, j in enumerate(np.flatnonzero(x > 0.5)):
        if (labels[pool.members[j]] >= 0).any():
            return None  # a row covered twice: not a partition (numerical trouble)
        labels[pool.members[j]] = g
    return None if (labels < 0).any() else labels


def _columns_of(pool: ColumnPool, labels: NDArray[np.intp]) -> NDArray[np.int64]:
    """The pool's columns of the groups of ``labels`` (each must be in the pool)."""
    columns = [pool.column_of(group) for group in groups_of(labels)]
    if None in columns:
        raise ValueError("every group of the start must be a column of the pool; "
                         f"{columns.count(None)} of its {len(columns)} groups are not")
    return np.asarray(columns, dtype=np.int64)
