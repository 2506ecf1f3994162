"""Random rho-aggregation and random k-anonymity noise (seed 000), and what a release says."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microagg import PrivacyLeakWarning, PrivacyViolationError, SchemaError, anonymize
from microagg.aggregate.aggregators import (
    aggregate,
    group_mean,
    group_ranges,
    is_noisy,
    random_k_anonymous,
    rho_aggregation,
)

# one group of 3 records and one of 2, two columns (the second constant in group 1)
VALUES = np.array([[1.0, 10.0], [2.0, 20.0], [6.0, 60.0], [10.0, 5.0], [30.0, 5.0]])
LABELS = np.array([0, 0, 0, 1, 1])


def test_group_ranges():
    lo, hi, mean = group_ranges(VALUES, LABELS)
    np.testing.assert_array_equal(lo, [[1.0, 10.0], [10.0, 5.0]])
    np.testing.assert_array_equal(hi, [[6.0, 60.0], [30.0, 5.0]])
    np.testing.assert_array_equal(mean, [[3.0, 30.0], [20.0, 5.0]])


def test_rho_zero_is_classic_microaggregation():
    np.testing.assert_array_equal(rho_aggregation(VALUES, LABELS, rho=0.0, random_state=1),
                                  group_mean(VALUES, LABELS))
    assert not is_noisy("rho", {"rho": 0.0})
    assert is_noisy("rho", {"rho": 0.1}) and is_noisy("random-k", {})


@pytest.mark.parametrize("rho", [0.25, 0.5, 0.8, 1.0])
def test_rho_noise_stays_in_its_interval_and_reaches_its_ends(rho):
    # Algorithm 4: m + U[rho (b - m), rho (a - m)]; group 0, column 0: m = 3, b = 1, a = 6
    V = np.repeat(VALUES, 4000, axis=0)
    labels = np.repeat(LABELS, 4000)
    out = rho_aggregation(V, labels, rho=rho, random_state=7)
    g0 = out[labels == 0, 0]
    low, high = 3.0 + rho * (1.0 - 3.0), 3.0 + rho * (6.0 - 3.0)
    assert g0.min() >= low and g0.max() <= high
    assert g0.min() < low + 0.01 * (high - low) and g0.max() > high - 0.01 * (high - low)
    assert stats.kstest((g0 - low) / (high - low), "uniform").pvalue > 1e-3
    # a column constant within its group gets no noise
    assert (out[labels == 1, 1] == 5.0).all()


def test_rho_uses_only_the_group_not_the_record():
    swapped = VALUES[[2, 0, 1, 4, 3]]
    np.testing.assert_array_equal(rho_aggregation(VALUES, LABELS, rho=0.7, random_state=3),
                                  rho_aggregation(swapped, LABELS, rho=0.7, random_state=3))


def test_random_k_folded_noise_is_uniform_on_the_group_range():
    # x + U[-(a-b)/2, (a-b)/2], folded by Eq. 6: for ANY x in [b, a] the result is uniform on
    # [b, a] (a shift modulo the width), which is why seed 000 equates it with rho = 1
    for row in (0, 1, 2):
        V = np.repeat(VALUES[:3], 5000, axis=0)
        labels = np.zeros(V.shape[0], dtype=np.intp)
        out = random_k_anonymous(V, labels, random_state=row)
        own = out[row::3, 0]  # every draw for the record with value VALUES[row, 0]
        assert own.min() >= 1.0 and own.max() <= 6.0
        assert stats.kstest((own - 1.0) / 5.0, "uniform").pvalue > 1e-3


def test_noisy_aggregators_are_reproducible():
    for name, params in (("rho", {"rho": 0.5}), ("random-k", {})):
        a = aggregate(VALUES, LABELS, method=name, random_state=11, **params)
        b = aggregate(VALUES, LABELS, method=name, random_state=11, **params)
        c = aggregate(VALUES, LABELS, method=name, random_state=12, **params)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)


@pytest.mark.parametrize("rho", [-0.1, 1.5, float("nan"), True, "0.5", None])
def test_bad_rho(rho):
    with pytest.raises(ValueError, match=r"'rho' parameter must be a number in \[0, 1\]"):
        rho_aggregation(VALUES, LABELS, rho=rho)


def test_unknown_aggregation_parameter():
    with pytest.raises(TypeError, match=r"parameter\(s\) sigma for aggregation 'rho'.*: rho"):
        aggregate(VALUES, LABELS, method="rho", sigma=1.0)
    with pytest.raises(TypeError, match=r"'mean'. Its parameters: none"):
        aggregate(VALUES, LABELS, method="mean", rho=1.0)


@pytest.fixture
def table(rng) -> pd.DataFrame:
    return pd.DataFrame({"age": rng.integers(18, 90, 80), "income": rng.normal(3e4, 8e3, 80),
                         "diagnosis": rng.choice(["a", "b"], 80)})


@pytest.mark.parametrize("aggregation, params", [("rho", {"rho": 0.5}), ("rho", {"rho": 1.0}),
                                                 ("random-k", None)])
def test_release_reports_group_k_and_syntactic_k_apart(table, aggregation, params):
    with pytest.warns(PrivacyLeakWarning, match="not k-anonymous.*not differential privacy"):
        release = anonymize(table, quasi_identifiers=["age", "income"], k=5,
                            sensitive="diagnosis", aggregation=aggregation,
                            aggregation_params=params, random_state=0)
    assert release.checks["group_k"]["required"] == 5
    assert release.checks["group_k"]["achieved"] >= 5
    assert release.checks["k_anonymity"]["required"] is None
    assert release.checks["k_anonymity"]["achieved"] == release.k == 1
    assert "not promised" in release.checks["k_anonymity"]["model"]
    assert release.warnings[0].startswith(f"Aggregation {aggregation!r}")
    assert release.params["aggregation_params"] == (params or {})
    # every published value lies in its group's range on the original data
    lo, hi, _ = group_ranges(table[["age", "income"]].to_numpy(float), release.labels)
    published = release.data[["age", "income"]].to_numpy()
    assert ((published >= lo[release.labels]) & (published <= hi[release.labels])).all()


def test_rho_zero_release_is_k_anonymous_without_warning(table):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        release = anonymize(table, quasi_identifiers=["age", "income"], k=5,
                            sensitive="diagnosis", aggregation="rho",
                            aggregation_params={"rho": 0.0}, random_state=0)
    assert release.checks["k_anonymity"]["required"] == 5 and release.k >= 5


def test_noise_outside_the_group_range_is_refused(table, monkeypatch):
    import microagg._pipeline.numeric as release_module  # where the stages aggregate

    def escaping(values, labels, **kw):
        return rho_aggregation(values, labels, rho=1.0, random_state=0) + 1e6

    monkeypatch.setattr(release_module, "aggregate", escaping)
    with pytest.raises(PrivacyViolationError, match="outside their group's range"), \
            pytest.warns(PrivacyLeakWarning):
        anonymize(table, quasi_identifiers=["age", "income"], k=5, sensitive="diagnosis",
                  aggregation="rho", random_state=0)


def test_bad_aggregation_params_in_release(table):
    with pytest.raises(TypeError, match="parameter"):
        anonymize(table, quasi_identifiers="age", k=5, aggregation="rho",
                  aggregation_params={"sigma": 1})
    with pytest.raises(ValueError, match="rho"):
        anonymize(table, quasi_identifiers="age", k=5, aggregation="rho",
                  aggregation_params={"rho": 2})


def test_intruder_knows_adds_the_restricted_linkage_risk(table):
    release = anonymize(table, quasi_identifiers=["age", "income"], k=5, sensitive="diagnosis",
                        intruder_knows="age", random_state=0)
    assert 0.0 <= release.metrics["dld_risk_known"] <= 1.0
    with pytest.raises(SchemaError, match="'diagnosis', which are not quasi-identifiers"):
        anonymize(table, quasi_identifiers=["age", "income"], k=5, sensitive="diagnosis",
                  intruder_knows=["diagnosis"])
