"""Epsilon-differentially private microaggregation (Soria-Comas et al., VLDB J. 2014)."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microagg import PrivacyLeakWarning, SchemaError, anonymize
from microagg.aggregate.dp import check_epsilon, dp_microaggregation, insensitive_labels


def test_insensitive_labels_order_and_sizes():
    # distances to the origin: 0.81, 0.01, 0.25, 0.04, 0.49, 0.09, 0.64 -> ranks; 7 // 3 = 2
    # groups, the last takes the remaining record
    U = np.array([[0.9], [0.1], [0.5], [0.2], [0.7], [0.3], [0.8]])
    assert insensitive_labels(U, 3).tolist() == [1, 0, 1, 0, 1, 0, 1]


def test_insensitive_ties_are_broken_by_the_values_not_the_row():
    # (0, 1) and (1, 0) are equally far from the origin: column 0 decides, whatever the rows
    U = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.9], [1.0, 1.0]])
    assert insensitive_labels(U, 2).tolist() == [0, 0, 1, 1]
    assert insensitive_labels(U[[1, 0, 3, 2]], 2).tolist() == [0, 0, 1, 1]
    assert insensitive_labels(U[:3], 2).tolist() == [0, 0, 0]


def _group_rows(U, labels):
    return [Counter(map(tuple, U[labels == g])) for g in range(labels.max() + 1)]


@given(st.integers(1, 4), st.integers(2, 5), st.integers(0, 10**6), st.booleans())
def test_replacing_one_record_changes_each_group_by_at_most_one(p, k, seed, coarse):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k, 6 * k))
    # coarse values make many exact ties and duplicates
    U = rng.integers(0, 3, size=(n, p)) / 2.0 if coarse else rng.random((n, p))
    V = U.copy()
    V[rng.integers(n)] = rng.integers(0, 3, size=p) / 2.0 if coarse else rng.random(p)
    before = _group_rows(U, insensitive_labels(U, k))
    after = _group_rows(V, insensitive_labels(V, k))
    assert len(before) == len(after) == n // k
    for a, b in zip(before, after, strict=True):
        assert sum((a - b).values()) <= 1 and sum((b - a).values()) <= 1


def test_sensitivity_and_scale():
    out = dp_microaggregation(np.zeros((10, 2)), 3, epsilon=0.5, lower=[0, 0], upper=[1, 1],
                              random_state=0)
    assert np.bincount(out.labels).tolist() == [3, 3, 4]
    assert out.sensitivity == pytest.approx(2 * (1 / 3 + 1 / 3 + 1 / 4))
    assert out.laplace_scale == pytest.approx(out.sensitivity / 0.5)


def test_centroid_shift_between_neighbours_never_exceeds_the_sensitivity(rng):
    k, n, p = 4, 30, 3
    for _ in range(300):
        X = rng.random((n, p))
        Y = X.copy()
        Y[rng.integers(n)] = rng.random(p)
        cx = [X[insensitive_labels(X, k) == g].mean(axis=0) for g in range(n // k)]
        cy = [Y[insensitive_labels(Y, k) == g].mean(axis=0) for g in range(n // k)]
        sizes = np.bincount(insensitive_labels(X, k))
        assert np.abs(np.subtract(cx, cy)).sum() <= p * (1 / sizes).sum() + 1e-12


def _first_group_value(data, epsilon, draws, seed):
    """The published noisy centroid of rank group 0, over many independent runs."""
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    for t in range(draws):
        res = dp_microaggregation(data, 3, epsilon=epsilon, lower=[0.0], upper=[1.0],
                                  clip_output=False, random_state=rng)
        out[t] = res.masked[res.labels == 0][0, 0]
    return out


def _max_log_ratio(a, b, *, min_count=100):
    """Largest |log P_a(bin) / P_b(bin)| over bins both samples fill, and its sampling error."""
    edges = np.quantile(np.concatenate([a, b]), np.linspace(0, 1, 21))
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    keep = (ca >= min_count) & (cb >= min_count)
    ratio = np.abs(np.log(ca[keep] / a.size) - np.log(cb[keep] / b.size))
    sigma = np.sqrt(1 / ca[keep] + 1 / cb[keep])  # delta-method s.d. of a log count ratio
    worst = int(np.argmax(ratio - 4 * sigma))
    return float(ratio[worst]), float(sigma[worst]), float(ratio.max())


D1 = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
D2 = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [1.0]])  # one record replaced


def test_empirical_likelihood_ratio_stays_within_e_to_the_epsilon():
    # Group 0's centroid moves by 1/3 between D1 and D2; the Laplace scale is
    # S / epsilon = (1/3 + 1/3) / epsilon, so the true log ratio is at most epsilon / 2 here.
    epsilon = 1.0
    a = _first_group_value(D1, epsilon, 20_000, seed=1)
    b = _first_group_value(D2, epsilon, 20_000, seed=2)
    ratio, sigma, largest = _max_log_ratio(a, b)
    assert ratio <= epsilon + 4 * sigma
    assert largest > 0.3  # the test sees the shift at all (true value 0.5)


def test_the_likelihood_test_catches_too_little_noise():
    # the same data released with 4x the budget: its log ratio reaches 2 > epsilon = 1
    a = _first_group_value(D1, 4.0, 20_000, seed=3)
    b = _first_group_value(D2, 4.0, 20_000, seed=4)
    ratio, sigma, _ = _max_log_ratio(a, b)
    assert ratio > 1.0 + 4 * sigma


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="'epsilon' parameter must be a finite number > 0"):
        check_epsilon(epsilon)


def test_bad_bounds_arrays():
    with pytest.raises(ValueError, match=r"lower <= upper; not so for column\(s\) 1 \(2.0, 1.0\)"):
        dp_microaggregation(np.zeros((4, 2)), 2, epsilon=1, lower=[0, 2], upper=[1, 1])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        dp_microaggregation(np.zeros((4, 2)), 2, epsilon=1, lower=[0], upper=[1])


def test_out_of_bounds_values_are_clipped_and_counted():
    out = dp_microaggregation([[-5.0], [0.5], [0.5], [9.0]], 2, epsilon=1e6, lower=[0.0],
                              upper=[1.0], random_state=0)
    assert out.clipped_values == 2
    assert (out.masked >= 0).all() and (out.masked <= 1).all()


def test_constant_bounds_column_costs_nothing():
    out = dp_microaggregation([[1.0, 3.0], [2.0, 3.0], [3.0, 3.0], [4.0, 3.0]], 2, epsilon=1,
                              lower=[0.0, 3.0], upper=[10.0, 3.0], random_state=0)
    assert out.sensitivity == pytest.approx(1.0) and (out.masked[:, 1] == 3.0).all()


@pytest.fixture
def survey(rng) -> pd.DataFrame:
    n = 400
    return pd.DataFrame({"name": [f"p{i}" for i in range(n)], "age": rng.integers(18, 90, n),
                         "income": rng.uniform(0, 1e5, n).round(2)},
                        index=pd.RangeIndex(1000, 1000 + n))


BOUNDS = {"age": (0, 120), "income": (0, 1e5)}


def test_dp_release(survey):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        release = anonymize(survey, quasi_identifiers=["age", "income"], k=40,
                            identifiers="name", epsilon=1.0, bounds=BOUNDS, random_state=5)
    dp = release.checks["differential_privacy"]
    assert dp["holds"] and dp["epsilon"] == 1.0 and dp["bounds_from_data"] == ()
    assert dp["sensitivity_l1"] == pytest.approx(2 * 10 / 40)
    assert release.params["method"] == "insensitive" and release.params["scaling"] == "bounds"
    assert release.k >= 40 and release.checks["group_k"]["achieved"] == 40
    assert list(release.data.columns) == ["age", "income"]
    assert release.data.index.equals(pd.RangeIndex(400))  # rows shuffled, index dropped
    for g in np.unique(release.labels):  # labels follow the shuffled rows
        rows = release.data[release.labels == g].to_numpy()
        assert (rows == rows[0]).all()
    # the noise never comes from the recorded seed (it would let anyone subtract it)
    again = anonymize(survey, quasi_identifiers=["age", "income"], k=40, identifiers="name",
                      epsilon=1.0, bounds=BOUNDS, random_state=5)
    assert not release.data.equals(again.data)
    assert "not recorded" in dp["noise_source"]
    assert release.summary()["checks"]["differential_privacy"]["bounds"]["age"] == [0.0, 120.0]


def test_bounds_from_the_data_are_named_and_kept(survey):
    with pytest.warns(PrivacyLeakWarning, match="'income' were computed from the data"):
        release = anonymize(survey, quasi_identifiers=["age", "income"], k=40,
                            identifiers="name", epsilon=1.0, bounds={"age": (0, 120)},
                            random_state=0)
    assert not release.checks["differential_privacy"]["holds"]
    assert release.checks["differential_privacy"]["bounds_from_data"] == ("income",)
    assert "NOT 1.0-differentially private" in release.warnings[0]


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "mdav"}, "needs the insensitive partition"),
    ({"aggregation": "median"}, "Laplace-noised group means"),
    ({"scaling": "minmax"}, "leave scaling unset"),
    ({"method_params": {"gamma": 1}}, "takes none"),
    ({"identifiers": (), "keep": ("name",)}, "'name' would be published unchanged"),
])
def test_dp_refuses_what_would_void_it(survey, kwargs, message):
    args = {"quasi_identifiers": ["age", "income"], "k": 40, "identifiers": "name",
            "epsilon": 1.0, "bounds": BOUNDS, **kwargs}
    with pytest.raises(SchemaError, match=message):
        anonymize(survey, **args)


@pytest.mark.parametrize("bounds, exc, message", [
    ({"weight": (0, 1)}, SchemaError, "'weight' that are not quasi-identifiers"),
    ({"age": (10, 5), "income": (0, 1)}, ValueError, r"bounds\['age'\] must be finite"),
    ({"age": "0-120"}, ValueError, r"bounds\['age'\] must be a pair"),
])
def test_bad_bounds_in_release(survey, bounds, exc, message):
    with pytest.raises(exc, match=message):
        anonymize(survey, quasi_identifiers=["age", "income"], k=40, identifiers="name",
                  epsilon=1.0, bounds=bounds)


def test_bounds_without_epsilon(survey):
    with pytest.raises(ValueError, match="bounds are used only with epsilon"):
        anonymize(survey, quasi_identifiers="age", k=40, identifiers="name", bounds=BOUNDS)
