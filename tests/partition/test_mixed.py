"""Mixed data (seed 002): mixed distance, Gower, MAGE, generalization, IL(Omega), NCP,
homogeneity, query answering, and the mixed release."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg import SchemaError, anonymize
from microagg.aggregate.generalize import class_nodes, generalize
from microagg.datasets import load_dataset
from microagg.hierarchy import Hierarchy
from microagg.metrics import (
    homogeneity,
    il_omega,
    normalized_certainty_penalty,
    query_answering,
)
from microagg.partition import PARTITIONERS, mage
from microagg.partition.mixed import MixedData, gower_distance, mixed_distance

WORK = Hierarchy.from_mapping(
    {"*": {"Gov": ["Federal", "State"], "Private": ["Inc", "Own"]}}, column="work")
SEX = Hierarchy.flat(["M", "F"], column="sex")


def small_data(ages, works, sexes=None):
    codes = [WORK.encode(works)]
    tables = [WORK.tables()]
    if sexes is not None:
        codes.append(SEX.encode(sexes))
        tables.append(SEX.tables())
    return MixedData.build(np.asarray(ages, float).reshape(-1, 1), np.column_stack(codes), tables)


def test_mixed_distance_extremes():
    # one numeric attribute (ages 20..60 -> [0, 1]) and two categorical ones: f(d_c) = d_c
    data = small_data([20, 20, 60, 20, 40], ["Federal", "Federal", "Own", "State", "Federal"],
                      ["M", "M", "F", "M", "M"])
    assert data.mapping() == (0.0, 1.0)
    d = mixed_distance(data, 0)
    assert d[1] == 0.0                          # identical records
    assert d[2] == pytest.approx(1.0 + 2.0)     # d_o,max + f(d_c,max) = 1 + (2/1) * 1
    assert d[3] == pytest.approx(0.5)           # LCA "Gov" at level 1 of 2
    assert d[4] == pytest.approx(0.5)           # numeric only: half the range


def test_mapping_follows_the_attribute_counts():
    # N_o = 4 numeric, N_c = 2 categorical: f(d_c) = (2/4) * (sqrt(4) / 2) * d_c = d_c / 2
    num = np.random.default_rng(0).random((6, 4))
    codes = np.column_stack([WORK.encode(["Federal"] * 6), SEX.encode(["M"] * 6)])
    data = MixedData.build(num, codes, [WORK.tables(), SEX.tables()])
    A, B = data.mapping()
    assert A == 0.0 and B == pytest.approx(1 / math.sqrt(4))
    only_cat = MixedData.build(None, codes, [WORK.tables(), SEX.tables()])
    assert only_cat.mapping() == (0.0, 1.0)
    only_num = MixedData.build(num, None, [])
    np.testing.assert_allclose(mixed_distance(only_num, 0),
                               np.sqrt(((only_num.numeric - only_num.numeric[0]) ** 2).sum(1)))


def test_gower():
    data = small_data([20, 60, 40], ["Federal", "Own", "State"])
    # numeric |0 - 1| = 1, categorical mismatch 1 -> mean 1; hierarchical: LCA root -> 1
    np.testing.assert_allclose(gower_distance(data, 0), [0.0, 1.0, (0.5 + 1) / 2])
    np.testing.assert_allclose(gower_distance(data, 0, hierarchical=True),
                               [0.0, 1.0, (0.5 + 0.5) / 2])


def test_mage_groups_similar_records_and_has_k():
    ages = [20, 21, 22, 60, 61, 62]
    works = ["Federal", "State", "Federal", "Own", "Inc", "Own"]
    for seed in range(5):
        labels = mage(small_data(ages, works), 3, random_state=seed)
        assert sorted(np.bincount(labels)) == [3, 3]
        assert labels[0] == labels[1] == labels[2]


def test_mage_on_adult_sample_is_valid_and_reproducible():
    ds = load_dataset("adult")
    df = ds.data.iloc[:3000]
    cats = ["sex", "race", "education", "workclass"]
    hs = [Hierarchy.from_csv(ds.hierarchies[c], column=c) for c in cats]
    data = MixedData.build(df[["age"]].to_numpy(float),
                           np.column_stack([h.encode(df[c]) for h, c in zip(hs, cats, strict=True)]),
                           [h.tables() for h in hs])
    a = mage(data, 4, c=3, random_state=1)
    np.testing.assert_array_equal(a, mage(data, 4, c=3, random_state=1))
    assert np.bincount(a).min() >= 4


def test_mage_bad_parameters():
    data = small_data([1, 2, 3, 4], ["Federal"] * 4)
    with pytest.raises(ValueError, match="'c' parameter of mage"):
        mage(data, 2, c=0)
    with pytest.raises(ValueError, match="'max_iter' parameter of mage"):
        mage(data, 2, max_iter=0)
    assert PARTITIONERS["mage"].mixed


def test_generalize_and_measures():
    ages = np.array([[20.0], [30.0], [50.0], [70.0]])
    codes = WORK.encode(["Federal", "State", "Own", "Own"])[:, None]
    labels = np.array([0, 0, 1, 1])
    t = WORK.tables()
    mean = generalize(ages, codes, [t], labels)
    assert mean.numeric.ravel().tolist() == [25.0, 25.0, 60.0, 60.0]
    assert mean.labels[0].tolist() == ["Gov", "Gov", "Own", "Own"]
    interval = generalize(ages, codes, [t], labels, numeric_mode="interval")
    assert interval.low.ravel().tolist() == [20.0, 20.0, 50.0, 50.0]
    assert interval.high.ravel().tolist() == [30.0, 30.0, 70.0, 70.0]
    assert class_nodes(codes[:, 0], labels, t).tolist() == [t.ancestor[1, codes[0, 0]],
                                                            t.ancestor[0, codes[2, 0]]]
    # IL(Omega): class 0: 2 * (10/50 + 1/2), class 1: 2 * (20/50 + 0)
    assert il_omega(interval.low, interval.high, [50.0], interval.nodes, [t]) == \
        pytest.approx(2 * (0.2 + 0.5) + 2 * 0.4)
    # NCP: ages 0.2 and 0.4; Gov covers 2 of 4 leaves -> (2 - 1) / (4 - 1)
    assert normalized_certainty_penalty(interval.low, interval.high, [50.0], interval.nodes,
                                        [t]) == pytest.approx((2 * (0.2 + 1 / 3) + 2 * 0.4) / 8)
    assert normalized_certainty_penalty(interval.low, interval.high, [50.0], interval.nodes,
                                        [t], suppressed=[1, 1, 1, 1]) == 1.0


def test_homogeneity():
    assert homogeneity([0, 0, 1, 1], ["a", "a", "a", "b"])["homogeneous_classes"] == 1


def test_query_answering_counts_possible_matches():
    ages = np.array([[20.0], [30.0], [50.0], [70.0]])
    codes = WORK.encode(["Federal", "State", "Own", "Own"])[:, None]
    gen = generalize(ages, codes, [WORK.tables()], np.array([0, 0, 1, 1]),
                     numeric_mode="interval")
    out = query_answering(ages, gen.low, gen.high, codes, gen.nodes, [WORK.tables()],
                          n_queries=200, k=2, random_state=3)
    # intervals and ancestors cover every original match: never fewer answers
    assert out["share_fewer"] == 0.0 and out["mean_anonymized"] >= out["mean_original"]
    same = query_answering(ages, ages, ages, codes, WORK.tables().ancestor[0, codes], [WORK.tables()],
                           n_queries=50)
    assert same["share_equal"] == 1.0  # the original table answers exactly like itself


@pytest.fixture
def adult_sample():
    ds = load_dataset("adult")
    return ds.data.iloc[:2500].reset_index(drop=True), ds.hierarchies


QI = ["age", "sex", "race", "education", "workclass"]
RARE = ["marital-status", "native-country"]
"""Columns with values fewer than k records share: they break k by themselves (dropped)."""


def test_mixed_release(adult_sample):
    df, hier = adult_sample
    hs = {c: hier[c] for c in QI if c != "age"}
    release = anonymize(df, quasi_identifiers=QI, k=5, sensitive="occupation",
                        hierarchies=hs, identifiers=RARE, random_state=0)
    assert release.params["method"] == "mage"
    assert release.params["categorical_quasi_identifiers"] == ("sex", "race", "education",
                                                               "workclass")
    assert release.k >= 5
    assert release.data.groupby(QI).size().min() >= 5
    assert set(release.data["education"]) <= set(
        Hierarchy.from_csv(hier["education"]).tables().node_labels)
    assert 0 < release.metrics["ncp"] < 1
    assert "occupation" in release.metrics["homogeneity"]
    assert release.metrics["query_answering"]["queries"] == 1000
    interval = anonymize(df, quasi_identifiers=QI, k=5, sensitive="occupation", hierarchies=hs,
                         identifiers=RARE, aggregation="interval", random_state=0)
    assert interval.data["age"].str.match(r"^\[\d+, \d+\]$").all()
    assert interval.metrics["ncp"] == pytest.approx(release.metrics["ncp"])


def test_mixed_release_with_l_diversity(adult_sample):
    df, hier = adult_sample
    hs = {c: hier[c] for c in QI if c != "age"}
    for diversity in ("distinct", "entropy"):
        release = anonymize(df, quasi_identifiers=QI, k=4, sensitive="occupation",
                            hierarchies=hs, l=2, diversity=diversity, identifiers=RARE,
                            random_state=0)
        assert release.checks["l_diversity"]["achieved"] >= 2
        assert release.metrics["homogeneity"]["occupation"]["homogeneous_classes"] == 0
        assert release.k >= 4


def test_hierarchy_objects_and_text_columns():
    df = pd.DataFrame({"age": [20, 21, 22, 60, 61, 62],
                       "work": ["Federal", "State", "Federal", "Own", "Inc", "Own"],
                       "d": list("abcabc")})
    release = anonymize(df, quasi_identifiers=["age", "work"], k=3, sensitive="d",
                        hierarchies={"work": WORK}, random_state=0)
    assert release.data["work"].tolist() == ["Gov"] * 3 + ["Private"] * 3


def test_mixed_errors(adult_sample, tmp_path):
    df, hier = adult_sample
    df = df[["age", "education"]]  # the others have values that break k by themselves
    flat = anonymize(df, quasi_identifiers=["age", "education"], k=5, random_state=0)
    assert flat.params["hierarchies"]["education"] == "flat"
    assert any("'education' is not numeric and has no hierarchy: a flat one" in w
               for w in flat.warnings)
    assert set(flat.data["education"]) <= set(df["education"]) | {"*"}
    hs = {"education": hier["education"]}
    with pytest.raises(SchemaError, match=r"works on numeric data only, and .*education.* use one of: cdt, mage"):
        anonymize(df, quasi_identifiers=["age", "education"], k=5, hierarchies=hs,
                  method="mdav")
    for extra in ({"aggregation": "rho"}, {"scaling": "minmax"}, {"intruder_knows": "age"},
                  {"clustering_il": 3}):
        with pytest.raises(SchemaError, match="epsilon, bounds, the noisy aggregations, "
                                              "scaling, intruder_knows and clustering_il"):
            anonymize(df, quasi_identifiers=["age", "education"], k=5, hierarchies=hs,
                      **extra)
    with pytest.raises(ValueError, match="one of mean, interval"):
        anonymize(df, quasi_identifiers=["age", "education"], k=5, hierarchies=hs,
                  aggregation="median")
    with pytest.raises(SchemaError, match="'sex' that are neither quasi-identifiers nor sensitive"):
        anonymize(df, quasi_identifiers=["age", "education"], k=5,
                  hierarchies={**hs, "sex": hier["sex"]})
    broken = df.copy()
    broken.loc[3, "education"] = "Kindergarten"
    with pytest.raises(SchemaError, match=r"Column 'education': 1 value\(s\) .*'Kindergarten'"):
        anonymize(broken, quasi_identifiers=["age", "education"], k=5, hierarchies=hs)
    broken = df.copy()
    broken.loc[[3, 4], "education"] = None
    with pytest.raises(SchemaError, match=r"in 2500 rows \('education': 2 missing\)"):
        anonymize(broken, quasi_identifiers=["age", "education"], k=5, hierarchies=hs,
                  missing="refuse")  # the default, "pattern", releases them (test_missing.py)


def test_interval_text_is_exact_for_large_and_fractional_values():
    df = pd.DataFrame({"income": [1234561.0, 1234564.9, 5.25, 5.5],
                       "work": ["Federal", "State", "Inc", "Own"]})
    release = anonymize(df, quasi_identifiers=["income", "work"], k=2,
                        hierarchies={"work": WORK}, aggregation="interval", random_state=0)
    assert set(release.data["income"]) == {"[1234561, 1234564.9]", "[5.25, 5.5]"}


def test_repr_of_an_all_categorical_release():
    df = pd.DataFrame({"work": ["Federal", "State", "Inc", "Own"] * 3})
    release = anonymize(df, quasi_identifiers="work", k=3, hierarchies={"work": WORK},
                        random_state=0)
    assert "ncp=" in repr(release) and "information_loss" not in repr(release)
