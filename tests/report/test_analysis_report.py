"""Utility by analysis in the outputs: a weighted release's default figures in its metrics and
JSON, the section "Can an analyst still get the answers?" of the HTML report and of the
printed summary, and ``microagg report --estimate --by --model --target`` on two files."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.audit.analysis_review import with_analyses
from microagg.audit.assess import assess_release
from microagg.cli._tables import analysis_rows
from microagg.metrics.analysis_utility import Analyses
from microagg.report._analysis import TITLE, analysis_sentences
from microagg.report.html import render_report

QI = ["age", "income", "region"]


def _table(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    region = rng.choice(["north", "south"], n)
    age = rng.integers(18, 90, n).astype(float)
    return pd.DataFrame({"age": age, "income": (1000 + 30 * age + rng.normal(0, 300, n))
                         .round(), "region": region, "hours": rng.integers(10, 50, n),
                         "w": rng.uniform(10, 50, n).round(2), "job": rng.choice(["a", "b"], n)})


@pytest.fixture(scope="module")
def release():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return microagg.anonymize(_table(), quasi_identifiers=QI, k=5, weights="w",
                                  keep=["w", "hours", "job"], random_state=0)


def test_a_weighted_release_measures_the_changed_columns_by_the_first_categorical_key(
        release):
    got = release.metrics["analysis_utility"]
    df = _table()
    assert got["weights"] == "w" and got["by"] == "region"
    columns = {e["column"] for e in got["estimates"]}
    assert columns == {"age", "income"}  # hours is published unchanged: not measured
    overall = next(e for e in got["estimates"] if e["statistic"] == "mean"
                   and e["column"] == "income" and e["domain"] is None)
    assert overall["original"] == pytest.approx(np.average(df["income"], weights=df["w"]))
    assert overall["released"] == pytest.approx(np.average(release.data["income"],
                                                           weights=df["w"]))
    assert len(got["estimates"]) == 2 * 2 * 3  # total and mean, two columns, 1 + 2 domains
    assert got["pmse"]["n_rows"] == 400 and got["pmse"]["pmse"] >= 0
    assert "analysis_utility" in json.loads(release.to_json())["metrics"]
    assert release.timings["analysis_utility"] > 0


def test_a_release_without_a_weight_adds_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = microagg.anonymize(_table(), quasi_identifiers=QI, k=5,
                                   keep=["w", "hours", "job"], random_state=0)
    assert "analysis_utility" not in plain.metrics


def test_the_sentences_put_the_share_inside_first():
    metrics = {"analysis_utility": {
        "estimates_summary": {"n_estimates": 12, "inside_ci": 11, "worst": {
            "statistic": "mean", "column": "income", "domain": "region", "level": "north",
            "original": 2000.0, "released": 2100.0, "relative_difference": 0.05,
            "inside_ci": False}},
        "pmse": {"pmse": 0.001, "ratio": 2.0, "n_rows": 400}}}
    first, second = analysis_sentences(metrics)
    assert first == ("11 of 12 weighted estimates computed from the release fall inside the "
                     "original's 95 % confidence interval; the one that moved most is the "
                     "mean of income where region = north: 2,100 against 2,000 (+5 %, "
                     "OUTSIDE the interval).")
    assert second.startswith("A logistic model tells released rows from original ones with "
                             "pMSE 0.001, 2 times")
    assert analysis_rows(metrics)[0] == ("analysis", first)
    assert analysis_sentences({}) == []


def test_the_html_report_has_the_section(release):
    html = render_report(release, _table())
    section = html[html.index(f"<h2>{TITLE}</h2>"):]
    s = release.metrics["analysis_utility"]["estimates_summary"]
    assert f"{s['inside_ci']} of {s['n_estimates']} weighted estimates" in section
    assert "Estimates weighted by w" in section and "with-replacement linearisation" in section


def test_a_review_repeats_the_named_analyses(release):
    df = _table()
    review = assess_release(df, release.data, quasi_identifiers=QI)
    done = with_analyses(review, df, Analyses(models=("hours ~ age + region",), target="job",
                                              pmse=False), weights="w", random_state=1)
    got = done.metrics["analysis_utility"]
    terms = [c["term"] for c in got["models"]["hours ~ age + region"]["coefficients"]]
    assert terms == ["(intercept)", "age", "region[south]"]
    assert got["classification"]["n_test"] == 120 and "pmse" not in got
    assert "analysis_utility" not in review.metrics


def test_microagg_report_with_a_model_and_a_target(tmp_path, release):
    orig, out, page = tmp_path / "o.csv", tmp_path / "p.csv", tmp_path / "r.html"
    _table().to_csv(orig, index=False)
    release.data.to_csv(out, index=False)
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           "report", str(orig), str(out), "-o", str(page), "-q", ",".join(QI),
                           "--weight", "w", "--estimate", "income", "--by", "region",
                           "--model", "income ~ age", "--target", "job", "--random-state", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 4), done.stderr
    section = page.read_text()[page.read_text().index(TITLE):]
    assert "6 weighted estimates" in section  # total and mean, overall and two regions
    assert "Model income ~ age: mean confidence-interval overlap" in section
    assert "held-back original records" in section
    bad = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                          "report", str(orig), str(out), "-o", str(page), "-q", ",".join(QI),
                          "--model", "income ~ nope"], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 2 and "'nope'" in bad.stderr
