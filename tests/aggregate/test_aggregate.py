"""Aggregators: hand-computed group representatives."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.aggregate.aggregators import (
    AGGREGATORS,
    NOISY_AGGREGATORS,
    aggregate,
    group_mean,
    group_median,
    group_mode,
)

VALUES = np.array([[1.0, 10.0], [2.0, 10.0], [9.0, 30.0], [5.0, 7.0], [6.0, 7.0], [7.0, 8.0],
                   [100.0, 1.0], [200.0, 1.0]])
LABELS = np.array([0, 0, 0, 1, 1, 1, 2, 2])


def test_mean():
    out = group_mean(VALUES, LABELS)
    np.testing.assert_allclose(out[:3], [[4.0, 50 / 3]] * 3)
    np.testing.assert_allclose(out[3:6], [[6.0, 22 / 3]] * 3)
    np.testing.assert_allclose(out[6:], [[150.0, 1.0]] * 2)


def test_median_even_and_odd():
    out = group_median(VALUES, LABELS)
    np.testing.assert_array_equal(out[:3], [[2.0, 10.0]] * 3)
    np.testing.assert_array_equal(out[3:6], [[6.0, 7.0]] * 3)
    np.testing.assert_array_equal(out[6:], [[150.0, 1.0]] * 2)  # mean of the two middle


def test_mode_smallest_on_ties():
    out = group_mode(VALUES, LABELS)
    np.testing.assert_array_equal(out[:3], [[1.0, 10.0]] * 3)  # 1, 2, 9 all once -> 1
    np.testing.assert_array_equal(out[3:6], [[5.0, 7.0]] * 3)
    np.testing.assert_array_equal(out[6:], [[100.0, 1.0]] * 2)


@pytest.mark.parametrize("name", sorted(set(AGGREGATORS) - NOISY_AGGREGATORS))
def test_rows_of_a_group_are_identical_and_order_is_kept(name, rng):
    V = rng.integers(0, 5, size=(40, 3)).astype(float)
    labels = rng.permutation(np.repeat(np.arange(8), 5))
    out = aggregate(V, labels, method=name)
    assert out.shape == V.shape
    for g in range(8):
        rows = out[labels == g]
        assert (rows == rows[0]).all()


def test_unknown_aggregation():
    with pytest.raises(ValueError, match=r"Unknown aggregation 'avg'. Valid: fuzzy-random, mean"):
        aggregate(VALUES, LABELS, method="avg")


def test_labels_must_be_consecutive():
    with pytest.raises(ValueError, match="consecutive"):
        group_mean(VALUES, np.array([0, 0, 0, 2, 2, 2, 2, 2]))
