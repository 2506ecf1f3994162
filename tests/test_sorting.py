"""Seed 003's sorting framework (toy example, Tables I-V) and MHM's optimal segmentation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from microagg.metrics import sse
from microagg.partition import meansort_ps, multidsort_ps
from microagg.partition.sorting import (
    _rank_sum_keys,
    meansort_keys,
    meansort_order,
    mhm_segment,
    multidsort_order,
)

# Seed 003, Table I (variables V1, V2)
TOY = np.array([[5.0, 6.0], [3.0, 10.0], [1.0, 3.0], [2.0, 1.0], [4.0, 2.0]])


def test_multidsort_ranks_and_order():
    # Table II: per-attribute ranks summed: rows 1..5 -> 9, 8, 4, 3, 6
    assert _rank_sum_keys(TOY, np.arange(5)).tolist() == [9.0, 8.0, 4.0, 3.0, 6.0]
    # Table III: sorted rows 4, 3, 5, 2, 1 (1-based)
    assert (multidsort_order(TOY) + 1).tolist() == [4, 3, 5, 2, 1]
    np.testing.assert_array_equal(TOY[multidsort_order(TOY)],
                                  [[2, 1], [1, 3], [4, 2], [3, 10], [5, 6]])


def test_meansort_sf_and_order():
    # Table IV: SF = 3.6, 5.6, -3.4, -4.4, -1.4; Table V: rows 4, 3, 5, 1, 2
    np.testing.assert_allclose(meansort_keys(TOY), [3.6, 5.6, -3.4, -4.4, -1.4])
    assert (meansort_order(TOY) + 1).tolist() == [4, 3, 5, 1, 2]
    np.testing.assert_array_equal(TOY[meansort_order(TOY)],
                                  [[2, 1], [1, 3], [4, 2], [5, 6], [3, 10]])


# f = (0, 0) has the smallest row sum. Growing by least SSE increase takes A, then C
# (nearest to the centroid (0.5, 0): 1.21 < 1.3525); the seed's nearest are A and B.
GROW = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.05], [1.6, 0.0], [10.0, 10.0], [10.0, 11.0]])


def groups(labels):
    return sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def test_ps_grow_by_sse_versus_nearest():
    assert groups(meansort_ps(GROW, 3, normalize="none")) == [[0, 1, 3], [2, 4, 5]]
    assert groups(meansort_ps(GROW, 3, grow="nearest", normalize="none")) == [[0, 1, 2],
                                                                               [3, 4, 5]]


def test_ps_pairs_first_and_last():
    # 9 records on a line, k = 3: first (0) and last (8) seed the two first groups
    X = np.arange(9.0).reshape(-1, 1)[::-1].copy()
    labels = multidsort_ps(X, 3)
    assert groups(labels) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_ps_bad_parameters():
    with pytest.raises(ValueError, match=r"'grow' parameter of meansort_ps must be one of sse"):
        meansort_ps(TOY, 2, grow="fast")
    with pytest.raises(ValueError, match=r"'normalize' parameter of multidsort_ps"):
        multidsort_ps(TOY, 2, normalize="zscore")


def brute_force_segmentation(X, order, k):
    """Minimum SSE over every cut of the order into consecutive groups of k..2k-1."""
    n = len(order)
    best = np.inf
    for cuts in itertools.product([0, 1], repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        sizes = np.diff(bounds)
        if sizes.min() < k or sizes.max() > 2 * k - 1:
            continue
        labels = np.empty(n, dtype=np.intp)
        for g, (a, b) in enumerate(itertools.pairwise(bounds)):
            labels[order[a:b]] = g
        best = min(best, sse(X, labels))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_mhm_segmentation_is_optimal_for_the_order(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    k = int(rng.integers(2, 4))
    X = rng.standard_normal((n, 2))
    order = rng.permutation(n)
    labels, cost = mhm_segment(X, order, k)
    assert cost == pytest.approx(brute_force_segmentation(X, order, k), rel=1e-12)
    assert sse(X, labels) == pytest.approx(cost, rel=1e-12)
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    # groups are runs of the order
    assert (np.diff(labels[order]) >= 0).all()


def test_mhm_segment_rejects_a_non_permutation():
    with pytest.raises(ValueError, match=r"order must be a permutation of 0..4"):
        mhm_segment(TOY, [0, 0, 1, 2, 3], 2)
