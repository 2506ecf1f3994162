"""Fuzzy microaggregation building blocks (seed 001, sections 2.4 and 3): fuzzy c-means, the
adaptive at-least-k partition, random representatives, the fuzzy Rand index and the loss."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, rand_score

from microagg._base.validation import check_labels
from microagg.aggregate.aggregators import group_mean
from microagg.metrics.clustering import fuzzy_clustering_information_loss, fuzzy_rand_index
from microagg.partition import mdav
from microagg.partition.fuzzy import (
    adaptive_fuzzy_partition,
    fuzzy_c_means,
    fuzzy_memberships,
    random_representatives,
)


def blobs(rng: np.random.Generator, sizes: tuple[int, ...] = (10, 10, 10), spread: float = 0.3
          ) -> tuple[np.ndarray, np.ndarray]:
    """Well-separated 2-D blobs (centres 10 apart) and their true labels."""
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])[: len(sizes)]
    X = np.vstack([c + spread * rng.standard_normal((s, 2)) for c, s in zip(centres, sizes,
                                                                            strict=True)])
    return X, np.repeat(np.arange(len(sizes)), sizes)


def memberships_by_formula(X: np.ndarray, V: np.ndarray, m: float) -> np.ndarray:
    """Bezdek's u_ij = 1 / sum_l (d_ij / d_il)^(2 / (m - 1)), written out (no zero distances)."""
    d = np.sqrt(((X[:, None, :] - V[None, :, :]) ** 2).sum(axis=2))
    ratio = d[:, :, None] / d[:, None, :]
    return 1.0 / (ratio ** (2.0 / (m - 1.0))).sum(axis=2)


def objective(X: np.ndarray, U: np.ndarray, V: np.ndarray, m: float) -> float:
    return float((U**m * ((X[:, None, :] - V[None, :, :]) ** 2).sum(axis=2)).sum())


# ---------------------------------------------------------------------------------------------
# memberships and fuzzy c-means


@pytest.mark.parametrize("m", [1.5, 2.0, 3.0, 4.0])
def test_memberships_match_the_formula_and_rows_sum_to_one(rng, m):
    X = rng.standard_normal((40, 3))
    V = rng.standard_normal((4, 3))
    U = fuzzy_memberships(X, V, m)
    assert U.shape == (40, 4)
    assert (U >= 0).all()
    np.testing.assert_allclose(U.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(U, memberships_by_formula(X, V, m), rtol=1e-10, atol=1e-14)


def test_zero_distance_rule():
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    U = fuzzy_memberships(X, [[0.0, 0.0], [2.0, 2.0]], 2.0)
    assert U[0].tolist() == [1.0, 0.0]  # on centre 0
    assert U[1].tolist() == [0.5, 0.5]  # half-way: equal distances
    # coincident centres share the membership of a record lying on them
    U = fuzzy_memberships(X, [[1.0, 1.0], [5.0, 5.0], [1.0, 1.0]], 3.0)
    assert U[1].tolist() == [0.5, 0.0, 0.5]
    assert not np.isnan(U).any()
    # fuzzy c-means from centres placed on records: no NaN either
    fcm = fuzzy_c_means(X, 3, init=X)
    assert np.isfinite(fcm.memberships).all() and np.isfinite(fcm.centers).all()
    # all records identical: every record lies on every centre
    same = fuzzy_c_means(np.ones((6, 2)), 3, random_state=0)
    np.testing.assert_allclose(same.memberships, 1 / 3)
    assert same.objective == 0.0


def test_fcm_objective_never_increases(rng):
    X = rng.standard_normal((60, 2))
    V0 = X[:4].copy()
    m = 2.5
    start = objective(X, fuzzy_memberships(X, V0, m), V0, m)
    values = [fuzzy_c_means(X, 4, m=m, init=V0, max_iter=t, tol=0.0).objective
              for t in range(1, 12)]
    assert values[0] <= start
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(values))
    fcm = fuzzy_c_means(X, 4, m=m, init=V0)
    assert fcm.objective <= values[-1] + 1e-12
    # the objective reported is sum u^m d^2 of the memberships and centres returned
    assert fcm.objective == pytest.approx(objective(X, fcm.memberships, fcm.centers, m), rel=1e-10)
    np.testing.assert_allclose(fcm.memberships, fuzzy_memberships(X, fcm.centers, m), atol=1e-12)
    np.testing.assert_allclose(fcm.memberships.sum(axis=1), 1.0, atol=1e-12)


def test_fcm_recovers_well_separated_blobs(rng):
    X, truth = blobs(rng, (15, 15, 15, 15))
    fcm = fuzzy_c_means(X, 4, random_state=0)
    assert adjusted_rand_score(truth, fcm.labels) == 1.0
    assert fcm.n_iter < 300
    assert fcm.memberships.max(axis=1).min() > 0.9  # far apart: nearly crisp
    # warm start from the solution: converges at once to the same partition
    again = fuzzy_c_means(X, 4, init=fcm.centers)
    assert again.n_iter <= 2
    np.testing.assert_allclose(again.centers, fcm.centers, atol=1e-4)
    # same seed, same result
    np.testing.assert_array_equal(fuzzy_c_means(X, 4, random_state=0).centers, fcm.centers)


def test_fcm_and_memberships_bad_input(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match=r"'m' parameter of fuzzy_c_means must be a float > 1\. "
                                         r"Got 1\.0 instead"):
        fuzzy_c_means(X, 2, m=1.0)
    with pytest.raises(TypeError, match="'m' parameter"):
        fuzzy_c_means(X, 2, m="2")
    with pytest.raises(ValueError, match=r"'n_clusters' parameter of fuzzy_c_means must be an "
                                         r"int in \[1, 10\]\. Got 11"):
        fuzzy_c_means(X, 11)
    with pytest.raises(ValueError, match=r"'max_iter'.*>= 1\. Got 0"):
        fuzzy_c_means(X, 2, max_iter=0)
    with pytest.raises(ValueError, match=r"'init'.*shape.*\(2, 2\)\. Got \(3, 2\)"):
        fuzzy_c_means(X, 2, init=X[:3])
    with pytest.raises(ValueError, match=r"'centers'.*2 columns"):
        fuzzy_memberships(X, np.zeros((2, 3)), 2.0)
    with pytest.raises(ValueError, match=r"'m' parameter of fuzzy_memberships.*Got 0\.5"):
        fuzzy_memberships(X, X[:2], 0.5)


# ---------------------------------------------------------------------------------------------
# adaptive at-least-k fuzzy c-means


@pytest.mark.parametrize(("n", "k", "seed"), [(20, 2, 0), (31, 3, 1), (24, 4, 2), (25, 5, 3)])
def test_adaptive_groups_have_at_least_k_and_are_deterministic(n, k, seed):
    X = np.random.default_rng(seed).standard_normal((n, 2))
    labels = adaptive_fuzzy_partition(X, k, random_state=seed)
    assert labels.dtype == np.intp
    check_labels(labels, n_samples=n, k=k)  # consecutive from 0, every group >= k
    np.testing.assert_array_equal(adaptive_fuzzy_partition(X, k, random_state=seed), labels)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "k", "seed"), [(200, 3, 0), (150, 5, 1), (301, 10, 2),
                                              (120, 2, 3)])
def test_adaptive_groups_have_at_least_k_larger(n, k, seed):
    X = np.random.default_rng(seed).standard_normal((n, 4))
    labels = adaptive_fuzzy_partition(X, k, random_state=seed)
    check_labels(labels, n_samples=n, k=k)
    np.testing.assert_array_equal(adaptive_fuzzy_partition(X, k, random_state=seed), labels)


def test_adaptive_small_n_edge_cases():
    k = 3
    X = np.arange(3 * k, dtype=float).reshape(-1, 1)
    for n in range(1, k):
        with pytest.raises(ValueError, match=rf"n_samples={n} should be >= k={k}"):
            adaptive_fuzzy_partition(X[:n], k)
    for n in range(k, 2 * k):  # fewer than 2k records: one group
        assert adaptive_fuzzy_partition(X[:n], k, random_state=0).tolist() == [0] * n
    for n in range(2 * k, 3 * k + 1):
        check_labels(adaptive_fuzzy_partition(X[:n], k, random_state=0), n_samples=n, k=k)
    with pytest.raises(ValueError, match=r"'k' parameter of adaptive_fuzzy_partition must be "
                                         r"an int >= 2\. Got 1"):
        adaptive_fuzzy_partition(X, 1)
    with pytest.raises(ValueError, match=r"'m_max'.*>= m=2\.0\. Got 1\.5"):
        adaptive_fuzzy_partition(X, 2, m_max=1.5)
    with pytest.raises(ValueError, match=r"'m_step'.*> 0\. Got 0\.0"):
        adaptive_fuzzy_partition(X, 2, m_step=0.0)


def test_adaptive_follows_well_separated_blobs(rng):
    X, truth = blobs(rng)
    labels = adaptive_fuzzy_partition(X, 5, random_state=0)
    check_labels(labels, n_samples=30, k=5)
    # no group mixes two blobs, and the blobs are not merged
    for g in range(labels.max() + 1):
        assert np.unique(truth[labels == g]).size == 1
    assert labels.max() + 1 >= 3
    # groups of exactly k: the paper's start c = floor(n / k) is feasible and kept
    X, truth = blobs(rng, (5, 5, 5))
    assert adaptive_fuzzy_partition(X, 5, random_state=0).tolist() == truth.tolist()


def test_adaptive_last_resort_dissolves_small_clusters():
    # two tight groups of 5 and one far outlier, k=3: every fuzzy c-means run with c >= 2
    # leaves the outlier alone, whatever m; the repair moves it to the nearest group
    X = np.array([[0.0], [0.1], [0.2], [0.3], [0.4],
                  [100.0], [100.1], [100.2], [100.3], [100.4], [10_000.0]])
    labels = adaptive_fuzzy_partition(X, 3, random_state=0)
    assert labels.tolist() == [0] * 5 + [1] * 6


@pytest.mark.slow
def test_adaptive_on_census():
    from microagg.datasets import load_dataset

    A = load_dataset("census").benchmark_view().to_numpy(dtype=float)
    X = (A - A.mean(axis=0)) / A.std(axis=0)
    for k in (3, 5, 10):
        labels = adaptive_fuzzy_partition(X, k, random_state=0)
        check_labels(labels, n_samples=X.shape[0], k=k)


# ---------------------------------------------------------------------------------------------
# random representatives


def test_nearly_crisp_memberships_keep_each_record_in_its_group(rng):
    X, truth = blobs(rng)
    chosen = random_representatives(X, truth, m=1.01, random_state=0)
    assert chosen.dtype == np.intp
    np.testing.assert_array_equal(chosen, truth)
    one = random_representatives(X, np.zeros(30, dtype=np.intp), random_state=0)
    assert (one == 0).all()


def test_draw_frequencies_match_memberships(rng):
    X = np.array([[0.0], [0.5], [1.0], [4.0], [4.4], [9.0]])
    labels = np.array([0, 0, 0, 1, 1, 2])
    centres = np.array([[0.5], [4.2], [9.0]])
    U = fuzzy_memberships(X, centres, 2.0)
    draws = 20_000
    # repeating the rows keeps the group means, so one call makes `draws` draws per record
    chosen = random_representatives(np.tile(X, (draws, 1)), np.tile(labels, draws), m=2.0,
                                    random_state=1).reshape(draws, 6)
    for i in range(6):
        freq = np.bincount(chosen[:, i], minlength=3) / draws
        sd = np.sqrt(U[i] * (1 - U[i]) / draws)
        assert (np.abs(freq - U[i]) <= 5 * sd + 1e-12).all()
        assert (freq[U[i] == 0] == 0).all()


def test_threshold_draws_uniformly_among_groups_above_it(rng):
    X = np.array([[0.0], [0.5], [1.0], [4.0], [4.4], [9.0], [2.4]])
    labels = np.array([0, 0, 0, 1, 1, 2, 0])
    centres = np.array([[X[labels == g].mean()] for g in range(3)])
    U = fuzzy_memberships(X, centres, 2.0)
    threshold = 0.3
    allowed = U >= threshold
    assert allowed.sum(axis=1).max() >= 2  # some record may go to either of two groups
    draws = 8000
    chosen = random_representatives(np.tile(X, (draws, 1)), np.tile(labels, draws),
                                    threshold=threshold, random_state=2).reshape(draws, 7)
    for i in range(7):
        freq = np.bincount(chosen[:, i], minlength=3) / draws
        assert (freq[~allowed[i]] == 0).all()
        share = 1 / allowed[i].sum()
        assert np.abs(freq[allowed[i]] - share).max() <= 5 * np.sqrt(share * (1 - share) / draws)
    # nobody reaches the threshold: each record keeps its own group
    chosen = random_representatives(X, labels, threshold=1.0, random_state=0)
    np.testing.assert_array_equal(chosen, labels)


def test_random_representatives_bad_input(rng):
    X = rng.standard_normal((6, 2))
    with pytest.raises(ValueError, match=r"'threshold'.*\[0, 1\]\. Got 1\.5"):
        random_representatives(X, [0, 0, 0, 1, 1, 1], threshold=1.5)
    with pytest.raises(ValueError, match="consecutive"):
        random_representatives(X, [0, 0, 0, 2, 2, 2])
    with pytest.raises(ValueError, match=r"'m' parameter of random_representatives"):
        random_representatives(X, [0, 0, 0, 1, 1, 1], m=1)


# ---------------------------------------------------------------------------------------------
# fuzzy Rand index and the fuzzy clustering information loss


def test_fuzzy_rand_index_of_crisp_partitions_is_the_rand_index(rng):
    for _ in range(6):
        n = int(rng.integers(2, 40))
        a = rng.integers(0, int(rng.integers(1, 5)), n)
        b = rng.integers(0, int(rng.integers(1, 5)), n)
        U = np.eye(a.max() + 1)[a]
        V = np.eye(b.max() + 1)[b]
        assert fuzzy_rand_index(U, V) == rand_score(a, b)
        assert fuzzy_rand_index(U, U) == 1.0


def test_fuzzy_rand_index_symmetric_and_bounded(rng):
    for _ in range(5):
        U = rng.dirichlet(np.ones(3), size=25)
        V = rng.dirichlet(np.ones(4), size=25)
        value = fuzzy_rand_index(U, V)
        assert 0.0 <= value <= 1.0
        assert value == pytest.approx(fuzzy_rand_index(V, U), abs=1e-15)
    assert fuzzy_rand_index([[0.3, 0.7]], [[1.0]]) == 1.0  # no pair of records


def test_fuzzy_rand_index_by_hand():
    # Campello (2007), unordered pairs; "same" = max_i min(U[a,i], U[b,i]),
    # "diff" = max_{i != j} min(U[a,i], U[b,j]).
    # U: r1 (1, 0), r2 (.5, .5), r3 (0, 1)   V (crisp): r1 (1, 0), r2 (1, 0), r3 (0, 1)
    # pair (1,2): U same max(min(1,.5), min(0,.5)) = .5, diff max(min(1,.5), min(0,.5)) = .5
    #             V same 1, diff 0 -> a += .5, b += min(.5,0) = 0, c += .5, d += 0
    # pair (1,3): U same max(min(1,0), min(0,1)) = 0, diff max(min(1,1), min(0,0)) = 1
    #             V same 0, diff 1 -> a += 0, b += 0, c += 0, d += 1
    # pair (2,3): U same max(min(.5,0), min(.5,1)) = .5, diff max(min(.5,1), min(.5,0)) = .5
    #             V same 0, diff 1 -> a += 0, b += .5, c += 0, d += .5
    # a = .5, b = .5, c = .5, d = 1.5: FRI = (a + d) / (a + b + c + d) = 2 / 3
    U = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    V = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    assert fuzzy_rand_index(U, V) == pytest.approx(2 / 3, abs=1e-15)
    assert fuzzy_rand_index(V, U) == pytest.approx(2 / 3, abs=1e-15)
    # U with itself: a = .5 + 0 + .5, d = .5 + 1 + .5, b = c = .5 + 0 + .5: 3 / 5
    assert fuzzy_rand_index(U, U) == pytest.approx(3 / 5, abs=1e-15)


def test_fuzzy_rand_index_bad_input():
    with pytest.raises(ValueError, match="3 rows but V has 2"):
        fuzzy_rand_index(np.eye(3), np.eye(2))
    with pytest.raises(ValueError, match=r"'U' parameter of fuzzy_rand_index must hold "
                                         r"memberships in \[0, 1\]"):
        fuzzy_rand_index([[1.5, -0.5], [0.0, 1.0]], np.eye(2))


def test_fuzzy_clustering_information_loss(rng):
    X, _ = blobs(rng, (20, 20, 20))
    X = np.hstack([X, rng.standard_normal((60, 1))])
    assert fuzzy_clustering_information_loss(X, X, n_clusters=3) == 0.0
    raw = fuzzy_clustering_information_loss(X, X, n_clusters=3, relative=False)
    assert 0.0 < raw < 1.0  # Campello's index of a fuzzy partition with itself is below 1
    small = fuzzy_clustering_information_loss(X, group_mean(X, mdav(X, 3)), n_clusters=3)
    shuffled = fuzzy_clustering_information_loss(X, rng.permutation(X), n_clusters=3)
    assert abs(small) < 0.05 and shuffled > 0.2
    # more rows than max_records: a fixed sample, the same each call
    one = fuzzy_clustering_information_loss(X, rng.permutation(X), n_clusters=3, max_records=25)
    assert np.isfinite(one)
    M = X + 0.5 * rng.standard_normal(X.shape)
    first = fuzzy_clustering_information_loss(X, M, n_clusters=3, max_records=25)
    assert first == fuzzy_clustering_information_loss(X, M, n_clusters=3, max_records=25)
    with pytest.raises(ValueError, match="shape"):
        fuzzy_clustering_information_loss(X, X[:5])
    with pytest.raises(ValueError, match=r"'n_clusters' parameter must be an int in 2\.\.60"):
        fuzzy_clustering_information_loss(X, X, n_clusters=61)
