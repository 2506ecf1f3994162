"""Recodings then local suppression through ``--engine file`` and ``anonymize_file``: the
release is the in-memory CLI's (the same JSON, figures to 1e-12; the same bytes in CSV),
whatever the chunk size; its checks are read back from the written file; a failed run
leaves no output; what the chunked runner does not run is refused by name."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import app
from microagg.engines.file import _suppress_release, anonymize_file
from microagg.engines.file.plan_suppress import run_suppress_file
from microagg.steps import Plan

STEPS = ["band column=age breaks=0,20,40,60,90",
         "recode column=job groups='{\"J-rare\": [\"J4\", \"J5\"]}'",
         "topcode column=income top=20000",
         "suppress keys=region,age,sex,job k=4"]
SKIP = {"timings", "engine", "output"}  # how long it took, which engine, where it went


def _table(n: int, seed: int) -> pd.DataFrame:
    """Skewed categorical keys, an income with 3 % missing, a pass-through score."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 13) ** 1.2
    income = np.round(rng.lognormal(9, 0.5, size=n), 2)
    income[rng.random(n) < 0.03] = np.nan
    region = np.array([f"R{v:02d}" for v in rng.choice(12, size=n, p=p / p.sum())],
                      dtype=object)
    region[rng.random(n) < 0.02] = None
    return pd.DataFrame({
        "pid": np.arange(n) * 3 + 1, "region": region, "age": rng.integers(0, 90, size=n),
        "sex": rng.choice(["F", "M"], size=n),
        "job": [f"J{v}" for v in rng.choice(6, size=n, p=[0.4, 0.3, 0.15, 0.1, 0.04, 0.01])],
        "income": income, "score": rng.integers(0, 4, size=n)})


def _cli(source: pathlib.Path, out: pathlib.Path, engine: str, *extra: str) -> dict:
    summary = out.with_suffix(".json")
    args = ["anonymize", str(source), "--engine", engine, "-o", str(out), "--drop", "pid",
            "--summary-json", str(summary), "--random-state", "11", *extra]
    for step in STEPS:
        args += ["--step", step]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 4), result.output
    return json.loads(summary.read_text())


def _same(memory: object, file: object, path: str = "") -> list[str]:
    """Where two JSON values differ (numbers to 1e-12 relative)."""
    if isinstance(memory, dict) and isinstance(file, dict):
        return [d for key in sorted((set(memory) | set(file)) - SKIP)
                for d in (_same(memory.get(key), file.get(key), f"{path}/{key}")
                          if key in memory and key in file else [f"{path}/{key} missing"])]
    if isinstance(memory, list) and isinstance(file, list):
        if len(memory) != len(file):
            return [f"{path}: {len(memory)} != {len(file)} items"]
        return [d for i, (a, b) in enumerate(zip(memory, file, strict=True))
                for d in _same(a, b, f"{path}[{i}]")]
    if isinstance(memory, float) and isinstance(file, (int, float)):
        return [] if file == pytest.approx(memory, rel=1e-12, abs=1e-12) else \
            [f"{path}: {memory} != {file}"]
    return [] if memory == file else [f"{path}: {memory!r} != {file!r}"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("suppress")
    source = folder / "in.csv"
    _table(1500, 1).to_csv(source, index=False)
    return {"folder": folder, "source": source,
            # the chunked engines do not attack a release (the attacks read the whole table)
            "memory": _cli(source, folder / "memory.csv", "local", "--no-attacks"),
            "file": _cli(source, folder / "file.csv", "file")}


def test_written_file_and_release_are_the_in_memory_clis(runs: dict) -> None:
    folder, memory, file = runs["folder"], runs["memory"], runs["file"]
    assert (folder / "file.csv").read_bytes() == (folder / "memory.csv").read_bytes()
    assert _same(memory, file) == []
    # not a no-op: every step changed records, the suppression blanked cells, and the
    # pass-through score breaks k for an intruder who knows it
    assert [s["cells_changed"] > 0 for s in file["steps"]] == [True] * 4
    assert file["checks"]["steps"][3]["cells_suppressed"] > 0
    assert file["checks"]["published_columns"]["columns"]["score"] < 4
    assert file["verdict"]["status"] == "not protected" and file["metrics"]["information_loss"] > 0


def test_chunk_size_changes_nothing(runs: dict, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "small.csv"
    release = run_suppress_file(runs["source"], out, Plan.from_text(STEPS).steps,
                                identifiers=["pid"], random_state=11, chunk_rows=97)
    assert out.read_bytes() == (runs["folder"] / "file.csv").read_bytes()
    assert _same(runs["file"], json.loads(release.to_json())) == []


def test_checks_are_read_back_from_the_written_file(runs: dict, tmp_path: pathlib.Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that publishes one record's band wrongly and restores one blanked key is
    caught by the recoding's and the suppression's checks on the written file."""
    real = _suppress_release._written

    def corrupted(*args: object) -> object:
        for i, chunk in enumerate(real(*args)):
            if i == 0:
                chunk = chunk.copy()
                chunk.loc[chunk.index[0], "age"] = "[60, 90]" if chunk["age"].iloc[0] != \
                    "[60, 90]" else "[0, 20)"
                blank = chunk.index[chunk["region"].isna()][0]
                chunk.loc[blank, "region"] = "R99"
            yield chunk

    monkeypatch.setattr(_suppress_release, "_written", corrupted)
    release = run_suppress_file(runs["source"], tmp_path / "bad.csv",
                                Plan.from_text(STEPS).steps, identifiers=["pid"],
                                random_state=11, chunk_rows=500)
    band, suppress = release.checks["steps"][0], release.checks["steps"][3]
    assert band["holds"] is False and band["violations"] == 1
    # both records: the age changed otherwise than by a blank, the region restored
    assert suppress["holds"] is False and suppress["records_changed_otherwise"] == 2
    assert "step 1 of the plan (band)" in release.verdict.headline


def test_a_failed_run_leaves_no_output(runs: dict, tmp_path: pathlib.Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(*args: object, **kwargs: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(_suppress_release, "_verify", killed)
    out = tmp_path / "out.parquet"
    with pytest.raises(KeyboardInterrupt):
        run_suppress_file(runs["source"], out, Plan.from_text(STEPS).steps, chunk_rows=300)
    assert list(tmp_path.iterdir()) == []


def test_the_python_face_runs_both_chunked_plans(runs: dict, tmp_path: pathlib.Path) -> None:
    from .test_plan_census import STEPS as CENSUS
    from .test_plan_census import _census

    out = tmp_path / "face.csv"
    release = anonymize_file(runs["source"], out, plan=Plan.from_text(STEPS),
                             identifiers=["pid"], random_state=11, chunk_rows=256)
    assert out.read_bytes() == (runs["folder"] / "memory.csv").read_bytes()
    assert _same(runs["memory"], json.loads(release.to_json())) == []
    source = tmp_path / "census.parquet"
    _census(300).to_parquet(source, index=False)
    result = CliRunner().invoke(app, ["anonymize", str(source), "--household", "hid", "-o",
                                      str(tmp_path / "memory.csv"), "--random-state", "3",
                                      *[a for s in CENSUS for a in ("--step", s)]])
    assert result.exit_code == 0, result.output
    census = anonymize_file(source, tmp_path / "census.csv", plan=Plan.from_text(CENSUS),
                            households="hid", random_state=3)
    assert (tmp_path / "census.csv").read_bytes() == (tmp_path / "memory.csv").read_bytes()
    assert census.engine == "file" and census.checks["steps"][0]["holds"]


@pytest.mark.parametrize("keywords,words", [
    ({"k": 3}, "drop k"), ({"households": "pid"}, "drop households"),
    ({"blocking": "pca", "n_jobs": 2}, "drop blocking, n_jobs")])
def test_the_python_face_refuses_what_the_runner_does_not_take(
        runs: dict, tmp_path: pathlib.Path, keywords: dict, words: str) -> None:
    with pytest.raises(TypeError, match=f"{words}.*microagg.anonymize"):
        anonymize_file(runs["source"], tmp_path / "o.csv", plan=Plan.from_text(STEPS),
                       **keywords)
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("extra,steps,words", [
    (["--weight", "score"], STEPS, "--weight"),
    ([], ["band column=age bands=4 method=quantiles", STEPS[3]], "step 1 of the plan (band)"),
    ([], [STEPS[0], "pram variables=sex", STEPS[3]], "Use --engine local")])
def test_the_cli_refuses_by_name(runs: dict, tmp_path: pathlib.Path, extra: list,
                                 steps: list, words: str) -> None:
    args = ["anonymize", str(runs["source"]), "--engine", "file", "-o",
            str(tmp_path / "o.csv"), *extra, *[a for s in steps for a in ("--step", s)]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words.lower() in result.output.lower() and "--engine local" in result.output
    assert not (tmp_path / "o.csv").exists()
