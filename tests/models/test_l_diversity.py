"""l-diversity (distinct, entropy, recursive): measurement, enforcement, release checks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg import PrivacyViolationError, SchemaError, anonymize
from microagg.models import check_l_diversity, enforce_l_diversity, l_diversity


def test_distinct_entropy_recursive_by_hand():
    classes = [0, 0, 0, 0, 1, 1, 1, 1]
    values = ["a", "a", "b", "c", "a", "b", "c", "d"]
    assert l_diversity(classes, values) == 3.0  # class 0 has a, b, c
    # class 0: p = (1/2, 1/4, 1/4) -> H = 1.5 log 2 -> exp(H) = 2^1.5
    assert l_diversity(classes, values, diversity="entropy") == pytest.approx(2 ** 1.5)
    # class 0 counts (2, 1, 1): l=2 needs 2 < c (1 + 1); l=3 needs 2 < c * 1
    assert l_diversity(classes, values, diversity="recursive", c=0.9) == 1.0
    assert l_diversity(classes, values, diversity="recursive", c=1.1) == 2.0
    assert l_diversity(classes, values, diversity="recursive", c=1.5) == 2.0
    assert l_diversity(classes, values, diversity="recursive", c=2.5) == 3.0


def test_single_value_class_is_1_diverse_in_every_sense():
    for d in ("distinct", "entropy"):
        assert l_diversity([0, 0, 1, 1], ["a", "a", "a", "b"], diversity=d) == pytest.approx(1.0)
    # recursive: l = 1 holds whenever r_1 < c r_1, i.e. c > 1; never for c <= 1
    assert l_diversity([0, 0], ["a", "a"], diversity="recursive", c=3) == 1.0
    assert l_diversity([0, 0], ["a", "a"], diversity="recursive", c=1) == 0.0


def test_check_raises_below_l():
    with pytest.raises(PrivacyViolationError, match="only distinct 1-diverse"):
        check_l_diversity([0, 0, 1, 1], ["a", "a", "a", "b"], 2)


@pytest.mark.parametrize("diversity, l, c", [("distinct", 2, 2.0), ("distinct", 3, 2.0),
                                             ("entropy", 2, 2.0), ("recursive", 2, 3.0)])
def test_enforcement_reaches_l_keeps_k_and_every_row(diversity, l, c, rng):
    X = rng.random((400, 2))
    labels = np.repeat(np.arange(80), 5)
    values = rng.choice(list("abcde"), 400, p=[0.6, 0.2, 0.1, 0.05, 0.05])
    out = enforce_l_diversity(labels, [values], l=l, diversity=diversity, c=c, X=X)
    assert out.shape == labels.shape
    assert np.bincount(out).min() >= 5
    assert l_diversity(out, values, diversity=diversity, c=c) >= l - 1e-9
    # groups are only merged or enlarged: records that shared a satisfying group still do
    before = l_diversity(labels, values)
    assert before < l


def test_enforcement_from_a_table_where_no_group_satisfies(rng):
    labels = np.repeat(np.arange(10), 4)
    values = np.repeat(list("abcdefghij"), 4)  # every group homogeneous
    out = enforce_l_diversity(labels, [values], l=2, X=rng.random((40, 1)))
    assert l_diversity(out, values) >= 2 and np.bincount(out).min() >= 4


def test_set_aside_records_still_make_a_group_of_k():
    # found in review: the records no group could take satisfied the model at once, and
    # stayed a group of 2 with k = 3
    values = [1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0]
    labels = [0] * 5 + [1] * 4 + [2] * 5 + [3] * 4
    out = enforce_l_diversity(labels, [values], l=1.5, diversity="recursive", c=1.5,
                              X=np.arange(18.0)[:, None], k=3)
    assert np.bincount(out).min() >= 3
    assert l_diversity(out, values, diversity="recursive", c=1.5) >= 1.5


def test_enforcement_with_two_sensitive_columns(rng):
    labels = np.repeat(np.arange(30), 4)
    a = rng.choice(list("ab"), 120)
    b = rng.choice(list("xyz"), 120)
    out = enforce_l_diversity(labels, [a, b], l=2, X=rng.random((120, 2)))
    assert l_diversity(out, a) >= 2 and l_diversity(out, b) >= 2


@pytest.mark.parametrize("diversity, values, message", [
    ("distinct", ["a"] * 10, "reaches only l = 1 .*too few distinct values"),
    ("entropy", ["a"] * 9 + ["b"], "its entropy is too low"),
    ("recursive", ["a"] * 9 + ["b"], "most frequent value dominates"),
])
def test_impossible_diversity_says_why(diversity, values, message):
    with pytest.raises(ValueError, match=message):
        enforce_l_diversity(np.repeat([0, 1], 5), [values], l=2, diversity=diversity,
                            X=np.zeros((10, 1)))


def test_bad_parameters():
    with pytest.raises(ValueError, match="Unknown diversity 'bogus'"):
        l_diversity([0], ["a"], diversity="bogus")
    with pytest.raises(ValueError, match="'l' parameter must be a number >= 1"):
        enforce_l_diversity([0, 0], [["a", "b"]], l=0, X=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="has 3 values for 2 records"):
        enforce_l_diversity([0, 0], [["a", "b", "c"]], l=2, X=np.zeros((2, 1)))


@pytest.fixture
def patients(rng) -> pd.DataFrame:
    n = 300
    age = rng.integers(20, 80, n)
    # the diagnosis follows age closely: microaggregation makes homogeneous groups
    diagnosis = np.where(age < 40, "flu", np.where(age < 60, "asthma", "diabetes"))
    flip = rng.random(n) < 0.15
    diagnosis[flip] = rng.choice(["flu", "asthma", "diabetes", "cancer"], flip.sum())
    return pd.DataFrame({"age": age, "weight": rng.normal(75, 12, n).round(1),
                         "diagnosis": diagnosis})


def test_numeric_release_with_l_diversity(patients):
    plain = anonymize(patients, quasi_identifiers=["age", "weight"], k=3, sensitive="diagnosis",
                      random_state=0)
    assert plain.metrics["homogeneity"]["diagnosis"]["homogeneous_classes"] > 0
    for diversity, l in (("distinct", 2), ("entropy", 1.8), ("recursive", 2)):
        release = anonymize(patients, quasi_identifiers=["age", "weight"], k=3,
                            sensitive="diagnosis", l=l, diversity=diversity, diversity_c=3,
                            random_state=0)
        check = release.checks["l_diversity"]
        assert check["achieved"] >= l - 1e-9 and check["diversity"] == diversity
        assert release.metrics["homogeneity"]["diagnosis"]["homogeneous_classes"] == 0
        assert release.k >= 3
        assert release.metrics["information_loss"] >= plain.metrics["information_loss"]


def test_release_l_diversity_errors(patients):
    base = {"quasi_identifiers": ["age", "weight"], "k": 3}
    with pytest.raises(SchemaError, match="needs at least one sensitive column"):
        anonymize(patients, **base, l=2)
    with pytest.raises(ValueError, match="Unknown diversity 'x'"):
        anonymize(patients, **base, sensitive="diagnosis", l=2, diversity="x")
    with pytest.raises(ValueError, match="'l' parameter must be a number >= 1"):
        anonymize(patients, **base, sensitive="diagnosis", l=math.nan)
    with pytest.raises(SchemaError, match="noisy aggregation or an epsilon release"):
        anonymize(patients, **base, sensitive="diagnosis", l=2, aggregation="random-k")
    gaps = patients.copy()
    gaps.loc[[1, 2], "diagnosis"] = None
    with pytest.warns(UserWarning, match="never count as a sensitive value"):  # issue 18
        released = anonymize(gaps, **base, sensitive="diagnosis", l=2)
    assert released.params["missing"]["sensitive_missing"]["diagnosis"] == 2
    with pytest.warns(UserWarning, match="nor in t-closeness's distributions"):
        closer = anonymize(gaps, **base, sensitive="diagnosis", t=0.5)
    assert closer.checks["t_closeness"]["achieved"] <= 0.5
    with pytest.raises(ValueError, match="cannot be made distinct 5-diverse"):
        anonymize(patients, **base, sensitive="diagnosis", l=5)
