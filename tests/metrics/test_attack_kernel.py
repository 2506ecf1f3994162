"""The sorted-column predicate counter (:mod:`microagg.metrics._attack_kernel`) against a
brute force that compares every cell: random tables with ties, NaN and infinities, random
predicates (NaN bounds, repeated conditions, empty ones), the counts and the first rows
exactly."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.metrics import _attack_kernel as kernel
from microagg.metrics import _attack_predicates as pred


def _brute(X: np.ndarray, p: pred.Predicates) -> tuple[list[int], list[int]]:
    """Every cell compared: ``==`` / ``<=`` / ``>=`` by Python's float comparisons (a NaN
    compares false), the first matching row (0 when none)."""
    test = {pred.EQ: lambda a, b: a == b, pred.LE: lambda a, b: a <= b,
            pred.GE: lambda a, b: a >= b}
    counts, firsts = [], []
    for i in range(len(p)):
        rows = [r for r in range(X.shape[0])
                if all(test[int(p.ops[i, k])](float(X[r, p.columns[i, k]]), float(p.values[i, k]))
                       for k in range(p.columns.shape[1]))]
        counts.append(len(rows))
        firsts.append(rows[0] if rows else 0)
    return counts, firsts


def _table(rng: np.random.Generator, n: int, p: int) -> np.ndarray:
    """Few distinct values (ties), some NaN, an infinity now and then; one column all NaN
    when the draw says so."""
    X = rng.integers(-3, 4, size=(n, p)).astype(float)
    X[rng.random((n, p)) < 0.15] = np.nan
    X[rng.random((n, p)) < 0.03] = np.inf
    X[rng.random((n, p)) < 0.03] = -np.inf
    X[rng.random((n, p)) < 0.05] = -0.0
    if rng.random() < 0.2:
        X[:, rng.integers(0, p)] = np.nan
    return X


def _predicates(rng: np.random.Generator, m: int, c: int, p: int) -> pred.Predicates:
    """Values from the same small range (and beyond it), NaN and infinite bounds; a
    condition repeated now and then, as a predicate of fewer conditions is stored."""
    cols = rng.integers(0, p, size=(m, c)).astype(np.intp)
    ops = rng.integers(pred.EQ, pred.GE + 1, size=(m, c)).astype(np.intp)
    vals = rng.integers(-4, 5, size=(m, c)).astype(float)
    vals[rng.random((m, c)) < 0.05] = np.nan
    vals[rng.random((m, c)) < 0.03] = np.inf
    vals[rng.random((m, c)) < 0.03] = -np.inf
    repeat = rng.random(m) < 0.2
    cols[repeat] = cols[repeat, :1]
    ops[repeat] = ops[repeat, :1]
    vals[repeat] = vals[repeat, :1]
    return pred.Predicates(cols, ops, vals)


@pytest.mark.parametrize("seed", range(12))
def test_counts_and_first_rows_equal_the_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, p, c = int(rng.integers(1, 60)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
    X = _table(rng, n, p)
    found = _predicates(rng, 80, c, p)
    counts, firsts = _brute(X, found)
    assert pred.count_matches(X, found).tolist() == counts
    assert pred.first_matches(X, found).tolist() == firsts
    sorted_once = pred.sort_columns(X)  # the same answers from columns sorted once
    assert pred.count_matches(sorted_once, found).tolist() == counts
    assert pred.first_matches(sorted_once, found).tolist() == firsts
    for at_most in (1, 2, 3):  # the counts stop there
        assert pred.count_matches(sorted_once, found, at_most=at_most).tolist() == \
            [min(count, at_most) for count in counts]


def test_a_hand_worked_table() -> None:
    # column 0: 2, 1, NaN, 1, 3; column 1: 5, 5, 5, 6, NaN
    X = np.array([[2.0, 5], [1, 5], [np.nan, 5], [1, 6], [3, np.nan]])
    found = pred.Predicates(
        np.array([[0, 1], [0, 0], [1, 1], [0, 1], [0, 0]], dtype=np.intp),
        np.array([[pred.LE, pred.EQ], [pred.GE, pred.GE], [pred.GE, pred.GE],
                  [pred.EQ, pred.EQ], [pred.EQ, pred.EQ]], dtype=np.intp),
        np.array([[2, 5], [2, 2], [6, 6], [1, 7], [np.nan, np.nan]]))
    # x0 <= 2 and x1 == 5: rows 0, 1; x0 >= 2: rows 0, 4; x1 >= 6: row 3 only;
    # x0 == 1 and x1 == 7: none; a NaN bound: none
    assert pred.count_matches(X, found).tolist() == [2, 2, 1, 0, 0]
    assert pred.first_matches(X, found).tolist() == [0, 0, 3, 0, 0]


def test_no_predicates_and_a_table_of_one_row() -> None:
    X = np.array([[1.0, np.nan]])
    none = pred.Predicates(np.zeros((0, 2), np.intp), np.zeros((0, 2), np.intp),
                           np.zeros((0, 2)))
    assert pred.count_matches(X, none).shape == (0,)
    one = pred.Predicates(np.array([[0], [1]], np.intp), np.array([[pred.EQ], [pred.LE]],
                                                                   np.intp),
                          np.array([[1.0], [9.0]]))
    assert pred.count_matches(X, one).tolist() == [1, 0]


def test_the_threaded_kernel_equals_the_serial_one() -> None:
    # large work runs on numba's threads (PARALLEL_WORK); the same answers, here forced
    rng = np.random.default_rng(7)
    X = _table(rng, 500, 4)
    found = _predicates(rng, 400, 3, 4)
    table = pred.sort_columns(X)
    low = np.where(found.ops == pred.LE, -np.inf, found.values)
    high = np.where(found.ops == pred.GE, np.inf, found.values)
    for at_most in (2, 501):
        args = (table.table, table.values, table.order, table.n_valid, found.columns, low,
                high, at_most)
        threaded, serial = kernel.count_first(*args), kernel.count_first_serial(*args)
        assert threaded[0].tolist() == serial[0].tolist()
        assert threaded[1].tolist() == serial[1].tolist()
    counts, firsts = _brute(X, found)
    assert serial[0].tolist() == counts
    assert serial[1].tolist() == firsts
