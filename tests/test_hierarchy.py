"""Generalization hierarchies: ARX files, mappings, intervals, flat; LCA, distance, tables."""

from __future__ import annotations

import pytest

from microagg import SchemaError
from microagg.datasets import load_dataset
from microagg.hierarchy import Hierarchy, as_labels

TREE = {"*": {"Gov": ["Federal", "State"], "Private": {"Inc": ["Big", "Small"]}}}


def test_from_mapping_pads_shallow_leaves():
    h = Hierarchy.from_mapping(TREE, column="w")
    assert h.height == 3
    assert h.paths["Federal"] == ("Federal", "Federal", "Gov", "*")
    assert h.paths["Big"] == ("Big", "Inc", "Private", "*")


def test_lca_level_and_distance():
    h = Hierarchy.from_mapping(TREE, column="w")
    assert h.lca(["Big", "Small"]) == ("Inc", 1)
    assert h.lca(["Federal", "State"]) == ("Gov", 2)
    assert h.lca(["Federal", "Big"]) == ("*", 3)
    assert h.lca(["State"]) == ("State", 0)
    assert h.distance("Big", "Small") == pytest.approx(1 / 3)
    assert h.distance("Federal", "Big") == 1.0
    assert h.distance("Big", "Big") == 0.0


def test_tables_agree_with_lca():
    h = Hierarchy.from_mapping(TREE, column="w")
    t = h.tables()
    for a in t.leaves:
        for b in t.leaves:
            level = t.join_level(t.ancestor[0, h.encode([a])[0]], t.ancestor[0, h.encode([b])[0]])
            assert int(level[0]) == h.lca([a, b])[1]
    codes = h.encode(["Big", "Small", "Big"])
    assert t.node_labels[t.group_node(codes)] == "Inc"
    assert t.node_leaves[t.group_node(codes)] == 2
    root = t.ancestor[t.height, 0]
    assert t.node_leaves[root] == 4


def test_adult_files_load(tmp_path):
    ds = load_dataset("adult")
    for col, path in ds.hierarchies.items():
        h = Hierarchy.from_csv(path, column=col)
        assert h.paths[next(iter(h.paths))][-1] == "*"
        h.encode(ds.data[col].to_numpy())  # every value of the data is in its hierarchy
    edu = Hierarchy.from_csv(ds.hierarchies["education"], column="education")
    assert edu.lca(["Bachelors", "Masters"]) == ("Higher education", 2)
    assert edu.lca(["Bachelors", "Some-college"]) == ("Undergraduate", 1)


def test_unknown_value_names_value_column_and_file(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a;X;*\nb;X;*\n")
    h = Hierarchy.from_csv(path, column="code")
    with pytest.raises(SchemaError, match=r"Column 'code': 2 value\(s\) are not in its hierarchy "
                                          rf"\({path}\): 'z'"):
        h.encode(["a", "z", "z"])


@pytest.mark.parametrize("text, message", [
    ("a;X;*\nb;*\n", "same number of levels"),
    ("a;X;*\nb;Y;ROOT\n", "2 roots"),
    ("a;X;*\na;X;*\n", "lists 'a' more than once"),
    ("a;X;P;*\nb;X;Q;*\n", "'X' \\(level 1\\) has two parents"),
    ("", "is empty"),
])
def test_bad_files(tmp_path, text, message):
    path = tmp_path / "h.csv"
    path.write_text(text)
    with pytest.raises(SchemaError, match=message):
        Hierarchy.from_csv(path, column="c")


def test_missing_file_names_column(tmp_path):
    with pytest.raises(FileNotFoundError, match="column 'c' does not exist"):
        Hierarchy.from_csv(tmp_path / "nope.csv", column="c")


def test_intervals_and_flat():
    h = Hierarchy.intervals([3, 17, 24, 17.0], [5, 10], column="age")
    assert h.paths["17"] == ("17", "15-19", "10-19", "*")
    assert h.lca([17, 24]) == ("*", 3)
    assert h.lca(["17", 17.0]) == ("17", 0)  # a float column finds its integer labels
    with pytest.raises(ValueError, match="multiple of the previous"):
        Hierarchy.intervals([1], [5, 7])
    flat = Hierarchy.flat(["x", "y", "x"], column="f")
    assert flat.height == 1 and flat.lca(["x", "y"]) == ("*", 1)


def test_as_labels():
    assert as_labels([1.0, 2.5, "a", 3]).tolist() == ["1", "2.5", "a", "3"]


def test_mapping_errors():
    with pytest.raises(SchemaError, match="exactly one root"):
        Hierarchy.from_mapping({"a": [], "b": []})
    with pytest.raises(SchemaError, match="'G' has no values"):
        Hierarchy.from_mapping({"*": {"G": []}})
    with pytest.raises(SchemaError, match="lists 'a' twice"):
        Hierarchy.from_mapping({"*": {"G": ["a"], "H": ["a"]}})
