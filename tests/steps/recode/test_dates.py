"""The ``recode_date`` step: months, years and whole years of age, hand-worked (29 February
included), non-dates refused, and its verifier catching corruption."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.steps.recode.dates import apply_recode_date
from microagg.steps.recode.options import RecodeDate
from microagg.steps.recode.verify import verify_recode_date

RNG = np.random.default_rng(0)
BIRTHS = pd.DataFrame({"birth": pd.to_datetime(
    ["1980-02-29", "2000-06-30", "2000-07-01", "1990-01-01", None, "2024-06-30",
     "1950-12-31 13:45"], format="ISO8601"), "income": np.arange(7.0)})


def test_whole_years_of_age_hand_worked() -> None:
    options = RecodeDate("birth", "age", reference="2024-06-30")
    out, details = apply_recode_date(BIRTHS, options, RNG)
    # 1980-02-29 -> 44 (birthday passed); 2000-06-30 -> 24 (that day); 2000-07-01 -> 23
    # (tomorrow); 1990-01-01 -> 34; missing; 2024-06-30 -> 0; 1950-12-31 -> 73
    assert out["birth"].tolist()[:4] == [44.0, 24.0, 23.0, 34.0]
    assert np.isnan(out["birth"].iloc[4])
    assert out["birth"].tolist()[5:] == [0.0, 73.0]
    assert out["birth"].dtype == np.float64
    assert details["records_changed"] == 6 and details["missing"] == 1
    assert (details["lowest"], details["highest"]) == (0.0, 73.0)
    assert verify_recode_date(options, BIRTHS, out)["holds"]


def test_a_29_february_birthday_comes_on_1_march_in_a_common_year() -> None:
    born = pd.DataFrame({"d": pd.to_datetime(["2000-02-29"] * 2)})
    at_28 = apply_recode_date(born, RecodeDate("d", "age", reference="2023-02-28"), RNG)[0]
    at_1 = apply_recode_date(born, RecodeDate("d", "age", reference="2023-03-01"), RNG)[0]
    assert at_28["d"].tolist() == [22.0, 22.0] and at_1["d"].tolist() == [23.0, 23.0]


@pytest.mark.parametrize(("precision", "expected", "changed"), [
    ("month", ["1980-02-01", "2000-06-01", "2000-07-01", "1990-01-01", None, "2024-06-01",
               "1950-12-01"], 4),
    ("year", ["1980-01-01", "2000-01-01", "2000-01-01", "1990-01-01", None, "2024-01-01",
              "1950-01-01"], 5),
])
def test_months_and_years_are_their_first_day(precision, expected, changed) -> None:
    options = RecodeDate("birth", precision)
    out, details = apply_recode_date(BIRTHS, options, RNG)
    assert pd.api.types.is_datetime64_any_dtype(out["birth"].dtype)
    shown = [None if pd.isna(v) else v.strftime("%Y-%m-%d") for v in out["birth"]]
    assert shown == expected
    assert (out["birth"].dropna().dt.hour == 0).all()
    assert details["records_changed"] == changed
    assert verify_recode_date(options, BIRTHS, out)["holds"]


def test_iso_text_dates_are_read() -> None:
    text = pd.DataFrame({"d": ["1984-03-07", None, "2001-11-30"]}, dtype=object)
    out, _ = apply_recode_date(text, RecodeDate("d", "year"), RNG)
    assert [None if pd.isna(v) else v.year for v in out["d"]] == [1984, None, 2001]


def test_a_non_date_column_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"needs a date column; column 'income' is float64"):
        apply_recode_date(BIRTHS, RecodeDate("income", "year"), RNG)
    words = pd.DataFrame({"d": ["1984-03-07", "soon", "later"]}, dtype=object)
    with pytest.raises(SchemaError, match=r"2 value\(s\) of column 'd' are not ISO dates "
                                          r"\(e.g. 'soon'\)"):
        apply_recode_date(words, RecodeDate("d", "month"), RNG)


def test_a_date_after_the_reference_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"2 date\(s\) of column 'birth' are after the "
                                          r"reference date 2000-06-30 \(up to 2024-06-30\)"):
        apply_recode_date(BIRTHS, RecodeDate("birth", "age", reference="2000-06-30"), RNG)


def test_the_verifier_catches_a_corrupted_output() -> None:
    age = RecodeDate("birth", "age", reference="2024-06-30")
    out, _ = apply_recode_date(BIRTHS, age, RNG)
    out.loc[2, "birth"] = 24.0  # one year too old: the birthday is tomorrow
    assert verify_recode_date(age, BIRTHS, out)["violations"] == 1
    month = RecodeDate("birth", "month")
    out, _ = apply_recode_date(BIRTHS, month, RNG)
    exact = out.copy()
    exact.loc[0, "birth"] = pd.Timestamp("1980-02-29")  # the day published
    assert not verify_recode_date(month, BIRTHS, exact)["holds"]
    moved = out.copy()
    moved.loc[1, "birth"] = pd.Timestamp("2000-05-01")  # the first of another month
    assert verify_recode_date(month, BIRTHS, moved)["violations"] == 1
    year = RecodeDate("birth", "year")
    assert not verify_recode_date(year, BIRTHS, out)["holds"]  # months are not years
