"""Every command finds a column the same way: a name typed in Unicode NFC finds a header
stored in NFD, and ``-q age`` finds a header `` age `` (a separate CLI process each)."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

NFC = "\u00e9ge"  # "ége", the accent one character
NFD = unicodedata.normalize("NFD", NFC)  # "e" then a combining accent, as macOS writes it
assert NFC != NFD


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], input=stdin, capture_output=True, text=True, timeout=300)


def _numbers(tmp_path: Path, header: str, n: int = 60) -> Path:
    """A table whose first numeric column is called ``header``; every column has a role."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({header: rng.integers(18, 90, n), "income": rng.normal(50, 9, n)})
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("header", "typed"), [  # the padded name: exhaustive run
    (NFD, NFC), pytest.param(" age ", "age", marks=pytest.mark.exhaustive)])
def test_stream_matches_names_in_a_file_and_on_standard_input(
        tmp_path: Path, header: str, typed: str) -> None:
    source, out = _numbers(tmp_path, header), tmp_path / "out.csv"
    done = _cli("stream", str(source), "-q", f"{typed},income", "-k", "3", "--delay", "20",
                "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert list(pd.read_csv(out).columns) == [header, "income"]
    piped = _cli("stream", "-", "-q", f"{typed},income", "-k", "3", "--delay", "20",
                 "-o", "-", stdin=source.read_text())
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[0] == f"{header},income"
    assert len(piped.stdout.splitlines()) == 61


@pytest.mark.parametrize(("header", "typed"), [  # the padded name: exhaustive run
    (NFD, NFC), pytest.param(" age ", "age", marks=pytest.mark.exhaustive)])
def test_sweep_and_report_match_names(tmp_path: Path, header: str, typed: str) -> None:
    source, table = _numbers(tmp_path, header), tmp_path / "sweep.csv"
    swept = _cli("sweep", str(source), "-q", f"{typed},income", "-k", "3", "-o", str(table))
    assert swept.returncode == 0, swept.stderr
    runs = pd.read_csv(table, keep_default_na=False)
    assert (runs["error"] == "").all() and (runs["achieved_k"] >= 3).all()
    published, report = tmp_path / "out.csv", tmp_path / "r.html"
    made = _cli("anonymize", str(source), "-q", f"{typed},income", "-k", "3",
                "-o", str(published))
    assert made.returncode == 0, made.stderr
    reported = _cli("report", str(source), str(published), "-q", f"{typed},income",
                    "-k", "3", "-o", str(report))
    assert reported.returncode == 0, reported.stderr
    assert "k = " in reported.stdout and report.stat().st_size > 0


@pytest.mark.parametrize(("header", "typed"), [  # the padded name: exhaustive run
    (NFD, NFC), pytest.param(" age ", "age", marks=pytest.mark.exhaustive)])
def test_series_and_documents_match_names(tmp_path: Path, header: str, typed: str) -> None:
    rng = np.random.default_rng(0)
    walks = pd.DataFrame(rng.standard_normal((24, 3)).cumsum(axis=1), columns=["t0", "t1", "t2"])
    walks.insert(0, header, [f"p{i:02d}" for i in range(24)])
    source, out = tmp_path / "walks.csv", tmp_path / "walks_out.csv"
    first = header.rstrip() + "0" + header[len(header.rstrip()):]  # " age0 ", "ége0" in NFD
    walks.rename(columns={"t0": first}).to_csv(source, index=False)
    done = _cli("series", str(source), "-k", "4", "--columns", f"{typed}0,t1,t2",
                "-i", typed, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert list(pd.read_csv(out).columns) == [first, "t1", "t2"]  # identifier dropped
    docs, vectors = tmp_path / "docs.csv", tmp_path / "docs.npz"
    pd.DataFrame({header: ["cat dog pet", "dog cat pet", "pet cat dog", "stock bond",
                           "bond stock", "stock bond fund"]}).to_csv(docs, index=False)
    done = _cli("documents", str(docs), "--text-column", typed, "-k", "3", "--min-df", "1",
                "--topics", "0", "-o", str(vectors))
    assert done.returncode == 0, done.stderr
    assert vectors.stat().st_size > 0


@pytest.mark.parametrize(("header", "typed"), [(NFD, NFC), (" job ", "job")])
def test_semantic_matches_names(tmp_path: Path, header: str, typed: str) -> None:
    source, tree = tmp_path / "jobs.csv", tmp_path / "jobs.txt"
    pd.DataFrame({header: ["nurse", "doctor", "nurse", "clerk", "teller", "clerk"]}
                 ).to_csv(source, index=False)
    tree.write_text("nurse;health;*\ndoctor;health;*\nclerk;office;*\nteller;office;*\n")
    done = _cli("semantic", str(source), "-c", typed, "--ontology", "hierarchy",
                "--hierarchy", f"{typed}={tree}", "-k", "2", "-o", str(tmp_path / "o.csv"))
    assert done.returncode == 0, done.stderr
    assert list(pd.read_csv(tmp_path / "o.csv").columns) == [header]


def test_a_schema_in_nfc_names_a_header_in_nfd(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({NFD: rng.integers(18, 90, 60),
                          "region": rng.choice(["01", "02", "03"], 60)})
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(source, index=False)
    schema = tmp_path / "s.toml"
    schema.write_text(f'[columns."{NFC}"]\nrole = "quasi-identifier"\ntype = "numeric"\n\n'
                      '[columns.region]\nrole = "quasi-identifier"\ntype = "categorical"\n',
                      encoding="utf-8")
    done = _cli("anonymize", str(source), "--schema", str(schema), "-k", "3", "-o", str(out),
                "--summary-json", str(tmp_path / "s.json"))
    assert done.returncode == 0, done.stderr
    published = pd.read_csv(out, dtype={"region": str})
    assert list(published.columns) == [NFD, "region"]
    assert published.groupby([NFD, "region"]).size().min() >= 3
    assert set(published["region"]) <= {"01", "02", "03", "*"} | set(published["region"])
    params = json.loads((tmp_path / "s.json").read_text())["params"]
    assert params["quasi_identifiers"] == [NFD, "region"]
    checked = _cli("check", str(out), "--schema", str(schema), "-k", "3")
    assert checked.returncode == 0, checked.stderr
