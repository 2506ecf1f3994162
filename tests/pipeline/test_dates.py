"""Date quasi-identifiers (issue 18, item 5): parsed to days, microaggregated by every numeric
method, published as dates again (``microagg._pipeline.dates``), and refused where they
cannot be honoured."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg._pipeline.dates import DateSpec, from_days, restore, to_days
from microagg._pipeline.request import Request
from microagg._pipeline.rules import EngineRefusal
from microagg._pipeline.verify import published_classes
from microagg.cli import EXIT_NOT_PROTECTED, app
from microagg.datasets import load_dataset
from microagg.exceptions import SchemaError
from microagg.schema.schema_file import load_schema

IDS = ["person_id", "name", "household_id"]
DROP = [*IDS, "postcode", "weight"]
"""The identifiers, and the columns that break k by themselves unless masked."""


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """The bundled survey without income (its missing values are another issue's)."""
    return load_dataset("survey").data.drop(columns=["income"])


def _classes_min(df: pd.DataFrame, qi: list[str]) -> int:
    return int(np.bincount(published_classes(df, qi)).min())


# -- the conversion, on hand-computed values -------------------------------------------------

def test_days_since_1970_and_back() -> None:
    days, spec = to_days(pd.Series(["1970-01-01", "1970-01-11", "1989-03-13", None]),
                         DateSpec(), column="d")
    # 1989-03-13: 19 years from 1970 with 5 leap days (72, 76, 80, 84, 88) = 6940, + 71 days
    np.testing.assert_array_equal(days, [0.0, 10.0, 7011.0, np.nan])
    assert spec.text
    back = from_days(np.array([0.4, 10.6, 7011.0, np.nan]), spec)
    assert back.tolist()[:3] == ["1970-01-01", "1970-01-12", "1989-03-13"]
    assert back.isna().tolist() == [False, False, False, True]
    # by year or month: ISO partial dates, which do not look exact
    assert from_days(np.array([7011.0]), DateSpec(publish="year")).tolist() == ["1989"]
    assert from_days(np.array([7011.0]), DateSpec(publish="month")).tolist() == ["1989-03"]


def test_declared_format_is_used_and_unparseable_values_are_named() -> None:
    days, _ = to_days(pd.Series(["13.03.1989", "01.01.1970"]), DateSpec(format="%d.%m.%Y"),
                      column="dob")
    np.testing.assert_array_equal(days, [7011.0, 0.0])
    bad = pd.Series(["1989-03-13", "13/03/1989", "yesterday", "1970-01-01", "yesterday"])
    with pytest.raises(SchemaError, match=r"'dob' is declared a date \(format ISO 8601\), but "
                                          r"3 of its 5 values do not parse, e\.g\. "
                                          r"'13/03/1989', 'yesterday'"):
        to_days(bad, DateSpec(), column="dob")
    with pytest.raises(SchemaError, match=r"'dob' is declared a date but holds numbers"):
        to_days(pd.Series([19890313]), DateSpec(), column="dob")


def test_datetime_columns_keep_their_type_and_time_zone() -> None:
    column = pd.Series(pd.to_datetime(["2020-01-01 23:00", "2020-01-03 00:00"])).dt.tz_localize(
        "Europe/Zurich")
    days, spec = to_days(column, DateSpec(), column="t")
    assert not spec.text and spec.tz == "Europe/Zurich"
    np.testing.assert_allclose(days, [18262 + 23 / 24, 18264.0])  # wall time, not UTC
    back = from_days(days, spec)
    assert str(back.dt.tz) == "Europe/Zurich"
    assert back.dt.strftime("%Y-%m-%d").tolist() == ["2020-01-02", "2020-01-03"]  # to the day


def test_generalized_intervals_of_days_become_intervals_of_dates() -> None:
    published = pd.DataFrame({"d": ["[7011, 7041]", "0"]})
    out = restore(published, {"d": DateSpec()})
    assert out["d"].tolist() == ["[1989-03-13, 1989-04-12]", "1970-01-01"]


# -- releases of the bundled survey ----------------------------------------------------------

def test_survey_release_publishes_valid_dates_and_verifies_k(survey: pd.DataFrame) -> None:
    qi = ["age", "date_of_birth", "household_size"]
    release = anonymize(survey, quasi_identifiers=qi, identifiers=DROP, k=5, random_state=0,
                        dates={"date_of_birth": {"publish": "month"}})
    published = release.data["date_of_birth"]
    parsed = pd.to_datetime(published, format="%Y-%m", errors="coerce")
    assert parsed.notna().all()  # an ISO year and month: 1989-03
    assert release.params["dates"]["date_of_birth"]["publish"] == "month"
    assert _classes_min(release.data, qi) == release.k >= 5
    original = pd.to_datetime(survey["date_of_birth"])
    # a group mean of neighbouring birth dates stays close to each of them
    assert ((parsed - original).abs() < pd.Timedelta(days=3 * 365)).mean() > 0.95
    assert release.checks["rounding"]["dates"] == {"date_of_birth": "month"}


def test_datetime_quasi_identifier_is_a_date_without_declaration(survey: pd.DataFrame) -> None:
    df = survey.assign(date_of_birth=pd.to_datetime(survey["date_of_birth"]))
    release = anonymize(df, quasi_identifiers=["date_of_birth", "weight"],
                        identifiers=[*IDS, "postcode", "age"], k=4, random_state=1)
    assert pd.api.types.is_datetime64_any_dtype(release.data["date_of_birth"])
    assert release.params["dates"]["date_of_birth"]["published_as"] == "datetime64"
    assert _classes_min(release.data, ["date_of_birth", "weight"]) == release.k >= 4


@pytest.mark.parametrize("method", ["mdav", "vmdav", "tfrp1"])
def test_every_numeric_method_partitions_dates(survey: pd.DataFrame, method: str) -> None:
    df = survey.iloc[:600]
    release = anonymize(df, quasi_identifiers=["date_of_birth", "age"], identifiers=DROP, k=3,
                        method=method, random_state=0, dates="date_of_birth")
    assert pd.to_datetime(release.data["date_of_birth"], format="%Y-%m-%d").notna().all()
    assert _classes_min(release.data, ["date_of_birth", "age"]) >= 3


def test_date_quasi_identifier_with_a_categorical_one_generalizes(survey: pd.DataFrame
                                                                    ) -> None:
    df = survey.iloc[:400]
    release = anonymize(df, quasi_identifiers=["date_of_birth", "sex"],
                        identifiers=[*DROP, "age"], sensitive="diagnosis", k=5,
                        random_state=0, dates="date_of_birth")
    assert release.params["method"] == "mage"
    assert pd.to_datetime(release.data["date_of_birth"], format="%Y-%m-%d").notna().all()
    assert _classes_min(release.data, ["date_of_birth", "sex"]) >= 5


def test_dates_refusals_name_the_column(survey: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"dates name column\(s\) 'sex' that are not "
                                          r"quasi-identifiers"):
        Request.build(survey, quasi_identifiers=["age"], identifiers=IDS, k=3, dates="sex")
    with pytest.raises(ValueError, match=r"dates\['date_of_birth'\]\['publish'\] must be one "
                                         r"of day, month, year\. Got 'week'"):
        Request.build(survey, quasi_identifiers=["date_of_birth"], identifiers=IDS, k=3,
                      dates={"date_of_birth": {"publish": "week"}})
    with pytest.raises(EngineRefusal, match="drop dates"):
        Request.build(survey.iloc[:20], quasi_identifiers=["date_of_birth"], k=3,
                      engine="file", dates="date_of_birth")


# -- the CLI: schema declaring a date, the written file verified -------------------------------

SCHEMA = """
[columns.person_id]
role = "identifier"
[columns.name]
role = "identifier"
[columns.household_id]
role = "identifier"
[columns.age]
role = "quasi-identifier"
type = "numeric"
[columns.date_of_birth]
role = "quasi-identifier"
type = "date"
format = "%Y-%m-%d"
[columns.household_size]
role = "quasi-identifier"
type = "numeric"
round = "none"
"""


def test_cli_schema_date_and_integer_age(tmp_path: pathlib.Path, survey: pd.DataFrame) -> None:
    source = tmp_path / "survey.csv"
    others = [c for c in survey.columns if c not in
              ("person_id", "name", "household_id", "age", "date_of_birth", "household_size")]
    survey.to_csv(source, index=False)
    schema = tmp_path / "s.toml"
    schema.write_text(SCHEMA + "".join(f'[columns.{c}]\nrole = "other"\n' for c in others))
    assert load_schema(schema).dates == {"date_of_birth": {"format": "%Y-%m-%d"}}
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = CliRunner().invoke(app, ["anonymize", str(source), "--schema", str(schema),
                                      "-k", "5", "-o", str(out), "--summary-json",
                                      str(summary), "--random-state", "0"])
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    written = pd.read_csv(out, dtype={"date_of_birth": "str"})
    dates = pd.to_datetime(written["date_of_birth"], format="%Y-%m-%d", errors="coerce")
    assert dates.notna().all()  # valid ISO dates
    assert pd.api.types.is_integer_dtype(written["age"])  # rounded to integers by default
    assert not pd.api.types.is_integer_dtype(written["household_size"])  # round = "none"
    qi = ["age", "date_of_birth", "household_size"]
    data = json.loads(summary.read_text())
    assert data["params"]["rounding"] == {"age": 0}
    assert _classes_min(written, qi) == data["checks"]["k_anonymity"]["achieved"] >= 5
    assert data["checks"]["rounding"]["k_after"] == data["checks"]["k_anonymity"]["achieved"]


def test_cli_dates_and_round_options(tmp_path: pathlib.Path, survey: pd.DataFrame) -> None:
    source = tmp_path / "s.csv"
    survey.iloc[:600].to_csv(source, index=False)
    out, summary = tmp_path / "o.csv", tmp_path / "o.json"
    common = [str(source), "--drop", ",".join(DROP), "-k", "3"]
    result = CliRunner().invoke(app, ["anonymize", *common, "-q", "age,date_of_birth",
                                      "--dates", "date_of_birth:year", "--round", "none",
                                      "-o", str(out), "--summary-json", str(summary),
                                      "--random-state", "0"])
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    written = pd.read_csv(out, dtype={"date_of_birth": "str"})
    assert written["date_of_birth"].str.fullmatch(r"\d{4}").all()  # by year: ISO "1989"
    assert not pd.api.types.is_integer_dtype(written["age"])  # --round none: exact means
    data = json.loads(summary.read_text())
    assert data["params"]["rounding"] == {}
    assert _classes_min(written, ["age", "date_of_birth"]) == data["checks"]["k_anonymity"][
        "achieved"] >= 3
    for args, message in ((["--dates", "date_of_birth:week"], "--dates takes COLUMN"),
                          (["--round", "age=x"], "--round takes COLUMN=DIGITS"),
                          (["--round", "age=0", "--engine", "file"], "drop --round")):
        result = CliRunner().invoke(app, ["anonymize", *common, "-q", "age,date_of_birth",
                                          *args, "-o", str(tmp_path / "x.csv")])
        assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "x.csv").exists()
