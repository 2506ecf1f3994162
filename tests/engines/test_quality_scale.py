"""The quality mode on large data runs mdav-scale (issue 21): with blocking, with the file
engine, and in memory from QUALITY_SCALE_ROWS records on; small tables keep mdav-ls."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg._pipeline.rules import QUALITY_SCALE_ROWS, quality_mode_request
from microagg.cli import app

QI = ["a", "b", "c"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(rng.normal(size=(3000, 3)) * [1.0, 5.0, 100.0], columns=QI)


def test_the_quality_mode_request_on_large_and_small_data() -> None:
    assert quality_mode_request(None, None, 7, large=True) == (
        "mdav-scale", {"time_limit": 7.0})
    assert quality_mode_request("mdav", {"tol": 0.01}, 2.5, large=True) == (
        "mdav-scale", {"tol": 0.01, "time_limit": 2.5})
    method, params = quality_mode_request("md", None, 3, large=True)  # a start was asked for
    assert method == "mdav-ls" and params["start"] == "md"
    assert quality_mode_request(None, None, 3)[0] == "mdav-ls"
    assert QUALITY_SCALE_ROWS == 50_000
    with pytest.raises(ValueError, match="'refine' parameter must be a number of seconds > 0"):
        quality_mode_request(None, None, 0, large=True)


def _summary(tmp_path: pathlib.Path, *extra: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, [
        "anonymize", str(tmp_path / "in.csv"), "-q", "a,b,c", "-k", "5", "--jobs", "1",
        "--random-state", "0", "-o", str(tmp_path / "out.csv"),
        "--summary-json", str(tmp_path / "s.json"), *extra])
    assert result.exit_code == 0, result.output
    summary: dict = json.loads((tmp_path / "s.json").read_text())  # type: ignore[type-arg]
    return summary


def test_blocked_quality_mode_is_mdav_scale_and_beats_blocked_mdav(tmp_path: pathlib.Path,
                                                                    frame) -> None:
    frame.to_csv(tmp_path / "in.csv", index=False)
    blocks = ("--blocking", "kd", "--block-size", "1000")
    refined = _summary(tmp_path, *blocks, "--refine", "5")
    plain = _summary(tmp_path, *blocks)
    assert refined["params"]["method"] == "mdav-scale"
    assert refined["params"]["method_params"]["time_limit"] == 5.0
    assert refined["checks"]["k_anonymity"]["achieved"] >= 5
    assert refined["metrics"]["information_loss"] < plain["metrics"]["information_loss"]


def test_the_file_engine_runs_the_quality_mode(tmp_path: pathlib.Path, frame) -> None:
    frame.to_csv(tmp_path / "in.csv", index=False)
    result = CliRunner().invoke(app, [
        "anonymize", str(tmp_path / "in.csv"), "-q", "a,b,c", "-k", "5", "--engine", "file",
        "--block-size", "1000", "--jobs", "1", "--refine", "5", "--random-state", "0",
        "-o", str(tmp_path / "out.csv"), "--summary-json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["params"]["method"] == "mdav-scale"
    assert summary["checks"]["k_anonymity"]["achieved"] >= 5
    published = pd.read_csv(tmp_path / "out.csv")
    assert published.groupby(QI).size().min() >= 5
