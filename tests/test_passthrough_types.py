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
from microagg.check import check_table
from microagg.cli import EXIT_USER_ERROR, app
from microagg.exceptions import SchemaError
from microagg.io import read_table
from microagg.outofcore import anonymize_file
from microagg.schema import load_schema

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
    assert run.returncode == 0, run.stderr
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
    assert run.returncode == 0, run.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert [r[1] for r in rows[1:]] == frame["code"].tolist()
    assert [r[2] for r in rows[1:]] == frame["note"].tolist()


def test_sensitive_text_is_published_but_numbers_are_computed(tmp_path):
    source = _input(tmp_path)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    run = _microagg("anonymize", source, "-q", "age,income", "-s", "score", "-k", "3",
                    *KEEP, "-t", "0.9", "-o", out, "--summary-json", summary, "--random-state", "0")
    assert run.returncode == 0, run.stderr
    assert _raw_columns(out)["score"] == _raw_columns(source)["score"]
    params = json.loads(summary.read_text())["params"]
    assert params["t_distance"] == {"score": "ordered"}  # a numeric copy, as before


def test_python_api_and_parquet_keep_parsed_types(tmp_path):
    source = _input(tmp_path)
    df = read_table(source)
    assert df["zip"].dtype.kind == "i" and df["score"].dtype.kind == "f"  # parsed as before
    out = tmp_path / "out.parquet"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", *KEEP, "-o", out)
    assert run.returncode == 0, run.stderr
    assert pd.read_parquet(out)["score"].dtype.kind == "f"


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
    assert run.returncode == 0, run.stderr
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
