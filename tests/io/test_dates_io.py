"""Dates through every format: each input written by its format's own library (pyreadstat,
openpyxl, pyarrow), read and written by :mod:`microagg.io` and ``microagg anonymize``, and
read back by that library, which must see a date or a datetime, as the input had, with the
right values (and the published coarsening: month, year).

In every anonymization ``dob`` is a date quasi-identifier and ``visit`` a date that passes
through (no role): published unchanged, still a date.
"""

from __future__ import annotations

import datetime
import pathlib
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import microagg
from microagg.cli import app
from microagg.cli._common import EXIT_NOT_PROTECTED
from microagg.io.tables import read_table, table_metadata, write_table

pyreadstat = pytest.importorskip("pyreadstat")
openpyxl = pytest.importorskip("openpyxl")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 60
DATE, DATETIME = "date", "datetime"
OUTPUTS = [".csv", ".parquet", ".xlsx", ".dta", ".sav"]
FORMATS = {".sav": {DATE: "DATE11", DATETIME: "DATETIME20"},
           ".dta": {DATE: "%td", DATETIME: "%tc"}}


def _original() -> pd.DataFrame:
    """Ages, dates of birth (unique) and visit dates (ten distinct ones, each on 6 rows, so
    that a release at k = 3 may publish them unchanged), all at midnight."""
    rng = np.random.default_rng(0)
    dob = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 25_000, N), "D")
    visit = pd.Timestamp("2020-01-06") + pd.to_timedelta((np.arange(N) % 10) * 30, "D")
    return pd.DataFrame({"age": rng.integers(18, 90, N).astype(float),
                         "dob": pd.Series(dob).astype("datetime64[us]"),
                         "visit": pd.Series(visit).astype("datetime64[us]")})


def _with_date_objects(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(dob=df["dob"].dt.date, visit=df["visit"].dt.date)


def _sav_datetime(df: pd.DataFrame, path: pathlib.Path) -> None:
    pyreadstat.write_sav(df, str(path))  # a pandas datetime: DATETIME20


def _sav_date(df: pd.DataFrame, path: pathlib.Path) -> None:
    pyreadstat.write_sav(_with_date_objects(df), str(path),
                         variable_format={"dob": "DATE11", "visit": "DATE11"})


def _dta_date(df: pd.DataFrame, path: pathlib.Path) -> None:
    pyreadstat.write_dta(_with_date_objects(df), str(path),
                         variable_format={"dob": "%td", "visit": "%td"})


def _dta_datetime(df: pd.DataFrame, path: pathlib.Path) -> None:
    pyreadstat.write_dta(df, str(path))  # a pandas datetime: %tc


def _xlsx_date(df: pd.DataFrame, path: pathlib.Path) -> None:
    """Real Excel date cells (a date number format), written by openpyxl."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(df.columns))
    for age, dob, visit in df.itertuples(index=False):
        sheet.append([int(age), dob.date(), visit.date()])
    for row in sheet.iter_rows(min_row=2, min_col=2, max_col=3):
        for cell in row:
            cell.number_format = "yyyy-mm-dd"
    book.save(path)


def _parquet(kind: str) -> Callable[[pd.DataFrame, pathlib.Path], None]:
    def write(df: pd.DataFrame, path: pathlib.Path) -> None:
        dates = pa.date32() if kind == DATE else pa.timestamp("us")
        values = _with_date_objects(df) if kind == DATE else df
        pq.write_table(pa.table({"age": pa.array(df["age"]),
                                 "dob": pa.array(values["dob"], dates),
                                 "visit": pa.array(values["visit"], dates)}), path)
    return write


INPUTS: dict[str, tuple[str, Callable[[pd.DataFrame, pathlib.Path], None], str]] = {
    "sav-DATETIME": (".sav", _sav_datetime, DATETIME),
    "sav-DATE11": (".sav", _sav_date, DATE),
    "dta-td": (".dta", _dta_date, DATE),
    "dta-tc": (".dta", _dta_datetime, DATETIME),
    "xlsx-date": (".xlsx", _xlsx_date, DATE),
    "parquet-date32": (".parquet", _parquet(DATE), DATE),
    "parquet-timestamp": (".parquet", _parquet(DATETIME), DATETIME),
}


def _input(folder: pathlib.Path, name: str) -> tuple[pathlib.Path, str]:
    suffix, writer, kind = INPUTS[name]
    path = folder / f"input{suffix}"
    writer(_original(), path)
    return path, kind


def _kind_of_format(display: str) -> str:
    kinds = {f: kind for formats in FORMATS.values() for kind, f in formats.items()}
    return kinds[display]


def _published(path: pathlib.Path, column: str) -> tuple[str | None, list[pd.Timestamp], str]:
    """What the format's own library sees: the column's kind (None for CSV, which has no
    types), its values, and its display format (Stata, SPSS, Excel)."""
    suffix = path.suffix
    if suffix == ".csv":
        text = pd.read_csv(path, dtype=str, keep_default_na=False)[column].tolist()
        assert all(len(v) in (0, 10) for v in text), text[:3]  # ISO dates, no time of day
        return None, [pd.Timestamp(datetime.date.fromisoformat(v)) if v else pd.NaT
                      for v in text], ""
    if suffix == ".parquet":
        table = pq.read_table(path)
        dtype = table.schema.field(column).type
        assert pa.types.is_date32(dtype) or pa.types.is_timestamp(dtype), dtype
        kind = DATE if pa.types.is_date32(dtype) else DATETIME
        return kind, [pd.Timestamp(v) for v in table.column(column).to_pylist()], str(dtype)
    if suffix == ".xlsx":
        sheet = openpyxl.load_workbook(path).active
        position = [c.value for c in sheet[1]].index(column) + 1
        cells = [row[0] for row in sheet.iter_rows(min_row=2, min_col=position,
                                                    max_col=position)]
        filled = [c for c in cells if c.value is not None]
        assert all(c.is_date for c in filled), [(c.value, c.number_format) for c in filled[:3]]
        shown = {c.number_format for c in filled}
        assert len(shown) == 1, shown
        display = shown.pop()
        kind = DATETIME if "h" in display.lower() else DATE
        return kind, [pd.Timestamp(c.value) for c in cells], display  # empty: NaT
    reader = pyreadstat.read_sav if suffix == ".sav" else pyreadstat.read_dta
    data, meta = reader(str(path))
    display = meta.original_variable_types[column]
    values = data[column].tolist()
    kind = _kind_of_format(display)
    expected_type = datetime.date if kind == DATE else pd.Timestamp
    assert all(type(v) is expected_type for v in values if not pd.isna(v)), values[:3]
    return kind, [pd.Timestamp(v) for v in values], display


def _reference(publish: str) -> pd.DataFrame:
    """The release of the original (pandas) table, made in Python: what every file gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = microagg.anonymize(_original(), quasi_identifiers=["age", "dob"], k=3,
                                     random_state=0, dates={"dob": {"publish": publish}})
    return release.data


def _check_published(out: pathlib.Path, kind: str, publish: str) -> None:
    expected_kind = None if out.suffix == ".csv" else kind
    dob_kind, dob, display = _published(out, "dob")
    visit_kind, visit, _ = _published(out, "visit")
    assert (dob_kind, visit_kind) == (expected_kind, expected_kind), display
    if out.suffix in FORMATS:
        assert display == FORMATS[out.suffix][kind]
    assert visit == [pd.Timestamp(v) for v in _original()["visit"]]
    assert dob == [pd.Timestamp(v) for v in _reference(publish)["dob"]]
    assert dob != [pd.Timestamp(v) for v in _original()["dob"]]
    if publish != "day":
        assert all(v.day == 1 for v in dob)
    if publish == "year":
        assert all(v.month == 1 for v in dob)


# ------------------------------------------------------------------------ read_table

@pytest.mark.parametrize("name", INPUTS)
def test_read_table_gives_every_date_as_datetime64_with_its_kind(tmp_path: pathlib.Path,
                                                                 name: str) -> None:
    path, kind = _input(tmp_path, name)
    df = read_table(path)
    original = _original()
    for col in ("dob", "visit"):
        assert pd.api.types.is_datetime64_any_dtype(df[col].dtype), (col, df[col].dtype)
        assert df[col].tolist() == original[col].tolist()
    metadata = table_metadata(df)
    assert metadata is not None
    assert metadata.date_kinds == {"dob": kind, "visit": kind}


# ------------------------------------------------------------------------ write_table

@pytest.mark.parametrize("suffix", OUTPUTS)
@pytest.mark.parametrize("name", ["sav-DATETIME", "sav-DATE11", "dta-td", "dta-tc"])
def test_write_table_gives_back_the_kind_read(tmp_path: pathlib.Path, name: str,
                                              suffix: str) -> None:
    """Read, then written as the release writes dates (``datetime64[s]``): pyreadstat wrote
    that unit as 1970-01-01 on every row."""
    path, kind = _input(tmp_path, name)
    df = read_table(path)
    df["dob"] = df["dob"].astype("datetime64[s]")
    out = tmp_path / f"out{suffix}"
    write_table(df, out)
    for col in ("dob", "visit"):
        seen, values, display = _published(out, col)
        assert seen == (None if suffix == ".csv" else kind), display
        assert values == [pd.Timestamp(v) for v in _original()[col]]


@pytest.mark.parametrize("suffix", [".xlsx", ".dta", ".sav"])
def test_datetimes_without_recorded_kind(tmp_path: pathlib.Path, suffix: str) -> None:
    """A pandas table: a column with no time of day is a date, one with a time a datetime
    (its times kept)."""
    days = [pd.Timestamp("1989-03-13"), pd.Timestamp("2001-12-31")]
    stamps = [pd.Timestamp("1989-03-13 10:30"), pd.Timestamp("2001-12-31")]
    out = tmp_path / f"out{suffix}"
    write_table(pd.DataFrame({"day": pd.Series(days).astype("datetime64[s]"),
                              "stamp": stamps}), out)
    assert _published(out, "day")[:2] == (DATE, days)
    assert _published(out, "stamp")[:2] == (DATETIME, stamps)


@pytest.mark.parametrize("suffix", OUTPUTS)
def test_missing_dates_stay_missing(tmp_path: pathlib.Path, suffix: str) -> None:
    path, _ = _input(tmp_path, "sav-DATE11")
    df = read_table(path).head(3)
    df.loc[1, ["dob", "visit"]] = pd.NaT
    out = tmp_path / f"out{suffix}"
    write_table(df, out)
    for col in ("dob", "visit"):
        kind, values, _ = _published(out, col)
        assert kind == (None if suffix == ".csv" else DATE)
        assert pd.isna(values[1])
        assert [values[0], values[2]] == [df[col].iloc[0], df[col].iloc[2]]


def test_zone_aware_datetimes_are_written_as_wall_time(tmp_path: pathlib.Path) -> None:
    df = pd.DataFrame({"t": pd.to_datetime(["2020-06-01 09:15"]).tz_localize("Europe/Paris")})
    for suffix in (".sav", ".dta", ".xlsx"):
        out = tmp_path / f"out{suffix}"
        write_table(df, out)
        assert read_table(out)["t"].tolist() == [pd.Timestamp("2020-06-01 09:15")]


# ------------------------------------------------------------------------ anonymize

def _anonymize(source: pathlib.Path, out: pathlib.Path, publish: str) -> None:
    dates = [] if publish == "day" else ["--dates", f"dob:{publish}"]
    result = CliRunner().invoke(app, ["anonymize", str(source), "-q", "age,dob", "-k", "3",
                                      "--random-state", "0", "-o", str(out), *dates])
    # the visit dates, published unchanged, split the classes: written, not protected
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output


@pytest.mark.parametrize("suffix", OUTPUTS)
@pytest.mark.parametrize("name", INPUTS)
def test_anonymize_publishes_dates_in_every_format(tmp_path: pathlib.Path, name: str,
                                                   suffix: str) -> None:
    source, kind = _input(tmp_path, name)
    out = tmp_path / f"out{suffix}"
    _anonymize(source, out, "day")
    _check_published(out, kind, "day")


@pytest.mark.parametrize("suffix", OUTPUTS)
@pytest.mark.parametrize("name", ["sav-DATETIME", "dta-td"])
@pytest.mark.parametrize("publish", ["month", "year"])
def test_anonymize_publishes_coarsened_dates_in_every_format(
        tmp_path: pathlib.Path, publish: str, name: str, suffix: str) -> None:
    source, kind = _input(tmp_path, name)
    out = tmp_path / f"out{suffix}"
    _anonymize(source, out, publish)
    _check_published(out, kind, publish)


@pytest.mark.parametrize(("name", "suffix"), [("sav-DATETIME", ".sav"), ("dta-td", ".dta")])
def test_cli_process_keeps_stata_and_spss_dates(tmp_path: pathlib.Path, name: str,
                                                suffix: str) -> None:
    """The installed command, in a process of its own: SPSS DATETIME dates of birth came
    back 1970-01-01 on every row (exit 0, no warning); Stata %td ones as text."""
    source, kind = _input(tmp_path, name)
    out = tmp_path / f"out{suffix}"
    done = subprocess.run(
        [sys.executable, "-c", "from microagg.cli import main; main()", "anonymize",
         str(source), "-q", "age,dob", "-k", "3", "--random-state", "0", "-o", str(out)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == EXIT_NOT_PROTECTED, done.stderr + done.stdout  # as above
    _check_published(out, kind, "day")


def test_release_metadata_forgets_dropped_date_columns(tmp_path: pathlib.Path) -> None:
    path, _ = _input(tmp_path, "sav-DATE11")
    metadata = table_metadata(read_table(path))
    assert metadata is not None and metadata.date_formats == {"dob": "DATE11",
                                                              "visit": "DATE11"}
    kept: Any = metadata.released(pd.DataFrame({"dob": [1.0]}), masked=["dob"])
    assert (kept.date_kinds, kept.date_formats) == ({"dob": DATE}, {"dob": "DATE11"})


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
@pytest.mark.parametrize(("publish", "note"), [
    ("year", "year only (published as 1 January)"),
    ("month", "month only (published as the 1st)")])
def test_coarsened_dates_say_their_precision_in_the_variable_label(
        tmp_path: pathlib.Path, suffix: str, publish: str, note: str) -> None:
    source, _ = _input(tmp_path, "sav-DATE11")
    out = tmp_path / f"out{suffix}"
    _anonymize(source, out, publish)
    read = pyreadstat.read_sav if suffix == ".sav" else pyreadstat.read_dta
    _, meta = read(str(out))
    assert meta.column_names_to_labels["dob"] == f"dob, {note}"
    assert not meta.column_names_to_labels.get("visit")  # published by the day: no note
