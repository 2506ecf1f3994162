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
    # mdav-scale: lists refined twice, sweeps until the tolerance (its quality_params)
    assert quality_mode_request(None, None, 7, large=True) == (
        "mdav-scale", {"rounds": 2, "sweeps": 100, "time_limit": 7.0})
    assert quality_mode_request("mdav", {"tol": 0.01, "sweeps": 5}, 2.5, large=True) == (
        "mdav-scale", {"rounds": 2, "sweeps": 5, "tol": 0.01, "time_limit": 2.5})
    method, params = quality_mode_request("md", None, 3, large=True)  # a start was asked for
    assert method == "mdav-ls" and params["start"] == "md"
    assert quality_mode_request(None, None, 3)[0] == "mdav-ls"
    # a search with a budget of its own gets the seconds as that budget
    assert quality_mode_request("colgen", {"part_size": 500}, 40) == (
        "colgen", {"part_size": 500, "time_limit": 40.0})
    assert quality_mode_request("mdav-scale", None, 5) == (
        "mdav-scale", {"rounds": 2, "sweeps": 100, "time_limit": 5.0})
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
    assert refined["params"]["method_params"]["rounds"] == 2  # the quality mode's parameters
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


# --- refinement across block borders (microagg.partition.regroup) --------------------------


def _blocky(n: int = 2400, p: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Records and a partition found in kd blocks of 300 (groups never cross a border)."""
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X, _first_pass(X)


def _sse(X: np.ndarray, labels: np.ndarray) -> float:
    from microagg.metrics import sse

    return float(sse(X, np.unique(labels, return_inverse=True)[1].ravel()))


def _first_pass(X: np.ndarray) -> np.ndarray:
    from microagg.partition.blocking import fit_block_tree, microaggregate_blocks

    _, blocks = fit_block_tree(X, 300, min_size=5)
    return microaggregate_blocks(X, blocks, 5, method="mdav-scale", seed=0, n_jobs=1)


def test_refine_groups_lowers_the_sse_and_keeps_every_group() -> None:
    from microagg.partition.scale import refine_groups

    X, start = _blocky()
    labels = start * 7 + 3  # any integer labels: they are kept
    out = refine_groups(X, labels, 5, random_state=0)
    assert set(np.unique(out)) == set(np.unique(labels))
    assert np.unique(out, return_counts=True)[1].min() >= 5
    assert _sse(X, out) < 0.99 * _sse(X, labels)
    # refining again never raises it
    assert _sse(X, refine_groups(X, out, 5, random_state=1)) <= _sse(X, out) + 1e-9


def test_refine_groups_refuses_small_groups_and_wrong_labels() -> None:
    from microagg.partition.scale import refine_groups

    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match=r"at least k=5 records.*group 3 has 2"):
        refine_groups(X, np.r_[np.zeros(9), np.ones(9) * 2, [3, 3]].astype(int), 5)
    with pytest.raises(ValueError, match="labels must be 20 integers"):
        refine_groups(X, np.zeros(19, dtype=int), 5)
    with pytest.raises(ValueError, match="labels must be 20 integers"):
        refine_groups(X, np.zeros(20), 5)


def test_the_second_pass_mends_block_borders_in_memory() -> None:
    from microagg.partition.blocking import blocked_partition
    from microagg.partition.regroup import regroup_in_memory
    from microagg.partition.scale import refine_groups

    X, start = _blocky()
    out = regroup_in_memory(X, start, 5, refine_groups, {}, seed=0, block_size=600)
    assert np.unique(out, return_counts=True)[1].min() >= 5
    assert _sse(X, out) < 0.99 * _sse(X, start)
    # blocked_partition runs it for a method that has one (mdav-scale), not for mdav
    both = blocked_partition(X, 5, method="mdav-scale", block_size=300, n_jobs=1,
                             random_state=0)
    assert _sse(X, both) < _sse(X, start)


def test_block_size_defaults_to_the_method_s() -> None:
    from microagg._pipeline.request import Request

    df = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 2)), columns=["a", "b"])
    build = Request.build
    assert build(df, quasi_identifiers=["a", "b"], k=3, blocking="kd").block_size == 10_000
    assert build(df, quasi_identifiers=["a", "b"], k=3, blocking="kd",
                 method="mdav-scale").block_size == 2_500_000
    assert build(df, quasi_identifiers=["a", "b"], k=3, blocking="kd", refine=1,
                 ).block_size == 2_500_000
    assert build(df, quasi_identifiers=["a", "b"], k=3, blocking="kd", method="mdav-scale",
                 block_size=500).block_size == 500


def test_wider_data_get_blocks_of_fewer_records() -> None:
    """mdav-scale's default block holds at most 25 million values: 2,500,000 records of up
    to 10 columns, 500,000 of 50 (its memory per block grows with the width)."""
    from microagg._pipeline.request import Request

    wide = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 50)),
                        columns=[f"c{j}" for j in range(50)])
    built = Request.build(wide, quasi_identifiers=list(wide.columns), k=3, blocking="kd",
                          method="mdav-scale")
    assert built.block_size == 500_000
    narrow = Request.build(wide, quasi_identifiers=["c0", "c1"], k=3, blocking="kd",
                           method="mdav-scale", identifiers=list(wide.columns[2:]))
    assert narrow.block_size == 2_500_000
    assert Request.build(wide, quasi_identifiers=list(wide.columns), k=3, blocking="kd",
                         ).block_size == 10_000  # MDAV's, whatever the width


def test_the_file_engine_refines_across_its_blocks(tmp_path: pathlib.Path, frame,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from microagg.engines.file import _regroup as _file_regroup
    from microagg.engines.file.engine import anonymize_file

    frame.to_csv(tmp_path / "in.csv", index=False)
    options = {"quasi_identifiers": QI, "k": 5, "block_size": 300, "n_jobs": 1,
               "random_state": 0, "refine": 30.0}
    monkeypatch.setattr(_file_regroup, "REGROUP_BLOCK", 10**9)  # no second pass
    first = anonymize_file(tmp_path / "in.csv", tmp_path / "first.csv", **options)
    assert "refinement_across_blocks" not in first.timings
    monkeypatch.setattr(_file_regroup, "REGROUP_BLOCK", 1000)
    both = anonymize_file(tmp_path / "in.csv", tmp_path / "both.csv", **options)
    assert "refinement_across_blocks" in both.timings
    assert both.metrics["information_loss"] < 0.99 * first.metrics["information_loss"]
    assert both.checks["k_anonymity"]["achieved"] >= 5
    published = pd.read_csv(tmp_path / "both.csv")
    assert published.groupby(QI).size().min() >= 5
    assert len(published) == len(frame)
