"""The report's histograms: a skewed positive column (an income) on a logarithmic axis with
log-spaced bins, an even one (an age) and a column with zeros on a linear axis, a date
column on a date axis."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from microagg.report import _plots


def _drawn(monkeypatch: pytest.MonkeyPatch, values: pd.Series, *, is_date: bool = False
           ) -> Any:
    """The axes of the histogram the report draws for ``values`` (original = published)."""
    figures: list[Any] = []
    monkeypatch.setattr(_plots, "png", lambda fig, alt="": figures.append(fig) or "")
    _plots._histogram("x", values, values, _plots.plots(), is_date=is_date)
    (figure,) = figures
    return figure.axes[0]


def test_a_skewed_income_is_drawn_on_a_log_axis(monkeypatch: pytest.MonkeyPatch) -> None:
    income = pd.Series(np.random.default_rng(0).lognormal(10, 1.2, size=2000))
    assert income.max() / income.min() > 100 and income.mean() > income.median()
    ax = _drawn(monkeypatch, income)
    assert ax.get_xscale() == "log"
    edges = [patch.get_x() for patch in ax.patches[:30]]
    # log-spaced bins: every bin's right edge / left edge is the same ratio
    ratios = np.diff(np.log(edges))
    assert np.allclose(ratios, ratios[0])
    assert "logarithmic" in ax.get_xlabel()


@pytest.mark.parametrize("values", [
    pd.Series(np.random.default_rng(1).normal(45, 12, size=500).clip(18, 90)),  # an age
    pd.Series([0.0, *np.random.default_rng(2).lognormal(10, 1.2, size=500)]),  # a zero
])
def test_an_even_column_or_one_with_zeros_stays_linear(monkeypatch: pytest.MonkeyPatch,
                                                       values: pd.Series) -> None:
    assert _drawn(monkeypatch, values).get_xscale() == "linear"


def test_a_date_column_is_drawn_on_a_date_axis(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.dates as mdates

    days = pd.Series([18_000.0, 18_400.0, 19_000.0, 19_500.0, 20_000.0])  # 2019 to 2024
    ax = _drawn(monkeypatch, days, is_date=True)
    assert ax.get_xscale() == "linear"
    low, high = (mdates.num2date(v).year for v in ax.get_xlim())
    assert low <= 2019 and high >= 2024  # the axis is in years, not day numbers


def test_every_plot_of_the_report_says_what_it_shows() -> None:
    import re

    from microagg import anonymize
    from microagg.report import render_report

    rng = np.random.default_rng(4)
    data = pd.DataFrame({"age": rng.integers(18, 90, 120).astype(float),
                         "income": rng.lognormal(10, 1.2, 120)})
    html_text = render_report(anonymize(data, quasi_identifiers=["age", "income"], k=4,
                                        random_state=0), data)
    alts = re.findall(r"<img alt='([^']*)'", html_text)
    assert alts and "plot" not in alts
    assert "histogram of income, original and published values overlaid (logarithmic axis)" \
        in alts
    assert "histogram of age, original and published values overlaid" in alts
