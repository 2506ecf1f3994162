"""``microagg anonymize`` in a process of its own: a column without a role that breaks k by
itself (exact dates of birth) is refused with nothing written; ``--keep`` publishes it on
purpose, recorded in the summary and the report."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd

from microagg.cli._common import EXIT_NOT_PROTECTED


def _microagg(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *map(str, args)], capture_output=True, text=True, timeout=300,
                          check=False)


def _survey(tmp_path: pathlib.Path) -> pathlib.Path:
    """Ages shared by 10 rows each, a sex, and exact text dates of birth (26 of 30 distinct)."""
    rng = np.random.default_rng(5)
    born = pd.date_range("1960-01-01", periods=26, freq="97D").strftime("%Y-%m-%d")
    path = tmp_path / "people.csv"
    pd.DataFrame({"age": np.repeat([25, 45, 65], 10), "sex": ["f", "m"] * 15,
                  "dob": rng.permutation(np.concatenate([born, born[:4]]))}
                 ).to_csv(path, index=False)
    return path


def test_exact_dates_without_a_role_are_refused_and_nothing_is_written(tmp_path) -> None:
    source, out = _survey(tmp_path), tmp_path / "out.csv"
    done = _microagg("anonymize", source, "-q", "age", "-k", "5", "-o", out,
                     "--summary-json", tmp_path / "s.json", "--random-state", "0")
    message = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, message
    assert "1 column(s) without a role break 5-anonymity by themselves" in message
    assert "'dob': 26 of its 26 distinct values occur on fewer than 5 rows (22 on one row " \
           "only)" in message
    assert "'sex'" not in message
    assert "add it to -q" in message and "--drop dob" in message and "--keep dob" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


def test_keep_publishes_the_dates_on_purpose_and_the_release_says_so(tmp_path) -> None:
    source, out, summary = _survey(tmp_path), tmp_path / "out.csv", tmp_path / "s.json"
    report = tmp_path / "r.html"
    done = _microagg("anonymize", source, "-q", "age", "-k", "5", "--keep", "dob", "-o", out,
                     "--summary-json", summary, "--report", report, "--random-state", "0")
    assert done.returncode == EXIT_NOT_PROTECTED, done.stdout + done.stderr  # written
    assert pd.read_csv(out)["dob"].tolist() == pd.read_csv(source)["dob"].tolist()
    data = json.loads(summary.read_text())
    assert data["params"]["keep"] == ["dob"]
    assert data["checks"]["published_columns"]["columns"]["dob"] == 1
    status = report.read_text().split("</h1>")[1].split("</p>")[0]
    assert "Not protected" in status
    assert "identifier-like column(s) published on purpose: dob" in status
    # a role instead: masked as a date quasi-identifier, nothing kept
    done = _microagg("anonymize", source, "-q", "age,dob", "--dates", "dob", "-k", "5", "-o",
                     out, "--summary-json", summary, "--random-state", "0")
    assert done.returncode == EXIT_NOT_PROTECTED, done.stdout + done.stderr  # sex splits
    assert json.loads(summary.read_text())["params"]["keep"] == []
