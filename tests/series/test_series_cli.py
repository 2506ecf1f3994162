"""``microagg series``: a small file in, a k-anonymous file of series out, errors named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app


def _input(tmp_path: Path, n: int = 24) -> Path:
    X = np.random.default_rng(0).standard_normal((n, 10)).cumsum(axis=1)
    df = pd.DataFrame(X, columns=[f"t{i}" for i in range(10)])
    df.insert(0, "id", [f"p{i:02d}" for i in range(n)])
    df["region"] = ["01", "02"] * (n // 2)  # leading zeros kept: passed through as read
    path = tmp_path / "walks.csv"
    df.to_csv(path, index=False)
    return path


def test_series_writes_a_k_anonymous_file(tmp_path: Path) -> None:
    source, out, summary = _input(tmp_path), tmp_path / "out.csv", tmp_path / "s.json"
    result = CliRunner().invoke(app, ["series", str(source), "-k", "5", "--columns", "t*",
                                      "--distance", "dtw", "--band", "2", "--representative",
                                      "mean", "-i", "id", "-o", str(out), "--random-state",
                                      "4", "--summary-json", str(summary)])
    assert result.exit_code == 0, result.output
    published = pd.read_csv(out, dtype={"region": str})
    assert "id" not in published.columns and published["region"].iloc[0] == "01"
    assert published.filter(like="t").value_counts().min() >= 5
    figures = json.loads(summary.read_text())
    assert figures["seed"] == 4 and figures["checks"]["k_anonymity"]["achieved"] >= 5
    assert figures["params"]["band"] == 2 and "dtw_mean" in figures["metrics"]


def test_series_errors_are_user_errors(tmp_path: Path) -> None:
    source, out = _input(tmp_path), tmp_path / "out.csv"
    df = pd.read_csv(source)
    df.loc[3, "t4"] = np.nan
    holes = tmp_path / "holes.csv"
    df.to_csv(holes, index=False)
    result = CliRunner().invoke(app, ["series", str(holes), "--columns", "t*", "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "'t4': 1 missing" in result.output
    result = CliRunner().invoke(app, ["series", str(source), "--columns", "t*", "-k", "30",
                                      "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "k=30" in result.output
    result = CliRunner().invoke(app, ["series", str(source), "--columns", "t*", "--distance",
                                      "dtw", "--band", "-3", "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "Got -3" in result.output
    assert not out.exists()


def test_series_is_listed_by_methods() -> None:
    result = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "300"})
    assert result.exit_code == 0 and "series-mdav" in result.output
