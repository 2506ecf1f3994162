"""Information loss, DLD linkage risk and group-size summaries on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.metrics import dld_risk, group_size_summary, information_loss, sse, sst


def test_sse_hand_computed():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 4.0], [12.0, 4.0]])
    assert sse(X, np.array([0, 0, 1, 1])) == 4.0  # each record is 1 away from its centroid


def test_sst_value():
    # mean (6, 2): x deviations 6, 4, 4, 6 -> 104; y deviations 2 each -> 16
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 4.0], [12.0, 4.0]])
    assert sst(X) == 120.0
    masked = np.array([[1.0, 0.0], [1.0, 0.0], [11.0, 4.0], [11.0, 4.0]])
    assert information_loss(X, masked) == pytest.approx(100 * 4 / 120)


def test_information_loss_bounds_and_constant_file():
    X = np.array([[1.0], [2.0], [3.0]])
    assert information_loss(X, X) == 0.0
    assert information_loss(X, np.full((3, 1), 2.0)) == 100.0
    assert information_loss(np.ones((3, 2)), np.ones((3, 2))) == 0.0


def test_information_loss_shape_mismatch():
    with pytest.raises(ValueError, match=r"shape \(3, 1\) but masked has shape \(2, 1\)"):
        information_loss(np.zeros((3, 1)), np.zeros((2, 1)))


def test_dld_identity_and_ties():
    X = np.array([[0.0], [1.0], [10.0], [11.0], [20.0]])
    assert dld_risk(X, X) == 1.0
    # groups {0, 1} and {2, 3, 4}: centroid 0.5 ties rows 0 and 1 -> 1/2 each; centroid
    # 13.67 is nearest to row 3 (11) only -> 1 for row 3, 0 for rows 2 and 4.
    masked = np.array([[0.5], [0.5], [41 / 3], [41 / 3], [41 / 3]])
    assert dld_risk(X, masked) == pytest.approx((0.5 + 0.5 + 0 + 1 + 0) / 5)


def test_dld_a_foreign_link_does_not_erase_a_correct_one():
    # masked 0.1 links to original 0 (correct); masked 0.2 also links to original 0 (wrong
    # for record 1). Record 0 keeps its link: DLD = 1/2. (An earlier version let the second
    # vector overwrite the first and returned 0.)
    assert dld_risk([[0.0], [10.0]], [[0.1], [0.2]]) == 0.5


def test_dld_matches_brute_force_on_noisy_releases(rng):
    X = rng.integers(0, 4, size=(60, 2)).astype(float)  # many exact ties
    masked = X + rng.integers(-1, 2, size=X.shape)
    d = ((masked[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    nearest = d == d.min(axis=1, keepdims=True)
    expected = np.mean([nearest[i, i] / nearest[i].sum() for i in range(len(X))])
    assert dld_risk(X, masked) == pytest.approx(expected)


def test_dld_restricted_to_known_attributes():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 9.0]])
    masked = np.array([[0.1, 0.0], [0.9, 0.0], [5.0, 9.0]])
    assert dld_risk(X, masked) == 1.0
    # an intruder who knows only the second attribute cannot tell rows 0 and 1 apart
    assert dld_risk(X, masked, attributes=[1]) == pytest.approx((0.5 + 0.5 + 1) / 3)
    assert dld_risk(X, masked, attributes=[0, 1]) == 1.0


@pytest.mark.parametrize("attributes", [[], [2], [-1], [0, 0], [0.5]])
def test_dld_rejects_bad_attributes(attributes):
    with pytest.raises(ValueError, match=r"distinct column positions in 0\.\.1"):
        dld_risk(np.zeros((3, 2)), np.zeros((3, 2)), attributes=attributes)


def test_dld_is_low_after_microaggregation_of_spread_data(rng):
    from microagg.aggregate.aggregators import group_mean
    from microagg.partition import mdav

    X = rng.standard_normal((300, 3))
    masked = group_mean(X, mdav(X, 5))
    risk = dld_risk(X, masked)
    assert 0.0 <= risk <= 1 / 5 + 1e-12  # at most one link per group of >= 5


def _brute_force_dld(X, masked):
    d = ((masked[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    nearest = d == d.min(axis=1, keepdims=True)
    return float(np.mean([nearest[i, i] / nearest[i].sum() for i in range(len(X))]))


def _grouped_releases(rng):
    """Releases that share vectors: MDAV centroids, integer groups full of exact ties
    (duplicated originals among them), groups of one beside larger ones, large values."""
    from microagg.aggregate.aggregators import group_mean
    from microagg.partition import mdav

    X = rng.standard_normal((400, 4))
    yield X, group_mean(X, mdav(X, 3))
    ties = rng.integers(0, 3, size=(300, 2)).astype(float)
    yield ties, group_mean(ties, mdav(ties, 4))
    yield ties, group_mean(ties, np.unique(rng.integers(0, 60, size=300),
                                           return_inverse=True)[1])
    mixed = rng.standard_normal((200, 3))
    labels = np.where(np.arange(200) < 150, np.arange(200) // 5, np.arange(200) - 120)
    yield mixed, group_mean(mixed, labels)
    yield X * 1e100, group_mean(X, mdav(X, 3)) * 1e100


def test_dld_centroid_scan_agrees_with_the_tree_and_brute_force(rng):
    from microagg.metrics.risk import _full_dld

    for X, masked in _grouped_releases(rng):
        scanned = _full_dld(X, masked, scan=True)
        assert scanned == _full_dld(X, masked, scan=False)
        assert scanned == pytest.approx(_brute_force_dld(X, masked), abs=1e-12)


def test_dld_centroid_scan_flags_exactly_the_crowded_vectors(rng):
    """The single-precision filter of the centroid pairs drops no pair the exact test needs:
    the flags equal a brute-force check (another original within the reach of the vector),
    at every scale (1e100 and 1e-100 times the data too)."""
    import numba

    from microagg.metrics._dld_kernel import crowded_vectors

    for X, masked in _grouped_releases(rng):
        for factor in (1.0, 1e-100):
            A, B = X * factor, masked * factor
            unique, inverse = np.unique(B, axis=0, return_inverse=True)
            inverse = inverse.ravel()
            own = ((A - unique[inverse]) ** 2).sum(axis=1)
            if not np.isfinite(own).all() or not (own > 0).any():
                continue
            members = np.lexsort((own, inverse))
            starts = np.zeros(unique.shape[0] + 1, dtype=np.intp)
            np.cumsum(np.bincount(inverse, minlength=unique.shape[0]), out=starts[1:])
            nearest = members[starts[:-1]]
            reach = np.sqrt(own[nearest]) * (1.0 + 2e-9) + 2e-12 * factor
            flags = crowded_vectors(np.ascontiguousarray(A[members]), unique, starts, reach,
                                    np.sqrt(own[members]), numba.get_num_threads())
            squared = ((A[None, :, :] - unique[:, None, :]) ** 2).sum(axis=2)
            squared[np.arange(unique.shape[0]), nearest] = np.inf
            assert flags.tolist() == (squared <= reach[:, None] ** 2).any(axis=1).tolist()


def test_dld_scans_the_centroids_of_a_grouped_release(monkeypatch, rng):
    import microagg.metrics._dld_kernel as kernel
    from microagg.aggregate.aggregators import group_mean
    from microagg.partition import mdav

    calls = []
    scan = kernel.crowded_vectors

    def counting(*args):
        calls.append(args[1].shape[0])
        return scan(*args)

    monkeypatch.setattr(kernel, "crowded_vectors", counting)
    X = rng.standard_normal((500, 3))
    risk = dld_risk(X, group_mean(X, mdav(X, 5)))
    assert calls == [100]  # one scan over the 100 centroids
    assert risk == pytest.approx(_brute_force_dld(X, group_mean(X, mdav(X, 5))), abs=1e-12)
    dld_risk(X, X + 0.01)  # every vector distinct: the tree alone
    assert calls == [100]


def test_group_size_summary():
    assert group_size_summary(np.array([0, 0, 0, 1, 1, 1, 1])) == {
        "n_groups": 2, "group_size_min": 3, "group_size_max": 4, "group_size_mean": 3.5}
