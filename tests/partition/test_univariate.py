"""Optimal univariate microaggregation, attribute groups and the intersection attack
(seed 001, sections 2.1 and 2.3; Tables 1 and 3)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.exceptions import PrivacyLeakWarning, SchemaError
from microagg.metrics import intersection_attack
from microagg.partition import optimal_univariate, partition
from microagg.partition.attribute_groups import correlation_groups, resolve_attribute_groups

# Seed 001, Table 1 (a) / Table 3 (a): the 9-record example
IDS = ["885", "795", "295", "058", "732", "925", "465", "321", "223"]
AGE = [24, 31, 32, 57, 49, 43, 39, 20, 51]
INCOME = [21000.0, 19500.0, 22000.0, 43480.0, 39220.0, 32285.0, 40500.0, 20000.0, 43050.0]
# Seed 001, Table 1 (b): multivariate microaggregation, k = 3
TABLE1_AGE = [25.00, 25.00, 38.00, 52.33, 52.33, 38.00, 38.00, 25.00, 52.33]
TABLE1_INCOME = [20166.67, 20166.67, 31595.00, 41916.67, 41916.67, 31595.00, 31595.00,
                 20166.67, 41916.67]
# Seed 001, Table 3 (b): each variable microaggregated on its own, k = 3
TABLE3_INCOME = [20166.67, 20166.67, 31168.33, 42343.33, 31168.33, 31168.33, 42343.33,
                 20166.67, 42343.33]


def _example() -> pd.DataFrame:
    return pd.DataFrame({"id": IDS, "age": AGE, "income": INCOME})


def _sse(x: np.ndarray, labels: np.ndarray) -> float:
    return float(sum(((x[labels == g] - x[labels == g].mean()) ** 2).sum()
                     for g in np.unique(labels)))


def _brute_force(x: np.ndarray, k: int) -> float:
    """Minimum SSE over every partition into groups of at least k (consecutive or not)."""
    n = len(x)
    best = np.inf

    def assign(i: int, groups: list[list[int]]) -> None:
        nonlocal best
        if i == n:
            if all(len(g) >= k for g in groups):
                best = min(best, sum(float(((x[g] - x[g].mean()) ** 2).sum()) for g in groups))
            return
        for g in groups:
            g.append(i)
            assign(i + 1, groups)
            g.pop()
        groups.append([i])
        assign(i + 1, groups)
        groups.pop()

    assign(0, [])
    return best


# ------------------------------------------------------------------------------------------
# optimal univariate


def test_table3_age_column_is_the_optimum():
    labels, _ = optimal_univariate(AGE, 3)
    means = pd.Series(AGE).groupby(labels).transform("mean").round(2).tolist()
    assert means == [25.00, 25.00, 38.00, 52.33, 52.33, 38.00, 38.00, 25.00, 52.33]


def test_table3_income_column_needs_groups_of_exactly_three():
    # Seed 001 prints groups of 3 for Income; the unconstrained optimum (groups of 3..5) is
    # {19500, 20000, 21000, 22000} + the other five, SSE 85,050,780 < 156,490,550.
    fixed, sse_fixed = optimal_univariate(INCOME, 3, max_size=3)
    means = pd.Series(INCOME).groupby(fixed).transform("mean").round(2).tolist()
    assert means == TABLE3_INCOME
    assert sse_fixed == pytest.approx(156_490_550.0)
    free, sse_free = optimal_univariate(INCOME, 3)
    assert sse_free == pytest.approx(85_050_780.0)
    assert sorted(np.bincount(free).tolist()) == [4, 5]


@pytest.mark.parametrize("seed", range(12))
def test_optimal_univariate_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    k = int(rng.integers(2, n + 1))
    x = rng.integers(0, 6, size=n).astype(float) if seed % 2 else rng.normal(size=n)
    labels, sse = optimal_univariate(x, k)
    assert np.bincount(labels).min() >= k
    assert sse == pytest.approx(_sse(x, labels), abs=1e-9)
    assert sse == pytest.approx(_brute_force(x, k), abs=1e-9)


@pytest.mark.exhaustive  # about 90 s on a fresh install (microagg1d compiles its kernels);
# the brute-force test above keeps a fast path in `make test`
def test_optimal_univariate_matches_microagg1d():
    microagg1d = pytest.importorskip("microagg1d")
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(2, 80))
        k = int(rng.integers(2, max(3, n // 2 + 1)))
        k = min(k, n)
        x = rng.integers(0, 20, size=n).astype(float) if trial % 2 else rng.normal(size=n)
        _, sse = optimal_univariate(x, k)
        xs = np.sort(x)  # microagg1d works on sorted values; its 'auto' method is not
        # always optimal with tied values (n=65, k=3: 5.2 vs 4.667), wilber is
        oracle = microagg1d.univariate_microaggregation(xs, k, method="wilber")
        assert sse == pytest.approx(_sse(xs, oracle), rel=1e-9, abs=1e-9)


def test_optimal_univariate_groups_are_consecutive_and_sized():
    rng = np.random.default_rng(3)
    x = rng.normal(size=1000)
    labels, _ = optimal_univariate(x, 7)
    sizes = np.bincount(labels)
    assert sizes.min() >= 7 and sizes.max() <= 13
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(labels[order]) >= 0)  # numbered from the smallest values up


def test_optimal_univariate_ties_and_constant():
    labels, sse = optimal_univariate([5.0] * 7, 3)
    assert sse == 0.0 and np.bincount(labels).min() >= 3
    labels, sse = optimal_univariate([1, 1, 1, 2, 2, 2], 3)
    assert sse == 0.0 and labels.tolist() == [0, 0, 0, 1, 1, 1]


def test_optimal_univariate_large_values_keep_precision():
    x = 1e12 + np.array([0.0, 1.0, 2.0, 100.0, 101.0, 102.0])
    labels, sse = optimal_univariate(x, 3)
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert sse == pytest.approx(4.0)


def test_optimal_univariate_bad_input():
    with pytest.raises(ValueError, match="shape"):
        optimal_univariate([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="k"):
        optimal_univariate([1.0, 2.0], 3)
    with pytest.raises(ValueError):
        optimal_univariate([1.0, np.nan, 3.0], 2)
    with pytest.raises(ValueError, match="position 2"):
        optimal_univariate([1.0, 2.0, 1.5, 4.0], 2, assume_sorted=True)
    with pytest.raises(ValueError, match="max_size"):
        optimal_univariate([1.0, 2.0, 3.0, 4.0], 2, max_size=1)
    with pytest.raises(ValueError, match=r"cannot be cut into groups of 3\.\.3"):
        optimal_univariate(list(range(10)), 3, max_size=3)


def test_univariate_optimal_partitioner_on_several_columns():
    rng = np.random.default_rng(0)
    t = rng.normal(size=200)
    X = np.column_stack([t, 2 * t + 0.01 * rng.normal(size=200)])
    labels = partition(X, 4, method="univariate-optimal")
    assert np.bincount(labels).min() >= 4
    # the optimum of the projection on the first principal axis (scikit-learn's PCA)
    from sklearn.decomposition import PCA
    from sklearn.metrics import adjusted_rand_score

    axis = PCA(n_components=1).fit_transform(X)[:, 0]
    assert adjusted_rand_score(labels, optimal_univariate(axis, 4)[0]) == pytest.approx(1.0)
    summed = partition(X, 4, method="univariate-optimal", projection="sum")
    assert np.bincount(summed).min() >= 4


# ------------------------------------------------------------------------------------------
# attribute groups


def test_table1_multivariate_reproduces_exactly():
    # rounding=False: the paper's tables publish the group means unrounded (issue 18 rounds
    # integer-valued columns to integers by default)
    release = anonymize(_example(), quasi_identifiers=["age", "income"], identifiers="id",
                        k=3, random_state=0, rounding=False)
    assert release.data["age"].round(2).tolist() == TABLE1_AGE
    assert release.data["income"].round(2).tolist() == TABLE1_INCOME
    assert release.k == 3


def test_table3_per_variable_release_reports_real_k_and_warns():
    with pytest.warns(PrivacyLeakWarning, match="NOT 3-anonymous"):
        release = anonymize(_example(), quasi_identifiers=["age", "income"], identifiers="id",
                            k=3, random_state=0, attribute_groups="individual",
                            method="univariate-optimal", method_params={"max_size": 3},
                            rounding=False)  # the paper's unrounded means
    assert release.data["age"].round(2).tolist() == TABLE1_AGE  # same as Table 3 (b)
    assert release.data["income"].round(2).tolist() == TABLE3_INCOME
    # two unique records (058 and 732): real k-anonymity 1
    assert release.k == 1
    assert release.checks["k_anonymity"]["required"] is None
    assert np.sum(np.bincount(release.labels) == 1) == 2
    assert release.checks["group_k"]["achieved"] == 3
    assert set(release.attribute_partitions) == {"age", "income"}
    assert release.params["attribute_groups"] == (("age",), ("income",))
    # the intersection attack isolates record 465 (Age 38 x Income 42,343.33)
    assert release.metrics["intersection_attack_reidentified"] == pytest.approx(1 / 9)


def test_one_attribute_group_is_plain_microaggregation():
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        release = anonymize(_example(), quasi_identifiers=["age", "income"], identifiers="id",
                            k=3, random_state=0, attribute_groups=[["age", "income"]],
                            rounding=False)  # the paper's unrounded means
    assert release.data["income"].round(2).tolist() == TABLE1_INCOME
    assert release.checks["k_anonymity"]["required"] == 3 and release.k == 3


def test_correlation_groups_keep_correlated_columns_together():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 300))
    X = np.column_stack([a, b, a + 0.1 * rng.normal(size=300), -b + 0.1 * rng.normal(size=300)])
    assert correlation_groups(X, 2) == [[0, 2], [1, 3]]
    assert correlation_groups(X, 4) == [[0], [1], [2], [3]]
    assert correlation_groups(X, 1) == [[0, 1, 2, 3]]
    with pytest.raises(ValueError, match=r"1\.\.4"):
        correlation_groups(X, 5)
    const = np.column_stack([a, np.zeros(300), a])
    assert correlation_groups(const, 2) == [[0, 2], [1]]


def test_resolve_attribute_groups_errors_name_the_columns():
    X = np.zeros((3, 3))
    with pytest.raises(ValueError, match="'c' are in no group"):
        resolve_attribute_groups([["a"], ["b"]], ["a", "b", "c"], X)
    with pytest.raises(ValueError, match="'a' appear in more than one group"):
        resolve_attribute_groups([["a", "b"], ["a", "c"]], ["a", "b", "c"], X)
    with pytest.raises(ValueError, match="'z' are not quasi-identifiers"):
        resolve_attribute_groups([["a", "b", "c", "z"]], ["a", "b", "c"], X)
    with pytest.raises(ValueError, match="Unknown attribute grouping"):
        resolve_attribute_groups("pairs", ["a", "b", "c"], X)
    with pytest.raises(ValueError, match="n_attribute_groups"):
        resolve_attribute_groups("individual", ["a", "b", "c"], X, n_groups=2)


def test_attribute_groups_refuse_what_they_cannot_combine_with():
    df = _example()
    for extra in ({"epsilon": 1.0}, {"method": "cdt"}, {"method_params": {"gamma": 1}}):
        with pytest.raises(SchemaError, match="attribute_groups cannot"):
            anonymize(df, quasi_identifiers=["age", "income"], identifiers="id", k=3,
                      attribute_groups="individual", **extra)
    with pytest.raises(ValueError, match="n_attribute_groups"):
        anonymize(df, quasi_identifiers=["age", "income"], identifiers="id", k=3,
                  n_attribute_groups=2)


def test_correlation_release_on_census_is_less_lossy_and_riskier():
    from microagg.datasets import load_dataset

    data = load_dataset("census")
    kwargs = {"quasi_identifiers": data.quasi_identifiers, "k": 5, "random_state": 0}
    plain = anonymize(data.data, **kwargs)
    with pytest.warns(PrivacyLeakWarning):
        grouped = anonymize(data.data, attribute_groups="correlation", **kwargs)
    with pytest.warns(PrivacyLeakWarning):
        single = anonymize(data.data, attribute_groups="individual", **kwargs)
    assert single.metrics["information_loss"] < grouped.metrics["information_loss"] \
        < plain.metrics["information_loss"]
    assert plain.metrics["dld_risk"] < grouped.metrics["dld_risk"]
    assert single.k < 5 and grouped.k < 5
    for labels in single.attribute_partitions.values():
        assert np.bincount(labels).min() >= 5


# ------------------------------------------------------------------------------------------
# intersection attack


def test_intersection_attack_on_table3():
    X = np.column_stack([AGE, INCOME])
    M = np.column_stack([TABLE1_AGE, TABLE3_INCOME])
    result = intersection_attack(X, M)
    # 465 is alone in (38, 42,343.33); 058 and 223 share (52.33, 42,343.33); 732's income
    # 39,220 is nearer 42,343.33 than its own 31,168.33, so its intersection misses it
    assert result["reidentified"] == pytest.approx(1 / 9)
    assert result["contains_target"] == pytest.approx(7 / 9)
    # against the multivariate Table 1 every candidate set is a whole group of 3
    plain = intersection_attack(X, np.column_stack([TABLE1_AGE, TABLE1_INCOME]), [[0, 1]])
    assert plain["reidentified"] == 0.0
    assert plain["mean_candidates"] == pytest.approx(3.0)


def test_intersection_attack_brute_force_agreement():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    M = np.column_stack([pd.Series(X[:, j]).groupby(optimal_univariate(X[:, j], 3)[0])
                         .transform("mean") for j in range(3)])
    result = intersection_attack(X, M)
    hits = []
    sizes = []
    for i in range(40):
        candidates = set(range(40))
        for j in range(3):
            values = np.unique(M[:, j])
            nearest = values[np.argmin(np.abs(values - X[i, j]))]
            candidates &= set(np.flatnonzero(M[:, j] == nearest))
        sizes.append(len(candidates))
        hits.append(1.0 / len(candidates) if i in candidates else 0.0)
    assert result["mean_candidates"] == pytest.approx(np.mean(sizes))
    assert result["expected_reidentification"] == pytest.approx(np.mean(hits))


def test_intersection_attack_known_columns_and_errors():
    X = np.array([[0.0, 9.0], [1.0, 0.0], [8.0, 1.0], [9.0, 8.0]])
    M = np.array([[0.5, 8.5], [0.5, 0.5], [8.5, 0.5], [8.5, 8.5]])
    assert intersection_attack(X, M, known=[0])["mean_candidates"] == 2.0
    with pytest.raises(ValueError, match="disjoint"):
        intersection_attack(X, M, [[0], [0, 1]])
    with pytest.raises(ValueError, match="known"):
        intersection_attack(X, M, known=[2])
    with pytest.raises(ValueError, match="shape"):
        intersection_attack(X, M[:3])



def test_one_attribute_group_with_noise_is_not_claimed_k_anonymous():
    with pytest.warns(PrivacyLeakWarning):
        release = anonymize(_example(), quasi_identifiers=["age", "income"], identifiers="id",
                            k=3, random_state=0, attribute_groups=[["age", "income"]],
                            aggregation="rho", aggregation_params={"rho": 0.5})
    assert release.checks["k_anonymity"]["required"] is None
    assert release.checks["group_k"]["achieved"] >= 3
