"""Date quasi-identifiers: days since 1970-01-01 while partitioning, dates again when published.

A quasi-identifier is a date when it is declared one (``dates=`` of
:func:`microagg.anonymize`, ``--dates``, ``type = "date"`` in a schema) or when its dtype is
``datetime64`` (taken for a date without a declaration: a datetime has no other sensible
reading). :func:`prepare` (called once by
:meth:`Request.build <microagg._pipeline.request.Request.build>`) parses declared text columns
with their format and replaces every date quasi-identifier by a float number of days, so that
every numeric method partitions and aggregates it; :func:`restore` (the publish step,
:mod:`.publish`) turns the published numbers back into dates, rounded to the day or coarsened
to the first day of their month or year. A text column is published as ISO text
(``1989-03-13``; by month or year an ISO partial date, ``1989-03`` or ``1989``), a datetime
column as ``datetime64[s]`` (its time zone kept).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..exceptions import SchemaError

__all__ = ["PRECISIONS", "DateSpec", "as_date_specs", "format_problem", "from_days", "prepare",
           "published_days", "restore", "to_days"]

PRECISIONS = ("day", "month", "year")
"""How a published date is coarsened: rounded to the day, or the first day of its month or
year."""

_KEYS = ("format", "publish")
_NAT = np.iinfo(np.int64).min  # the integer behind NaT
_INTERVAL = re.compile(r"^\[(.+), (.+)\]$")
_OFFSET = r"(Z|[+-]\d\d:?\d\d)$"  # a time zone offset ending a text date


@dataclass(frozen=True)
class DateSpec:
    """How one date quasi-identifier is read and published.

    Attributes
    ----------
    format : str or None
        ``strftime`` format of a text column (``None``: ISO 8601).
    publish : {"day", "month", "year"}
        Published precision (:data:`PRECISIONS`).
    text : bool
        Whether the column was text (published as ISO text) or ``datetime64``.
    tz : str or None
        Time zone of a zone-aware datetime column (the days count its wall time).
    """

    format: str | None = None
    publish: str = "day"
    text: bool = True
    tz: str | None = None

    def summary(self) -> dict[str, Any]:
        """The spec as plain values, for ``Release.params["dates"]``."""
        return {"format": self.format or "ISO 8601", "publish": self.publish,
                "published_as": "ISO text" if self.text else "datetime64"}


def as_date_specs(value: Any, *, source: str = "dates") -> dict[str, DateSpec]:
    """The ``dates`` option as specs: a column name, a sequence of names, or a mapping of name
    to ``{"format": ..., "publish": ...}`` (either key may be left out).

    Examples
    --------
    >>> as_date_specs({"dob": {"publish": "month"}})["dob"].publish
    'month'
    """
    if value is None:
        return {}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Mapping):
        names = list(value)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"The {source!r} parameter takes column names or a mapping of "
                            f"column name to {{'format': ..., 'publish': ...}}. Got {value!r}.")
        value = {n: {} for n in names}
    return {str(col): _spec(str(col), entry, source) for col, entry in value.items()}


def _spec(col: str, entry: Any, source: str) -> DateSpec:
    if not isinstance(entry, Mapping):
        raise TypeError(f"{source}[{col!r}] must be a mapping with keys {', '.join(_KEYS)}. "
                        f"Got {entry!r}.")
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        raise ValueError(f"{source}[{col!r}] has unknown key(s) {unknown}; allowed: "
                         f"{', '.join(_KEYS)}.")
    fmt, publish = entry.get("format"), entry.get("publish", "day")
    if fmt is not None and (not isinstance(fmt, str) or not fmt):
        raise ValueError(f"{source}[{col!r}]['format'] must be a strftime format such as "
                         f"'%Y-%m-%d'. Got {fmt!r}.")
    problem = None if fmt is None else format_problem(fmt)
    if problem is not None:
        raise ValueError(f"{source}[{col!r}]['format'] {fmt!r} is not a strftime format "
                         f"({problem}); e.g. '%Y-%m-%d' or '%d.%m.%Y'.")
    if publish not in PRECISIONS:
        raise ValueError(f"{source}[{col!r}]['publish'] must be one of "
                         f"{', '.join(PRECISIONS)}. Got {publish!r}.")
    return DateSpec(format=fmt, publish=str(publish))


def prepare(df: pd.DataFrame, qi: Sequence[str], declared: Mapping[str, DateSpec]
            ) -> tuple[pd.DataFrame, Mapping[str, DateSpec]]:
    """``df`` with every date quasi-identifier as float days since 1970-01-01, and the specs
    that publish them as dates again (declared ones, and ``datetime64`` columns).

    Parameters
    ----------
    df : pandas.DataFrame
        The table (not modified).
    qi : sequence of str
        The quasi-identifiers.
    declared : mapping of str -> DateSpec
        The columns declared dates (each must be a quasi-identifier).

    Returns
    -------
    df : pandas.DataFrame
        A copy with the date columns converted (``df`` itself when there are none).
    specs : mapping of str -> DateSpec
        Every converted column, in ``qi``'s order.
    """
    not_qi = [c for c in declared if c not in qi]
    if not_qi:
        raise SchemaError(f"dates name column(s) {', '.join(map(repr, not_qi))} that are not "
                          f"quasi-identifiers; quasi-identifiers: {', '.join(map(repr, qi))}. "
                          "Only quasi-identifiers are masked; other columns are published as "
                          "they are.")
    found = {c: declared.get(c, DateSpec()) for c in qi
             if c in declared or pd.api.types.is_datetime64_any_dtype(df[c].dtype)}
    if not found:
        return df, MappingProxyType({})
    out = df.copy()
    specs = {}
    for col, spec in found.items():
        out[col], specs[col] = to_days(df[col], spec, column=col)
    return out, MappingProxyType(specs)


def to_days(series: pd.Series, spec: DateSpec, *, column: str) -> tuple[NDArray[np.float64],
                                                                          DateSpec]:
    """Days since 1970-01-01 of each value (``NaN`` where missing), and the spec completed
    with what the column is (text or datetime, its time zone).

    Examples
    --------
    >>> to_days(pd.Series(["1970-01-02", None]), DateSpec(), column="d")[0]
    array([ 1., nan])
    """
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        parsed = series
        tz = getattr(series.dtype, "tz", None)
        if tz is not None:  # count the wall time; the zone is put back when published
            parsed = series.dt.tz_localize(None)
        spec = DateSpec(spec.format, spec.publish, text=False,
                        tz=str(tz) if tz is not None else None)
    elif pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series):
        raise SchemaError(f"Quasi-identifier {column!r} is declared a date but holds numbers "
                          f"(dtype {series.dtype}); declare it numeric, or give it as text "
                          "dates or datetimes.")
    else:
        parsed = _parse_text(series, spec, column)
    try:  # microseconds: the nanoseconds of pd.Timestamp hold only 1677-09-21..2262-04-11
        moments = parsed.to_numpy(dtype="datetime64[us]")
    except (OverflowError, pd.errors.OutOfBoundsDatetime):
        raise SchemaError(f"Quasi-identifier {column!r} holds dates too far from 1970 to "
                          f"count in microseconds (from {series.min()} to {series.max()}); "
                          "dates within 290,000 years of 1970 are microaggregated.") from None
    days = (moments - np.datetime64(0, "us")) / np.timedelta64(1, "D")
    return np.asarray(days, dtype=np.float64), spec


def format_problem(fmt: str) -> str | None:
    """Why ``fmt`` is not a date format pandas parses with (``None``: it is one).

    Examples
    --------
    >>> format_problem("%Q-%m")
    "'Q' is a bad directive in format '%Q-%m'"
    >>> format_problem("%d.%m.%Y") is None
    True
    """
    try:
        pd.to_datetime(pd.Series(["1970-01-01"]), format=fmt, errors="coerce")
    except ValueError as error:
        return str(error)
    return None


def _parse_text(series: pd.Series, spec: DateSpec, column: str) -> pd.Series:
    """Text dates parsed with the declared format; unparseable values refused."""
    fmt = spec.format or "ISO8601"
    text = series.astype("str").str.strip().where(series.notna())
    try:
        parsed = pd.to_datetime(text, format=fmt, errors="coerce")
    except ValueError as error:  # mixed time zones; out of bounds (pandas < 3)
        raise SchemaError(_refusal(text, spec, column, error)) from None
    if getattr(parsed.dtype, "tz", None) is not None:  # one offset: count the wall time
        parsed = parsed.dt.tz_localize(None)
    bad = text.notna() & parsed.isna()
    n_bad = int(bad.sum())
    if n_bad:
        examples = ", ".join(repr(v) for v in pd.unique(text[bad])[:3])
        raise SchemaError(
            f"Quasi-identifier {column!r} is declared a date (format "
            f"{spec.format or 'ISO 8601'}), but {n_bad} of its {len(series)} values do not "
            f"parse, e.g. {examples}. Correct them, or declare the format (format = "
            "\"%d.%m.%Y\" in the schema, dates={col: {'format': ...}}).")
    return parsed


def _refusal(text: pd.Series, spec: DateSpec, column: str, error: ValueError) -> str:
    """The message for text dates pandas refuses as a whole, naming the column and rows."""
    where = f"Quasi-identifier {column!r} is declared a date (format " \
            f"{spec.format or 'ISO 8601'}), but"
    text = text.reset_index(drop=True)
    offsets = text.str.extract(_OFFSET, expand=False)
    if offsets.nunique() > 1:
        first = offsets.dropna().drop_duplicates().index[:2]
        examples = " and ".join(f"row {i + 1} {text[i]!r}" for i in first)
        return (f"{where} its values are in {offsets.nunique()} different time zones, e.g. "
                f"{examples}. A date is counted in one zone's wall time: write them all in "
                "one zone (or without an offset), e.g. converted to UTC.")
    if isinstance(error, pd.errors.OutOfBoundsDatetime):
        return (f"{where} a value is outside the dates pandas holds "
                f"({pd.Timestamp.min.date()}..{pd.Timestamp.max.date()}): {error}.")
    return f"{where} its values cannot be read as dates: {error}."


def from_days(values: NDArray[np.float64], spec: DateSpec, index: Any = None) -> pd.Series:
    """Published days as dates: rounded to the day, then coarsened to ``spec.publish``; ISO
    text for a text column, ``datetime64[s]`` otherwise (missing stays missing).

    A text column published by month or year is an ISO partial date (``1989-03``,
    ``1989``), which does not look exact; a ``datetime64`` one holds the first day of its
    month or year (a typed format has no partial dates).

    Examples
    --------
    >>> from_days(np.array([7011.4, np.nan]), DateSpec(publish="month")).tolist()
    ['1989-03', nan]
    """
    dates = _published_dates(values, spec)
    finite = ~np.isnat(dates)
    if spec.text:
        unit: Literal["Y", "M", "D"] = ("M" if spec.publish == "month"
                                         else "Y" if spec.publish == "year" else "D")
        text = pd.Series(np.datetime_as_string(dates, unit=unit), index=index, dtype="str")
        return text.where(finite)
    published = pd.Series(dates.astype("datetime64[s]"), index=index)
    return published.dt.tz_localize(spec.tz) if spec.tz is not None else published


def _published_dates(values: NDArray[np.float64], spec: DateSpec) -> NDArray[Any]:
    """Days rounded to the day, then coarsened to ``spec.publish``, as ``datetime64[D]``
    (``NaT`` where missing)."""
    days = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(days)
    whole = np.where(finite, np.round(np.where(finite, days, 0.0)), 0.0).astype(np.int64)
    dates = np.where(finite, whole, _NAT).view("datetime64[D]")
    if spec.publish == "month":
        return dates.astype("datetime64[M]").astype("datetime64[D]")
    if spec.publish == "year":
        return dates.astype("datetime64[Y]").astype("datetime64[D]")
    return dates


def published_days(values: NDArray[np.float64], spec: DateSpec) -> NDArray[np.float64]:
    """The days of the dates :func:`from_days` publishes (the numbers a review of the
    published file reads back), ``NaN`` where missing.

    Examples
    --------
    >>> published_days(np.array([7011.4, np.nan]), DateSpec(publish="month")).tolist()
    [6999.0, nan]
    """
    dates = _published_dates(values, spec)
    days = dates.astype(np.int64).astype(np.float64)
    return np.where(np.isnat(dates), np.nan, days)


def _interval_text(value: Any, spec: DateSpec) -> Any:
    """A generalized ``[low, high]`` (or single value) of day numbers as ISO dates."""
    if not isinstance(value, str):
        return value
    match = _INTERVAL.match(value)
    parts = match.groups() if match else (value,)
    iso = [from_days(np.array([float(p)]), DateSpec(publish=spec.publish)).iloc[0]
           for p in parts]
    return f"[{iso[0]}, {iso[1]}]" if len(iso) == 2 and iso[0] != iso[1] else iso[0]


def restore(published: pd.DataFrame, specs: Mapping[str, DateSpec]) -> pd.DataFrame:
    """``published`` with every date quasi-identifier as dates again (a copy); a generalized
    interval ``[low, high]`` of days becomes one of ISO dates."""
    if not specs:
        return published
    out = published.copy()
    for col, spec in specs.items():
        column = out[col]
        if pd.api.types.is_numeric_dtype(column.dtype):
            out[col] = from_days(column.to_numpy(dtype=np.float64, na_value=np.nan), spec,
                                 index=column.index)
        else:
            out[col] = pd.Series([_interval_text(v, spec) for v in column], index=column.index,
                                 dtype="str")
    return out
