"""Household-level columns, the per-household treatment and the re-linking measure, checked
against counts computed here by brute force (plain Python loops over the rows)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.steps.household import (
    household_level_columns,
    per_household,
    relinking,
    relinking_columns,
)


def _brute_relinking(table: pd.DataFrame, column: str) -> tuple[int, int, int]:
    """(households with a value, households identified, records linked) by loops."""
    holders: dict[object, set] = defaultdict(set)
    rows: dict[object, int] = defaultdict(int)
    for h, v in zip(table["hid"], table[column], strict=True):
        if pd.isna(v):
            continue
        holders[v].add(h)
        rows[v] += 1
    with_value = {h for hs in holders.values() for h in hs}
    identified = {next(iter(hs)) for hs in holders.values() if len(hs) == 1}
    linked = sum(rows[v] for v, hs in holders.items() if len(hs) == 1 and rows[v] >= 2)
    return len(with_value), len(identified), linked


def test_household_level_columns_are_detected(households: pd.DataFrame) -> None:
    assert household_level_columns(households, "hid") == ("region", "size", "weight")


def test_a_declared_column_that_varies_is_refused_with_counts(households: pd.DataFrame
                                                              ) -> None:
    multi = households.groupby("hid")["age"].nunique()
    expected = int((multi > 1).sum())
    with pytest.raises(SchemaError, match=rf"'age' is declared household-level but varies "
                                          rf"within {expected} of the 300 households \(e\.g\. "
                                          rf"household {multi[multi > 1].index[0]}\)"):
        household_level_columns(households, "hid", ["region", "age"])


def test_a_missing_value_counts_as_a_value(households: pd.DataFrame) -> None:
    table = households.copy()
    first_big = table.index[table["size"] >= 2][0]
    table.loc[first_big, "region"] = None
    assert "region" not in household_level_columns(table, "hid")
    with pytest.raises(SchemaError, match="varies within 1 of the 300"):
        household_level_columns(table, "hid", ["region"])


def test_per_household_copies_back_keeping_rows_and_order(households: pd.DataFrame) -> None:
    seen: list[int] = []

    def fn(hh: pd.DataFrame) -> pd.DataFrame:
        seen.append(len(hh))
        return hh[["weight"]].assign(weight=hh["weight"] + 1.0)

    out = per_household(households, "hid", ["region", "weight"], fn)
    assert seen == [300]  # one row per household
    assert out.index.equals(households.index)
    assert (out["weight"] == households["weight"] + 1.0).all()
    pd.testing.assert_frame_equal(out.drop(columns="weight"), households.drop(columns="weight"))
    assert households["weight"].iloc[0] == out["weight"].iloc[0] - 1.0  # the input untouched


def test_relinking_of_a_household_unique_weight(households: pd.DataFrame) -> None:
    measure = relinking(households, "hid", "weight")
    n, identified, linked = _brute_relinking(households, "weight")
    assert (measure.households, measure.households_identified, measure.records_linked) == \
        (n, identified, linked)
    assert measure.share == 1.0  # every household's own weight
    assert linked == int((households["size"] >= 2).sum())  # every member of a larger household


def test_relinking_counts_shared_and_missing_values() -> None:
    table = pd.DataFrame({"hid": [1, 1, 2, 2, 3, 4, 4, 4],
                          "w": [5.0, 5.0, 5.0, 5.0, 9.0, 7.0, 7.0, np.nan]})
    measure = relinking(table, "hid", "w")
    assert (measure.households, measure.households_identified, measure.records_linked) == \
        _brute_relinking(table, "w") == (4, 2, 2)  # 3 alone (1 row), 4 linked by two rows
    assert measure.share == 0.5


def test_relinking_columns_names_only_those_that_identify(households: pd.DataFrame) -> None:
    found = relinking_columns(households, "hid", ["region", "weight", "age"])
    assert list(found) == [c for c in ("region", "weight", "age")
                           if _brute_relinking(households, c)[1] > 0]
    assert "region" not in found  # three regions, each held by many households
    assert found["weight"].share == 1.0
