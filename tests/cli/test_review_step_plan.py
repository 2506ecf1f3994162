"""The review of a release made with ``microagg anonymize --step`` judges the plan the
summary recorded as the release did (separate processes): a plan whose suppression does not
hold on the published file (PRAM moves the suppressed column afterwards) is "not protected"
for the same reasons, word for word; a plan that holds is "protected" in the same words; a
published file tampered after the release fails the re-derived step check."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from microagg.audit.assess import assess_release, load_summary
from microagg.cli import EXIT_NOT_PROTECTED
from microagg.datasets import load_dataset
from microagg.io.tables import read_table

KEYS = ["sex", "region", "education"]
PLANS = {  # step 1 promises 5-anonymity; step 2 moves region (failing) or not (passing)
    "failing": ("suppress keys=sex,region,education k=5", "pram variables=region pd=0.5"),
    "passing": ("suppress keys=sex,education k=5", "pram variables=region pd=0.8"),
}


def _cli(*args: Any) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=300, check=False)


def _review(folder: Path, name: str, published: str) -> subprocess.CompletedProcess[str]:
    return _cli("report", folder / "in.csv", folder / published, "-o",
                folder / f"{published}.html", "--summary-json", folder / f"{name}.json")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """in.csv (the survey's first 600 persons, three keys) released by each plan (NAME.csv,
    NAME.json, the release's exit status and output kept)."""
    folder = tmp_path_factory.mktemp("review_step_plan")
    load_dataset("survey").data.head(600)[KEYS].to_csv(folder / "in.csv", index=False)
    for name, steps in PLANS.items():
        done = _cli("anonymize", folder / "in.csv", "-o", folder / f"{name}.csv",
                    *itertools.chain.from_iterable(("--step", s) for s in steps),
                    "--random-state", "1", "--summary-json", folder / f"{name}.json")
        (folder / f"{name}.rc").write_text(str(done.returncode))
        assert done.returncode in (0, EXIT_NOT_PROTECTED), done.stderr
    return folder


def _k_any(published: pd.DataFrame) -> int:
    """The smallest class on KEYS with a missing value matching any value (sdcMicro's
    freqCalc rule), by brute force over every pair of records."""
    rows = published[KEYS].astype(object).where(published[KEYS].notna(), None).values.tolist()
    return min(sum(all(a is None or b is None or a == b for a, b in zip(r, s, strict=True))
                   for s in rows) for r in rows)


@pytest.mark.parametrize("name", list(PLANS))
def test_the_review_gives_the_release_verdict_word_for_word(files: Path, name: str) -> None:
    summary = load_summary(files / f"{name}.json")
    review = _review(files, name, f"{name}.csv")
    assert review.returncode == int((files / f"{name}.rc").read_text())
    assert review.stdout.splitlines()[0] == summary["verdict"]["headline"]
    published = read_table(files / f"{name}.csv")
    if name == "failing":
        assert review.returncode == EXIT_NOT_PROTECTED
        achieved = _k_any(published)
        assert achieved == 4  # < 5: the suppression's promise broken by the PRAM after it
        assert summary["verdict"]["headline"] == (
            "Not protected: step 1 of the plan (suppress): k-anonymity on every required "
            "subset of ['sex', 'region', 'education'] with missing='any' (a missing value "
            f"matches any value) does not hold; k anonymity: required 5, achieved {achieved}.")
    else:
        assert review.returncode == 0
        assert summary["verdict"]["headline"].startswith("Protected: k = 5 required")


def test_the_steps_are_re_derived_or_said_to_be_recorded(files: Path) -> None:
    original = read_table(files / "in.csv")
    for name, expected in (("failing", (False, True)), ("passing", (True, True))):
        summary = load_summary(files / f"{name}.json")
        review = assess_release(original, read_table(files / f"{name}.csv"),
                                quasi_identifiers=KEYS, summary=summary)
        steps = review.checks["steps"]
        assert tuple(s["holds"] for s in steps) == expected
        assert tuple(s["holds"] for s in summary["checks"]["steps"]) == expected
        # the PRAM after a suppression of its column reads region as the suppression left
        # it: not in either file, so the release's own check, said so
        assert [s.get("re_derived", True) for s in steps] == \
            ([True, False] if name == "failing" else [True, True])


def test_a_file_tampered_after_the_release_fails_the_re_derived_step(files: Path) -> None:
    table = pd.read_csv(files / "passing.csv")
    table.loc[0, "region"] = "Atlantis"  # not a category PRAM can publish
    table.to_csv(files / "tampered.csv", index=False)
    review = _review(files, "passing", "tampered.csv")
    assert review.returncode == EXIT_NOT_PROTECTED
    assert review.stdout.splitlines()[0].startswith("Not protected: step 2 of the plan (pram)")
