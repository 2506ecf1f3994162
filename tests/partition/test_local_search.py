"""Quality mode (mdav-ls): never below k, never worse than its start, reproducible."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.metrics import sse
from microagg.partition import PARTITIONERS, mdav
from microagg.partition.local_search import local_search, quality_mode


@pytest.mark.parametrize("k", [2, 3, 5])
def test_quality_mode_keeps_k_and_beats_mdav(k, rng):
    X = rng.standard_normal((300, 4))
    labels = quality_mode(X, k, rounds=30, random_state=0)
    assert np.bincount(labels).min() >= k
    assert sse(X, labels) <= sse(X, mdav(X, k)) + 1e-9


def test_local_search_is_a_local_optimum_for_moves(rng):
    X = rng.standard_normal((120, 3))
    k = 3
    labels = local_search(X, mdav(X, k), k, rng=np.random.default_rng(1))
    base = sse(X, labels)
    sizes = np.bincount(labels)
    # no single move between groups of allowed sizes lowers the SSE
    for x in range(0, 120, 7):
        a = labels[x]
        if sizes[a] <= k:
            continue
        for b in range(sizes.size):
            if b == a or sizes[b] >= 2 * k - 1:
                continue
            trial = labels.copy()
            trial[x] = b
            assert sse(X, trial) >= base - 1e-9


def test_quality_mode_is_deterministic_without_time_limit(rng):
    X = rng.standard_normal((150, 3))
    a = quality_mode(X, 3, rounds=20, random_state=5)
    b = quality_mode(X, 3, rounds=20, random_state=5)
    np.testing.assert_array_equal(a, b)


def test_quality_mode_from_a_named_start_and_time_limit(rng):
    X = rng.standard_normal((100, 2))
    labels = quality_mode(X, 4, start="md", rounds=10**6, time_limit=0.5, random_state=0)
    assert np.bincount(labels).min() >= 4
    assert sse(X, labels) <= sse(X, PARTITIONERS["md"](X, 4)) + 1e-9


def test_quality_mode_bad_parameters(rng):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match=r"'rounds' parameter of mdav-ls"):
        quality_mode(X, 3, rounds=-1)
    with pytest.raises(ValueError, match=r"'time_limit' parameter of mdav-ls"):
        quality_mode(X, 3, time_limit=0)
    with pytest.raises(ValueError, match=r"Unknown method 'nope'"):
        quality_mode(X, 3, start="nope")


def test_heavy_duplicates(rng):
    X = np.repeat(rng.integers(0, 3, size=(5, 2)).astype(float), 12, axis=0)
    labels = quality_mode(X, 4, rounds=10, random_state=0)
    assert np.bincount(labels).min() >= 4
