"""The ``recode_date`` step: a date column coarsened to its month or year, or replaced by
the age in whole years at a reference date."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...exceptions import SchemaError
from ._common import column_of, with_column
from .options import RecodeDate

__all__ = ["apply_recode_date", "as_dates", "whole_years"]


def as_dates(series: pd.Series, *, step: str = "recode_date") -> pd.Series:
    """The column as ``datetime64`` (timezone dropped to local wall time): a date column as
    it is, a text column of ISO dates parsed; anything else refused by name, with the
    number of values that are not dates and an example."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        dates = series
        if getattr(series.dt, "tz", None) is not None:
            dates = series.dt.tz_localize(None)
        return dates
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        raise SchemaError(f"Step {step!r} needs a date column; column {series.name!r} is "
                          f"{series.dtype}. Band numbers with the 'band' step.")
    parsed = pd.to_datetime(series.astype(object), errors="coerce", format="ISO8601")
    bad = parsed.isna().to_numpy() & ~series.isna().to_numpy()
    if bad.any():
        example = series[bad].iloc[0]
        raise SchemaError(f"Step {step!r} needs a date column; {int(bad.sum())} value(s) of "
                          f"column {series.name!r} are not ISO dates (e.g. {example!r}); the "
                          "allowed values are dates such as '1984-03-07', or missing.")
    return parsed


def whole_years(dates: pd.Series, reference: pd.Timestamp) -> NDArray[np.float64]:
    """Completed years from each date to ``reference`` (NaN for a missing date): the year
    difference, less one when the birthday of the reference year is still to come (a
    29 February birthday comes on 1 March in a common year)."""
    missing = dates.isna().to_numpy()
    year = dates.dt.year.to_numpy(dtype=np.float64, na_value=np.nan)
    month = dates.dt.month.to_numpy(dtype=np.float64, na_value=np.nan)
    day = dates.dt.day.to_numpy(dtype=np.float64, na_value=np.nan)
    before = (month > reference.month) | ((month == reference.month) & (day > reference.day))
    age = reference.year - year - before.astype(np.float64)
    return np.where(missing, np.nan, age)


def apply_recode_date(table: pd.DataFrame, options: RecodeDate, rng: np.random.Generator, *,
                      households: str | None = None, weights: str | None = None,
                      strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Coarsen the dates of ``options.column``.

    ``"month"`` and ``"year"`` keep a date column (``datetime64[ns]``): the first day of
    the month or of the year, at midnight. ``"age"`` makes it numeric (float64): the whole
    years from the date to ``options.reference``; a date after the reference is refused.
    A missing date stays missing.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; it is not modified.
    options : RecodeDate
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic).
    households, weights, strata : str, optional
        Unused: every date is recoded the same way.

    Returns
    -------
    table : pandas.DataFrame
        A new table, the same rows, order and index; only ``options.column`` changed.
    details : dict
        ``column``, ``precision``, ``reference``, ``records_changed``, ``missing`` and the
        published range (``lowest``, ``highest``).

    References
    ----------
    Hundepool, A. et al. Statistical Disclosure Control. Wiley (2012), section 3.4.2
    (global recoding of dates of birth to the year, or to age).
    """
    series = column_of(table, options.column, step=options.name)
    dates = as_dates(series, step=options.name)
    missing = dates.isna().to_numpy()
    published: pd.Series
    if options.precision == "age":
        reference = pd.Timestamp(str(options.reference))
        late = ~missing & (dates > reference).to_numpy()
        if late.any():
            raise SchemaError(f"Step 'recode_date': {int(late.sum())} date(s) of column "
                              f"{options.column!r} are after the reference date "
                              f"{options.reference} (up to {dates[late].max().date()}); the "
                              f"allowed dates are up to {options.reference}.")
        published = pd.Series(whole_years(dates, reference), index=series.index)
        changed = int((~missing).sum())
    else:
        period = "M" if options.precision == "month" else "Y"
        published = dates.dt.to_period(period).dt.start_time.astype("datetime64[ns]")
        changed = int((~missing & (published != dates.astype("datetime64[ns]"))
                       .to_numpy()).sum())
    observed = published[~missing]
    lowest, highest = (observed.min(), observed.max()) if observed.size else (None, None)
    details = {"column": options.column, "precision": options.precision,
               "reference": options.reference, "records_changed": changed,
               "missing": int(missing.sum()), "lowest": _plain(lowest),
               "highest": _plain(highest)}
    return with_column(table, options.column, published), details


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat()
    return float(value)
