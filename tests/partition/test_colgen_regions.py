"""colgen's last phase: regions around the groups of highest reduced cost (issue 23)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from microagg.metrics import sse
from microagg.partition import _colgen_regions as regions
from microagg.partition import partition


def test_a_ball_holds_whole_groups_nearest_its_centre() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    labels = partition(X, 3, method="mdav")
    rows = regions._ball(X, labels, 4, 20)
    held = np.unique(labels[rows])
    assert 4 in held
    assert rows.size <= 20
    for g in held:  # whole groups only
        assert set(np.flatnonzero(labels == g)) <= set(rows.tolist())
    means = np.array([X[labels == g].mean(axis=0) for g in range(labels.max() + 1)])
    dist = ((means - means[4]) ** 2).sum(axis=1)
    outside = np.setdiff1d(np.arange(labels.max() + 1), held)
    assert dist[held].max() <= dist[outside].min() + 1e-12  # the nearest ones
    assert regions._ball(X, labels, 4, 1).size == np.count_nonzero(labels == 4)


def test_centres_come_by_reduced_cost_each_once() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    labels = partition(X, 3, method="mdav")
    u = rng.uniform(0, 0.3, size=30)
    rc = [sse(X[labels == g], np.zeros(int((labels == g).sum()), dtype=np.intp))
          - u[labels == g].sum() for g in range(labels.max() + 1)]
    done: set[bytes] = set()
    seen = [regions._next_centre(X, labels, u, done) for _ in range(labels.max() + 1)]
    assert seen == list(np.argsort(-np.asarray(rc), kind="stable"))
    assert regions._next_centre(X, labels, u, done) is None


@pytest.mark.parametrize("k", [2, 3])
def test_the_phase_never_raises_the_sse_and_keeps_k(monkeypatch, k: int) -> None:
    monkeypatch.setattr(regions, "MIN_SECONDS", 0.0)
    rng = np.random.default_rng(k)
    X = rng.normal(size=(150, 2))
    start = partition(X, k, method="mdav")
    labels = regions.guided_regions(X, start, k, 40, time.perf_counter() + 4.0,
                                    np.random.default_rng(0))
    assert labels.shape == (150,)
    assert np.bincount(labels).min() >= k
    assert sse(X, labels) < sse(X, start)  # MDAV's groups leave room on random points


def test_no_time_left_returns_the_labels_given() -> None:
    X = np.random.default_rng(2).normal(size=(40, 2))
    start = partition(X, 3, method="mdav")
    same = regions.guided_regions(X, start, 3, 20, time.perf_counter() + 1.0,
                                  np.random.default_rng(0))
    assert np.array_equal(same, start)


def test_the_centre_comes_first_even_beside_a_twin() -> None:
    """Two groups with the same centroid: the ball around the second still holds it."""
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [5.0, 5.0], [6.0, 6.0]])
    labels = np.array([0, 1, 1, 0, 2, 2])  # groups 0 and 1 both centred on (0.5, 0.5)
    assert regions._ball(X, labels, 1, 2).tolist() == [1, 2]
