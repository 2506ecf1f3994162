"""Hybrid microdata (seed 001, section 2.8): synthetic groups with exact means and covariances."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.aggregate.synthetic import check_synthetic_moments, synthetic_microdata
from microagg.exceptions import InternalError


def _random_partition(rng: np.random.Generator, sizes: np.ndarray) -> np.ndarray:
    """Labels 0..len(sizes)-1 with the given group sizes, rows shuffled."""
    return rng.permutation(np.repeat(np.arange(sizes.size), sizes)).astype(np.intp)


def _assert_group_moments(X: np.ndarray, out: np.ndarray, labels: np.ndarray) -> None:
    for t in range(labels.max() + 1):
        a, b = X[labels == t], out[labels == t]
        scale = np.abs(a).max() + 1.0
        np.testing.assert_allclose(b.mean(axis=0), a.mean(axis=0), rtol=0, atol=1e-12 * scale)
        if a.shape[0] > 1:
            ca = np.cov(a, rowvar=False, ddof=1).reshape(X.shape[1], X.shape[1])
            cb = np.cov(b, rowvar=False, ddof=1).reshape(X.shape[1], X.shape[1])
            np.testing.assert_allclose(cb, ca, rtol=0, atol=1e-11 * scale**2)


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 6])
def test_exact_group_means_and_covariances(rng, p):
    sizes = np.tile(np.arange(1, 13), 3)  # every size 1..12, so also g < p, g == p, g == p + 1
    labels = _random_partition(rng, sizes)
    X = rng.normal(size=(labels.size, p)) * rng.uniform(0.1, 50.0, size=p) + rng.normal(size=p)
    out = synthetic_microdata(X, labels, random_state=7)
    assert out.shape == X.shape and out.dtype == np.float64
    _assert_group_moments(X, out, labels)
    check_synthetic_moments(X, out, labels, rtol=1e-10, atol=1e-12)
    big = np.bincount(labels)[labels] >= 2
    assert (np.abs(out - X)[big] > 1e-6).any(axis=1).mean() > 0.9  # the records really change


def test_groups_with_fewer_records_than_columns(rng):
    labels = np.repeat(np.arange(40), 3)  # g = 3 < p = 6: covariance of rank <= 2
    X = rng.normal(size=(120, 6)) * [1.0, 10.0, 0.01, 1e4, 5.0, 1.0]
    out = synthetic_microdata(X, labels, random_state=1)
    _assert_group_moments(X, out, labels)
    for t in range(40):
        rank = np.linalg.matrix_rank(out[labels == t] - out[labels == t].mean(axis=0))
        assert rank == 2
    assert not np.allclose(out, X)


def test_singletons_are_returned_unchanged(rng):
    X = rng.normal(size=(30, 4)) * 1e3
    labels = np.arange(30)[::-1].copy()
    np.testing.assert_array_equal(synthetic_microdata(X, labels, random_state=0), X)
    # singletons mixed with larger groups stay untouched too
    labels = np.array([0, 1, 1, 2, 3, 3, 3, 4, *range(5, 27)])
    out = synthetic_microdata(X, labels, random_state=0)
    single = np.bincount(labels)[labels] == 1
    np.testing.assert_array_equal(out[single], X[single])


def test_a_pair_comes_back_as_itself_possibly_swapped(rng):
    X = rng.normal(size=(2, 4))
    seen = set()
    for seed in range(20):
        out = synthetic_microdata(X, [0, 0], random_state=seed)
        np.testing.assert_allclose(out, X if np.allclose(out[0], X[0]) else X[::-1],
                                   rtol=1e-12, atol=1e-12)
        seen.add(bool(np.allclose(out[0], X[0])))
    assert seen == {True, False}


def test_one_group_gives_a_fully_synthetic_file_with_the_same_moments(rng):
    X = rng.normal(size=(500, 5)) @ rng.normal(size=(5, 5)) + [1.0, -2.0, 100.0, 0.0, 1e4]
    out = synthetic_microdata(X, np.zeros(500, dtype=int), random_state=3)
    np.testing.assert_allclose(out.mean(axis=0), X.mean(axis=0), rtol=1e-13, atol=1e-9)
    np.testing.assert_allclose(np.cov(out, rowvar=False), np.cov(X, rowvar=False),
                               rtol=1e-10, atol=1e-10)
    assert not np.isclose(out, X).all(axis=1).any()  # no original record survives


def test_whole_file_moments_are_kept_for_any_partition(rng):
    X = rng.gamma(2.0, 3.0, size=(300, 3))
    labels = _random_partition(rng, np.full(60, 5))
    out = synthetic_microdata(X, labels, random_state=4)
    np.testing.assert_allclose(out.mean(axis=0), X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(np.cov(out, rowvar=False), np.cov(X, rowvar=False), rtol=1e-10)


def test_constant_columns_stay_constant(rng):
    X = rng.normal(size=(60, 4))
    X[:, 1] = 0.1  # constant in the whole file (0.1 * 3 / 3 is not 0.1 in floating point)
    labels = np.repeat(np.arange(12), 5)
    X[labels == 3, 2] = 7.3  # constant inside one group only
    X[labels == 5] = [1.0, 0.1, 3.0, 4.0]  # a group of identical records
    out = synthetic_microdata(X, labels, random_state=5)
    assert (out[:, 1] == 0.1).all()
    assert (out[labels == 3, 2] == 7.3).all()
    np.testing.assert_array_equal(out[labels == 5], X[labels == 5])
    assert not np.allclose(out[labels == 3][:, [0, 3]], X[labels == 3][:, [0, 3]])
    _assert_group_moments(X, out, labels)


def test_exact_linear_relations_inside_a_group_survive(rng):
    base = rng.normal(size=(40, 2))
    X = np.column_stack([base, 2.0 * base[:, 0] - base[:, 1] + 5.0])  # rank 2 covariance
    labels = np.repeat(np.arange(4), 10)
    out = synthetic_microdata(X, labels, random_state=6)
    np.testing.assert_allclose(out[:, 2], 2.0 * out[:, 0] - out[:, 1] + 5.0, atol=1e-12)
    _assert_group_moments(X, out, labels)


def test_columns_of_very_different_scales(rng):
    X = rng.normal(size=(80, 3)) * [1e-6, 1.0, 1e8] + [0.0, 1e3, 5e9]
    labels = np.repeat(np.arange(16), 5)
    out = synthetic_microdata(X, labels, random_state=8)
    check_synthetic_moments(X, out, labels, rtol=1e-9, atol=1e-12)
    for t in range(16):  # the tiny column is not lost in the big one's rounding
        a, b = X[labels == t, 0], out[labels == t, 0]
        np.testing.assert_allclose(b.var(ddof=1), a.var(ddof=1), rtol=1e-9)


def test_reproducible_with_a_seed(rng):
    X = rng.normal(size=(50, 3))
    labels = _random_partition(rng, np.array([5] * 6 + [7, 7, 6]))
    a = synthetic_microdata(X, labels, random_state=11)
    np.testing.assert_array_equal(a, synthetic_microdata(X, labels, random_state=11))
    np.testing.assert_array_equal(
        a, synthetic_microdata(X, labels, random_state=np.random.default_rng(11)))
    b = synthetic_microdata(X, labels, random_state=12)
    assert not np.allclose(a, b)
    _assert_group_moments(X, b, labels)


def test_row_order_follows_the_input(rng):
    X = rng.normal(size=(20, 2)) + np.repeat([[0.0, 0.0], [100.0, 100.0]], 10, axis=0)
    labels = np.repeat([0, 1], 10)
    perm = rng.permutation(20)
    out = synthetic_microdata(X[perm], labels[perm], random_state=2)
    assert (out[labels[perm] == 1] > 50).all() and (out[labels[perm] == 0] < 50).all()


def test_input_is_not_modified(rng):
    X = rng.normal(size=(12, 2))
    before = X.copy()
    synthetic_microdata(X, np.repeat([0, 1, 2], 4), random_state=0)
    np.testing.assert_array_equal(X, before)


def test_one_dimensional_values_and_integer_data():
    out = synthetic_microdata([1, 2, 3, 10, 20, 30], [0, 0, 0, 1, 1, 1], random_state=0)
    assert out.shape == (6, 1)
    np.testing.assert_allclose(out[:3].mean(), 2.0)
    np.testing.assert_allclose(out[:3].var(ddof=1), 1.0)
    np.testing.assert_allclose(out[3:].var(ddof=1), 100.0)


@pytest.mark.parametrize("values, labels, exc, match", [
    ([[1.0, np.nan], [2.0, 3.0]], [0, 0], ValueError,
     r"'values' parameter of synthetic_microdata contains NaN or infinite values \(column 1: 1\)"),
    ([[1.0, np.inf], [2.0, 3.0]], [0, 0], ValueError, "NaN or infinite"),
    ([[1.0], [2.0], [3.0]], [0, 0], ValueError, r"labels must have shape \(3,\). Got \(2,\)"),
    ([[1.0], [2.0]], [[0, 0]], ValueError, r"labels must have shape \(2,\). Got \(1, 2\)"),
    ([[1.0], [2.0]], [0, 2], ValueError, "consecutive integers starting at 0"),
    ([[1.0], [2.0]], [0.0, 1.0], TypeError, "labels must be integers"),
    (np.zeros((2, 2, 2)), [0, 0], ValueError,
     r"'values' parameter of synthetic_microdata must be 2-dimensional.*\(2, 2, 2\)"),
    (np.zeros((0, 3)), [], ValueError, r"is empty: shape \(0, 3\)"),
    ([["a"], ["b"]], [0, 0], TypeError, "must be a numeric array"),
])
def test_bad_inputs(values, labels, exc, match):
    with pytest.raises(exc, match=match):
        synthetic_microdata(values, labels, random_state=0)


@pytest.mark.parametrize("seed, exc, match", [
    (-1, ValueError, "'random_state' parameter must be None, an int >= 0"),
    ("x", TypeError, "'random_state' parameter must be None"),
])
def test_bad_random_state(seed, exc, match):
    with pytest.raises(exc, match=match):
        synthetic_microdata([[1.0], [2.0]], [0, 0], random_state=seed)


def test_checker_accepts_an_exact_output_and_rejects_tampering(rng):
    X = rng.normal(size=(40, 3)) * [1.0, 100.0, 0.1]
    labels = np.repeat(np.arange(8), 5)
    out = synthetic_microdata(X, labels, random_state=9)
    check_synthetic_moments(X, out, labels)

    shifted = out.copy()
    shifted[labels == 6, 2] += 1e-3  # mean of group 6, column 2
    with pytest.raises(InternalError, match=r"1 mean or covariance entry out of tolerance.*"
                       r"the worst is group 6, column 2: mean"):
        check_synthetic_moments(X, shifted, labels)

    spread = out.copy()
    rows = np.flatnonzero(labels == 4)
    spread[rows[0], 1] += 5.0  # moves mean and (co)variances of group 4
    spread[rows[1], 1] -= 5.0  # ... and the mean back: only (co)variances change
    with pytest.raises(InternalError, match=r"group 4, (column 1: variance|columns \d and \d: "
                       r"covariance) .* in masked vs .* in values \(difference .*, tolerance .*\)"):
        check_synthetic_moments(X, spread, labels)

    swapped = out.copy()
    swapped[rows, 0] = np.sort(swapped[rows, 0])  # same means and variances, new covariances
    swapped[rows, 2] = np.sort(swapped[rows, 2])[::-1]
    with pytest.raises(InternalError, match=r"group 4, columns \d and \d: covariance"):
        check_synthetic_moments(X, swapped, labels)

    # group means alone (the classic aggregation) keep means but not covariances
    means = np.stack([X[labels == t].mean(axis=0) for t in range(8)])[labels]
    with pytest.raises(InternalError, match=r"\d+ mean or covariance entries out of tolerance"):
        check_synthetic_moments(X, means, labels)


def test_checker_singletons_and_constant_columns(rng):
    X = rng.normal(size=(6, 2))
    X[:, 1] = 3.0
    labels = np.arange(6)
    check_synthetic_moments(X, X.copy(), labels)
    moved = X.copy()
    moved[2, 0] += 1e-3
    with pytest.raises(InternalError, match="group 2, column 0: mean"):
        check_synthetic_moments(X, moved, labels)
    labels = np.repeat([0, 1], 3)
    out = synthetic_microdata(X, labels, random_state=0)
    check_synthetic_moments(X, out, labels, rtol=0.0, atol=1e-12)
    out[labels == 1, 1] += [0.0, 1e-3, -1e-3]  # a constant column that no longer is
    with pytest.raises(InternalError, match=r"2 mean or covariance entries .* group 1, column"):
        check_synthetic_moments(X, out, labels)


def test_checker_bad_inputs(rng):
    X = rng.normal(size=(6, 2))
    labels = np.repeat([0, 1], 3)
    with pytest.raises(ValueError, match=r"'masked' parameter of check_synthetic_moments must "
                       r"have the shape of 'values' \(6, 2\). Got shape \(6, 3\)"):
        check_synthetic_moments(X, np.zeros((6, 3)), labels)
    with pytest.raises(ValueError, match=r"'masked' parameter .* contains NaN"):
        check_synthetic_moments(X, np.full((6, 2), np.nan), labels)
    with pytest.raises(ValueError, match=r"labels must have shape \(6,\)"):
        check_synthetic_moments(X, X, labels[:5])
    with pytest.raises(ValueError, match=r"'rtol' parameter of check_synthetic_moments must be "
                       r"a float >= 0\. Got -1\.0"):
        check_synthetic_moments(X, X, labels, rtol=-1.0)
    with pytest.raises(TypeError, match="'atol' parameter"):
        check_synthetic_moments(X, X, labels, atol="0")
