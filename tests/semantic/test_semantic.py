"""Semantic microaggregation: taxonomy, distances, centroids, semantic MDAV and its release,
on small taxonomies computed by hand (no WordNet needed)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.hierarchy import Hierarchy
from microagg.partition import PARTITIONERS, MixedData
from microagg.semantic import (
    ConceptSpace,
    Taxonomy,
    anonymize_semantic,
    concept_distance,
    semantic_centroid,
    semantic_loss,
    semantic_mdav,
)

# animal > mammal > {dog, cat, horse, cow}; animal > fish > {salmon, trout}
ZOO = Taxonomy.from_edges([
    ("dog", "mammal"), ("cat", "mammal"), ("horse", "mammal"), ("cow", "mammal"),
    ("mammal", "animal"), ("salmon", "fish"), ("trout", "fish"), ("fish", "animal")])


def test_taxonomy_ancestors_depth_leaves_and_several_parents():
    assert ZOO.ancestors("dog") == {"dog", "mammal", "animal"}
    assert ZOO.depth("animal") == 1 and ZOO.depth("dog") == 3
    assert ZOO.leaves == ("cat", "cow", "dog", "horse", "salmon", "trout")
    assert ZOO.roots == ("animal",)
    dag = Taxonomy.from_edges([("bat", "mammal"), ("bat", "flyer"), ("mammal", "animal"),
                               ("flyer", "animal")])
    assert dag.ancestors("bat") == {"bat", "mammal", "flyer", "animal"}


def test_taxonomy_refuses_a_cycle():
    with pytest.raises(SchemaError, match="cycle"):
        Taxonomy.from_edges([("a", "b"), ("b", "a")])


def test_taxonomy_from_an_arx_hierarchy_collapses_padding():
    h = Hierarchy.from_mapping({"*": {"Gov": ["Federal", "State"], "Private": ["Inc"]}},
                               column="work")
    t = Taxonomy.from_hierarchy(h)
    assert t.ancestors("Federal") == {"Federal", "Gov", "*"}
    assert t.leaves == ("Federal", "Inc", "State")


def test_feature_distance_by_hand():
    # T(dog) = {dog, mammal, animal}, T(cat) = {cat, mammal, animal}: union 4, common 2
    assert concept_distance(ZOO, "dog", "cat") == pytest.approx(math.log2(1 + 2 / 4))
    # T(dog) vs T(salmon) = {salmon, fish, animal}: union 5, common 1
    assert concept_distance(ZOO, "dog", "salmon") == pytest.approx(math.log2(1 + 4 / 5))
    # T(dog) vs T(mammal): union 3, common 2
    assert concept_distance(ZOO, "dog", "mammal") == pytest.approx(math.log2(1 + 1 / 3))


@pytest.mark.parametrize("distance", ["feature", "wu-palmer", "ic"])
def test_distance_properties(distance):
    concepts = ZOO.concepts
    for a in concepts:
        assert concept_distance(ZOO, a, a, distance=distance) == 0.0
        for b in concepts:
            d = concept_distance(ZOO, a, b, distance=distance)
            assert d == pytest.approx(concept_distance(ZOO, b, a, distance=distance))
            assert 0.0 <= d <= 1.0
            if a != b:
                assert d > 0.0
    # siblings are closer than concepts of different branches
    assert (concept_distance(ZOO, "dog", "cat", distance=distance)
            < concept_distance(ZOO, "dog", "salmon", distance=distance))


def test_wu_palmer_by_hand():
    # depth(dog) = depth(cat) = 3, lcs mammal of depth 2: 1 - 4 / 6
    assert concept_distance(ZOO, "dog", "cat", distance="wu-palmer") == pytest.approx(1 / 3)


def test_cached_table_matches_pairwise_distances():
    space = ConceptSpace.build(ZOO, ["cat", "dog", "salmon"])
    assert space.candidates[:3] == ("cat", "dog", "salmon")
    assert set(space.candidates) == {"cat", "dog", "salmon", "mammal", "fish", "animal"}
    for i, c in enumerate(space.candidates):
        for j, v in enumerate(space.values):
            assert space.table[i, j] == pytest.approx(concept_distance(ZOO, c, v))


def test_centroid_by_hand():
    # {dog, dog, cat}: dog costs d(dog, cat) = 0.585; cat 2 * 0.585; mammal 3 * 0.415
    assert semantic_centroid(ZOO, ["dog", "dog", "cat"]) == "dog"
    assert semantic_centroid(ZOO, ["dog", "cat"], [1, 2]) == "cat"


def test_centroid_can_be_an_ancestor_not_in_the_group():
    # every value costs 3 * log2(1.5) = 1.755; mammal 4 * log2(4/3) = 1.660
    assert semantic_centroid(ZOO, ["dog", "cat", "horse", "cow"]) == "mammal"


def test_centroid_ties_are_deterministic():
    # dog and cat cost the same: the first value in sorted order wins, every time
    assert {semantic_centroid(ZOO, v) for v in (["dog", "cat"], ["cat", "dog"])} == {"cat"}


def test_centroid_bad_counts():
    with pytest.raises(ValueError, match="counts"):
        semantic_centroid(ZOO, ["dog", "cat"], [1])


def _zoo_frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    leaves = np.array(ZOO.leaves)
    return pd.DataFrame({"pet": leaves[rng.integers(0, leaves.size, n)],
                         "age": rng.integers(1, 15, n), "id": np.arange(n)})


@pytest.mark.parametrize("k", [2, 3, 5, 7])
def test_release_groups_at_least_k_and_centroids_published(k):
    df = _zoo_frame()
    r = anonymize_semantic(df, columns=["pet"], numeric=["age"], k=k, ontology={"pet": ZOO},
                           identifiers=["id"], random_state=3)
    assert "id" not in r.data.columns and len(r.data) == len(df)
    sizes = np.bincount(r.labels)
    assert sizes.min() >= k and (sizes != k).sum() <= 1 and sizes.max() <= 2 * k - 1
    assert r.k >= k and r.checks["k_anonymity"]["achieved"] >= k
    assert set(r.data["pet"]) <= set(ZOO.concepts)
    for g in range(sizes.size):  # each group shows its own semantic centroid
        rows = r.labels == g
        assert r.data.loc[rows, "pet"].nunique() == 1
        assert r.data.loc[rows, "pet"].iloc[0] == semantic_centroid(ZOO, df.loc[rows, "pet"])
        assert r.data.loc[rows, "age"].iloc[0] == pytest.approx(df.loc[rows, "age"].mean())
    assert r.seed == 3 and r.params["method"] == "semantic-mdav"


def test_release_is_deterministic():
    df = _zoo_frame(80)
    a = anonymize_semantic(df, columns=["pet"], k=4, ontology=ZOO, random_state=1)
    b = anonymize_semantic(df, columns=["pet"], k=4, ontology=ZOO, random_state=1)
    np.testing.assert_array_equal(a.labels, b.labels)
    pd.testing.assert_frame_equal(a.data, b.data)


def test_loss_is_zero_when_nothing_changes_and_matches_the_release():
    df = pd.DataFrame({"pet": ["dog"] * 6 + ["salmon"] * 6})
    r = anonymize_semantic(df, columns=["pet"], k=3, ontology=ZOO)
    assert r.metrics["semantic_information_loss"] == 0.0
    assert r.metrics["generalized_share"] == 0.0
    df = _zoo_frame(50)
    r = anonymize_semantic(df, columns=["pet"], k=5, ontology=ZOO)
    again = semantic_loss(df["pet"], r.data["pet"], ZOO)
    assert again["semantic_information_loss"] == pytest.approx(
        r.metrics["semantic_information_loss"])
    assert again["generalized_share"] == pytest.approx(r.metrics["generalized_share"])
    assert 0 < again["semantic_information_loss"] < 1


def test_semantic_mdav_prefers_semantically_close_records():
    # two mammals and two fish: the groups are {dog, cat} and {salmon, trout}
    df = pd.DataFrame({"pet": ["dog", "salmon", "cat", "trout"]})
    r = anonymize_semantic(df, columns=["pet"], k=2, ontology=ZOO)
    assert r.labels[0] == r.labels[2] and r.labels[1] == r.labels[3]
    assert list(r.data["pet"]) == ["cat", "salmon", "cat", "salmon"]


def test_value_not_in_the_ontology_names_column_and_values():
    df = pd.DataFrame({"pet": ["dog", "unicorn", "cat", "dragon"]})
    with pytest.raises(SchemaError, match=r"Column 'pet': 2 value\(s\).*'dragon', 'unicorn'"):
        anonymize_semantic(df, columns=["pet"], k=2, ontology=ZOO)


def test_k_above_n_and_bad_parameters():
    df = _zoo_frame(5)
    with pytest.raises(ValueError, match=r"n_samples=5 should be >= k=10"):
        anonymize_semantic(df, columns=["pet"], k=10, ontology=ZOO)
    with pytest.raises(ValueError, match="'distance' parameter of semantic-mdav"):
        anonymize_semantic(df, columns=["pet"], k=2, ontology=ZOO, distance="cosine")
    with pytest.raises(SchemaError, match=r"'nope'.*Available columns: pet, age, id"):
        anonymize_semantic(df, columns=["nope"], k=2, ontology=ZOO)
    with pytest.raises(SchemaError, match="No ontology for column 'pet'"):
        anonymize_semantic(df, columns=["pet"], k=2, ontology={"other": ZOO})


def test_the_registry_entry_on_mixed_data_with_hierarchies():
    h = Hierarchy.from_mapping({"*": {"Gov": ["Federal", "State"], "Private": ["Inc", "Own"]}},
                               column="work")
    codes = np.array([0, 1, 0, 1, 2, 3, 2, 3])
    data = MixedData.build(None, codes, [h.tables()])
    labels = PARTITIONERS["semantic-mdav"](data, 2, distance="wu-palmer")
    assert np.bincount(labels).min() >= 2
    leaves = np.array(h.tables().leaves)[codes]
    gov = np.isin(leaves, ["Federal", "State"])
    for g in np.unique(labels):  # no group mixes Gov and Private when it need not
        assert len(set(gov[labels == g])) == 1
    np.testing.assert_array_equal(labels, semantic_mdav(data, 2, distance="wu-palmer"))


def test_registered_method_runs_through_the_pipeline_and_its_verifier():
    from microagg import anonymize

    h = Hierarchy.from_mapping({"*": {"mammal": ["dog", "cat", "horse", "cow"],
                                      "fish": ["salmon", "trout"]}}, column="pet")
    df = _zoo_frame(40).drop(columns="age")
    r = anonymize(df, k=4, quasi_identifiers=["pet"], identifiers=["id"],
                  method="semantic-mdav", hierarchies={"pet": h}, random_state=0)
    assert r.params["method"] == "semantic-mdav" and r.k >= 4
    assert set(r.data["pet"]) <= {*h.paths, "mammal", "fish", "*"}
