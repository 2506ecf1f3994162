"""``microagg risk`` on a file (issue 19): the survey risk of the bundled eusilc file equals
sdcMicro 5.8.1's figures given in the issue, and bad input exits 2 with one line."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.datasets import load_dataset

runner = CliRunner()
KEYS = "db040,hsize,rb090,pb220a,pl030"


def _invoke(*args: str | pathlib.Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def eusilc(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("risk") / "eusilc.csv"
    load_dataset("eusilc").data.to_csv(path, index=False)
    return path


def test_risk_of_eusilc_equals_sdcmicro(eusilc: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "risk.json"
    # --missing category: the figures treat a child's empty pl030 / pb220a as a
    # category of its own (R's read.csv keeps an empty text field as ""), see
    # tests/metrics/test_survey_risk.py
    result = _invoke("risk", eusilc, "-q", KEYS, "--weight", "rb050", "--household", "db030",
                     "--missing", "category", "--no-suda", "--summary-json", out)
    assert result.exit_code == 0, result.output
    s = json.loads(out.read_text())["survey_risk"]
    # sdcMicro 5.8.1 on R 4.2.2, measure_risk (issue 19): global risk, expected
    # re-identifications, household risk and its expected count, fk < 2 / 3 / 5
    assert s["global_risk"] == pytest.approx(0.0003871598, abs=5e-11)
    assert s["expected_reidentifications"] == pytest.approx(5.740419, abs=5e-7)
    assert s["household_risk"] == pytest.approx(0.0015277506, abs=5e-11)
    assert s["expected_household_reidentifications"] == pytest.approx(22.651958, abs=5e-7)
    assert s["k_anonymity_violations"] == {"2": 301, "3": 679, "5": 1328}
    assert s["n_above_threshold"] == 0  # none above 0.05
    assert "global risk" in result.output and "0.03872 %" in result.output


def test_suda_of_eusilc_equals_sdcmicro(eusilc: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "risk.json"
    result = _invoke("risk", eusilc, "-q", KEYS, "--summary-json", out)
    assert result.exit_code == 0, result.output
    s = json.loads(out.read_text())["suda"]
    # sdcMicro 5.8.1 suda2 (missing = NA), issue 19: SUDA score sum and max, DIS-SUDA sum
    # and max, attribute contributions (%)
    assert (s["score_sum"], s["score_max"]) == (433, 7)
    assert s["dis_score_sum"] == pytest.approx(3.02001175, abs=5e-9)
    assert s["dis_score_max"] == pytest.approx(0.05787113, abs=5e-9)
    assert s["attribute_contributions"]["hsize"] == pytest.approx(87.75982, abs=5e-6)
    assert "key variables in the special uniques" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--threshold", "0"], "'threshold'"),
    (["--threshold", "1.5"], "'threshold'"),
    (["-k", "2,x"], "-k takes comma-separated whole numbers"),
    (["--weight", "nope"], "Unknown column 'nope'"),
    (["--missing", "maybe"], "'missing'"),
])
def test_bad_input_exits_2_with_one_line(eusilc: pathlib.Path, args: list[str],
                                         message: str) -> None:
    result = _invoke("risk", eusilc, "-q", KEYS, "--no-suda", *args)
    assert result.exit_code == EXIT_USER_ERROR, result.output
    assert result.stderr.startswith("Error: ") and message in result.stderr
    assert "Traceback" not in result.output


def test_keys_are_required(eusilc: pathlib.Path) -> None:
    result = _invoke("risk", eusilc)
    assert result.exit_code == EXIT_USER_ERROR
    assert "Name the key variables" in result.stderr


def test_check_adds_the_survey_risk_of_a_release(tmp_path: pathlib.Path) -> None:
    """``check --weight``: the published file's risk, as ``microagg risk`` measures it."""
    survey = load_dataset("survey").data
    published = tmp_path / "published.csv"
    result = _invoke("anonymize", "--dataset", "survey", "-q", "age,sex,region", "-k", "5",
                     "--drop", "person_id,name,postcode,household_id,income,date_of_birth",
                     "--weight", "weight", "-o", published)
    # the weight is published unchanged and breaks k: written, not protected
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    out = tmp_path / "check.json"
    result = _invoke("check", published, "-q", "age,sex,region", "--weight", "weight",
                     "--summary-json", out)
    assert result.exit_code == 0, result.output  # no k required: stated, not judged
    figures = json.loads(out.read_text())
    assert figures["verdict"]["status"] == "no k required"
    assert "weight (k = 1 with it)" in figures["verdict"]["headline"]
    assert figures["survey_risk"]["k_anonymity_violations"] == {"2": 0, "3": 0, "5": 0}
    assert figures["suda"]["records_with_msu"] == 0  # a 5-anonymous file has no unique
    assert len(survey) == figures["survey_risk"]["n_records"]
    assert "global risk" in result.output


def test_risk_reports_the_population_figures(eusilc: pathlib.Path, tmp_path: pathlib.Path
                                             ) -> None:
    from microagg.metrics.population_models import class_sizes, population_uniqueness
    from microagg.metrics.survey_risk import frequencies

    out = tmp_path / "risk.json"
    result = _invoke("risk", eusilc, "-q", "db040,hsize", "--population-size", "148270",
                     "--no-suda", "--summary-json", out)
    assert result.exit_code == 0, result.output
    assert "journalist risk" in result.output and "population uniques" in result.output
    figures = json.loads(out.read_text())
    p = figures["population_risk"]
    data = load_dataset("eusilc").data
    fk = frequencies(data, ["db040", "hsize"], missing="category")[0]
    # no weights: Fk = fk N / n, N / n = 10, so k-map is 10 times the smallest class
    assert p["k_map"]["k_map"] == pytest.approx(10 * fk.min())
    assert p["k_map"]["marketer"] == pytest.approx(float(np.mean(1 / (10 * fk))))
    expected = population_uniqueness(class_sizes(fk), 148270).summary()
    assert p["uniqueness"]["dankar_uniques"] == pytest.approx(expected["dankar_uniques"])
    assert p["uniqueness"]["sampling_fraction"] == pytest.approx(0.1)
    assert [c["keys"] for c in figures["risky_cells"]] == [["db040"], ["hsize"],
                                                           ["db040", "hsize"]]


def test_risk_refuses_a_population_smaller_than_the_file(eusilc: pathlib.Path) -> None:
    result = _invoke("risk", eusilc, "-q", "db040", "--population-size", "100", "--no-suda")
    assert result.exit_code == EXIT_USER_ERROR
    assert "--population-size must be at least the number of records (14,827)" in result.output


def test_risk_loglinear_is_the_function_on_the_file(eusilc: pathlib.Path, tmp_path: pathlib.Path
                                                    ) -> None:
    from microagg.metrics.loglinear_risk import loglinear_risk

    out = tmp_path / "loglinear.json"
    result = _invoke("risk", eusilc, "-q", "db040,hsize,rb090", "--weight", "rb050",
                     "--loglinear", "--formula", "db040*hsize + rb090", "--no-suda",
                     "--summary-json", out)
    assert result.exit_code == 0, result.output
    assert "log-linear model" in result.output and "tau1" in result.output
    got = json.loads(out.read_text())["population_risk"]["loglinear"]
    direct = loglinear_risk(load_dataset("eusilc").data, ["db040", "hsize", "rb090"],
                            weights="rb050", formula="db040*hsize + rb090").summary()
    assert got["formula"] == "db040 + hsize + rb090 + db040:hsize"
    for key in ("tau1", "tau2", "sample_uniques", "sdcmicro_risk1"):
        assert got[key] == pytest.approx(direct[key], rel=1e-12), key


@pytest.mark.parametrize(("args", "message"), [
    (["--loglinear"], "--loglinear needs --weight (sampling weights) or --population-size"),
    (["--formula", "db040"], "--formula and --loglinear-method go with --loglinear"),
    (["--weight", "rb050", "--loglinear", "--formula", "db040 + age"],
     "names 'age', which is not a key"),
    (["--weight", "rb050", "--loglinear", "--loglinear-method", "IPF"],
     "must be one of ['CE', 'PML', 'default', 'weightedLLM']"),
])
def test_risk_loglinear_refusals(eusilc: pathlib.Path, args: list[str], message: str) -> None:
    result = _invoke("risk", eusilc, "-q", "db040,hsize", "--no-suda", *args)
    assert result.exit_code == EXIT_USER_ERROR, result.output
    assert message in " ".join(result.output.split())
