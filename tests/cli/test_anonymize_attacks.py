"""``microagg anonymize`` attacks its release by default (a CLI process): the attacks in the
summary JSON, the HTML report and the terminal summary; ``--no-attacks`` leaves none;
``--control`` with other columns or more rows than the input is refused by name."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(3000, 800, n)
                       .round(), "region": rng.choice(list("abcd"), n),
                       "health": rng.choice(list("xyz"), n)})
    root = tmp_path_factory.mktemp("anon_attacks")
    df.iloc[:300].to_csv(root / "in.csv", index=False)
    df.iloc[300:].to_csv(root / "control.csv", index=False)
    df.iloc[300:].drop(columns="health").to_csv(root / "bad.csv", index=False)
    pd.concat([df] * 2).to_csv(root / "big.csv", index=False)
    return root


def _anonymize(folder, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return _cli("anonymize", str(folder / "in.csv"), "-q", "age,income,region", "-k", "5",
                "-s", "health", "--random-state", "1", "-o", str(folder / f"{name}.csv"),
                "--summary-json", str(folder / f"{name}.json"),
                "--report", str(folder / f"{name}.html"), *extra)


def test_the_cli_writes_the_attacks_into_the_json_and_both_reports(folder):
    done = _anonymize(folder, "plain")
    assert done.returncode == 0, done.stderr
    attacks = json.loads((folder / "plain.json").read_text())["metrics"]["attacks"]
    assert attacks["compared_with"] == "leave-one-out"
    assert attacks["known"] == ["age", "income", "region"]
    worst = max([attacks[n] for n in ("singling_out", "singling_out_multivariate",
                                      "linkability")] + list(attacks["inference"].values()),
                key=lambda r: r["risk"])
    page = (folder / "plain.html").read_text()
    section = page[page.index("<h2>Attacks</h2>"):]
    assert f"The highest risk: <b>{worst['attack'].replace('_', ' ')}</b>, " \
           f"{worst['risk']:.2f}" in section
    assert "own released record left out" in section
    assert f"Seed {attacks['random_state']}." in section
    assert "attacks, highest risk" in done.stdout and f"{worst['risk']:.2f}" in done.stdout


def test_the_cli_compares_with_a_control_file_or_attacks_nothing(folder):
    done = _anonymize(folder, "held", "--control", str(folder / "control.csv"))
    assert done.returncode == 0, done.stderr
    attacks = json.loads((folder / "held.json").read_text())["metrics"]["attacks"]
    assert attacks["compared_with"] == "held-out records" and attacks["n_control"] == 100
    assert "100 original records held out" in (folder / "held.html").read_text()
    done = _anonymize(folder, "off", "--no-attacks")
    assert done.returncode == 0, done.stderr
    assert "attacks" not in json.loads((folder / "off.json").read_text())["metrics"]
    assert "<h2>Attacks</h2>" not in (folder / "off.html").read_text()


@pytest.mark.parametrize(("control", "message"), [
    ("bad.csv", "The 'control' table must have the original's columns"),
    ("big.csv", "The 'control' table must hold 1 to 300 rows"),
])
def test_a_control_file_that_is_not_held_out_records_is_refused(folder, control, message):
    done = _anonymize(folder, "refused", "--control", str(folder / control))
    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())
    assert not (folder / "refused.csv").exists()
