"""One verdict on every face: ``microagg anonymize`` (its table, last line and exit status),
the summary JSON, the release's report, ``microagg report`` on the two files and ``microagg
check`` on the output say the same words; and the review of the release's own files with its
schema gives the release's own figures (dates read as days, ordinals by rank)."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microagg.cli import EXIT_NOT_PROTECTED

SCHEMA = """
[columns.person_id]
role = "identifier"
[columns.date_of_birth]
role = "quasi-identifier"
type = "date"
[columns.education]
role = "quasi-identifier"
type = "ordinal"
order = ["none", "primary", "secondary", "degree"]
[columns.bmi]
role = "quasi-identifier"
type = "numeric"
[columns.region]
role = "quasi-identifier"
type = "categorical"
[columns.diagnosis]
role = "sensitive"
type = "categorical"
"""


def _survey(rows: int = 90) -> pd.DataFrame:
    """A small survey: a date of birth, an ordinal, a numeric (one decimal: not rounded when
    published) and a categorical quasi-identifier, a sensitive column; households of three
    share one weight."""
    rng = np.random.default_rng(11)
    born = pd.Timestamp("1945-01-01") + pd.to_timedelta(rng.integers(0, 60 * 365, rows), "D")
    return pd.DataFrame({
        "person_id": [f"P{i:03d}" for i in range(rows)],
        "date_of_birth": born.strftime("%Y-%m-%d"),
        "education": rng.choice(["none", "primary", "secondary", "degree"], rows),
        "bmi": rng.normal(26.0, 4.0, rows).round(1) + 0.05,
        "region": rng.choice(["north", "south", "east"], rows),
        "diagnosis": rng.choice(["a", "b", "c"], rows),
        "weight": np.repeat(rng.uniform(50.0, 500.0, rows // 3).round(2), 3),
    })


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (its exit status is the command's)."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def _flat(printed: str) -> str:
    """A printed table as one line of words (its borders and wrapping removed)."""
    return " ".join(re.sub(r"[│┃┌┐└┘├┤─┬┴┼]+", " ", printed).split())


def _status(page: str) -> str:
    """The report's status line as text."""
    found = re.search(r"<p class='status \w+'>(.*?)</p>", page)
    assert found is not None, page[:2000]
    return re.sub(r"<[^>]+>", "", found.group(1))


def _cell(page: str, label: str) -> str:
    found = re.search(rf"<td class='l'>{re.escape(label)}</td><td>([^<]*)</td>", page)
    assert found is not None, label
    return found.group(1)


def _cells(page: str) -> dict[str, str]:
    """The report's figures by label, for the labels shown once (a column's name may label
    a row of two tables)."""
    found = re.findall(r"<td class='l'>([^<]*)</td><td>([^<]*)</td>", page)
    labels = [label for label, _ in found]
    return {label: value for label, value in found if labels.count(label) == 1}


def _release(folder: pathlib.Path, table: pd.DataFrame, schema: str
             ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    table.to_csv(folder / "survey.csv", index=False)
    (folder / "schema.toml").write_text(schema)
    done = _cli("anonymize", folder / "survey.csv", "--schema", folder / "schema.toml",
                "-k", "5", "-o", folder / "out.csv", "--summary-json", folder / "out.json",
                "--report", folder / "release.html", "--random-state", "3")
    assert (folder / "out.csv").exists(), done.stderr  # written whatever the verdict
    return done, json.loads((folder / "out.json").read_text())


def _review(folder: pathlib.Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], str]:
    done = _cli("report", folder / "survey.csv", folder / "out.csv", "--schema",
                folder / "schema.toml", "-o", folder / "review.html", *extra)
    return done, (folder / "review.html").read_text()


def test_the_review_of_a_release_gives_its_figures_and_its_verdict(tmp_path) -> None:
    done, summary = _release(tmp_path, _survey().drop(columns="weight"), SCHEMA)
    assert done.returncode == 0, done.stderr
    verdict = summary["verdict"]
    assert verdict["status"] == "protected" and verdict["protected"] is True
    assert verdict["headline"] == ("Protected: k = 5 required and reached on the published "
                                   "file.")
    assert done.stdout.strip().splitlines()[-1] == verdict["headline"]
    reviewed, review = _review(tmp_path, "-k", "5")
    assert reviewed.returncode == 0, reviewed.stderr
    release = (tmp_path / "release.html").read_text()
    assert _status(release) == _status(review) == verdict["headline"]
    assert verdict["headline"] in reviewed.stdout
    # the figures: NCP (the headline loss) and SSE/SST, as the release measured them
    metrics = summary["metrics"]
    ncp_label = "loss: normalized certainty penalty (NCP)"
    assert _cell(review, ncp_label) == _cell(release, ncp_label) \
        == f"{100 * metrics['ncp']:.4g} %"
    assert f"(NCP) {100 * metrics['ncp']:.2f} %" in reviewed.stdout
    il_label = "information loss, SSE/SST on z-scores (%)"
    assert _cell(review, il_label) == _cell(release, il_label) \
        == f"{metrics['information_loss']:.4g}"
    checked = _cli("check", tmp_path / "out.csv", "--schema", tmp_path / "schema.toml",
                   "-k", "5", "--summary-json", tmp_path / "check.json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads((tmp_path / "check.json").read_text())["verdict"] == verdict
    assert f"verdict {verdict['headline']}" in _flat(checked.stdout)


AGES = SCHEMA.replace("[columns.bmi]", "[columns.age]") + """[columns.height]
role = "quasi-identifier"
type = "numeric"
"""
"""The schema with whole-number ages and heights in place of the bmi: rounded to integers
by default."""
NUMERIC = """
[columns.person_id]
role = "identifier"
[columns.date_of_birth]
role = "quasi-identifier"
type = "date"
publish = "month"
[columns.age]
role = "quasi-identifier"
type = "numeric"
[columns.height]
role = "quasi-identifier"
type = "numeric"
"""
"""Numeric quasi-identifiers only (the numeric stage): whole numbers, a date by month."""


@pytest.mark.parametrize("schema", [AGES, NUMERIC], ids=["mixed", "numeric"])
def test_the_review_of_rounded_integers_gives_the_release_figures(tmp_path, schema) -> None:
    # whole-number quasi-identifiers are published rounded (29.29 -> 29): the release
    # measures the published numbers, so the review of its files prints the same figures
    rng = np.random.default_rng(5)
    table = _survey().drop(columns=["weight", "bmi"]).assign(
        age=rng.integers(18, 90, 90), height=rng.integers(150, 200, 90))
    if schema is NUMERIC:
        table = table.drop(columns=["education", "region", "diagnosis"])
    done, summary = _release(tmp_path, table, schema)
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(tmp_path / "out.csv")["age"].dtype == np.int64  # rounded
    reviewed, review = _review(tmp_path, "-k", "5")
    assert reviewed.returncode == 0, reviewed.stderr
    release, metrics = (tmp_path / "release.html").read_text(), summary["metrics"]
    ours, theirs = _cells(release), _cells(review)
    shared = {label for label in ours if label in theirs}
    headline = ("loss: information loss (SSE/SST)" if schema is NUMERIC
                else "loss: normalized certainty penalty (NCP)")
    assert {headline, "groups", "risk: record linkage risk (DLD)" if schema is NUMERIC
            else "information loss, SSE/SST on z-scores (%)"} <= shared
    assert {label: theirs[label] for label in shared} == {label: ours[label]
                                                          for label in shared}
    assert ours[headline] == (f"{metrics['information_loss']:.4g} %" if schema is NUMERIC
                              else f"{100 * metrics['ncp']:.4g} %")


@pytest.fixture(scope="module")
def weighted(tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[pathlib.Path, subprocess.CompletedProcess[str], dict[str, Any]]:
    """The release of the survey with its household weight published (it breaks k)."""
    folder = tmp_path_factory.mktemp("weighted")
    schema = SCHEMA + '[columns.weight]\nrole = "weight"\n'
    done, summary = _release(folder, _survey(), schema)
    return folder, done, summary


HEADLINE = ("Not protected: published column(s) that break the required k: weight (k = 1 "
            "with it).")


def test_a_published_weight_that_breaks_k_is_not_protected_everywhere(weighted) -> None:
    folder, done, summary = weighted
    assert done.returncode == EXIT_NOT_PROTECTED, done.stderr
    verdict = summary["verdict"]
    assert verdict == {"protected": False, "status": "not protected", "headline": HEADLINE,
                       "reasons": [HEADLINE[len("Not protected: "):-1]]}
    assert f"microagg release verdict {HEADLINE}" in _flat(done.stdout)  # the first row ...
    assert done.stdout.strip().splitlines()[-1] == HEADLINE  # ... and the last line
    assert _status((folder / "release.html").read_text()) == HEADLINE
    reviewed, review = _review(folder, "--summary-json", str(folder / "out.json"))
    assert reviewed.returncode == EXIT_NOT_PROTECTED, reviewed.stderr
    assert _status(review) == HEADLINE and HEADLINE in reviewed.stdout
    checked = _cli("check", folder / "out.csv", "--schema", folder / "schema.toml", "-k", "5",
                   "--summary-json", folder / "check.json")
    assert checked.returncode == EXIT_NOT_PROTECTED, checked.stderr
    assert json.loads((folder / "check.json").read_text())["verdict"] == verdict
    assert f"verdict {HEADLINE}" in _flat(checked.stdout)


def test_check_without_k_names_the_column_that_lowers_it(weighted) -> None:
    folder, _, _ = weighted
    checked = _cli("check", folder / "out.csv", "--schema", folder / "schema.toml",
                   "--summary-json", folder / "check.json")
    assert checked.returncode == 0, checked.stderr
    verdict = json.loads((folder / "check.json").read_text())["verdict"]
    assert verdict["status"] == "no k required"
    assert verdict["headline"].startswith("No k was required: the published file is ")
    assert verdict["headline"].endswith("published column(s) that lower it: weight (k = 1 "
                                        "with it).")


def test_the_review_of_a_release_with_missing_values_gives_the_release_figures(tmp_path
                                                                                ) -> None:
    # missing numeric and categorical quasi-identifiers (the default --missing pattern):
    # the release measures each missingness pattern on its observed columns and weights the
    # patterns by their records; the review of its files measures the same way
    table = _survey().drop(columns="weight")
    rng = np.random.default_rng(2)
    table.loc[rng.choice(len(table), 15, replace=False), "bmi"] = np.nan
    table.loc[rng.choice(len(table), 10, replace=False), "region"] = np.nan
    done, summary = _release(tmp_path, table, SCHEMA)
    assert summary["params"]["missing"]["strategy"] == "pattern"
    assert len(summary["params"]["missing"]["patterns"]["sizes"]) > 1
    reviewed, review = _review(tmp_path, "-k", "5")
    assert reviewed.returncode == done.returncode, reviewed.stderr
    ours, theirs = _cells((tmp_path / "release.html").read_text()), _cells(review)
    shared = {label for label in ours if label in theirs}
    ncp_label = "loss: normalized certainty penalty (NCP)"
    assert {ncp_label, "groups", "information loss, SSE/SST on z-scores (%)"} <= shared
    assert {label: theirs[label] for label in shared} == {label: ours[label]
                                                          for label in shared}
    assert ours[ncp_label] == f"{100 * summary['metrics']['ncp']:.4g} %"
