"""Issue 16, items 2-4: pass-through columns kept byte for byte in CSV (both engines),
declared categorical types win over numeric codes, and duplicate column names refused."""

from __future__ import annotations

import csv
import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg.audit.check import check_table
from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.engines.file.engine import anonymize_file
from microagg.exceptions import SchemaError
from microagg.io.tables import read_table
from microagg.schema.schema_file import load_schema

MICROAGG = pathlib.Path(sys.executable).parent / "microagg"

# Fields pandas would change on a round trip: leading zeros, missing-value markers, number
# spellings, text needing quotes (separator, quote, newline), spaces.
NOTES = ["NA", "None", "null", "nan", "", "a,b", 'say "hi"', "line\nbreak", " padded ",
         "1.50", "1e3", "NaN", "-0", "x"]
SCORES = ["1.50", "1.5", "1e3", "2", "3.0", "0.10", "7", "8", "9.25", "10"]


def _input(folder: pathlib.Path, n: int = 30, *, region_codes=("1", "5", "9")) -> pathlib.Path:
    """A CSV with numeric quasi-identifiers and pass-through text pandas would alter."""
    rng = np.random.default_rng(16)
    path = folder / "in.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "income", "region", "zip", "note", "score"])
        for i in range(n):
            writer.writerow([int(rng.integers(18, 90)), int(rng.integers(1000, 9000)),
                             region_codes[i % len(region_codes)], f"{rng.integers(0, 3000):05d}",
                             NOTES[i % len(NOTES)], SCORES[i % len(SCORES)]])
    return path


KEEP = ("--keep", "zip,note")
"""The pass-through columns break k by themselves (zip codes, 14 notes on 30 rows): kept on
purpose."""


def _raw_columns(path: pathlib.Path) -> dict[str, list[str]]:
    """Every column of a CSV as the raw strings the csv module reads."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return {name: [row[j] for row in rows[1:]] for j, name in enumerate(rows[0])}


def _microagg(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """The installed command in a subprocess (what a user runs)."""
    return subprocess.run([str(MICROAGG), *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


def _refused(*args: str | pathlib.Path) -> str:
    """Run the CLI in process; it must exit 2 (a user error): its message."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == EXIT_USER_ERROR, (args, result.output)
    return " ".join(result.output.split())  # rich wraps long lines


SCHEMA = """
[columns.age]
role = "quasi-identifier"
type = "numeric"

[columns.income]
role = "quasi-identifier"
type = "numeric"

[columns.region]
role = "quasi-identifier"
type = "categorical"

[columns.zip]
role = "other"

[columns.note]
role = "other"

[columns.score]
role = "sensitive"
"""


# ------------------------------------------------------------------------------------------
# item 3: pass-through columns byte for byte


@pytest.mark.parametrize("engine", ["local", "file"])
def test_cli_passthrough_columns_are_byte_exact(tmp_path, engine):
    source = _input(tmp_path)
    out = tmp_path / "out.csv"
    run = _microagg("anonymize", source, "-q", "age,income", "-s", "score", "-k", "3",
                    *KEEP, "-o", out, "--engine", engine, "--random-state", "0")
    assert run.returncode in (0, EXIT_NOT_PROTECTED), run.stderr  # written whatever the verdict
    before, after = _raw_columns(source), _raw_columns(out)
    assert list(after) == list(before)
    for col in ("region", "zip", "note", "score"):  # no role, other, other, sensitive
        assert after[col] == before[col], col
    # ... and the input does hold what pandas would have changed
    assert {"NA", "None", "null", "nan", "", "line\nbreak"} <= set(before["note"])
    assert any(z.startswith("0") for z in before["zip"]) and "1e3" in before["score"]
    # the quasi-identifiers were masked: groups of at least 3 identical (age, income)
    masked = pd.read_csv(out)
    assert masked.groupby(["age", "income"]).size().min() >= 3
    assert masked["age"].nunique() < len(set(before["age"]))


def test_cli_passthrough_with_semicolon_input_and_tsv_output(tmp_path):
    frame = pd.DataFrame({"age": np.arange(12) * 3, "code": [f"{i:03d}" for i in range(12)],
                          "note": ["NA", "", "null", "a;b", "1.50", "x"] * 2})
    source = tmp_path / "in.csv"
    frame.to_csv(source, sep=";", index=False)
    out = tmp_path / "out.tsv"
    run = _microagg("anonymize", source, "-q", "age", "-k", "3", "--keep", "code,note", "-o",
                    out)  # unique codes, notes on 2 rows each: published on purpose
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert [r[1] for r in rows[1:]] == frame["code"].tolist()
    assert [r[2] for r in rows[1:]] == frame["note"].tolist()


def test_sensitive_text_is_published_but_numbers_are_computed(tmp_path):
    source = _input(tmp_path)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    run = _microagg("anonymize", source, "-q", "age,income", "-s", "score", "-k", "3",
                    *KEEP, "-t", "0.9", "-o", out, "--summary-json", summary, "--random-state", "0")
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    assert _raw_columns(out)["score"] == _raw_columns(source)["score"]
    params = json.loads(summary.read_text())["params"]
    assert params["t_distance"] == {"score": "ordered"}  # a numeric copy, as before


def test_python_api_and_parquet_keep_parsed_types(tmp_path):
    source = _input(tmp_path)
    df = read_table(source)
    assert df["zip"].dtype.kind == "i" and df["score"].dtype.kind == "f"  # parsed as before
    out = tmp_path / "out.parquet"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", *KEEP, "-o", out)
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    assert pd.read_parquet(out)["score"].dtype.kind == "f"


# ------------------------------------------------------------------------------------------
# pass-through text published as read into every output format, from CSV and from Excel

ISSUE_CSV = ("age,income,zipcode,country\n30,100,01234,NA\n31,110,02345,FR\n"
             "32,120,03456,None\n40,200,04567,null\n41,210,05678,DE\n42,220,06789,nan\n")
ZIPS = ["01234", "02345", "03456", "04567", "05678", "06789"]
COUNTRIES = ["NA", "FR", "None", "null", "DE", "nan"]


def _read_back(path: pathlib.Path | str, column: str) -> list[object]:
    """A column of an output, read by its format's own library."""
    import sqlite3
    import urllib.parse

    import openpyxl
    import pyarrow.parquet as pq
    import pyreadstat

    text = str(path)
    if text.startswith("sqlite:///"):
        file = urllib.parse.unquote(text.removeprefix("sqlite:///").split("?")[0])
        with sqlite3.connect(file) as db:
            return [row[0] for row in db.execute(f'SELECT "{column}" FROM published')]
    if text.endswith(".csv"):
        return _raw_columns(pathlib.Path(text))[column]
    if text.endswith(".parquet"):
        return pq.read_table(text).column(column).to_pylist()
    if text.endswith(".xlsx"):
        rows = list(openpyxl.load_workbook(text).active.iter_rows(values_only=True))
        return [row[rows[0].index(column)] for row in rows[1:]]
    reader = pyreadstat.read_dta if text.endswith(".dta") else pyreadstat.read_sav
    return reader(text)[0][column].tolist()


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx", ".dta", ".sav", ".sqlite"])
def test_passthrough_text_from_csv_into_every_format(tmp_path, suffix):
    source = tmp_path / "pass.csv"
    source.write_text(ISSUE_CSV)
    out: pathlib.Path | str = tmp_path / f"out{suffix}"
    if suffix == ".sqlite":
        out = f"sqlite:///{tmp_path / 'out.db'}?table=published"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", "--random-state", "0",
                    "--keep", "zipcode,country", "-o", out)  # unique: published on purpose
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr  # written, kept columns said
    assert _read_back(out, "zipcode") == ZIPS
    assert _read_back(out, "country") == COUNTRIES
    assert len(set(_read_back(out, "age"))) == 2  # masked: two groups of three


def test_passthrough_numbers_that_round_trip_stay_numbers(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("age,score,count,flag\n" + "".join(
        f"{20 + i},{s},{c},{f}\n" for i, (s, c, f) in enumerate(
            [("1.50", "3", "True"), ("", "-4", "False"), ("1e3", "0", "True")] * 2)))
    out = tmp_path / "out.parquet"
    run = _microagg("anonymize", source, "-q", "age", "-k", "3", "--keep", "score,count,flag",
                    "-o", out)  # each value on 2 rows: published on purpose
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    assert _read_back(out, "score") == [1.5, None, 1000.0] * 2
    assert _read_back(out, "count") == [3, -4, 0] * 2
    assert _read_back(out, "flag") == [True, False, True] * 2


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".xlsx", ".dta"])
def test_passthrough_text_cells_from_excel(tmp_path, suffix):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["age", "income", "zipcode", "country", "score"])
    scores = [1, "NA", 2.5, None, 3, 4]
    for i, (zipcode, country) in enumerate(zip(ZIPS, COUNTRIES, strict=True)):
        sheet.append([30 + i, 100 + 10 * i, zipcode, country, scores[i]])
    book.save(tmp_path / "in.xlsx")
    out = tmp_path / f"out{suffix}"
    run = _microagg("anonymize", tmp_path / "in.xlsx", "-q", "age,income", "-k", "3",
                    "--random-state", "0", "--keep", "zipcode,country,score", "-o", out)
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    assert _read_back(out, "zipcode") == ZIPS
    assert _read_back(out, "country") == COUNTRIES
    # a column with a text cell: numbers stay numbers in Excel, else every cell is text
    missing = {".csv": "", ".parquet": None, ".dta": "", ".xlsx": None}[suffix]
    expected = scores if suffix == ".xlsx" else ["1", "NA", "2.5", missing, "3", "4"]
    assert _read_back(out, "score") == expected


# ------------------------------------------------------------------------------------------
# item 2: a declared categorical type wins over numeric codes


def test_schema_categorical_codes_from_python(tmp_path):
    (tmp_path / "s.toml").write_text(SCHEMA)
    schema = load_schema(tmp_path / "s.toml")
    df = read_table(_input(tmp_path))
    assert df["region"].dtype.kind == "i"  # numeric codes
    applied = schema.apply(df)
    assert not pd.api.types.is_numeric_dtype(applied["region"])
    assert set(applied["region"]) == {"1", "5", "9"}
    release = anonymize(applied, quasi_identifiers=schema.quasi_identifiers,
                        sensitive=schema.sensitive, keep=schema.names("other"), k=3,
                        random_state=0)
    assert release.params["method"] == "mage"
    assert release.params["categorical_quasi_identifiers"] == ("region",)
    assert set(release.data["region"]) <= {"1", "5", "9", "*"}  # codes that exist, or *
    with pytest.raises(SchemaError, match=r"works on numeric data only.*'region'"):
        anonymize(applied, quasi_identifiers=schema.quasi_identifiers, k=3, method="mdav")


def test_schema_categorical_codes_from_the_cli(tmp_path):
    (tmp_path / "s.toml").write_text(SCHEMA)
    source = _input(tmp_path, region_codes=("01", "05", "09"))
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    run = _microagg("anonymize", source, "--schema", tmp_path / "s.toml", "-k", "3",
                    "-o", out, "--summary-json", summary, "--random-state", "0")
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr
    assert json.loads(summary.read_text())["params"]["method"] == "mage"
    published = _raw_columns(out)["region"]
    assert set(published) <= {"01", "05", "09", "*"}  # never an average like 2.33
    assert _raw_columns(out)["zip"] == _raw_columns(source)["zip"]


def test_explicit_mdav_or_file_engine_with_declared_categorical_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SCHEMA)
    source = _input(tmp_path)
    out = tmp_path / "out.csv"
    message = _refused("anonymize", source, "--schema", tmp_path / "s.toml", "-k", "3",
                       "-o", out, "-m", "mdav")
    assert "Method 'mdav' works on numeric data only" in message
    assert "'region'" in message and "never averaged" in message
    message = _refused("anonymize", source, "--schema", tmp_path / "s.toml", "-k", "3",
                       "-o", out, "--engine", "file")
    assert "categorical quasi-identifiers" in message and "--engine local" in message
    assert not out.exists()


# ------------------------------------------------------------------------------------------
# item 4: duplicate column names


def _duplicated(folder: pathlib.Path) -> pathlib.Path:
    path = folder / "dup.csv"
    path.write_text("age,income,age,x\n" + "".join(f"{i},{i * 10},{90 - i},{i % 2}\n"
                                                   for i in range(12)))
    return path


def test_duplicate_csv_columns_are_refused(tmp_path):
    source = _duplicated(tmp_path)
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        read_table(source)
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        anonymize_file(source, tmp_path / "f.csv", quasi_identifiers=["age"], k=3)
    out = tmp_path / "out.csv"
    for engine in ("local", "file"):
        message = _refused("anonymize", source, "-q", "age,income", "-k", "3", "-o", out,
                           "--engine", engine)
        assert f"input file {str(source)!r} has 'age' 2 times" in message
        assert not out.exists()
    assert "'age' 2 times" in _refused("check", source, "-q", "income")
    good = tmp_path / "good.csv"
    good.write_text("age,income\n" + "1,2\n" * 4)
    assert "'age' 2 times" in _refused("report", good, source, "-q", "income",
                                       "-o", tmp_path / "r.html")


def test_duplicate_dataframe_columns_are_refused(tmp_path):
    df = pd.DataFrame(np.arange(36).reshape(12, 3), columns=["age", "age", "x"])
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        anonymize(df, quasi_identifiers=["age"], k=3)
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        anonymize(df, quasi_identifiers=["x"], k=3)  # the duplicate is not even a role
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        check_table(df, quasi_identifiers=["x"])
    (tmp_path / "s.toml").write_text('[columns.age]\nrole = "quasi-identifier"\n'
                                     '[columns.x]\nrole = "other"\n')
    with pytest.raises(SchemaError, match=r"'age' 2 times"):
        load_schema(tmp_path / "s.toml").apply(df)
