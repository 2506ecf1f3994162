"""Clustering-based information loss (seed 001, section 3) and the classic utility figures."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.aggregate.aggregators import group_mean
from microagg.metrics import clustering_information_loss, il1s, moment_changes
from microagg.partition import mdav


def test_identical_tables_lose_nothing(rng):
    X = rng.standard_normal((120, 3))
    assert clustering_information_loss(X, X, n_clusters=4) == {
        "il_rand": 0.0, "il_ari": 0.0, "il_jaccard": 0.0}


def test_loss_grows_with_k_and_is_large_for_shuffled_data(rng):
    centres = np.array([[0, 0], [6, 0], [0, 6], [6, 6]], dtype=float)
    X = np.vstack([c + rng.standard_normal((60, 2)) for c in centres])
    small = clustering_information_loss(X, group_mean(X, mdav(X, 3)), n_clusters=4)
    big = clustering_information_loss(X, group_mean(X, mdav(X, 60)), n_clusters=4)
    assert small["il_ari"] <= big["il_ari"]
    shuffled = clustering_information_loss(X, rng.permutation(X), n_clusters=4)
    assert shuffled["il_ari"] > 0.9 and shuffled["il_rand"] > 0.25


def test_jaccard_matches_pair_counting_by_hand():
    # clusters of the original {0,1,2} {3,4,5}; of the masked {0,1} {2,3,4,5}; the Jaccard
    # pair index TP / (TP + FP + FN) counted pair by pair below (TP 4, FP 3, FN 2)
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    M = np.array([[0.0], [0.1], [10.0], [10.0], [10.1], [10.2]])
    out = clustering_information_loss(X, M, n_clusters=2)
    a = np.array([0, 0, 0, 1, 1, 1])
    b = np.array([0, 0, 1, 1, 1, 1])
    tp = fp = fn = 0
    for i in range(6):
        for j in range(i + 1, 6):
            same_a, same_b = a[i] == a[j], b[i] == b[j]
            tp += same_a and same_b
            fp += same_b and not same_a
            fn += same_a and not same_b
    assert out["il_jaccard"] == pytest.approx(1 - tp / (tp + fp + fn))


def test_il1s_and_moments_by_hand():
    assert il1s([[0.0], [2.0]], [[1.0], [1.0]]) == pytest.approx(0.5)
    assert il1s([[1.0], [1.0]], [[5.0], [0.0]]) == 0.0  # constant column: no scale, no loss
    m = moment_changes([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]], [[3.0, 6.0], [3.0, 6.0], [3.0, 6.0]])
    assert m["mean_change_pct"] == 0.0 and m["variance_change_pct"] == 100.0
    assert m["covariance_change_pct"] == 100.0


def test_bad_input():
    with pytest.raises(ValueError, match="shape"):
        clustering_information_loss(np.zeros((4, 1)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match=r"'n_clusters' parameter must be an int in 2\.\.4"):
        clustering_information_loss(np.zeros((4, 1)), np.zeros((4, 1)), n_clusters=9)
