"""The survey roles a drafted schema proposes (weight, household, strata) and the comments
naming the household-level columns, checked against brute-force counts of the data."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pandas as pd

from microagg.schema.schema_file import load_schema, propose_schema


def _roles(text: str) -> dict[str, str]:
    """Each drafted column's role, by name."""
    return dict(zip(re.findall(r"^\[columns\.(\w+)\]", text, flags=re.MULTILINE),
                    re.findall(r'^role = "([\w-]+)"', text, flags=re.MULTILINE), strict=True))


def _block(text: str, name: str) -> str:
    """The lines of one column's table in the draft."""
    return text.split(f"[columns.{name}]")[1].split("\n\n")[0]


def _constant_within(df: pd.DataFrame, households: str) -> list[str]:
    """The columns holding one value in every household, by a loop over the households."""
    out = []
    for col in df.columns:
        if col == households or df[col].nunique(dropna=False) <= 1:
            continue
        if all(len(set(map(str, group))) == 1
               for _, group in df.groupby(households, sort=False)[col]):
            out.append(str(col))
    return out


def test_household_id_must_group_rows() -> None:
    """A column named like a household id is the household only when some value is shared
    by several rows and no row lacks one; otherwise it is an identifier with the reason."""
    grouping = propose_schema(pd.DataFrame({"hid": [1, 1, 2, 3], "x": [1.5, 2.5, 3.5, 4.5]}))
    assert _roles(grouping)["hid"] == "household"
    assert "it groups rows" in _block(grouping, "hid")
    unique = propose_schema(pd.DataFrame({"hh_id": [1, 2, 3, 4], "x": [1.5, 2.5, 3.5, 4.5]}))
    assert _roles(unique)["hh_id"] == "identifier"
    assert "unique on every row" in _block(unique, "hh_id")
    gaps = propose_schema(pd.DataFrame({"household_id": [1.0, 1.0, np.nan, 2.0],
                                        "x": [1.5, 2.5, 3.5, 4.5]}))
    assert _roles(gaps)["household_id"] == "identifier"
    assert "some rows have none" in _block(gaps, "household_id")


def test_strata_only_by_explicit_name(tmp_path: pathlib.Path) -> None:
    """``stratum`` and ``psu_stratum`` are proposed as the strata (the first only: one column
    each), a region never; the header says so; the draft loads as a schema."""
    df = pd.DataFrame({"region": list("nnss"), "stratum": [1, 1, 2, 2],
                       "psu_stratum": [7, 7, 8, 9], "age": [30, 40, 50, 60]})
    text = propose_schema(df)
    roles = _roles(text)
    assert roles["stratum"] == "strata"
    assert roles["region"] == "quasi-identifier"
    assert roles["psu_stratum"] == "quasi-identifier"  # the second stratum-named column
    assert "but stratum has that role (one column each)" in _block(text, "psu_stratum")
    assert "a region is not" in text.split("[columns.")[0]
    assert _roles(propose_schema(df.drop(columns="stratum")))["psu_stratum"] == "strata"
    assert _roles(propose_schema(df.rename(columns={"stratum": "strat"})))["strat"] \
        == "quasi-identifier"
    (tmp_path / "s.toml").write_text(text)
    assert load_schema(tmp_path / "s.toml").strata == "stratum"


def test_one_weight_column_and_positive_weights(tmp_path: pathlib.Path) -> None:
    """EU-SILC's personal (rb050) and household (db090) weights: the first is the weight,
    the second an ordinary column with a comment; a weight with a zero is no weight."""
    df = pd.DataFrame({"rb050": [10.5, 20.0, 30.0, 5.0], "db090": [11.0, 11.0, 7.5, 7.5],
                       "pw": [0.0, 1.0, 2.0, 3.0], "db030": [1, 1, 2, 2]})
    text = propose_schema(df)
    roles = _roles(text)
    assert roles["rb050"] == "weight" and roles["db030"] == "household"
    assert roles["db090"] != "weight" and roles["pw"] != "weight"
    assert "but rb050 has that role" in _block(text, "db090")
    (tmp_path / "s.toml").write_text(text)
    loaded = load_schema(tmp_path / "s.toml")
    assert (loaded.weight, loaded.household) == ("rb050", "db030")


def test_household_level_columns_are_named() -> None:
    """The columns constant within every household (here region and the household weight,
    not the age nor a constant column) are marked, and summed up under the household id with
    the household step and per_household."""
    df = pd.DataFrame({"hid": [1, 1, 2, 2, 2, 3], "region": list("aabbbb"),
                       "age": [30, 5, 40, 41, 9, 70], "hw": [2.0, 2.0, 3.0, 3.0, 3.0, 1.5],
                       "country": ["x"] * 6})
    text = propose_schema(df)
    assert _constant_within(df, "hid") == ["region", "hw"]  # the brute-force answer
    for name in ("region", "hw"):
        assert "# household-level: constant within every household of hid" in _block(text,
                                                                                     name)
    for name in ("age", "country"):
        assert "household-level" not in _block(text, name)
    summary = _block(text, "hid")
    assert "(constant within every household): region, hw;" in summary
    assert 'name = "household"' in summary and "per_household=True" in summary
    assert "household-level" not in propose_schema(df.drop(columns="hid"))


def test_bundled_survey_gets_household_weight_and_levels() -> None:
    """The bundled survey: household_id is the household, weight the weight, no strata (no
    column is named like one), and the household-level columns named are exactly those a
    loop over its households finds among the columns not proposed as identifiers."""
    from microagg.datasets import load_dataset

    df = load_dataset("survey").data
    text = propose_schema(df)
    roles = _roles(text)
    assert roles["household_id"] == "household" and roles["weight"] == "weight"
    assert "strata" not in roles.values()
    expected = [c for c in _constant_within(df, "household_id") if roles[c] != "identifier"]
    assert expected == ["region", "postcode", "household_size", "weight"]
    summary = _block(text, "household_id")
    assert f"(constant within every household): {', '.join(expected)};" in summary
