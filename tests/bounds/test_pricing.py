"""The greedy pricing's exchanges (``_polish``): what they return is what they claim, and no
single exchange among the row's neighbours is left that lowers the reduced cost."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.bounds._master import _TOL
from microagg.bounds._pricing import (
    _grow,
    _polish,
    greedy_columns,
    knn_table,
    neighbours,
    sse_of,
)


def _rc(X: np.ndarray, u: np.ndarray, group: np.ndarray) -> float:
    return sse_of(X, group) - float(u[group].sum())


def _exchanges(row: np.ndarray, group: list[int], k: int, top: int):
    """Every group one exchange away that keeps the first member: swaps, drops, adds."""
    outside = [j for j in row[1:] if j not in group]
    for q in range(1, len(group)):
        rest = group[:q] + group[q + 1:]
        if len(group) > k:
            yield rest
        for j in outside:
            yield [*rest, j]
    if len(group) < top:
        for j in outside:
            yield [*group, j]


@pytest.mark.parametrize(("seed", "k"), [(0, 3), (1, 4), (2, 5)])
def test_polished_groups_are_exchange_optima(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    u = knn_table(X, k)[:, k - 1] / (2.0 * k) * rng.uniform(1.0, 3.0, 60)  # some negative groups
    nbr = neighbours(X, 3 * k + 10)[1].astype(np.int64)
    top = min(2 * k - 1, nbr.shape[1])
    improved = 0
    for i in range(X.shape[0]):
        grown_rc, size, slots = _grow(X, u, nbr, k, i)
        rc, slots, size = _polish(X, u, nbr[i], k, slots.copy(), size, grown_rc, _TOL)
        group = [int(j) for j in nbr[i, slots[:size]]]
        assert group[0] == i and len(set(group)) == size and k <= size <= top
        assert rc == pytest.approx(_rc(X, u, np.array(group)), abs=1e-9)
        assert rc <= grown_rc + 1e-12
        improved += rc < grown_rc - 1e-9
        for other in _exchanges(nbr[i], group, k, top):
            assert _rc(X, u, np.array(other)) >= rc - 1e-7
    assert improved > 0  # growth alone leaves exchanges that help on this data


def test_greedy_columns_are_negative_and_valid() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    k = 3
    u = knn_table(X, k)[:, k - 1] / (2.0 * k) * 2.5
    found, best = greedy_columns(X, u, neighbours(X, 3 * k + 10)[1], k, _TOL)
    assert found and best < 0
    for group in found:
        assert k <= group.size <= 2 * k - 1 and np.unique(group).size == group.size
        assert _rc(X, u, group) < 0
    assert min(_rc(X, u, g) for g in found) == pytest.approx(best, abs=1e-9)
