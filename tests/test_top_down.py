"""Top-down k-partition of seed 000 (Algorithms 1-3)."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.partition import top_down


def groups(labels):
    return sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def test_split_around_the_farthest_pair():
    # 0..9 on a line, k = 2: farthest pair (0, 9); {0, 1} and {9, 8}; the rest go to the
    # nearer centroid (0.5 or 8.5): 2, 3, 4 left, 5, 6, 7 right. Each half of 5 (>= 2k) is
    # split again: {0..4} around (0, 4) -> {0, 1} + 2 (tie 1.5 / 1.5 goes to the first group)
    # and {3, 4}; {5..9} around (5, 9) -> {5, 6} + 7 (0.5 < 1.5) and {8, 9}.
    X = np.arange(10.0).reshape(-1, 1)
    labels = top_down(X, 2, normalize="none")
    assert groups(labels) == [[0, 1, 2], [3, 4], [5, 6, 7], [8, 9]]


@pytest.mark.parametrize("c", [1, 3, 20])
def test_every_group_has_k_to_2k_minus_1(c, rng):
    X = rng.standard_normal((500, 3))
    counts = np.bincount(top_down(X, 4, c=c, random_state=1))
    assert counts.min() >= 4
    assert counts.max() <= 7


def test_small_subsets_are_merged_never_left_under_k(rng):
    # a far cluster of 2 records becomes its own c-means subset; with k = 5 it must merge
    X = np.vstack([rng.standard_normal((60, 2)), [[50.0, 50.0], [50.1, 50.0]]])
    labels = top_down(X, 5, c=4, random_state=0)
    assert np.bincount(labels).min() >= 5
    assert labels[60] == labels[61]


def test_seeded_pre_partition_is_reproducible(rng):
    X = rng.standard_normal((300, 3))
    a = top_down(X, 3, c=6, random_state=11)
    np.testing.assert_array_equal(a, top_down(X, 3, c=6, random_state=11))


def test_bad_parameters(rng):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ValueError, match=r"'c' parameter of top_down must be an int >= 1"):
        top_down(X, 3, c=0)
    with pytest.raises(ValueError, match=r"'normalize' parameter of top_down"):
        top_down(X, 3, normalize="zscore")
