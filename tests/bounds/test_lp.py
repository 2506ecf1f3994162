"""The master LP kept in one HiGHS model between solves: after columns and cuts are added in
steps, each solve equals a solve from scratch (scipy's linprog) and its duals certify it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from microagg.bounds._cuts import SubsetRowCuts
from microagg.bounds._lp import PROBE, SLOW
from microagg.bounds._master import ColumnPool, solve_master
from microagg.bounds._pricing import neighbours
from microagg.partition import partition


def scratch(pool: ColumnPool, cuts: SubsetRowCuts | None) -> float:
    """The LP's value solved from the slack basis."""
    rows = {} if not cuts else {"A_ub": cuts.activation(pool.members),
                                "b_ub": np.ones(len(cuts))}
    res = linprog(np.asarray(pool.costs), A_eq=pool.matrix(), b_eq=np.ones(pool.X.shape[0]),
                  bounds=(0, None), method="highs", **rows)
    assert res.status == 0
    return float(res.fun)


def check_certified(pool: ColumnPool, cuts: SubsetRowCuts | None, lp) -> None:
    """Strong duality and dual feasibility: ``sum(u) - sum(sigma)`` is the value and no
    column has a negative reduced cost ``c - u(S) + sigma(S)``."""
    penalty = cuts.penalties(pool.members, lp.sigma) if cuts else np.zeros(len(pool.members))
    rc = np.asarray(pool.costs) - np.array([lp.u[g].sum() for g in pool.members]) + penalty
    assert rc.min() >= -1e-7
    assert lp.u.sum() - lp.sigma.sum() == pytest.approx(lp.value, abs=1e-7)
    assert (lp.sigma >= 0).all()
    assert lp.x.min() >= -1e-9 and lp.x.size == len(pool.members)


@pytest.mark.parametrize("seed", range(4))
def test_warm_solves_equal_solves_from_scratch(seed: int) -> None:
    """Columns arrive in batches and cuts are separated twice; every solve of the kept
    model has the value of a fresh solve of the same LP, and its duals prove it."""
    rng = np.random.default_rng(seed)
    n, k = 40, 3
    X = rng.normal(size=(n, 2))
    pool = ColumnPool(X)
    pool.add_partition(partition(X, k, method="mdav"))
    _, nbr = neighbours(X, 2 * k)
    batches = [nbr[:, :k], nbr[:, [0, 2, 3]], nbr[:, [0, 1, 3]], nbr[:, :k + 1]]
    cuts = SubsetRowCuts(n)
    for step, batch in enumerate(batches):
        for group in batch:
            pool.add(group)
        lp = solve_master(pool, cuts)
        assert lp.value == pytest.approx(scratch(pool, cuts), rel=1e-9, abs=1e-9)
        check_certified(pool, cuts, lp)
        if step in (1, 2):
            cuts.separate(pool.members, lp.x)
    model = pool.lp
    assert model is not None and model.columns == len(pool.members)
    assert model.cut_rows == len(cuts)


def test_other_cuts_start_a_new_model() -> None:
    """A solve without cuts after cut rows were added (or with another cuts object) is
    the LP without them, from a new model."""
    rng = np.random.default_rng(7)
    X = np.repeat(rng.normal(scale=20, size=(4, 2)), 4, axis=0) + rng.normal(size=(16, 2))
    pool = ColumnPool(X)
    for c in range(4):  # each cluster's four triples: the LP mixes them, cuts are violated
        rows = np.arange(4 * c, 4 * c + 4)
        for drop in range(4):
            pool.add(np.delete(rows, drop))
    cuts = SubsetRowCuts(16)
    plain = solve_master(pool, cuts)
    assert cuts.separate(pool.members, plain.x) > 0
    for c in range(4):
        pool.add(np.arange(4 * c, 4 * c + 4))
    with_cuts = solve_master(pool, cuts)
    first = pool.lp
    again = solve_master(pool)
    assert pool.lp is not first
    assert again.value == pytest.approx(scratch(pool, None), rel=1e-9)
    assert with_cuts.value == pytest.approx(scratch(pool, cuts), rel=1e-9)
    check_certified(pool, None, again)


def test_the_solver_choice() -> None:
    """Small masters use the simplex alone (deterministic); once a simplex solve takes
    SLOW seconds the interior point method is timed too, the faster is used and the slower
    tried again every PROBE solves; both give the LP's value."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 2))
    pool = ColumnPool(X)
    pool.add_partition(partition(X, 3, method="mdav"))
    for group in neighbours(X, 3)[1]:
        pool.add(group)
    solve_master(pool)
    model = pool.lp
    assert model is not None and set(model.seconds) == {"simplex"}
    model.seconds = {"simplex": SLOW}
    assert model._solver() == "ipm"
    model.seconds = {"simplex": 2.0, "ipm": 1.0}
    chosen = [model._solver() for _ in range(2 * PROBE)]
    assert chosen.count("simplex") == 2 and chosen.count("ipm") == 2 * PROBE - 2
    for solver in ("ipm", "simplex"):
        model.seconds = {"simplex": 1.0, "ipm": 1.0}
        model.seconds[solver] = 0.5
        model.solves = 1
        lp = solve_master(pool)
        assert model.model.getOptionValue("solver")[1] == solver
        assert lp.value == pytest.approx(scratch(pool, None), rel=1e-9)
        check_certified(pool, None, lp)
