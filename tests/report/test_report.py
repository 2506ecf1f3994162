"""The HTML release report: self-contained, complete, and rendered by a real headless
Chromium (skipped where Chromium is not installed; .ci/run installs it)."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg.cli import app
from microagg.datasets import load_dataset
from microagg.report.html import render_report, write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") \
    or shutil.which("google-chrome")


@pytest.fixture(scope="module")
def census_release():
    ds = load_dataset("census")
    release = anonymize(ds.data, quasi_identifiers=list(ds.quasi_identifiers), k=5,
                        random_state=0)
    return ds.data, release


def test_report_is_self_contained_and_complete(census_release):
    data, release = census_release
    page = render_report(release, data)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing fetched from the network: no script, no external link or image
    assert "<script" not in page and not re.search(r"(src|href)=['\"]https?:", page)
    # 13 histograms and the correlations; every group has 5 records: a sentence, no plot
    assert page.count("data:image/png;base64,") >= 13 + 1
    assert "All 216 groups have 5 records." in page
    for figure in ("k-anonymity", f"{release.metrics['information_loss']:.4g}",
                   f"seed {release.seed}", "AFNLWGT", "Correlations"):
        assert figure in page
    # the plain-words summary states the guarantee, the risk left and the loss
    assert "In plain words" in page and "shared by at least 5 records" in page
    assert f"right person for {100 * release.metrics['dld_risk']:.1f}%" in page
    assert f"{release.metrics['information_loss']:.1f}% of the variation" in page


def test_privacy_warnings_are_highlighted():
    ds = load_dataset("census")
    data = ds.data
    with pytest.warns(Warning):
        release = anonymize(data, quasi_identifiers=list(ds.quasi_identifiers), k=5,
                            aggregation="rho", aggregation_params={"rho": 0.5},
                            random_state=0)
    page = render_report(release, data)
    assert "class='warn privacy'" in page and "not k-anonymous" in page
    assert "<b>Not k-anonymous:</b>" in page


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs it)")
def test_report_renders_in_headless_chromium(census_release, tmp_path):
    data, release = census_release
    report = write_report(release, data, tmp_path / "report.html")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "k-anonymity" in dom.stdout and "Group sizes" in dom.stdout
    assert dom.stdout.count("<img") >= 8
    shot = tmp_path / "report.png"
    run = subprocess.run([CHROMIUM, *flags, "--window-size=1200,2400",
                          f"--screenshot={shot}", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.stat().st_size > 20_000, run.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # a screenshot of a blank page compresses to almost nothing
    assert len(set(png[1000:20000])) > 200


def test_cli_report_option(tmp_path):
    result = CliRunner().invoke(app, ["anonymize", "--dataset", "census", "-k", "5",
                                      "-o", str(tmp_path / "out.csv"), "--report",
                                      str(tmp_path / "r.html"), "--random-state", "0"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    assert "k-anonymity" in page and "report written" in result.stdout
    result = CliRunner().invoke(app, ["anonymize", "--dataset", "census", "-k", "5",
                                      "-o", str(tmp_path / "o2.csv"), "--report",
                                      str(tmp_path / "r.txt")])
    assert result.exit_code != 0 and not (tmp_path / "o2.csv").exists()
    assert not pathlib.Path(tmp_path / "r.txt").exists()



# -- releases made elsewhere: `microagg report ORIGINAL PUBLISHED` ------------------------------

def test_assess_release_recomputes_everything(census_release):
    from microagg.audit.assess import UNKNOWN_SEED, assess_release

    data, release = census_release
    qi = list(release.params["quasi_identifiers"])
    assessed = assess_release(data, release.data, quasi_identifiers=qi)
    # the same figures as the release's own, re-derived from the two tables alone
    assert assessed.k == release.k
    # (the published integer columns are the means rounded to integers: the pipeline
    # measures the rounded numbers it publishes, so the two agree to rounding error)
    assert assessed.metrics["information_loss"] == pytest.approx(
        release.metrics["information_loss"], rel=1e-12)
    assert assessed.metrics["dld_risk"] == pytest.approx(release.metrics["dld_risk"])
    assert assessed.seed == UNKNOWN_SEED
    assert "seed unknown" in render_report(assessed, data)


def test_assess_release_flags_a_broken_promise_and_bad_input():
    import pandas as pd

    from microagg.audit.assess import assess_release
    from microagg.exceptions import SchemaError

    original = pd.DataFrame({"age": [30.0, 31, 50, 52, 70]})
    published = pd.DataFrame({"age": [30.5, 30.5, 51, 51, 70]})
    assessed = assess_release(original, published, quasi_identifiers=["age"],
                              summary={"params": {"k": 2, "method": "elsewhere"}, "seed": 7})
    assert assessed.k == 1 and assessed.seed == 7
    assert assessed.warnings[0].startswith("The published file is NOT 2-anonymous")
    assert "class='warn privacy'" in render_report(assessed, original)
    with pytest.raises(SchemaError, match="5 rows but the published table 4"):
        assess_release(original, published.head(4), quasi_identifiers=["age"])
    with pytest.raises(SchemaError, match="'income' are not in the original"):
        assess_release(original, published, quasi_identifiers=["age", "income"])


def test_report_of_a_mixed_release_shows_the_categories():
    from microagg import anonymize as run

    ds = load_dataset("adult")
    data = ds.data.head(600)
    qi = ["age", "education", "marital-status"]
    release = run(data, quasi_identifiers=qi, k=5, random_state=0,
                  hierarchies={c: ds.hierarchies[c] for c in qi[1:]},
                  sensitive="occupation", identifiers="native-country")
    page = render_report(release, data)
    assert "Categorical quasi-identifiers before and after" in page
    assert "marital-status: most frequent" not in page  # titles live inside the PNGs
    assert page.count("<td class='l'>education</td>") == 1


def test_cli_report_command_with_summary_and_sweep(tmp_path):
    runner = CliRunner()
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    made = runner.invoke(app, ["anonymize", "--dataset", "census", "-k", "5", "-o", str(out),
                               "--summary-json", str(summary), "--random-state", "0"])
    assert made.exit_code == 0, made.output
    swept = runner.invoke(app, ["sweep", "--dataset", "tarragona", "-k", "3,5",
                                "-o", str(tmp_path / "sweep.csv")])
    assert swept.exit_code == 0, swept.output
    original = tmp_path / "census.csv"
    load_dataset("census").data.to_csv(original, index=False)
    page = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(original), str(out), "--summary-json",
                                 str(summary), "--sweep", str(tmp_path / "sweep.csv"),
                                 "-o", str(page)])
    assert result.exit_code == 0, result.output
    html_text = page.read_text()
    assert "risk-utility map" in html_text and "seed 0" in html_text
    assert "report written" in result.stdout and "k = 5" in result.stdout
    # never over an input; no quasi-identifiers named anywhere
    again = runner.invoke(app, ["report", str(original), str(out), "-o", str(original)])
    assert again.exit_code == 2 and "never overwrites its input" in again.output
    wrong = runner.invoke(app, ["report", str(original), str(out), "--summary-json",
                                str(summary), "--sweep", str(original), "-o", str(page)])
    assert wrong.exit_code == 2 and "is not a sweep table" in wrong.output
    bare = runner.invoke(app, ["report", str(original), str(out), "-o", str(page)])
    assert bare.exit_code == 2 and "Name the quasi-identifiers" in bare.output
