"""``microagg report -k`` (issue 18, item 11): with -k the report says whether the published
file reaches it; without, it states the achieved level, never "Not k-anonymous"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_NOT_PROTECTED, app


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 5-anonymous release of two numeric columns, as CSV files; the original misses the
    incomes of one group, left missing in the published file."""
    folder = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(5)
    original = pd.DataFrame({"age": rng.integers(18, 90, 60).astype(float),
                             "income": rng.lognormal(10, 1, 60)})
    groups = np.argsort(np.argsort(original["age"].to_numpy(), kind="stable")) // 5
    original.loc[groups == 0, "income"] = np.nan  # a whole class: NaN is a value of its own
    published = original.copy()
    for col in ("age", "income"):
        published[col] = original[col].groupby(groups).transform("mean").round(6)
    published.loc[original["income"].isna(), "income"] = np.nan
    original.to_csv(folder / "original.csv", index=False)
    published.to_csv(folder / "published.csv", index=False)
    return folder


def _run(files, *extra):
    page = files / "r.html"
    result = CliRunner().invoke(app, ["report", str(files / "original.csv"),
                                      str(files / "published.csv"), "-q", "age,income",
                                      "-o", str(page), *extra])
    return result, (page.read_text() if page.exists() else "")


def test_report_without_k_states_the_achieved_level(files):
    result, page = _run(files)
    assert result.exit_code == 0, result.output
    assert "Not k-anonymous" not in page and "the file is 5-anonymous" in page
    done = result.stdout.splitlines()[-1]
    assert "k = 5" in done and "required" not in done
    assert result.stdout.startswith("No k was required: the published file is 5-anonymous")
    assert "income: 5 missing in the original" in page


def test_report_with_k_reached_and_missed(files):
    result, page = _run(files, "-k", "5")
    assert result.exit_code == 0, result.output
    assert "<b>Protected:</b> k = 5 required and reached" in page
    assert "required 5: reached" in result.stdout
    result, page = _run(files, "-k", "6")
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output  # the report is written
    assert "<b>Not protected:</b>" in page and "NOT 6-anonymous" in page
    assert "required 6: NOT reached" in result.stdout


@pytest.mark.parametrize(("value", "message"), [("1", "must be an int >= 2. Got 1"),
                                                 ("61", "should be >= k=61")])
def test_report_refuses_a_bad_k(files, value, message):
    result, _ = _run(files, "-k", value)
    assert result.exit_code != 0 and message in result.output
