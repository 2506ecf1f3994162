"""``--strata`` of ``microagg risk`` and ``microagg anonymize``, and a schema's strata role,
each in a CLI process of its own: the frequencies are counted within each stratum."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (its exit status is the command's)."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture
def toy(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "toy.csv"
    pd.DataFrame({"sex": list("fffmmm"), "region": ["n", "n", "s", "s", "s", "n"],
                  "w": [10.0, 20.0, 30.0, 40.0, 10.0, 50.0]}).to_csv(path, index=False)
    return path


def _assert_the_hand_worked_strata_risk(s: dict, stdout: str) -> None:  # type: ignore[type-arg]
    """The toy file's risk with sex as the key, counted within region, by hand
    (tests/metrics/test_survey_strata.py): fk 2, 2, 1, 2, 2, 1; Fk 30 or 50."""
    assert s["strata"] == "region"
    one = [(1 / 29) * np.log(30), (1 / 49) * np.log(50)]
    two = [1 / 14 - np.log(15) / 196, 1 / 24 - np.log(25) / 576]
    assert s["expected_reidentifications"] == pytest.approx(
        2 * two[0] + one[0] + 2 * two[1] + one[1], rel=1e-12)
    assert s["k_anonymity_violations"]["2"] == 2
    assert "counted within each stratum" in stdout


def test_risk_with_strata_counts_within_each_stratum(toy: pathlib.Path,
                                                     tmp_path: pathlib.Path) -> None:
    out = tmp_path / "risk.json"
    done = _cli("risk", toy, "-q", "sex", "--weight", "w", "--strata", "region", "--no-suda",
                "--summary-json", out)
    assert done.returncode == 0, done.stderr
    _assert_the_hand_worked_strata_risk(json.loads(out.read_text())["survey_risk"],
                                        done.stdout)
    plain = _cli("risk", toy, "-q", "sex", "--weight", "w", "--no-suda", "--summary-json", out)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(out.read_text())["survey_risk"]["k_anonymity_violations"]["2"] == 0


def test_risk_strata_from_the_schema_and_bad_strata(toy: pathlib.Path,
                                                    tmp_path: pathlib.Path) -> None:
    schema = tmp_path / "s.toml"
    schema.write_text('[columns.sex]\nrole = "quasi-identifier"\ntype = "categorical"\n'
                      '[columns.region]\nrole = "strata"\n[columns.w]\nrole = "weight"\n')
    out = tmp_path / "risk.json"
    done = _cli("risk", toy, "--schema", schema, "--no-suda", "--summary-json", out)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["survey_risk"]["strata"] == "region"
    bad = _cli("risk", toy, "-q", "sex", "--strata", "sex")
    assert bad.returncode == EXIT_USER_ERROR
    assert "'sex' of survey_risk is also a key variable" in " ".join(bad.stderr.split())


def test_anonymize_with_strata(tmp_path: pathlib.Path) -> None:
    rng = np.random.default_rng(5)
    source = tmp_path / "people.csv"
    pd.DataFrame({"age": rng.integers(18, 90, 60), "income": rng.normal(3000, 900, 60).round(),
                  "region": np.repeat(["north", "south", "east"], 20),
                  "w": np.repeat(rng.uniform(50, 500, 20).round(2), 3)}).to_csv(source,
                                                                                index=False)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    done = _cli("anonymize", source, "-o", out, "-q", "age,income", "-k", "3", "--weight", "w",
                "--strata", "region", "--random-state", "0", "--summary-json", summary)
    # the region, published unchanged, splits classes below k: not protected, files written
    assert done.returncode == EXIT_NOT_PROTECTED, done.stderr
    figures = json.loads(summary.read_text())
    assert figures["params"]["strata"] == "region"
    assert figures["metrics"]["survey_risk"]["before"]["strata"] == "region"
    assert "region" in figures["checks"]["published_columns"]["columns"]
    published = pd.read_csv(out)
    assert published["region"].tolist() == pd.read_csv(source)["region"].tolist()
    missing = _cli("anonymize", source, "-o", tmp_path / "x.csv", "-q", "age,income", "-k",
                   "3", "--strata", "zone")
    assert missing.returncode == EXIT_USER_ERROR
    assert "Unknown column 'zone' in strata" in " ".join(missing.stderr.split())


def test_check_with_strata_counts_within_each_stratum(toy: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    """``check --strata`` reports the survey risk as ``risk --strata`` does (the figures
    worked by hand in the risk test above), and reads the strata from a schema's role."""
    out = tmp_path / "check.json"
    done = _cli("check", toy, "-q", "sex", "--weight", "w", "--strata", "region",
                "--summary-json", out)
    assert done.returncode == 0, done.stderr  # no -k: no k required
    _assert_the_hand_worked_strata_risk(json.loads(out.read_text())["survey_risk"],
                                        done.stdout)
    # strata alone (no weight): the file is its own population, fk within the strata
    alone = _cli("check", toy, "-q", "sex", "--strata", "region", "--summary-json", out)
    assert alone.returncode == 0, alone.stderr
    s = json.loads(out.read_text())["survey_risk"]
    assert s["strata"] == "region" and s["k_anonymity_violations"]["2"] == 2
    schema = tmp_path / "s.toml"
    schema.write_text('[columns.sex]\nrole = "quasi-identifier"\ntype = "categorical"\n'
                      '[columns.region]\nrole = "strata"\n[columns.w]\nrole = "weight"\n')
    by_schema = _cli("check", toy, "--schema", schema, "--summary-json", out)
    assert by_schema.returncode == 0, by_schema.stderr
    assert json.loads(out.read_text())["survey_risk"]["strata"] == "region"
    missing = _cli("check", toy, "-q", "sex", "--strata", "zone")
    assert missing.returncode == EXIT_USER_ERROR
    assert "zone" in missing.stderr
