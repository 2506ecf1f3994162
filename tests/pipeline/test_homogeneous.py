"""Classes whose records all share one sensitive value are a named privacy warning, in the
release and in every output (the API here; the CLI in a separate process)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from microagg import HomogeneityWarning, PrivacyLeakWarning, anonymize
from microagg._pipeline.verdict import PROTECTED
from microagg.metrics import homogeneity


def _survey() -> pd.DataFrame:
    """Three classes of three: one all 'flu', one mixed, one 'cancer' with a missing value."""
    return pd.DataFrame({
        "age": [20, 20, 20, 40, 40, 40, 60, 60, 60],
        "disease": ["flu", "flu", "flu", "flu", "cold", "cold", None, "cancer", "cancer"]})


def test_missing_values_are_not_a_value() -> None:
    figures = homogeneity([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
                          ["a", "a", "a", "a", "b", "b", None, "c", "c", None, None, None])
    assert figures == {"homogeneous_classes": 2, "classes": 4, "homogeneous_records": 6,
                       "homogeneous_share": 0.5}


def test_homogeneous_classes_are_a_named_warning_counted_right() -> None:
    with pytest.warns(HomogeneityWarning) as caught:
        release = anonymize(_survey(), quasi_identifiers=["age"], sensitive=["disease"], k=3,
                            random_state=0)
    assert issubclass(HomogeneityWarning, PrivacyLeakWarning)
    message = str(next(w.message for w in caught if w.category is HomogeneityWarning))
    assert message.startswith("2 of 3 classes (6 records, 66.7% of the file)")
    assert "'disease'" in message and "l=2" in message and "NOT protect" in message
    assert message in release.warnings
    assert release.metrics["homogeneity"]["disease"]["homogeneous_classes"] == 2
    assert release.verdict.status == PROTECTED  # k-anonymity promises nothing about it


def test_no_warning_without_homogeneous_classes() -> None:
    df = _survey().assign(disease=["flu", "cold", "flu"] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", HomogeneityWarning)
        release = anonymize(df, quasi_identifiers=["age"], sensitive=["disease"], k=3,
                            random_state=0)
    assert not any("share one value" in w for w in release.warnings)


def test_the_cli_prints_the_warning_and_writes_it_in_the_json(tmp_path: Path) -> None:
    df = _survey().assign(income=[1000 * a + i % 3 for i, a in enumerate(_survey()["age"])])
    source, out, summary = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "s.json"
    df.to_csv(source, index=False)
    report = tmp_path / "r.html"
    done = subprocess.run(
        [sys.executable, "-c", "from microagg.cli import main; main()", "anonymize",
         str(source), "-q", "age,income", "-s", "disease", "-k", "3", "-o", str(out),
         "--summary-json", str(summary), "--report", str(report), "--random-state", "0"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Warning: 2 of 3 classes (6 records, 66.7% of the file) share one value" in " ".join(
        done.stdout.split())
    entries = json.loads(summary.read_text())["warnings"]
    assert any(w.startswith("2 of 3 classes") and "'disease'" in w for w in entries)
    page = report.read_text()
    assert "Sensitive values disclosed" in page and "class='warn privacy'>2 of 3" in page
