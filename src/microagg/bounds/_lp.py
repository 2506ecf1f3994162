"""The restricted master LP, kept in one HiGHS model between solves (validation assumed done).

Column generation solves the master after every pricing round with a few hundred new
columns. The model keeps its rows and columns, so a solve adds only what is new; each solve
starts afresh (``clearSolver``), because the basis of the last one is a poor start on these
degenerate set-partitioning LPs: on Tarragona k = 10 (834 rows), after 400 columns were
added to 4,000-5,000, HiGHS's simplex from the kept basis took 8,000-9,000 iterations
(6-7.5 s) against 7,000-7,800 (3.9-4.8 s) from scratch with presolve.

Neither of HiGHS's two LP solvers wins everywhere (fresh solves of the greedy pricing's
masters, AMD EPYC, 2 cores): the interior point method (with crossover, so the answer is a
vertex as the simplex's) took 1.3-2.4 s where the dual simplex took 3-7.7 s with groups of
10 records (Census and Tarragona, 6,000-13,000 columns), 0.7 s against 1.1-1.8 s at k = 7
and 0.3 s against 0.5-1.3 s at k = 5 (Census, Tarragona), but 2.3 s against 0.5 s on EIA
at k = 5 (20,000-26,000 columns) and 0.15 s against 0.05-0.16 s on Census at k = 3. So
:class:`MasterLP` times each once the simplex gets slow (:data:`SLOW`) and uses the faster,
trying the other again every :data:`PROBE` solves.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csc_matrix, vstack

from ._cuts import SubsetRowCuts, incidence

if TYPE_CHECKING:
    from collections.abc import Sequence

try:  # the bare model: highspy.Highs adds Python callbacks whose set-up prints a banner
    from highspy._core import _Highs as _Model  # on stdout (fd 1), once per process
except ImportError:  # pragma: no cover - another layout of highspy
    from highspy import Highs as _Model

from highspy import HighsModelStatus, kHighsInf

__all__ = ["PROBE", "SLOW", "MasterLP", "MasterSolution", "add_columns", "partitioning_model"]

SOLVERS = ("simplex", "ipm")
PROBE = 8
"""Every this many solves :class:`MasterLP` times the solver it found slower again."""
SLOW = 0.25
"""Seconds of a simplex solve from which :class:`MasterLP` times the interior point method
too (below, on small masters such as the tests', the simplex alone: deterministic)."""


def partitioning_model(n: int) -> _Model:
    """A silent HiGHS model with the ``n`` partitioning rows ``= 1``, empty: columns bring
    their entries (:func:`add_columns`)."""
    model = _Model()
    model.setOptionValue("output_flag", False)
    model.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(n, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
    return model


def add_columns(model: _Model, block: csc_matrix, costs: NDArray[np.float64],
                upper: float = kHighsInf) -> None:
    """Columns ``0 <= x <= upper`` with ``costs`` and the entries of ``block`` (one column
    per group: its rows, then any cut rows)."""
    block = block.tocsc()
    block.sort_indices()
    width = block.shape[1]
    model.addCols(width, np.asarray(costs, dtype=np.float64), np.zeros(width),
                  np.full(width, upper), block.nnz, block.indptr[:-1].astype(np.int32),
                  block.indices.astype(np.int32), block.data.astype(np.float64))


class MasterSolution(NamedTuple):
    """The restricted master LP's value, row duals ``u``, columns ``x`` and cut duals
    ``sigma >= 0`` (one per cut; the ``<=`` rows' duals are ``-sigma``)."""

    value: float
    u: NDArray[np.float64]
    x: NDArray[np.float64]
    sigma: NDArray[np.float64]


class MasterLP:
    """``min c x, A x = 1, C x <= 1, x >= 0`` over a pool's groups (``A``: rows of each
    group; ``C``: the subset-row cuts each group turns on), grown in place.

    :meth:`solve` first adds what the pool and the cuts gained since the last solve. Columns
    and cuts are only ever appended; a solve with another cuts object, or none after some,
    starts a new model (the caller's :func:`~microagg.bounds._master.solve_master` does).
    """

    def __init__(self, n: int, cuts: SubsetRowCuts | None) -> None:
        self.n = n
        self.cuts = cuts
        self.columns = 0
        self.cut_rows = 0
        self.model = partitioning_model(n)
        self.seconds: dict[str, float] = {}  # each solver's last time
        self.solves = 0

    def fits(self, cuts: SubsetRowCuts | None) -> bool:
        """Whether this model can go on with ``cuts``: the same object, or any while it
        holds no cut row."""
        return cuts is self.cuts or self.cut_rows == 0

    def solve(self, members: Sequence[NDArray[np.intp]], costs: Sequence[float],
              cuts: SubsetRowCuts | None) -> MasterSolution:
        """Add the new cuts and columns, solve afresh, return the solution."""
        self.cuts = cuts
        if cuts is not None:
            self._add_cuts(members)
        self._add_columns(members, costs)
        solver = self._solver()
        status = self._run(solver)
        if status != HighsModelStatus.kOptimal:  # the other solver before giving up
            status = self._run("simplex" if solver == "ipm" else "ipm")
        if status != HighsModelStatus.kOptimal:
            raise RuntimeError("the restricted master LP failed: "
                               f"{self.model.modelStatusToString(status)}")
        sol = self.model.getSolution()
        duals = np.asarray(sol.row_dual, dtype=np.float64)
        value = float(self.model.getInfo().objective_function_value)
        return MasterSolution(value, duals[:self.n].copy(),
                              np.asarray(sol.col_value, dtype=np.float64),
                              np.maximum(-duals[self.n:], 0.0))

    def _solver(self) -> str:
        """The solver of this solve: the simplex while its solves take under :data:`SLOW`
        seconds (the choice, hence the path of the column generation, then depends on
        nothing but the data); once one takes longer, the interior point method is timed
        too, and the faster of the two is used, the slower again every :data:`PROBE`
        solves."""
        self.solves += 1
        if "ipm" not in self.seconds:
            return "ipm" if self.seconds.get("simplex", 0.0) >= SLOW else "simplex"
        fast, slow = sorted(SOLVERS, key=self.seconds.__getitem__)
        return slow if self.solves % PROBE == 0 else fast

    def _run(self, solver: str) -> HighsModelStatus:
        """One solve from scratch with ``solver``, timed."""
        self.model.clearSolver()
        self.model.setOptionValue("solver", solver)
        start = time.perf_counter()
        self.model.run()
        self.seconds[solver] = time.perf_counter() - start
        return self.model.getModelStatus()

    def _add_cuts(self, members: Sequence[NDArray[np.intp]]) -> None:
        """Rows ``<= 1`` for the cuts separated since the last solve, over the columns
        already in the model."""
        assert self.cuts is not None
        new = self.cuts.triples[self.cut_rows:]
        if not new:
            return
        fresh = SubsetRowCuts(self.n, list(new))
        act = fresh.activation(list(members[:self.columns])).tocsr()
        self.model.addRows(len(new), np.full(len(new), -kHighsInf), np.ones(len(new)),
                           act.nnz, act.indptr[:-1].astype(np.int32),
                           act.indices.astype(np.int32), act.data.astype(np.float64))
        self.cut_rows += len(new)

    def _add_columns(self, members: Sequence[NDArray[np.intp]],
                     costs: Sequence[float]) -> None:
        """The pool's columns added since the last solve, with their cut entries."""
        groups = list(members[self.columns:])
        if not groups:
            return
        block = incidence(groups, self.n)
        if self.cut_rows:
            assert self.cuts is not None
            block = vstack([block, self.cuts.activation(groups)])
        add_columns(self.model, block, np.asarray(costs[self.columns:]))
        self.columns += len(groups)
