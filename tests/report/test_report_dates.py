"""Date quasi-identifiers in the HTML reports: summaries as ISO dates, spreads in days, and
histograms on date axes, in the release report (``anonymize --report``) and in the review
report (``microagg report``), each made by a separate CLI process."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.report._dates import date_text, days_text


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def dated(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    """A Parquet table with a date as ISO text (``born``), a ``datetime64`` date (``seen``)
    and an age, all three quasi-identifiers."""
    folder = tmp_path_factory.mktemp("dates")
    rng = np.random.default_rng(5)
    born = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 20000, 200), "D")
    seen = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, 200), "D")
    frame = pd.DataFrame({"born": born.strftime("%Y-%m-%d"), "seen": seen.as_unit("ns"),
                          "age": rng.integers(18, 90, 200)})
    frame.to_parquet(folder / "in.parquet", index=False)
    return folder, pd.read_parquet(folder / "in.parquet")


def _days(values: pd.Series) -> pd.Series:
    return (pd.to_datetime(values) - pd.Timestamp(0)) / pd.Timedelta(1, "D")


def _assert_dates_shown_as_dates(page: str, original: pd.DataFrame) -> None:
    section = page[page.index("Quasi-identifiers before and after"):]
    tables = section.split("</table>")
    for col in ("born", "seen"):
        when = pd.to_datetime(original[col])
        days = _days(original[col])
        row = re.search(rf"<tr><td class='l'>{col}</td>.*?</tr>", tables[0])
        assert row is not None, col
        # the mean as a date, the spread in days; no day numbers
        assert f"<td>{when.mean():%Y-%m-%d}</td>" in row.group(0)
        assert f"sd {days.std():,.0f} days" in row.group(0)
        for number in (days.mean(), days.var()):
            assert f"<td>{number:.4g}</td>" not in row.group(0)
        # the earliest and latest original dates
        ranges = re.search(rf"<tr><td class='l'>{col}</td>.*?</tr>", tables[1])
        assert ranges is not None, col
        assert f"<td>{when.min():%Y-%m-%d}</td><td>{when.max():%Y-%m-%d}</td>" \
            in ranges.group(0)
    # a histogram per column (the date ones on date axes) and the correlations
    assert section.count("data:image/png;base64,") >= 4


def test_release_report_shows_dates_as_dates(dated, tmp_path) -> None:
    folder, original = dated
    page = tmp_path / "r.html"
    done = _cli("anonymize", str(folder / "in.parquet"), "-q", "born,seen,age",
                "--dates", "born,seen", "-k", "5", "--random-state", "0",
                "-o", str(tmp_path / "out.parquet"), "--report", str(page))
    assert done.returncode == 0, done.stderr[-2000:]
    _assert_dates_shown_as_dates(page.read_text(), original)


def test_review_report_shows_dates_as_dates(dated, tmp_path) -> None:
    folder, original = dated
    summary, out = tmp_path / "s.json", tmp_path / "out.parquet"
    made = _cli("anonymize", str(folder / "in.parquet"), "-q", "born,seen,age",
                "--dates", "born,seen", "-k", "5", "--random-state", "0",
                "-o", str(out), "--summary-json", str(summary))
    assert made.returncode == 0, made.stderr[-2000:]
    page = tmp_path / "review.html"
    done = _cli("report", str(folder / "in.parquet"), str(out), "--summary-json",
                str(summary), "-o", str(page))
    assert done.returncode == 0, done.stderr[-2000:]
    _assert_dates_shown_as_dates(page.read_text(), original)


def test_day_numbers_as_text() -> None:
    assert date_text(0.0) == "1970-01-01" and date_text(-1.0) == "1969-12-31"
    assert date_text(float("nan")) == "n/a"
    assert days_text(2.6) == "3 days" and days_text(1.0) == "1 day"
