"""Hierarchy builders: intervals, groupings, masking, ordinal ranges; the ARX CSV writer
(round trip with the reader); the preview; the Adult hierarchies rebuilt."""

from __future__ import annotations

import math
import pathlib
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from microagg.hierarchy import Hierarchy
from microagg.hierarchy_builders import (
    HierarchyBuildError,
    grouping_hierarchy,
    hierarchy_preview,
    interval_hierarchy,
    masking_hierarchy,
    ordinal_hierarchy,
)
from microagg.steps.recode.categories import apply_recode
from microagg.steps.recode.options import Recode

ADULT = pathlib.Path("/work/shared/datasets/adult")


# ------------------------------------------------------------------------------ intervals

def test_interval_widths_hand_worked():
    h = interval_hierarchy([17, 24.0, 39, np.nan, 24], [5, 10, 20], column="age")
    assert list(h.paths) == ["17", "24", "39"]  # numeric order, missing ignored, once each
    assert h.paths["17"] == ("17", "[15, 20)", "[10, 20)", "[0, 20)", "*")
    assert h.paths["24"] == ("24", "[20, 25)", "[20, 30)", "[20, 40)", "*")
    assert h.paths["39"] == ("39", "[35, 40)", "[30, 40)", "[20, 40)", "*")


def test_interval_breaks_open_ends_and_origin():
    h = interval_hierarchy([17, 18, 70, -5], [[-math.inf, 0, 18, 65, math.inf],
                                             [-math.inf, 18, math.inf]], column="age")
    assert h.paths["-5"] == ("-5", "< 0", "< 18", "*")
    assert h.paths["17"] == ("17", "[0, 18)", "< 18", "*")
    assert h.paths["18"] == ("18", "[18, 65)", ">= 18", "*")
    assert h.paths["70"] == ("70", ">= 65", ">= 18", "*")
    shifted = interval_hierarchy([2.5, 7], [5], origin=2.5)
    assert shifted.paths["2.5"][1] == "[2.5, 7.5)" and shifted.paths["7"][1] == "[2.5, 7.5)"


def test_interval_widths_that_do_not_nest_name_the_group_and_values():
    with pytest.raises(HierarchyBuildError, match=r"level-1 group '\[5, 10\)' is split at "
                                                  r"level 2: value '5' goes to '\[0, 7\)' "
                                                  r"and value '7' to '\[7, 14\)'"):
        interval_hierarchy([5, 7], [5, 7], column="age")


def test_interval_problems_all_at_once():
    with pytest.raises(HierarchyBuildError) as raised:
        interval_hierarchy([12, -1, 3], [[0, 10], -3], column="age")
    problems = raised.value.problems
    assert len(problems) == 3
    assert "value '12' is outside the breaks of level 1 ([0, 10))" in problems[0]
    assert "value '-1' is outside the breaks of level 1" in problems[1]
    assert "level 2: the interval width must be a number > 0; got -3" in problems[2]
    with pytest.raises(HierarchyBuildError, match="value 'abc' is not a finite number"):
        interval_hierarchy([1, "abc"], [5], column="age")
    with pytest.raises(HierarchyBuildError, match="increasing order"):
        interval_hierarchy([1], [[0, 10, 5]], column="age")


# ------------------------------------------------------------------------------ groupings

REGIONS = ["N1", "N2", "S1", "S2", "E1"]


def test_groups_level_by_level_hand_worked():
    h = grouping_hierarchy(REGIONS, [
        {"North": ["N1", "N2"], "South": ["S1", "S2"], "East": ["E1"]},
        {"North+East": ["N1", "N2", "E1"], "South": ["S1", "S2"]}], column="region")
    assert h.paths["N2"] == ("N2", "North", "North+East", "*")
    assert h.paths["E1"] == ("E1", "East", "North+East", "*")
    assert h.paths["S1"] == ("S1", "South", "South", "*")
    assert h.lca(["N1", "E1"]) == ("North+East", 2)


def test_groups_must_cover_nest_and_not_overlap():
    with pytest.raises(HierarchyBuildError) as raised:
        grouping_hierarchy(REGIONS, [
            {"North": ["N1", "N2"], "South": ["S1", "S2", "N2"], "Other": ["X9"]}],
            column="region")
    problems = raised.value.problems
    assert problems == [
        "Column 'region', level 1: value 'N2' is in two groups, 'North' and 'South'.",
        "Column 'region', level 1: group 'Other' names 'X9', which is not a value of the "
        "column.",
        "Column 'region', level 1: 1 value(s) are in no group: 'E1'; every value must be "
        "covered."]
    with pytest.raises(HierarchyBuildError, match=r"level-1 group 'North' is split at level "
                                                  r"2: value 'N1' goes to 'A' and value 'N2' "
                                                  r"to 'B'"):
        grouping_hierarchy(REGIONS, [
            {"North": ["N1", "N2"], "South": ["S1", "S2", "E1"]},
            {"A": ["N1"], "B": ["N2", "S1", "S2", "E1"]}], column="region")


def test_groups_keep_ungrouped():
    h = grouping_hierarchy(REGIONS, [{"North": ["N1", "N2"]}, {"North": ["N1", "N2"],
                                                               "South": ["S1", "S2"]}],
                           column="region", keep_ungrouped=True)
    assert h.paths["S1"] == ("S1", "S1", "South", "*")
    assert h.paths["E1"] == ("E1", "E1", "E1", "*")


# ------------------------------------------------------------------------------ masking

def test_masking_right_to_left():
    h = masking_hierarchy(["12345", "12399", "45678"], column="postcode")
    assert h.paths["12399"] == ("12399", "1239*", "123**", "12***", "1****", "*")
    assert h.lca(["12345", "12399"]) == ("123**", 2)
    short = masking_hierarchy([12345, 987], [2, 4], column="code")  # numbers as codes
    assert short.paths["987"] == ("987", "9**", "***", "*")
    assert short.paths["12345"] == ("12345", "123**", "1****", "*")


def test_masking_counts_must_increase():
    with pytest.raises(HierarchyBuildError) as raised:
        masking_hierarchy(["123"], [2, 2, 0], column="postcode")
    assert raised.value.problems == [
        "Column 'postcode', level 2: 2 character(s) masked is not more than level 1's 2; "
        "each level must mask more.",
        "Column 'postcode', level 3: the number of characters masked must be a whole number "
        ">= 1; got 0."]


# ------------------------------------------------------------------------------ ordinals

EDU = ["none", "primary", "lower secondary", "upper secondary", "bachelor", "master"]


def test_ordinal_ranges_hand_worked():
    h = ordinal_hierarchy(EDU, [["lower secondary", "bachelor"], ["bachelor"]],
                          values=["primary", "master"], column="edu")
    assert list(h.paths) == EDU
    assert h.paths["none"] == ("none", "none..primary", "none..upper secondary", "*")
    assert h.paths["upper secondary"] == ("upper secondary",
                                          "lower secondary..upper secondary",
                                          "none..upper secondary", "*")
    assert h.paths["master"] == ("master", "bachelor..master", "bachelor..master", "*")
    single = ordinal_hierarchy(["a", "b", "c"], [["b", "c"]])
    assert single.paths["b"] == ("b", "b", "*")


def test_ordinal_cuts_must_nest_and_values_be_ordered():
    with pytest.raises(HierarchyBuildError) as raised:
        ordinal_hierarchy(EDU, [["bachelor"], ["primary"], ["none"]], values=["phd", "none"],
                          column="edu")
    assert raised.value.problems == [
        "Column 'edu': 1 value(s) are not in the order: 'phd'; every value of the column "
        "must have its place.",
        "Column 'edu', level 2: cut point 'primary' is not a cut of level 1, so it would "
        "split a level-1 group; a level's cuts must be among those of the level below.",
        "Column 'edu', level 3: cut point 'none' must be a value of the order other than "
        "the first."]


# ------------------------------------------------------------------------------ CSV, preview

def test_csv_round_trip_with_the_reader(tmp_path):
    h = grouping_hierarchy(['a;b', 'say "hi"', "plain"], [
        {"semi;group": ['a;b', 'say "hi"'], "p": ["plain"]}], column="odd")
    text = h.to_csv(tmp_path / "odd.csv")
    assert text.splitlines()[0] == '"a;b";"semi;group";*'
    back = Hierarchy.from_csv(tmp_path / "odd.csv", column="odd")
    assert dict(back.paths) == dict(h.paths)
    ages = interval_hierarchy(range(0, 100), [5, 10, 20])
    assert dict(Hierarchy.from_csv(_written(tmp_path, ages)).paths) == dict(ages.paths)


def _written(folder: pathlib.Path, h: Hierarchy) -> pathlib.Path:
    path = folder / "h.csv"
    h.to_csv(path)
    return path


def test_preview_counts_values_and_groups():
    h = interval_hierarchy([1, 6, 7, 12], [5, 10])
    rows = hierarchy_preview(h, pd.Series([1, 6, 6, 7, 12, None]))
    assert [(r["value"], r["count"], r["labels"], r["group_counts"]) for r in rows] == [
        ("1", 1, ["[0, 5)", "[0, 10)", "*"], [1, 4, 5]),
        ("6", 2, ["[5, 10)", "[0, 10)", "*"], [3, 4, 5]),
        ("7", 1, ["[5, 10)", "[0, 10)", "*"], [3, 4, 5]),
        ("12", 1, ["[10, 15)", "[10, 20)", "*"], [1, 1, 5])]


def test_a_built_hierarchy_recodes_a_column():
    h = masking_hierarchy(["75001", "75002", "69001"], [2], column="postcode")
    table = pd.DataFrame({"postcode": ["75001", "69001", "75002", None]})
    out, details = apply_recode(table, Recode("postcode", hierarchy=h, level=1),
                                np.random.default_rng(0))
    assert out["postcode"].tolist()[:3] == ["750**", "690**", "750**"]
    assert pd.isna(out["postcode"].iloc[3])
    assert details["records_changed"] == 3


# ------------------------------------------------------------------------------ Adult

def _partition(h: Hierarchy, level: int) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = defaultdict(set)
    for value, path in h.paths.items():
        groups[path[level]].add(value)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.skipif(not ADULT.is_dir(), reason="the Adult files are not on this machine")
def test_adult_age_is_intervals_of_width_5_10_20():
    # The published file's labels are off by one: "0-4" holds the ages 1 to 5, "5-9" 6 to
    # 10 (rows "5;0-4;0-9;0-19;*" and "10;5-9;0-9;0-19;*"), i.e. its intervals start at 1.
    arx = Hierarchy.from_csv(ADULT / "adult_hierarchy_age.csv", column="age")
    assert arx.height == 4 and arx.paths["5"] == ("5", "0-4", "0-9", "0-19", "*")
    built = interval_hierarchy(list(arx.paths), [5, 10, 20], column="age", origin=1)
    assert built.paths["5"] == ("5", "[1, 6)", "[1, 11)", "[1, 21)", "*")
    for level in (1, 2, 3):
        assert _partition(built, level) == _partition(arx, level)


@pytest.mark.skipif(not ADULT.is_dir(), reason="the Adult files are not on this machine")
@pytest.mark.parametrize("column", ["education", "marital-status", "occupation"])
def test_adult_groupings_rebuilt_level_by_level(column, tmp_path):
    arx = Hierarchy.from_csv(ADULT / f"adult_hierarchy_{column}.csv", column=column)
    levels = []
    for level in range(1, arx.height):
        groups: dict[str, list[str]] = defaultdict(list)
        for value, path in arx.paths.items():
            groups[path[level]].append(value)
        levels.append(dict(groups))
    data = pd.read_csv(ADULT / "adult.csv", sep=";", usecols=[column], dtype=str)[column]
    built = grouping_hierarchy(list(arx.paths), levels, column=column)
    assert dict(built.paths) == dict(arx.paths)
    assert dict(Hierarchy.from_csv(_written(tmp_path, built)).paths) == dict(arx.paths)
    assert sum(r["count"] for r in hierarchy_preview(built, data)) == data.notna().sum()
