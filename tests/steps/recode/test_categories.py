"""The ``recode`` step: categories grouped by a mapping or a hierarchy level, checked on
hand-worked tables, and its verifier catching a corrupted output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.hierarchy import Hierarchy
from microagg.steps.recode.categories import apply_recode
from microagg.steps.recode.options import Recode
from microagg.steps.recode.verify import verify_recode

RNG = np.random.default_rng(0)
TREE = Hierarchy.from_mapping({"*": {"North": ["N1", "N2"], "South": ["S1", "S2"]}},
                              column="region")


def table() -> pd.DataFrame:
    return pd.DataFrame({"region": ["N1", "S1", None, "N2", "S2", "N1"],
                         "income": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}, index=[9, 7, 5, 3, 1, 0])


def test_a_mapping_groups_the_named_values_and_keeps_the_others() -> None:
    before = table()
    options = Recode("region", groups={"North": ["N1", "N2"]})
    out, details = apply_recode(before, options, RNG)
    # hand-worked: N1, N2 -> North (3 records); S1, S2 unchanged; the missing cell stays
    assert out["region"].tolist()[:2] == ["North", "S1"]
    assert pd.isna(out["region"].iloc[2])
    assert out["region"].tolist()[3:] == ["North", "S2", "North"]
    assert list(out.index) == [9, 7, 5, 3, 1, 0]
    assert out["income"].equals(before["income"])
    assert before["region"].iloc[0] == "N1"  # the input is not modified
    assert details == {"column": "region", "by": "groups",
                       "mapping": {"N1": "North", "N2": "North"},
                       "counts": {"North": 3, "S1": 1, "S2": 1},
                       "records_changed": 3, "missing": 1}
    check = verify_recode(options, before, out)
    assert check["holds"] and check["records_changed"] == 3 and check["violations"] == 0


def test_a_hierarchy_level_replaces_every_value_and_keeps_a_categorical_dtype() -> None:
    before = table().astype({"region": "category"})
    options = Recode("region", hierarchy=TREE, level=1)
    out, details = apply_recode(before, options, RNG)
    assert isinstance(out["region"].dtype, pd.CategoricalDtype)
    assert out["region"].astype(object).where(out["region"].notna(), None).tolist() == \
        ["North", "South", None, "North", "South", "North"]
    assert details["records_changed"] == 5
    assert details["counts"] == {"North": 3, "South": 2}
    top, _ = apply_recode(before, Recode("region", hierarchy=TREE, level=2), RNG)
    assert set(top["region"].dropna()) == {"*"}
    assert verify_recode(options, before, out)["holds"]


def test_a_hierarchy_file_is_read(tmp_path) -> None:
    path = tmp_path / "region.csv"
    path.write_text("N1;North;*\nN2;North;*\nS1;South;*\nS2;South;*\n", encoding="utf-8")
    out, _ = apply_recode(table(), Recode("region", hierarchy=str(path)), RNG)
    assert out["region"].dropna().tolist() == ["North", "South", "North", "South", "North"]


def test_a_numeric_code_column_is_grouped_as_text() -> None:
    before = pd.DataFrame({"edu": [1.0, 2.0, 3.0, np.nan]})
    out, details = apply_recode(before, Recode("edu", groups={"low": ["1", "2"]}), RNG)
    assert out["edu"].tolist()[:3] == ["low", "low", "3"]
    assert details["records_changed"] == 2


def test_a_mapping_naming_absent_values_is_refused_before_anything_changes() -> None:
    before = table()
    with pytest.raises(SchemaError, match=r"names 2 value\(s\) that column 'region' does not "
                                          r"have: 'N9', 'X'. The column's values are 'N1', "):
        apply_recode(before, Recode("region", groups={"North": ["N1", "N9"], "Y": ["X"]}), RNG)
    assert before.equals(table())


def test_a_value_outside_the_hierarchy_and_a_level_above_it_are_refused() -> None:
    before = table()
    before.loc[0, "region"] = "E1"
    with pytest.raises(SchemaError, match=r"1 value\(s\) of column 'region' are not in its "
                                          r"hierarchy \(mapping\): 'E1'"):
        apply_recode(before, Recode("region", hierarchy=TREE), RNG)
    with pytest.raises(ValueError, match=r"'level' .* in \[0, 2\] .* Got 3"):
        Recode("region", hierarchy=TREE, level=3)
    with pytest.raises(SchemaError, match=r"column 'zone' is not in the table; its columns "
                                          r"are region, income"):
        apply_recode(table(), Recode("zone", groups={"a": ["b"]}), RNG)


def test_the_verifier_catches_a_corrupted_output() -> None:
    before = table()
    options = Recode("region", groups={"North": ["N1", "N2"]})
    out, _ = apply_recode(before, options, RNG)
    wrong_group = out.copy()
    wrong_group.iloc[1, 0] = "North"  # S1 published as North: in the domain, not its image
    check = verify_recode(options, before, wrong_group)
    assert not check["holds"] and check["violations"] == 1 and check["outside_domain"] == 0
    unknown = out.copy()
    unknown.iloc[0, 0] = "N1"  # an original value that should have been grouped
    assert verify_recode(options, before, unknown)["outside_domain"] == 1
    blanked = out.copy()
    blanked.iloc[4, 0] = None  # a value turned missing
    assert not verify_recode(options, before, blanked)["holds"]
    h_options = Recode("region", hierarchy=TREE)
    h_out, _ = apply_recode(before, h_options, RNG)
    h_out.iloc[0, 0] = "N1"  # a leaf left at level 1
    assert verify_recode(h_options, before, h_out)["outside_domain"] == 1
