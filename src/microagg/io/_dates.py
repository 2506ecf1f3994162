"""Date and datetime columns in and out of the formats that type them: Stata, SPSS, Excel and
Parquet. Used by :mod:`microagg.io._labelled` and :func:`microagg.io.write_table`.

Read, every date column is a ``datetime64`` column, the type the pipeline takes for a date
(:mod:`microagg._pipeline.dates`): pyreadstat reads an SPSS ``DATE11`` or a Stata ``%td``
column, and pyarrow a Parquet ``date32`` one, as ``datetime.date`` objects, which the pipeline
would take for text. The kind of each column read, ``"date"`` or ``"datetime"``, and its
display format (``DATE11``, ``DATETIME20``, ``%td``, ``%tc``) are kept in
:class:`~microagg.io.TableMetadata`, so that a written column has the kind it was read with:
a Stata or SPSS date format (the one read, when written to the same format), an Excel date
number format, a Parquet ``date32`` or timestamp. A column with no recorded kind is a date
when none of its values has a time of day, a datetime otherwise (a Parquet timestamp stays a
timestamp). Stata, SPSS and Excel have no time zones: a zone-aware column is written as its
wall time, the time the pipeline counts its days on.
"""

from __future__ import annotations

import datetime
from collections.abc import Hashable, Mapping
from typing import Literal

import numpy as np
import pandas as pd

__all__ = ["DATE", "DATETIME", "DateKind", "as_datetimes", "excel_dates", "parquet_dates",
           "readstat_dates", "written_kinds"]

DateKind = Literal["date", "datetime"]
DATE: DateKind = "date"
DATETIME: DateKind = "datetime"

_FORMATS: Mapping[str, Mapping[str, str]] = {
    "sav": {DATE: "DATE11", DATETIME: "DATETIME20"},
    "dta": {DATE: "%td", DATETIME: "%tc"},
}
"""The display format a Stata or SPSS column of each kind gets when none was read."""


def _holds_dates(series: pd.Series) -> bool:
    """Whether every non-missing value (at least one) is a ``datetime.date`` (not a
    ``datetime.datetime``, which is a subclass)."""
    if series.dtype != object:
        return False
    values = series.dropna()
    return len(values) > 0 and all(type(value) is datetime.date for value in values)


def as_datetimes(df: pd.DataFrame) -> dict[str, DateKind]:
    """Turn every column of ``datetime.date`` objects of `df` (in place) into
    ``datetime64[s]``; return the kind of each date or datetime column.

    Examples
    --------
    >>> df = pd.DataFrame({"d": [datetime.date(1989, 3, 13), None]})
    >>> as_datetimes(df), str(df["d"].dtype)
    ({'d': 'date'}, 'datetime64[s]')
    """
    kinds: dict[str, DateKind] = {}
    for col in df.columns:
        series = df[col]
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            kinds[str(col)] = DATETIME
        elif _holds_dates(series):
            df[col] = pd.to_datetime(series.where(series.notna(), None)).astype(
                "datetime64[s]")
            kinds[str(col)] = DATE
    return kinds


def _wall_time(series: pd.Series) -> pd.Series:
    """A datetime column without its time zone (its wall time), for formats that have none."""
    return series.dt.tz_localize(None) if getattr(series.dtype, "tz", None) is not None \
        else series


def _no_time_of_day(series: pd.Series) -> bool:
    values = _wall_time(series).dropna()
    return bool((values == values.dt.normalize()).all())


def written_kinds(df: pd.DataFrame, recorded: Mapping[str, str]) -> dict[Hashable, DateKind]:
    """The kind each ``datetime64`` column of `df` is written as.

    A column read as a datetime stays one; any other is a date when none of its values has a
    time of day (a published date quasi-identifier, an Excel date), a datetime otherwise (a
    time is never cut off).

    Parameters
    ----------
    df : pandas.DataFrame
        The table to be written.
    recorded : mapping of str to str
        The kind each column was read with (``TableMetadata.date_kinds``).

    Returns
    -------
    dict of column to {"date", "datetime"}
    """
    kinds: dict[Hashable, DateKind] = {}
    for col in df.columns:
        series = df[col]
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            dated = recorded.get(str(col)) != DATETIME and _no_time_of_day(series)
            kinds[col] = DATE if dated else DATETIME
    return kinds


def _date_objects(series: pd.Series) -> pd.Series:
    """A datetime column as ``datetime.date`` objects (``None`` where missing): what
    pyreadstat writes with a date format, pyarrow as ``date32``, pandas with Excel's date
    number format."""
    days = _wall_time(series)
    return pd.Series(np.where(days.isna(), None, days.dt.date), index=series.index,
                     dtype=object)


def readstat_dates(df: pd.DataFrame, fmt: str, recorded: Mapping[str, str],
                   formats_read: Mapping[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """`df` with its date and datetime columns as pyreadstat writes them, and their formats.

    A date is written as ``datetime.date`` objects with a date format, a datetime as
    ``datetime64[us]`` with a datetime format (pyreadstat writes a ``datetime64[s]`` column,
    the unit of a published date, as 1970-01-01 on every row). Each keeps the display format
    read (`formats_read`, only given when the table was read from the same format) if it
    was of the same kind; otherwise SPSS ``DATE11`` / ``DATETIME20``, Stata ``%td`` /
    ``%tc``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table to be written (not modified).
    fmt : {"dta", "sav"}
        The format written.
    recorded : mapping of str to str
        The kind each column was read with.
    formats_read : mapping of str to str
        The display format each column was read with, from a file of format `fmt`.

    Returns
    -------
    df : pandas.DataFrame
        A copy with the date columns converted (`df` itself when there are none).
    variable_format : dict of str to str
        pyreadstat's ``variable_format`` of the date columns.
    """
    kinds = written_kinds(df, recorded)
    if not kinds:
        return df, {}
    out = df.copy()
    formats: dict[str, str] = {}
    for col, kind in kinds.items():
        out[col] = _date_objects(df[col]) if kind == DATE \
            else _wall_time(df[col]).astype("datetime64[us]")
        kept = formats_read.get(str(col)) if recorded.get(str(col)) == kind else None
        formats[str(col)] = kept or _FORMATS[fmt][kind]
    return out, formats


def excel_dates(df: pd.DataFrame, recorded: Mapping[str, str]) -> pd.DataFrame:
    """`df` with each date column as ``datetime.date`` objects (pandas gives them Excel's
    ``YYYY-MM-DD`` number format) and each datetime column as its wall time (pandas gives it
    ``YYYY-MM-DD HH:MM:SS``); `df` itself when it has neither."""
    kinds = written_kinds(df, recorded)
    if not kinds:
        return df
    out = df.copy()
    for col, kind in kinds.items():
        out[col] = _date_objects(df[col]) if kind == DATE else _wall_time(df[col])
    return out


def parquet_dates(df: pd.DataFrame, recorded: Mapping[str, str]) -> pd.DataFrame:
    """`df` with each column read as a date (`recorded`) and still without a time of day as
    ``datetime.date`` objects, which pyarrow writes as ``date32``; other datetime columns stay
    timestamps. `df` itself when there is no such column."""
    dated = [col for col, kind in written_kinds(df, recorded).items()
             if kind == DATE and recorded.get(str(col)) == DATE
             and getattr(df[col].dtype, "tz", None) is None]
    if not dated:
        return df
    out = df.copy()
    for col in dated:
        out[col] = _date_objects(df[col])
    return out
