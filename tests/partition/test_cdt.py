"""CDT (seed 004): entropies, weights, Gower (Table 4), the worked example (Table 9),
the measures, and CDT in the pipeline."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

from microagg import SchemaError, anonymize
from microagg.metrics import (
    privacy_of_quasi_identifiers,
    privacy_of_release,
    privacy_of_sensitive,
    utility_loss,
)
from microagg.partition import cdt
from microagg.partition.cdt import (
    Columns,
    attribute_entropy,
    choose_clusters,
    entropy_weights,
    gower_matrix,
)

pytest.importorskip("kmedoids")

# Seed 004, Table 3
AGE = [12, 45, 36, 23, 57, 24, 64, 42, 64, 34]
SEX = list("mfmmmffmff")
PLACE = ["Chennai", "Salem", "Coimbatore", "Salem", "Chennai", "Coimbatore", "Madurai",
         "Madurai", "Madurai", "Chennai"]
RACE = ["OC", "BC", "OC", "BC", "MBC", "OBC", "SC", "ST", "SC", "MBC"]
DISEASE = ["HIV", "cancer", "fever", "cold", "HIV", "fever", "pneumonia", "cancer", "cold",
           "pneumonia"]
SALARY = [100200, 13000, 56000, 44500, 76000, 10000, 23000, 43000, 100200, 13000]
TABLE3 = pd.DataFrame({"age": AGE, "sex": SEX, "place": PLACE, "race": RACE,
                       "disease": DISEASE, "salary": SALARY})


def codes(values):
    return np.unique(values, return_inverse=True)[1]


def test_table3_entropies_and_weights():
    # seed 004, section 3.1.1-3.1.2: printed to 6 and 7 decimals
    entropies = [attribute_entropy(TABLE3[c]) for c in TABLE3.columns]
    np.testing.assert_allclose(entropies, [3.121928, 1.000000, 1.970951, 2.521928, 2.321928,
                                           2.921928], atol=5e-7)
    np.testing.assert_allclose(entropy_weights(entropies),
                               [0.7747309, 0.9278430, 0.8577821, 0.8180252, 0.8324566,
                                0.7891623], atol=5e-8)


# seed 004, Table 4 (lower triangle, row i = tuple 2..10, column j = tuple 1..9)
TABLE4 = [
    [0.94],
    [0.49, 0.79],
    [0.63, 0.47, 0.56],
    [0.34, 0.83, 0.6, 0.66],
    [0.88, 0.57, 0.47, 0.75, 0.9],
    [0.98, 0.58, 0.83, 0.85, 0.8, 0.64],
    [0.69, 0.58, 0.54, 0.56, 0.6, 0.8, 0.62],
    [0.84, 0.71, 0.85, 0.74, 0.75, 0.78, 0.3, 0.68],
    [0.73, 0.53, 0.77, 0.78, 0.53, 0.54, 0.44, 0.76, 0.74],
]


def test_table4_gower_matrix_every_entry():
    cols = Columns.of(np.column_stack([AGE, SALARY]),
                      np.column_stack([codes(SEX), codes(PLACE), codes(RACE), codes(DISEASE)]))
    w = entropy_weights([attribute_entropy(TABLE3[c]) for c in TABLE3.columns])
    weights = [w[0], w[5], w[1], w[2], w[3], w[4]]  # the column order of `cols`
    D = gower_matrix(cols, weights)
    for i, row in enumerate(TABLE4, start=1):
        np.testing.assert_allclose(np.round(D[i, : len(row)], 2), row, atol=1e-9)
    # Table 5: similarity 1 - d^2 (e.g. tuples 5 and 8: 0.64)
    assert round(1 - D[7, 4] ** 2, 2) == 0.64
    np.testing.assert_allclose(D, D.T)
    assert (np.diag(D) == 0).all()
    # blockwise computation gives the same matrix
    np.testing.assert_allclose(gower_matrix(cols, weights, block_rows=3), D)


def sensitive_columns():
    return Columns.of(np.array(SALARY, float)[:, None],
                      np.column_stack([codes(RACE), codes(DISEASE)]))


def quasi_columns():
    return Columns.of(np.array(AGE, float)[:, None],
                      np.column_stack([codes(SEX), codes(PLACE)]))


def test_minimum_silhouette_picks_8_like_the_paper():
    sens = sensitive_columns()
    g_s = 1 - gower_matrix(sens, entropy_weights(sens.entropies())) ** 2
    np.fill_diagonal(g_s, 0.0)
    best, _, widths = choose_clusters(g_s, criterion="min", max_clusters=None)
    assert best == 8  # "Minimum average Silhouette width for D1 is found to be 8"
    assert set(widths) == set(range(2, 10))


def test_table9_classes_with_two_sensitive_clusters():
    # the paper overrides its rule and uses 2 sensitive clusters; then Table 9 follows
    labels = cdt(quasi_columns(), sensitive=sensitive_columns(), sensitive_clusters=2,
                 max_clusters=None, random_state=0)
    groups = sorted(sorted((np.flatnonzero(labels == g) + 1).tolist()) for g in set(labels))
    assert groups == [[1, 4, 8], [2, 9], [3, 5], [6, 7, 10]]


def test_table9_generalization_through_anonymize():
    release = anonymize(TABLE3, quasi_identifiers=["age", "sex", "place"],
                        sensitive=["race", "disease", "salary"], k=2, method="cdt",
                        method_params={"sensitive_clusters": 2, "max_clusters": None},
                        random_state=0)
    published = release.data
    assert published.loc[0, "age"] == "[12, 42]"
    assert published.loc[0, "place"] == "Chennai, Madurai, Salem"
    assert published.loc[5, "place"] == "Chennai, Coimbatore, Madurai"
    assert published.loc[1, "age"] == "[45, 64]" and published.loc[2, "age"] == "[36, 57]"
    assert release.k == 2
    assert release.metrics["distinct_l"]["disease"] == 2.0
    assert release.metrics["homogeneity"]["disease"]["homogeneous_classes"] == 0
    for name in ("utility_loss", "privacy_of_quasi_identifiers", "privacy_of_sensitive",
                 "privacy_of_release"):
        assert 0.0 <= release.metrics[name] <= 1.0


def test_k_merges_small_groups():
    labels = cdt(quasi_columns(), k=3, sensitive=sensitive_columns(), sensitive_clusters=2,
                 max_clusters=None, random_state=0)
    assert np.bincount(labels).min() >= 3


def test_cdt_bad_input():
    with pytest.raises(ValueError, match="'max_clusters' parameter of cdt"):
        cdt(np.zeros((5, 1)), max_clusters=1)
    with pytest.raises(ValueError, match="sensitive has 3 rows for 5 records"):
        cdt(np.zeros((5, 1)), sensitive=np.zeros((3, 1)))
    with pytest.raises(SchemaError, match="name the sensitive columns"):
        anonymize(TABLE3, quasi_identifiers=["age"], k=2, method="cdt")


def test_cdt_refuses_tables_too_large_for_its_matrix(monkeypatch):
    # the package's `cdt` is the function: take the module itself
    module = importlib.import_module("microagg.partition.cdt")

    monkeypatch.setattr(module, "MAX_RECORDS", 5)
    with pytest.raises(ValueError, match=r"10 records would need .* GiB"):
        cdt(np.zeros((10, 1)))


def test_measures_by_hand():
    classes = [0, 0, 1, 1]
    # P(Q): ideal log2 4 = 2; two classes of 2: entropy 1 -> (2 - 1) / 2
    assert privacy_of_quasi_identifiers(classes) == 0.5
    assert privacy_of_quasi_identifiers([0, 1, 2, 3]) == 0.0
    assert privacy_of_quasi_identifiers([0, 0, 0, 0]) == 1.0
    # P(S): class 0 {a, b} -> 1; class 1 {c, c} -> 0 -> sqrt((1 + 0) / 2)
    assert privacy_of_sensitive(classes, [["a", "b", "c", "c"]]) == pytest.approx(0.5 ** 0.5)
    assert privacy_of_release(0.5, 0.5) == pytest.approx(0.5)
    # UL: ages 10..50; class 0 span 10, class 1 span 20; letters: {a, b} and {a}
    ul = utility_loss(classes, [[10.0], [20.0], [30.0], [50.0]], [["a", "b", "a", "a"]])
    assert ul == pytest.approx((2 * np.sqrt((0.25 ** 2 + 0.5 ** 2) / 2)
                                + 2 * np.sqrt(0.5 ** 2 / 2)) / 4)


def test_kmedoids_silhouette_equals_scikit_learn(rng):
    import kmedoids
    from sklearn.metrics import silhouette_score

    X = rng.random((40, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    for labels in (np.repeat([0, 1], 20), np.array([0] * 19 + [1] * 20 + [2]),  # a singleton
                   rng.integers(0, 5, 40)):
        labels = np.unique(labels, return_inverse=True)[1]
        assert kmedoids.silhouette(D, labels, n_cpu=1)[0] == pytest.approx(
            silhouette_score(D, labels, metric="precomputed"), abs=1e-12)
