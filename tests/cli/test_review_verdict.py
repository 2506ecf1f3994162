"""The review of two files gives the release's verdict word for word: ``microagg report
ORIGINAL PUBLISHED --summary-json`` of a release written by ``microagg anonymize`` (separate
processes) prints, shows and rebuilds the same headline and reasons as the release's summary
JSON and its own report, for a kept weight that re-links households, an identifier-like
column kept on purpose and a plain k-anonymous release; and its NCP is the release's (to
1e-12) when the published classes are the release's groups, else the report says why not."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import microagg
from microagg.audit.assess import assess_release, load_summary, ncp_of_classes
from microagg.cli import EXIT_NOT_PROTECTED
from microagg.datasets import load_dataset
from microagg.io.tables import read_table

ROWS = 1200
"""The bundled survey's first rows (whole households but the last): a short test."""
KEYS = "age,income,sex,household_size"
DROPPED = ("person_id", "name", "region", "postcode", "date_of_birth", "education",
           "occupation", "diagnosis", "weight", "household_id", "income")
CASES: Mapping[str, tuple[str, ...]] = {
    # (a) the weight published on purpose: it re-links the households it is the weight of
    "relinking": ("-q", KEYS, "--weight", "weight", "--household", "household_id",
                  "--keep", "weight", "--drop", "person_id,name,postcode,date_of_birth"),
    # (b) an identifier-like column published on purpose
    "identifier": ("-q", KEYS, "--keep", "person_id",
                   "--drop", "name,postcode,date_of_birth,household_id,weight"),
    # (c) the quasi-identifiers alone, k-anonymous; equal rounded ages merge some groups
    "plain": ("-q", "age,sex,household_size", "--drop", ",".join(DROPPED)),
}


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (its exit status is the command's)."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """survey.csv released three ways (CASES), each NAME.csv with NAME.json and its report
    NAME-release.html, then reviewed as NAME-review.html: two processes each (their
    outputs kept as NAME-release.out / NAME-review.out, the exit status in NAME.rc)."""
    folder = tmp_path_factory.mktemp("review_verdict")
    load_dataset("survey").data.head(ROWS).to_csv(folder / "survey.csv", index=False)
    for name, options in CASES.items():
        done = _cli("anonymize", folder / "survey.csv", *options, "-k", "5",
                    "--random-state", "1", "-o", folder / f"{name}.csv",
                    "--summary-json", folder / f"{name}.json",
                    "--report", folder / f"{name}-release.html")
        assert (folder / f"{name}.json").exists(), done.stderr
        reviewed = _cli("report", folder / "survey.csv", folder / f"{name}.csv",
                        "--summary-json", folder / f"{name}.json",
                        "-o", folder / f"{name}-review.html")
        assert (folder / f"{name}-review.html").exists(), reviewed.stderr
        for side, run in (("release", done), ("review", reviewed)):
            (folder / f"{name}-{side}.out").write_text(run.stdout)
        (folder / f"{name}.rc").write_text(f"{done.returncode} {reviewed.returncode}")
    return folder


def _status(page: str) -> str:
    """The report's status line as text."""
    found = re.search(r"<p class='status \w+'>(.*?)</p>", page)
    assert found is not None, page[:2000]
    return re.sub(r"<[^>]+>", "", found.group(1)).replace("&#x27;", "'")


def _review(folder: Path, name: str) -> microagg.Release:
    """The review rebuilt in this process from the same two files and summary."""
    summary = load_summary(folder / f"{name}.json")
    return assess_release(read_table(folder / "survey.csv"), read_table(folder / f"{name}.csv"),
                          quasi_identifiers=summary["params"]["quasi_identifiers"],
                          summary=summary)


def _own_weights(folder: Path) -> tuple[int, int]:
    """(households whose weight no other household holds, households), counted directly."""
    table = read_table(folder / "survey.csv")
    owners = table.groupby("weight")["household_id"].nunique()
    own = table.groupby("household_id")["weight"].agg(
        lambda w: bool((owners[w.unique()] == 1).all()))
    return int(own.sum()), len(own)


def _expected(folder: Path, name: str) -> tuple[str, list[str]]:
    """The status and some reasons of each case's release."""
    if name == "plain":
        return "protected", []
    if name == "identifier":
        return "not protected", ["identifier-like column(s) published on purpose: person_id"]
    own, households = _own_weights(folder)
    return "not protected", [
        "identifier-like column(s) published on purpose: weight",
        "published column(s) that re-link households (the household id is effectively "
        f"published): weight ({own:,} of {households:,} households)"]


@pytest.mark.parametrize("name", list(CASES))
def test_the_review_gives_the_release_s_verdict_word_for_word(files: Path, name: str) -> None:
    verdict = json.loads((files / f"{name}.json").read_text())["verdict"]
    status, reasons = _expected(files, name)
    assert verdict["status"] == status and set(reasons) <= set(verdict["reasons"])
    headline = verdict["headline"]
    # printed by both commands, shown by both reports, with the same exit status
    assert (files / f"{name}-release.out").read_text().strip().splitlines()[-1] == headline
    assert headline in (files / f"{name}-review.out").read_text()
    release_rc, review_rc = (files / f"{name}.rc").read_text().split()
    assert release_rc == review_rc == str(0 if status == "protected" else EXIT_NOT_PROTECTED)
    for side in ("release", "review"):
        assert _status((files / f"{name}-{side}.html").read_text()) == headline
    # and rebuilt as JSON: the headline, the status and every part
    assert _review(files, name).verdict.summary() == verdict


def test_the_review_judges_the_kept_columns_and_the_re_linking_as_the_release(files: Path
                                                                               ) -> None:
    summary = json.loads((files / "relinking.json").read_text())
    review = _review(files, "relinking")
    assert list(review.params["keep"]) == summary["params"]["keep"] == ["weight"]
    assert dict(review.checks["household_relinking"]["columns"]) == \
        summary["checks"]["household_relinking"]["columns"]
    assert "household_relinking" not in _review(files, "identifier").checks


@pytest.mark.parametrize("name", ["relinking", "identifier"])
def test_the_review_s_ncp_is_the_release_s_when_its_classes_are_the_groups(files: Path,
                                                                           name: str) -> None:
    # with income, 92 of the 1,200 incomes missing: each missingness pattern measured
    summary = json.loads((files / f"{name}.json").read_text())
    review = _review(files, name)
    assert review.metrics["n_groups"] == summary["metrics"]["n_groups"]
    assert review.metrics["ncp"] == pytest.approx(summary["metrics"]["ncp"], rel=1e-12)
    assert review.metrics["ncp_measured_on"].endswith(
        f"the release's {summary['metrics']['n_groups']:,} groups")


def test_the_review_says_why_its_ncp_is_not_the_release_s(files: Path) -> None:
    # rounding the groups' mean ages merges groups into one published class: the review
    # sees the classes only, and says so next to the figure
    summary = json.loads((files / "plain.json").read_text())
    groups, classes = summary["metrics"]["n_groups"], summary["checks"]["rounding"][
        "classes_after"]
    assert classes < groups
    review = _review(files, "plain")
    assert review.metrics["n_groups"] == classes
    assert review.metrics["ncp"] > summary["metrics"]["ncp"]
    reason = (f"measured over the {classes:,} classes of identical published records, not "
              f"the release's {groups:,} groups: the groups are not published")
    page = (files / "plain-review.html").read_text().replace("&#x27;", "'")
    row = re.search(r"<td class='l'>loss: normalized certainty penalty \(NCP\)</td>"
                    r"<td>([^<]*)</td><td class='l'>([^<]*)</td>", page)
    assert row is not None and reason in row.group(2)
    assert row.group(1) == f"{100 * review.metrics['ncp']:.4g} %"
    # the only difference: over the release's own groups the same function gives its NCP
    original = read_table(files / "survey.csv")
    release = microagg.anonymize(original, quasi_identifiers=["age", "sex", "household_size"],
                                 k=5, identifiers=list(DROPPED), random_state=summary["seed"])
    published = read_table(files / "plain.csv")
    assert np.array_equal(release.data.to_numpy(), published.to_numpy())
    qi = ["age", "sex", "household_size"]
    assert ncp_of_classes(original, published, qi, np.asarray(release.labels, dtype=np.intp)
                          ) == pytest.approx(summary["metrics"]["ncp"], rel=1e-12)
