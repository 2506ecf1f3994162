"""Top-down k-partition of seed 000 (Algorithms 1-3)."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.partition import bottom_up, top_down


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


# --- the bottom-up comparator -------------------------------------------------------------


@pytest.mark.parametrize("c", [1, 4])
def test_bottom_up_groups_have_k_to_2k_minus_1(c, rng):
    X = rng.standard_normal((301, 3))
    counts = np.bincount(bottom_up(X, 5, c=c, random_state=3))
    assert counts.min() >= 5 and counts.max() <= 9


def test_bottom_up_grows_each_seed_with_its_nearest_records():
    # two tight clumps far apart: whatever seed is drawn, its k - 1 nearest are its clump
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    for seed in range(10):
        assert groups(bottom_up(X, 3, random_state=seed)) == [[0, 1, 2], [3, 4, 5]]


def test_bottom_up_depends_on_the_seed_and_reproduces(rng):
    X = rng.standard_normal((200, 2))
    a = bottom_up(X, 4, random_state=1)
    np.testing.assert_array_equal(a, bottom_up(X, 4, random_state=1))
    assert any(groups(a) != groups(bottom_up(X, 4, random_state=s)) for s in range(2, 6))


def test_bottom_up_leftovers_join_the_nearest_group():
    # 0, 1, 2 | 10, 11 with k = 2: whichever groups form, the record left over must not
    # create a group below k, and 10 and 11 stay together
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    for seed in range(10):
        labels = bottom_up(X, 2, normalize="none", random_state=seed)
        assert np.bincount(labels).min() >= 2
        assert labels[3] == labels[4]


def test_bottom_up_bad_c():
    with pytest.raises(ValueError, match="'c' parameter of bottom_up must be an int >= 1"):
        bottom_up(np.zeros((10, 1)), 2, c=0)
