"""Subset-row cuts: their pricing against brute force, and bounds that stay below the
integer optimum while rising above the LP relaxation."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

from microagg.bounds._cuts import SubsetRowCuts
from microagg.bounds._exact import exact_pricing
from microagg.bounds._master import (
    ColumnPool,
    Progress,
    _Point,
    _Pricer,
    enumeration_rounds,
    incumbents,
    solve_master,
)
from microagg.bounds._pricing import brute_force_columns, knn_table, sse_of
from microagg.partition import partition

from .test_bounds import full_lp


def integer_optimum(X: np.ndarray, k: int) -> float:
    """The least SSE of a partition into groups of k .. 2k-1 rows (every group a column)."""
    cols = brute_force_columns(X.shape[0], k)
    A = np.zeros((X.shape[0], len(cols)))
    for j, S in enumerate(cols):
        A[list(S), j] = 1.0
    res = milp([sse_of(X, np.asarray(S)) for S in cols], integrality=np.ones(len(cols)),
               constraints=LinearConstraint(A, 1.0, 1.0), bounds=Bounds(0.0, 1.0))
    return float(res.fun)


def penalty(group: tuple[int, ...], cuts: list[tuple[int, int, int]],
            sigma: np.ndarray) -> float:
    """The duals of the cuts holding two or more of the group's rows."""
    return float(sum(s for cut, s in zip(cuts, sigma, strict=True)
                     if len(set(cut) & set(group)) >= 2))


def brute_rho_with_cuts(X: np.ndarray, u: np.ndarray, k: int, cuts: list, sigma: np.ndarray
                        ) -> np.ndarray:
    """``min rc'(T) / k`` over the groups T of k rows holding i, less a third of each cut's
    ``gap_c = min(0, min rc'(S) - rho(S))`` over the groups S of k + 1 .. 2k-1 rows that hold
    the cut's three rows, for the cuts holding i."""
    cost = {S: sse_of(X, np.asarray(S)) - u[list(S)].sum() + penalty(S, cuts, sigma)
            for S in brute_force_columns(X.shape[0], k)}
    rho = np.full(X.shape[0], np.inf)
    for S, value in cost.items():
        if len(S) == k:
            rho[list(S)] = np.minimum(rho[list(S)], value / k)
    out = rho.copy()
    for cut, s in zip(cuts, sigma, strict=True):
        if s > 0:
            gap = min([0.0, *(value - rho[list(S)].sum() for S, value in cost.items()
                              if len(S) > k and set(cut) <= set(S))])
            out[list(cut)] += gap / 3.0
    return out


def random_cuts(n: int, count: int, rng: np.random.Generator) -> SubsetRowCuts:
    cuts = SubsetRowCuts(n)
    for triple in {tuple(sorted(rng.choice(n, 3, replace=False).tolist())) for _ in range(count)}:
        cuts.triples.append(triple)
        cuts.seen.add(triple)
    return cuts


def test_activation_counts_two_rows_of_a_cut() -> None:
    cuts = SubsetRowCuts(6)
    cuts.triples = [(0, 1, 2), (3, 4, 5)]
    groups = [np.array([0, 1]), np.array([0, 3, 4]), np.array([2, 5]), np.array([0, 1, 2, 3])]
    got = cuts.activation(groups).toarray()
    np.testing.assert_array_equal(got, [[1, 0, 0, 1], [0, 1, 0, 0]])
    np.testing.assert_allclose(cuts.penalties(groups, np.array([0.5, 2.0])), [0.5, 2, 0, 0.5])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("budget", [200_000, 3])
def test_pricing_with_cuts_against_brute_force(seed: int, budget: int) -> None:
    """With cut duals the groups of k rows give rho, and the larger groups holding a cut's
    three rows lower its rows' rho by a third of its gap: the brute-force values (budget 3:
    a lower bound on them); the bound subtracts the duals, and ``(u + rho, sigma)`` leaves
    no group of any size k .. 2k-1 with a negative reduced cost."""
    rng = np.random.default_rng(seed)
    n, k = 10, 2 + seed % 2
    X = rng.normal(size=(n, 2))
    u = rng.uniform(0, 1.5, size=n)
    cuts = random_cuts(n, 8, rng)
    sigma = rng.uniform(0, 0.5, size=len(cuts))
    truth = brute_rho_with_cuts(X, u, k, cuts.triples, sigma)
    priced = exact_pricing(X, u, knn_table(X, k), k, np.full(n, np.inf), budget,
                           cuts=cuts.duals(sigma))
    if budget > 1000:
        assert priced.exact
        np.testing.assert_allclose(priced.rho, truth, rtol=1e-9, atol=1e-12)
    assert np.all(priced.rho <= truth + 1e-9)
    assert priced.bound == pytest.approx(u.sum() - sigma.sum() + priced.rho.sum(), abs=1e-9)
    lifted = u + priced.rho
    for S in brute_force_columns(n, k):
        rc = sse_of(X, np.asarray(S)) - lifted[list(S)].sum() + penalty(S, cuts.triples, sigma)
        assert rc >= -1e-9
    for group in priced.found:
        assert sse_of(X, group) - u[group].sum() + penalty(tuple(group), cuts.triples,
                                                           sigma) < 0


def test_cut_gaps_keep_every_group_feasible() -> None:
    """Beyond k rows only groups that hold a cut's three rows are priced, cut by cut. On
    random data with many cuts the result is the brute-force one, ``(u + rho, sigma)``
    leaves no group of k .. 2k-1 rows with a negative ``rc'``, and some rows' rho is above
    the least ``rc'/|S|`` over every group holding them (that minimum is feasible too, but
    lower)."""
    raised = 0
    for seed in range(12):
        rng = np.random.default_rng(100 + seed)
        n, k = 9, 2 + seed % 3
        X = rng.normal(size=(n, 2))
        u = rng.uniform(0, 2.0, size=n)
        cuts = random_cuts(n, 12, rng)
        sigma = rng.uniform(0, 0.8, size=len(cuts))
        priced = exact_pricing(X, u, knn_table(X, k), k, np.full(n, np.inf), 10**7,
                               cuts=cuts.duals(sigma))
        np.testing.assert_allclose(priced.rho, brute_rho_with_cuts(X, u, k, cuts.triples, sigma),
                                   rtol=1e-9, atol=1e-12)
        every = np.full(n, np.inf)
        lifted = u + priced.rho
        for S in brute_force_columns(n, k):
            cost = sse_of(X, np.asarray(S)) + penalty(S, cuts.triples, sigma)
            every[list(S)] = np.minimum(every[list(S)], (cost - u[list(S)].sum()) / len(S))
            assert cost - lifted[list(S)].sum() >= -1e-9
        raised += int((priced.rho > every + 1e-12).sum())
    assert raised > 0


@pytest.mark.parametrize("seed", range(6))
def test_lift_with_cuts_stays_dual_feasible(seed: int) -> None:
    """A lifting round at a dual feasible point with cut duals (the k-NN point: its duals
    only add to every group's reduced cost) returns a point that is dual feasible for every
    group of k .. 2k-1 rows, with a bound at least the centre's: the cuts' gaps may take
    back what the rows' fall-backs raised to 0 gave, and then the centre is kept."""
    rng = np.random.default_rng(200 + seed)
    n, k = 9, 2 + seed % 2
    X = rng.normal(size=(n, 2))
    table = knn_table(X, k)
    cuts = random_cuts(n, 12, rng)
    pool = ColumnPool(X)
    pool.add_partition(partition(X, k, method="mdav"))
    pricer = _Pricer(X, k, pool, table, np.inf, 50, 10**7, cuts=cuts)
    center = _Point(table[:, k - 1] / (2.0 * k), rng.uniform(0, 0.8, size=len(cuts)))
    bound, lifted = pricer.lift(center)
    assert bound >= center.value() - 1e-9
    assert bound == pytest.approx(lifted.value(), abs=1e-6)
    for S in brute_force_columns(n, k):
        cost = sse_of(X, np.asarray(S)) + penalty(S, cuts.triples, lifted.sigma)
        assert cost - lifted.u[list(S)].sum() >= -1e-9


def test_incumbents_with_cuts_are_groups_values() -> None:
    """Each row's incumbent is rc'/k of a real group of k rows holding it (larger groups are
    priced through the cuts, not as incumbents)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(9, 2))
    pool = ColumnPool(X)
    pool.add(np.array([0, 1, 2, 3]))
    pool.add(np.array([0, 4, 5]))
    pool.add(np.array([0, 1, 7]))
    cuts = random_cuts(9, 5, rng)
    sigma = rng.uniform(0, 1, size=len(cuts))
    u = rng.uniform(0, 1, size=9)
    got = incumbents(pool, u, 3, (), (cuts, sigma))
    values = [(sse_of(X, g) - u[g].sum() + penalty(tuple(g), cuts.triples, sigma)) / 3
              for g in pool.members[1:]]
    assert got[0] == pytest.approx(min(values))
    assert got[4] == pytest.approx(values[0]) and got[7] == pytest.approx(values[1])
    assert got[1] == pytest.approx(values[1])
    assert np.isinf(got[2]) and np.isinf(got[6])


def clusters_of_four(seed: int) -> np.ndarray:
    """Tight clusters of four rows, far apart: at k = 3 the LP covers each cluster with
    its four triples at 1/3 (8/9 of the cluster's SSE), the integer optimum takes it whole."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
    return np.repeat(centres, 4, axis=0) + rng.normal(scale=1.0, size=(12, 2))


def test_separation_finds_the_fractional_cluster() -> None:
    """The master over a cluster's four triples (x = 1/3 each) violates the cut of any
    three of its rows; with the cuts and the whole cluster as a column, the LP takes it."""
    X = clusters_of_four(0)[:4]
    pool = ColumnPool(X)
    for triple in combinations(range(4), 3):
        pool.add(np.array(triple))
    cuts = SubsetRowCuts(4)
    lp = solve_master(pool, cuts)
    assert lp.value == pytest.approx(8 / 9 * sse_of(X, np.arange(4)), rel=1e-9)
    assert cuts.separate(pool.members, lp.x) == 4
    assert cuts.separate(pool.members, lp.x) == 0  # each cut once
    pool.add(np.arange(4))
    lp = solve_master(pool, cuts)
    assert lp.value == pytest.approx(sse_of(X, np.arange(4)), rel=1e-9)
    assert lp.sigma.shape == (4,) and np.all(lp.sigma >= 0)


@pytest.mark.parametrize("seed", range(3))
def test_rounds_with_cuts_close_the_integrality_gap(seed: int) -> None:
    """Clusters of four at k = 3: the rounds with cuts end above the LP relaxation over
    every group, and never above the integer optimum (brute force)."""
    X = clusters_of_four(seed)
    k = 3
    pool = ColumnPool(X)
    pool.add_partition(partition(X, k, method="mdav"))
    lp, opt = full_lp(X, k), integer_optimum(X, k)
    assert lp < 0.95 * opt  # the gap the cuts are for
    prog = Progress()
    best = enumeration_rounds(X, k, pool, prog, time_limit=30.0, max_new=50, smooth=True,
                              cuts=True)
    assert lp * (1 + 1e-6) < best <= opt * (1 + 1e-9)
    assert prog.exact  # no negative group and no violated cut left
    assert best == pytest.approx(opt, rel=1e-6)


@pytest.mark.parametrize(("seed", "n", "k"), [(0, 12, 2), (1, 12, 3)])
def test_rounds_with_cuts_below_integer_optimum(seed: int, n: int, k: int) -> None:
    """Random data: every round's bound with cuts is proved (below the integer optimum),
    and the lifting from a point with cut duals keeps them."""
    X = np.random.default_rng(seed).normal(size=(n, 2))
    pool = ColumnPool(X)
    pool.add_partition(partition(X, k, method="mdav"))
    best = enumeration_rounds(X, k, pool, Progress(), time_limit=10.0, max_new=50,
                              smooth=True, cuts=True)
    assert best <= integer_optimum(X, k) * (1 + 1e-9)
    assert best >= full_lp(X, k) * (1 - 1e-6)  # the rounds reach the LP, cuts only add
    cuts = random_cuts(n, 6, np.random.default_rng(seed))
    pricer = _Pricer(X, k, pool, knn_table(X, k), np.inf, 50, 200_000, cuts=cuts)
    start = _Point(knn_table(X, k)[:, k - 1] / (2.0 * k), np.full(len(cuts), 0.01))
    bound, lifted = pricer.lift(start)
    assert bound <= integer_optimum(X, k) * (1 + 1e-9)
    assert lifted.sigma is start.sigma
