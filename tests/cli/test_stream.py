"""`microagg stream`: a CSV stream in, published groups of >= k out, delay bounded."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app


@pytest.fixture
def source(tmp_path: Path) -> Path:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(rng.normal(size=(700, 3)), columns=["a", "b", "c"])
    frame["disease"] = rng.integers(0, 4, size=700)
    frame["name"] = [f"p{i}" for i in range(700)]
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path


def test_file_to_file_with_summary(source: Path, tmp_path: Path) -> None:
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    result = CliRunner().invoke(app, ["stream", str(source), "-q", "a,b,c", "-k", "4",
                                      "--delay", "50", "--keep", "disease", "-o", str(out),
                                      "--random-state", "2", "--summary-json", str(summary),
                                      "--index-column", "arrival"])
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out)
    assert list(published.columns) == ["arrival", "a", "b", "c", "disease"]  # name dropped
    assert sorted(published["arrival"]) == list(range(700))  # each record exactly once
    sizes = published.groupby(["a", "b", "c"]).size()
    assert sizes.min() >= 4
    original = pd.read_csv(source).iloc[published["arrival"].to_numpy()]
    assert (published["disease"].to_numpy() == original["disease"].to_numpy()).all()
    facts = json.loads(summary.read_text())
    assert facts["achieved_k"] >= 4 and facts["max_delay"] <= 50 and facts["seed"] == 2
    assert facts["records"] == 700


def test_standard_input_to_standard_output(source: Path) -> None:
    result = CliRunner().invoke(app, ["stream", "-", "-q", "a,b", "-k", "3", "--delay",
                                      "20", "-o", "-", "--random-state", "0"],
                                input=source.read_text())
    assert result.exit_code == 0, result.output
    data = pd.read_csv(io.StringIO(result.stdout))
    assert list(data.columns) == ["a", "b"] and len(data) == 700
    assert data.groupby(["a", "b"]).size().min() >= 3


@pytest.mark.parametrize(("args", "message"), [
    (["-q", "a", "-k", "5", "--delay", "2"],
     "The 'delay' parameter of stream_csv must be an int >= k - 1 = 4 (the first record must "
     "be published within 'delay' arrivals, in a group of k). Got 2 instead."),
    (["-q", "a,zz"], "Column(s) 'zz' are not in the header of stream_csv's source."),
    (["-q", "a", "-k", "1"], "The 'k' parameter of stream_csv must be an int >= 2. Got 1 "
                             "instead."),
])
def test_bad_options(source: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(app, ["stream", str(source), *args, "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR, result.output
    assert " ".join(result.output.split()) == f"Error: {message}"  # the whole message
    assert not out.exists()  # a file output is complete or absent


def test_never_over_the_input(source: Path) -> None:
    before = source.read_text()
    result = CliRunner().invoke(app, ["stream", str(source), "-q", "a", "-o", str(source)])
    assert result.exit_code == EXIT_USER_ERROR and "never overwrites" in result.output
    assert source.read_text() == before


def _microagg(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (the checkout's package: PYTHONPATH)."""
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], input=stdin, capture_output=True, text=True, timeout=300)


def test_a_repeated_header_is_refused_as_anonymize_refuses_it(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    rows = "\n".join(f"{i},{i % 7},{100 - i},{i % 3}" for i in range(40))
    source.write_text(f"age,income,age,disease\n{rows}\n")
    refusal = "Column names must be unique, but input file"
    anonymize = _microagg("anonymize", str(source), "-q", "age,income", "-k", "3",
                          "-o", str(tmp_path / "a.csv"))
    assert anonymize.returncode == EXIT_USER_ERROR and refusal in anonymize.stderr
    from_file = _microagg("stream", str(source), "-q", "age,income", "-k", "3", "--delay",
                          "10", "-o", str(tmp_path / "s.csv"))
    assert from_file.returncode == EXIT_USER_ERROR, from_file.stderr
    assert refusal in from_file.stderr and "'age' 2 times" in from_file.stderr
    piped = _microagg("stream", "-", "-q", "age,income", "-k", "3", "--delay", "10", "-o", "-",
                      stdin=source.read_text())
    assert piped.returncode == EXIT_USER_ERROR, piped.stderr
    assert "Column names must be unique, but the input stream has 'age' 2 times" in \
        " ".join(piped.stderr.split())
    assert piped.stdout.splitlines()[1:] == []  # no record published
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_flush_age_and_delay_column_as_stream_csv_takes_them(source: Path, tmp_path: Path
                                                             ) -> None:
    # the command takes every option of stream_csv but the fixed scales (a vector): the same
    # options and seed write the same file, and the summary records them in params
    from microagg.engines.stream.csv_files import stream_csv

    out = tmp_path / "cli.csv"
    run = _microagg("stream", str(source), "-q", "a,b", "-k", "4", "--delay", "30",
                    "--flush-age", "10", "--delay-column", "lag", "--random-state", "3",
                    "-o", str(out), "--summary-json", str(tmp_path / "s.json"))
    assert run.returncode == 0, run.stderr
    released = stream_csv(source, tmp_path / "api.csv", columns=["a", "b"], k=4, delay=30,
                          flush_age=10, delay_column="lag", random_state=3)
    assert out.read_bytes() == (tmp_path / "api.csv").read_bytes()
    data = pd.read_csv(out)
    assert list(data.columns) == ["a", "b", "lag"] and data["lag"].between(0, 30).all()
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["params"]["blocking"] == {"blocking": "arrival", "delay": 30,
                                             "flush_age": 10}
    assert summary["params"]["blocking"] == dict(released.params["blocking"])
