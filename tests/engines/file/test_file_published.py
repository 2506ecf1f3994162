"""The file engine publishes, checks and refuses as the in-memory engine does: pass-through
columns as read into Parquet, the published columns that break k, and the survey options it
cannot run refused by name."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

from microagg import anonymize
from microagg._pipeline.rules import EngineRefusal
from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR
from microagg.engines._reads_files import file_request
from microagg.engines.file.engine import run_file
from microagg.io.tables import read_table

MICROAGG = pathlib.Path(sys.executable).parent / "microagg"

ISSUE_CSV = ("age,income,zipcode,country\n30,100,01234,NA\n31,110,02345,FR\n"
             "32,120,03456,None\n40,200,04567,null\n41,210,05678,DE\n42,220,06789,nan\n")


def _microagg(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MICROAGG), *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


def _both_engines(tmp_path: pathlib.Path, source: pathlib.Path, suffix: str, *args: str
                  ) -> dict[str, tuple[subprocess.CompletedProcess[str], pathlib.Path, dict]]:
    """The same release by the in-memory and the file engine: (run, output, summary)."""
    runs = {}
    for engine in ("local", "file"):
        out, summary = tmp_path / f"{engine}{suffix}", tmp_path / f"{engine}.json"
        run = _microagg("anonymize", source, *args, "--engine", engine, "--random-state", "0",
                        "-o", out, "--summary-json", summary)
        runs[engine] = (run, out, json.loads(summary.read_text()))
    return runs


def test_passthrough_text_from_csv_into_parquet_as_in_memory(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text(ISSUE_CSV)
    runs = _both_engines(tmp_path, source, ".parquet", "-q", "age,income", "-k", "3",
                         "--keep", "zipcode,country")
    tables = {engine: pq.read_table(out) for engine, (_, out, _) in runs.items()}
    for col in ("zipcode", "country"):
        assert tables["file"].column(col).to_pylist() == tables["local"].column(col).to_pylist()
        assert tables["file"].schema.field(col).type == tables["local"].schema.field(col).type
    assert tables["file"].column("zipcode").to_pylist() == [
        "01234", "02345", "03456", "04567", "05678", "06789"]
    assert tables["file"].column("country").to_pylist() == ["NA", "FR", "None", "null", "DE",
                                                            "nan"]


def test_the_round_trip_is_judged_over_the_whole_file(tmp_path):
    """Chunks of two rows: a column whose leading zero comes in the last chunk is text from
    the first row on; a column of plain numbers (a float in one chunk) stays numbers."""
    source = tmp_path / "in.csv"
    rows = [(20 + i, 100 + i, str(7 + i % 2), "" if i == 3 else str(i % 2)) for i in range(5)]
    rows.append((25, 105, "08", "1"))
    source.write_text("age,income,code,count\n" + "".join(",".join(map(str, r)) + "\n"
                                                          for r in rows))
    request = file_request(source, engine="file", quasi_identifiers=["age", "income"], k=3,
                           keep=["code", "count"], n_jobs=1, random_state=0)
    run_file(request, source, tmp_path / "out.parquet", chunk_rows=2, sample_size=10)
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column("code").to_pylist() == ["7", "8", "7", "8", "7", "08"]
    assert table.column("count").to_pylist() == [0, 1, 0, None, 0, 1]
    memory = anonymize(read_table(source), quasi_identifiers=["age", "income"], k=3,
                       keep=["code", "count"], random_state=0)
    assert memory.data["count"].isna().sum() == 1  # numbers in memory too


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_published_columns_that_break_k_give_the_same_verdict(tmp_path, suffix):
    source = tmp_path / "in.csv"
    # 'region' repeats each value 3 times but splits the groups; 'band' never does
    source.write_text("age,income,region,band\n" + "".join(
        f"{a},{i},{r},{b}\n" for a, i, r, b in [
            (30, 100, "N", "x"), (31, 110, "S", "x"), (32, 120, "N", "x"),
            (40, 200, "S", "y"), (41, 210, "N", "y"), (42, 220, "S", "y")]))
    runs = _both_engines(tmp_path, source, suffix, "-q", "age,income", "-k", "3")
    (memory, _, memory_summary), (file, _, file_summary) = runs["local"], runs["file"]
    assert memory.returncode == file.returncode == EXIT_NOT_PROTECTED, file.stdout
    assert file_summary["checks"]["published_columns"] == \
        memory_summary["checks"]["published_columns"]
    assert file_summary["checks"]["published_columns"]["columns"] == {"region": 1}
    assert file_summary["verdict"] == memory_summary["verdict"]
    assert memory.stdout.strip().splitlines()[-1] == file.stdout.strip().splitlines()[-1]


def test_file_engine_protected_when_no_column_breaks_k(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("age,income,band\n" + "".join(
        f"{a},{i},{b}\n" for a, i, b in [(30, 100, "x"), (31, 110, "x"), (32, 120, "x"),
                                         (40, 200, "y"), (41, 210, "y"), (42, 220, "y")]))
    runs = _both_engines(tmp_path, source, ".parquet", "-q", "age,income", "-k", "3")
    for run, _, summary in runs.values():
        assert run.returncode == 0, run.stdout
        assert "published_columns" not in summary["checks"]
        assert summary["verdict"]["status"] == "protected"


@pytest.mark.parametrize("engine", ["file", "dask"])
def test_survey_options_are_refused_by_name(tmp_path, engine):
    source = tmp_path / "in.csv"
    source.write_text("age,income,w,hh\n" + "".join(
        f"{20 + i},{100 + i},{1 + i % 2},{i // 3}\n" for i in range(12)))
    for options in ({"weights": "w"}, {"households": "hh", "keep": ["hh"]}):
        with pytest.raises(EngineRefusal) as refusal:
            file_request(source, engine=engine, quasi_identifiers=["age", "income"], k=3,
                         **options)
        option = next(iter(options))
        assert f"drop {option} (or use the memory engine, which runs it)" in str(refusal.value)
        assert refusal.value.options == (option,)


@pytest.mark.parametrize("flag", [["--weight", "w"], ["--household", "hh"], ["--strata", "hh"],
                                  ["--missing", "impute:median"]])
def test_cli_weight_or_household_with_the_file_engine_is_refused(tmp_path, flag):
    source = tmp_path / "in.csv"
    source.write_text("age,income,w,hh\n" + "".join(
        f"{20 + i},{100 + i},{1 + i % 2},{i // 3}\n" for i in range(12)))
    out = tmp_path / "out.csv"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", *flag,
                    "--engine", "file", "-o", out)
    assert run.returncode == EXIT_USER_ERROR, run.stdout
    message = " ".join((run.stdout + run.stderr).split())
    assert f"drop {flag[0]} (or use --engine local)" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]  # nothing written
    assert pd.read_csv(source).shape == (12, 4)
