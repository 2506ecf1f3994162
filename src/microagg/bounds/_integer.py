"""The integer master: the set-partitioning problem restricted to the columns generated, solved
by HiGHS's branch and bound (the "restricted master heuristic" of column generation; see
Joncour, Michel, Sadykov, Sverdlov and Vanderbeck, "Column generation based primal
heuristics", Electron. Notes Discrete Math. 36 (2010))."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import Bounds, LinearConstraint, milp

from ._master import ColumnPool

__all__ = ["integer_master"]


def integer_master(pool: ColumnPool, time_limit: float) -> NDArray[np.intp] | None:
    """The lowest-SSE partition made of the pool's groups that HiGHS finds within
    ``time_limit`` seconds, as labels; ``None`` when it finds none in time.

    Every row must lie in exactly one chosen group: ``min c x, A x = 1, x in {0, 1}``. The
    answer is checked (each row covered once) before it is returned."""
    n = pool.X.shape[0]
    width = len(pool.members)
    res = milp(np.asarray(pool.costs), constraints=LinearConstraint(pool.matrix(), 1.0, 1.0),
               integrality=np.ones(width), bounds=Bounds(0.0, 1.0),
               options={"time_limit": max(float(time_limit), 1.0), "disp": False})
    if res.x is None:
        return None
    labels = np.full(n, -1, dtype=np.intp)
    for g, j in enumerate(np.flatnonzero(res.x > 0.5)):
        if (labels[pool.members[j]] >= 0).any():
            return None  # a row covered twice: not a partition (numerical trouble)
        labels[pool.members[j]] = g
    return None if (labels < 0).any() else labels
