"""The size guard of ``microagg anonymize`` (issue 18, item 8): refuse exact MDAV estimated
past minutes unless a method, blocking or engine was chosen; ``-m mdav`` insists."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from microagg._runtime import sizing as _sizing
from microagg.cli import EXIT_USER_ERROR, app
from microagg.cli._common import UsageError
from microagg.cli._long_runs import check_size, guard_estimate

runner = CliRunner()


def _request(n: int, *, p: int = 10, k: int = 5, method: str | None = None,
             blocking: str | None = None, kind: str = "numeric") -> SimpleNamespace:
    # what the guard reads of a Request; a real one of 10^6 rows is not needed to decide
    return SimpleNamespace(kind=kind, method=method, blocking=blocking, k=k,
                           data=range(n), quasi_identifiers=tuple(f"x{j}" for j in range(p)),
                           block_size=10_000)


def test_a_million_records_is_refused_with_both_estimates_and_the_flags() -> None:
    with pytest.raises(UsageError) as refusal:
        check_size(_request(1_000_000))  # decided from the sizes: nothing is run
    message = str(refusal.value)
    assert "1,000,000 records x 10 quasi-identifiers at k=5" in message
    assert "would take about 9 min" in message
    assert "blocked MDAV about 5 s" in message
    for flag in ("--blocking kd", "--engine file", "-m mdav"):
        assert flag in message


@pytest.mark.parametrize("request_", [
    _request(1_000_000, method="mdav"),  # the user insists
    _request(1_000_000, method="cbfs"),  # another method chosen
    _request(1_000_000, blocking="kd"),
    _request(1_000_000, kind="mixed"),
    _request(50_000),  # seconds
])
def test_no_refusal_when_chosen_or_quick(request_: SimpleNamespace) -> None:
    check_size(request_)  # does not raise


def test_guard_applies_to_the_default_numeric_partition_only() -> None:
    assert guard_estimate(_request(10, method="mdav")) is None
    assert guard_estimate(_request(10, kind="dp")) is None
    found = guard_estimate(_request(10))
    assert found is not None and found.n_samples == 10 and found.n_features == 10


def _run(tmp_path: Path, *extra: str) -> tuple[object, Path]:
    """``anonymize`` on 12,000 x 2 records (more than one block of 10,000)."""
    rng = np.random.default_rng(0)
    table = tmp_path / "in.csv"
    rows = rng.normal(size=(12_000, 2)).round(3)
    table.write_text("a,b\n" + "\n".join(f"{a},{b}" for a, b in rows) + "\n")
    out = tmp_path / "out.csv"
    summary = tmp_path / "s.json"
    result = runner.invoke(app, ["anonymize", str(table), "-q", "a,b", "-k", "5", "-o",
                                 str(out), "--summary-json", str(summary), *extra])
    return result, summary


def test_command_refuses_before_partitioning(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_sizing, "EXACT_SECONDS", 1e-3)  # a slow machine: exact takes days

    def not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the partition ran")

    monkeypatch.setattr("microagg._pipeline.stages.run", not_run)
    result, _ = _run(tmp_path)
    assert result.exit_code == EXIT_USER_ERROR, result.output
    text = " ".join(result.output.split())
    assert "exact MDAV (the default method) on 12,000 records x 2 quasi-identifiers" in text
    assert "blocked MDAV about " in text
    assert "--blocking kd" in text and "-m mdav" in text
    assert not (tmp_path / "out.csv").exists()


def test_explicit_mdav_runs_exact_mdav_anyway(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_sizing, "EXACT_SECONDS", 1e-3)
    result, summary = _run(tmp_path, "-m", "mdav")
    assert result.exit_code == 0, result.output
    params = json.loads(summary.read_text())["params"]
    assert params["method"] == "mdav"
    assert params.get("blocking") is None


def test_explicit_blocking_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_sizing, "EXACT_SECONDS", 1e-3)
    result, summary = _run(tmp_path, "--blocking", "kd")
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text())["params"]["blocking"]["blocking"] == "kd"
