"""Date quasi-identifiers in the report, shown as dates (for :mod:`._plots`).

The report compares a date column as the number of days since 1970-01-01 it was masked as
(:func:`microagg.report.render_report`); this module turns those day numbers back into
dates at the report boundary: a value or a mean as an ISO date, a spread as a number of
days, and the values as ``datetime64`` for the plots' date axes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["as_datetimes", "date_range_table", "date_text", "days_text"]

_EPOCH = pd.Timestamp(0)


def date_text(days: float) -> str:
    """A day number (days since 1970-01-01) as an ISO date; ``n/a`` when missing.

    >>> date_text(0.0), date_text(19000.4), date_text(float("nan"))
    ('1970-01-01', '2022-01-08', 'n/a')
    """
    if days is None or not np.isfinite(days):
        return "n/a"
    return (_EPOCH + pd.Timedelta(float(days), "D")).strftime("%Y-%m-%d")


def days_text(days: float) -> str:
    """A spread in days as text: ``1,234 days``; ``n/a`` when missing.

    >>> days_text(1234.4), days_text(1.0), days_text(float("nan"))
    ('1,234 days', '1 day', 'n/a')
    """
    if days is None or not np.isfinite(days):
        return "n/a"
    whole = round(float(days))
    return f"{whole:,} day" + ("" if whole == 1 else "s")


def as_datetimes(days: pd.Series) -> pd.Series:
    """Day numbers as ``datetime64`` values (missing stays missing), for a date axis."""
    return _EPOCH + pd.to_timedelta(days.astype(float), unit="D")


def date_range_table(original: pd.DataFrame, published: pd.DataFrame,
                     columns: Sequence[str]) -> str:
    """The earliest and latest date of each date column, original and published."""
    rows = []
    for col in columns:
        a, b = original[col].astype(float), published[col].astype(float)
        cells = "".join(f"<td>{date_text(v)}</td>" for v in (a.min(), a.max(), b.min(), b.max()))
        rows.append(f"<tr><td class='l'>{html.escape(col)}</td>{cells}</tr>")
    return ("<p>Dates are shown as dates; their spread (standard deviation) in days.</p>"
            "<table><tr><th class='l'>date column</th><th>earliest, original</th>"
            "<th>latest, original</th><th>earliest, published</th><th>latest, published</th>"
            "</tr>" + "".join(rows) + "</table>")
