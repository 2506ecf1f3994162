"""The rule that decides what a pass-through column publishes (microagg.io._as_read)."""

from __future__ import annotations

import pandas as pd
import pytest

from microagg.exceptions import InternalError
from microagg.io._as_read import AsRead, published_as_read, round_trips


@pytest.mark.parametrize(("parsed", "fields", "expected"), [
    ([1.5, 1000.0, None, -0.25], ["1.50", "1e3", "", "-0.25"], True),
    ([3, -4, 0], ["3", "-4", "0"], True),
    ([1234, 5], ["01234", "5"], False),             # a leading zero
    ([5.0, 6.0], ["+5", "6"], False),               # a sign the number does not keep
    ([1.0, None], ["1", "NA"], False),              # a missing-value text
    ([1.0, 2.0], [" 1", "2"], False),               # spaces
    ([12345678901234567.0, 1.0], ["12345678901234567", "1"], False),  # past a float's digits
    ([123456789012345678, 1], ["123456789012345678", "1"], True),      # an int64 holds them
    ([True, False], ["True", "False"], True),
    ([True, False], ["TRUE", "false"], False),
    (["FR", "DE"], ["FR", "DE"], False),            # text is published as text anyway
])
def test_round_trips(parsed, fields, expected):
    assert round_trips(pd.Series(parsed), pd.Series(fields)) is expected


def test_published_as_read_by_target():
    data = pd.DataFrame({"age": [31.0, 31.0], "zip": [1234, 2345], "n": [1.5, None]})
    cells = AsRead(pd.DataFrame({"zip": ["01234", "02345"], "n": ["1.50", ""]}), spelled=True)
    as_csv = published_as_read(data, cells, masked=["age"], output="out.csv")
    assert as_csv.to_dict("list") == {"age": [31.0, 31.0], "zip": ["01234", "02345"],
                                      "n": ["1.50", ""]}
    typed = published_as_read(data, cells, masked=["age"], output="out.parquet")
    assert typed["zip"].tolist() == ["01234", "02345"]
    assert typed["n"].dtype == float and typed["n"].iloc[0] == 1.5  # round-trips: a number
    assert data["zip"].tolist() == [1234, 2345]  # the release's table is not changed


def test_excel_cells_keep_their_types_in_excel_only():
    data = pd.DataFrame({"age": [31, 31, 31], "score": [1.0, None, 2.5],
                         "zip": ["01234", "02345", None]})
    cells = AsRead(pd.DataFrame({"score": [1, "NA", 2.5], "zip": ["01234", "02345", None]},
                                dtype=object), spelled=False)
    excel = published_as_read(data, cells, masked=["age"], output="out.xlsx")
    assert excel["score"].tolist() == [1, "NA", 2.5]
    other = published_as_read(data, cells, masked=["age"], output="sqlite:///x.db?table=t")
    assert other["score"].tolist() == ["1", "NA", "2.5"]
    assert other["zip"].equals(data["zip"])  # no text lost: as parsed


def test_a_row_count_mismatch_writes_nothing():
    cells = AsRead(pd.DataFrame({"zip": ["01234"]}), spelled=True)
    with pytest.raises(InternalError, match="gave 2 rows, then 1"):
        published_as_read(pd.DataFrame({"age": [1, 2], "zip": [1, 2]}), cells,
                          masked=["age"], output="out.csv")
