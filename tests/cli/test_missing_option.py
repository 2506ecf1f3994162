"""``microagg anonymize --missing``."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from microagg.cli import app


def _input(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "in.csv"
    pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6, np.nan, np.nan, np.nan],
                  "b": [1.0, 2, 3, 4, 5, 6, 7, 8, 9]}).to_csv(path, index=False)
    return path


def test_missing_pattern_is_the_default(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["anonymize", str(_input(tmp_path)), "-q", "a,b", "-k",
                                      "3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out)["a"].isna().sum() == 3


def test_missing_refuse_and_unknown(tmp_path: pathlib.Path) -> None:
    path, out = _input(tmp_path), tmp_path / "out.csv"
    refused = CliRunner().invoke(app, ["anonymize", str(path), "-q", "a,b", "-k", "3", "-o",
                                       str(out), "--missing", "refuse"])
    assert refused.exit_code != 0 and "'a': 3 missing" in refused.output
    unknown = CliRunner().invoke(app, ["anonymize", str(path), "-q", "a,b", "-k", "3", "-o",
                                       str(out), "--missing", "drop"])
    assert unknown.exit_code != 0 and "impute:median" in unknown.output
    assert not out.exists()


def test_missing_impute(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["anonymize", str(_input(tmp_path)), "-q", "a,b", "-k",
                                      "3", "-o", str(out), "--missing", "impute:mean"])
    assert result.exit_code == 0, result.output
    assert not pd.read_csv(out)["a"].isna().any()


def test_file_engine_refuses_missing_values(tmp_path: pathlib.Path) -> None:
    result = CliRunner().invoke(app, ["anonymize", str(_input(tmp_path)), "-q", "a,b", "-k",
                                      "3", "-o", str(tmp_path / "out.csv"), "--engine", "file"])
    assert result.exit_code != 0 and "in-memory engine" in result.output
