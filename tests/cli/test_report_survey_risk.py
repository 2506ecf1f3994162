"""The review of two files measures the release's survey risk: ``microagg report`` of a
release written by ``microagg anonymize`` (separate processes) shows the same figures
("Disclosure risk before and after") as the release's own report and summary JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.audit.assess import assess_release, load_summary
from microagg.cli import app
from microagg.datasets import load_dataset
from microagg.exceptions import SchemaError
from microagg.schema.schema_file import load_schema

MICROAGG = str(Path(sys.executable).with_name("microagg"))
KEYS = ["age", "sex", "household_size"]
"""Keys whose table is small enough (< 20,000 cells) for the log-linear model to be fitted."""
ROWS = 1200
"""The bundled survey's first rows (whole households but the last): a short test."""


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([MICROAGG, *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """survey.csv (the bundled survey's first rows), released as out.csv with out.json and
    its report release.html, then reviewed as review.html: two processes each."""
    folder = tmp_path_factory.mktemp("review_risk")
    load_dataset("survey").data.head(ROWS).to_csv(folder / "survey.csv", index=False)
    done = _cli("anonymize", folder / "survey.csv", "-q", ",".join(KEYS), "-k", "3",
                "--drop", "person_id,name,postcode,date_of_birth,income",
                "--keep", "weight", "--weight", "weight", "--household", "household_id",
                "--strata", "region", "--random-state", "1", "-o", folder / "out.csv",
                "--summary-json", folder / "out.json", "--report", folder / "release.html")
    assert (folder / "out.json").exists(), done.stderr
    reviewed = _cli("report", folder / "survey.csv", folder / "out.csv", "--summary-json",
                    folder / "out.json", "-o", folder / "review.html")
    assert (folder / "review.html").exists(), reviewed.stderr
    return folder


def _section(page: str) -> str:
    """The report's section "Disclosure risk before and after" (empty when absent)."""
    start = page.find("<h2>Disclosure risk before and after</h2>")
    return "" if start < 0 else page[start:page.find("</table>", start)]


def _same(found: Any, expected: Any, where: str = "") -> None:
    """Equal nested figures (floats to 1e-12 relative)."""
    if isinstance(expected, Mapping):
        assert isinstance(found, Mapping) and set(found) == set(expected), where
        for key in expected:
            _same(found[key], expected[key], f"{where}/{key}")
    elif isinstance(expected, float):
        assert found == pytest.approx(expected, rel=1e-12, abs=1e-15), where
    elif isinstance(expected, list | tuple):
        assert list(found) == list(expected), where
    else:
        assert found == expected, where


def test_the_review_shows_the_release_s_survey_risk(files: Path) -> None:
    release = _section((files / "release.html").read_text(encoding="utf-8"))
    review = _section((files / "review.html").read_text(encoding="utf-8"))
    assert "household risk (%)" in release and "k-map" in release  # every part is there
    assert "of them population uniques (log-linear)" in release
    assert review == release


def test_the_review_s_figures_equal_the_summary_json(files: Path) -> None:
    summary = load_summary(files / "out.json")
    original = pd.read_csv(files / "survey.csv")
    published = pd.read_csv(files / "out.csv")
    review = assess_release(original, published, quasi_identifiers=KEYS, summary=summary)
    expected = summary["metrics"]["survey_risk"]
    found = json.loads(review.to_json())["metrics"]["survey_risk"]  # the review's JSON
    _same(found, expected)
    assert "loglinear" in found["after"]["population"]  # fitted: a small key table
    assert "tau1" in found["after"]["population"]["loglinear"]
    assert review.params["household"] == "household_id"  # the summary's roles
    assert review.params["strata"] == "region"
    # independently: the records whose keys and stratum fewer than k published rows share,
    # the household risk on the original's household ids (the column is not published)
    assert "household_id" not in published.columns
    counts = published.groupby([*KEYS, "region"], dropna=False)["age"].transform("size")
    after = found["after"]
    for k in (2, 3, 5):
        assert after["k_anonymity_violations"][str(k)] == int((counts < k).sum())
    assert after["household_risk"] > 0.0


def test_a_bad_weight_is_refused_naming_the_column(files: Path, tmp_path: Path) -> None:
    base = ["report", str(files / "survey.csv"), str(files / "out.csv"), "-q",
            ",".join(KEYS), "-o", str(tmp_path / "r.html")]
    result = CliRunner().invoke(app, [*base, "--weight", "no_such_weight"])
    assert result.exit_code == 2
    assert "no_such_weight" in result.output and "--weight" in result.output
    table = pd.read_csv(files / "survey.csv")
    table.loc[[3, 7], "weight"] = -1.0
    table.to_csv(tmp_path / "negative.csv", index=False)
    result = CliRunner().invoke(app, ["report", str(tmp_path / "negative.csv"),
                                      *base[2:], "--weight", "weight"])
    assert result.exit_code == 2
    assert "'weight'" in result.output and "2 negative" in result.output
    assert "(0, inf)" in result.output
    assert not (tmp_path / "r.html").exists()


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six persons in three households; the published file groups the ages by pairs and
    drops the household id."""
    original = pd.DataFrame({"age": [20.0, 22.0, 40.0, 44.0, 60.0, 61.0],
                             "hid": [1, 1, 2, 2, 3, 3], "w": [2.0] * 6})
    published = original.drop(columns="hid").assign(age=[21.0, 21.0, 42.0, 42.0,
                                                         60.5, 60.5])
    return original, published


def test_the_household_risk_after_masking_as_the_release_measures_it() -> None:
    original, published = _pair()
    review = assess_release(original, published, quasi_identifiers=["age"],
                            household="hid")
    risk = review.metrics["survey_risk"]
    # no weight: individual risk 1 / fk; every record unique before (risk 1), in a pair
    # after (1/2); a household of two pairs-mates: 1 - (1 - 1/2)^2 = 3/4
    assert risk["before"]["global_risk"] == pytest.approx(1.0)
    assert risk["after"]["global_risk"] == pytest.approx(0.5)
    assert risk["after"]["household_risk"] == pytest.approx(0.75)
    noisy = {"params": {"aggregation": "rho", "aggregation_params": {"rho": 0.5},
                        "method": "mdav", "hierarchies": {}}}
    review = assess_release(original, published, quasi_identifiers=["age"],
                            household="hid", summary=noisy)
    assert "household_risk" in review.metrics["survey_risk"]["before"]
    assert "household_risk" not in review.metrics["survey_risk"]["after"]  # as the release


def test_the_roles_come_from_the_schema(tmp_path: Path) -> None:
    original, published = _pair()
    (tmp_path / "s.toml").write_text('[columns.age]\nrole = "quasi-identifier"\n'
                                     '[columns.hid]\nrole = "household"\n'
                                     '[columns.w]\nrole = "weight"\n')
    review = assess_release(original, published, quasi_identifiers=["age"],
                            schema=load_schema(tmp_path / "s.toml"))
    after = review.metrics["survey_risk"]["after"]
    # weight 2 each: every published pair stands for Fk = 2 + 2 = 4 persons
    assert after["weighted"] is True and after["population"]["population_size"] == 12.0
    assert after["population"]["k_map"]["k_map"] == pytest.approx(4.0)
    assert review.params["weight"] == "w" and review.params["household"] == "hid"
    plain = assess_release(original, published, quasi_identifiers=["age"])
    assert "survey_risk" not in plain.metrics
    with pytest.raises(SchemaError, match=r"'hid'.*two survey roles"):
        assess_release(original, published, quasi_identifiers=["age"], weight="hid",
                       household="hid")


def test_microagg_risk_gives_the_release_s_before_side(files: Path, tmp_path: Path) -> None:
    """``microagg risk`` of the original with the release's roles, its k and --loglinear:
    every figure of the release's "before" side, in its own layout (``survey_risk``,
    ``suda``, ``population_risk``; the release nests the last two in each side as ``suda``
    and ``population``). It adds ``risky_cells``; the log-linear model is fitted only with
    --loglinear (the release fits it on key tables up to 20,000 cells)."""
    out = tmp_path / "risk.json"
    result = CliRunner().invoke(app, [
        "risk", "--attacks", str(files / "survey.csv"), "-q", ",".join(KEYS), "--weight", "weight",
        "--household", "household_id", "--strata", "region", "-k", "2,3,5", "--loglinear",
        "--summary-json", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    before = dict(load_summary(files / "out.json")["metrics"]["survey_risk"]["before"])
    suda, population = before.pop("suda"), before.pop("population")
    _same(figures["survey_risk"], before)
    _same(figures["suda"], suda)
    _same(figures["population_risk"], population)
    assert set(figures) == {"survey_risk", "suda", "population_risk", "risky_cells", "attacks"}
