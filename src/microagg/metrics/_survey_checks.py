"""Input checks of :mod:`microagg.metrics.survey_risk`: key variables, sampling weights,
household ids, strata, the risk threshold and the k of the k-anonymity counts (one message format:
the column or parameter, the number of offending rows and the allowed range)."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..exceptions import ContinuousKeyWarning, SchemaError, SurveyWeightWarning

__all__ = [
    "CONTINUOUS_DISTINCT",
    "check_households",
    "check_keys",
    "check_ks",
    "check_strata",
    "check_threshold",
    "check_weights",
]

#: A numeric key variable with more distinct values than this is taken for a continuous one.
CONTINUOUS_DISTINCT = 1000


def check_keys(df: Any, keys: Any, *, caller: str) -> tuple[str, ...]:
    """The key variables as a tuple of column names of ``df`` (a DataFrame with >= 1 row).

    A numeric key with more than :data:`CONTINUOUS_DISTINCT` distinct values raises a
    :class:`~microagg.exceptions.ContinuousKeyWarning` (continuous variables are not key
    variables).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"The 'df' parameter of {caller} must be a pandas DataFrame. "
                        f"Got {type(df).__name__} instead.")
    if len(df) == 0:
        raise ValueError(f"The 'df' parameter of {caller} has 0 rows; at least 1 is needed.")
    if isinstance(keys, str) or not isinstance(keys, Iterable):
        raise TypeError(f"The 'keys' parameter of {caller} must be a sequence of column "
                        f"names. Got {keys!r} instead.")
    keys = tuple(keys)
    unknown = [k for k in keys if k not in df.columns]
    if not keys or unknown or len(set(keys)) != len(keys):
        problem = (f"unknown column(s) {', '.join(map(repr, unknown))}" if unknown
                   else "no key variable" if not keys else "a column named twice")
        raise SchemaError(f"The 'keys' parameter of {caller} must name distinct columns of "
                          f"the data: {problem}. Available: "
                          f"{', '.join(map(repr, map(str, df.columns)))}.")
    for key in keys:
        _warn_if_continuous(df[key], key, caller)
    return keys


def _warn_if_continuous(column: pd.Series, key: str, caller: str) -> None:
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return
    distinct = int(column.nunique(dropna=True))
    if distinct > CONTINUOUS_DISTINCT:
        warnings.warn(f"Key variable {key!r} of {caller} is numeric with {distinct} distinct "
                      f"values in {len(column)} rows (more than {CONTINUOUS_DISTINCT}): "
                      "continuous variables are not key variables, nearly every record is "
                      "unique on it and the risk is overstated. Group it first (age bands, "
                      "income classes).", ContinuousKeyWarning, stacklevel=4)


def _column(df: pd.DataFrame, name: Any, parameter: str, caller: str) -> pd.Series:
    if not isinstance(name, str):
        raise TypeError(f"The {parameter!r} parameter of {caller} names one column (a str). "
                        f"Got {name!r} instead.")
    if name not in df.columns:
        raise SchemaError(f"Unknown column {name!r} in the {parameter!r} parameter of "
                          f"{caller}; available: {', '.join(map(repr, map(str, df.columns)))}.")
    return df[name]


def check_weights(df: pd.DataFrame, name: Any, *, caller: str) -> NDArray[np.float64]:
    """The sampling weights of column ``name`` as float64, all finite and > 0.

    Weights summing below the number of records raise a
    :class:`~microagg.exceptions.SurveyWeightWarning`.
    """
    series = _column(df, name, "weights", caller)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        bad = int(pd.to_numeric(series, errors="coerce").isna().sum())
        raise SchemaError(f"Weight column {name!r} of {caller} must be numeric, finite numbers "
                          f"> 0 (allowed range (0, inf)); it has dtype {series.dtype} and "
                          f"{bad} of {len(series)} rows are not numbers.")
    w = series.to_numpy(dtype=np.float64, na_value=np.nan)
    counts = {"missing": int(np.isnan(w).sum()), "infinite": int(np.isinf(w).sum()),
              "zero": int((w == 0).sum()), "negative": int((w < 0).sum())}
    n_bad = sum(counts.values())
    if n_bad:
        what = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        raise SchemaError(f"Weight column {name!r} of {caller} must hold finite numbers > 0 "
                          f"(allowed range (0, inf)): {n_bad} of {w.size} rows do not "
                          f"({what}).")
    if w.sum() < w.size:
        warnings.warn(f"The weights of {name!r} sum to {w.sum():.6g}, below the {w.size} "
                      "records of the sample: they estimate a population smaller than the "
                      "sample (normalized shares?), so Fk and the individual risk are not "
                      "meaningful.", SurveyWeightWarning, stacklevel=3)
    return w


def check_households(df: pd.DataFrame, name: Any, *, caller: str) -> NDArray[np.intp]:
    """Household codes 0..h-1 of column ``name``; every row must have a household id."""
    return household_codes(_column(df, name, "households", caller), name, caller=caller)


def household_codes(values: Any, name: str, *, caller: str) -> NDArray[np.intp]:
    """Codes 0..h-1 of household ids (any hashable values), none missing."""
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    _refuse_missing(series, f"Household column {name!r} of {caller}",
                    "every record needs a household id for the household risk")
    return pd.factorize(series)[0].astype(np.intp, copy=False)


def _refuse_missing(series: pd.Series, subject: str, why: str) -> None:
    """Raise a :class:`SchemaError` naming ``subject``, how many of its rows are missing
    (and the first ones) and ``why`` none may be, if any is."""
    missing = series.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)
        raise SchemaError(f"{subject} is missing on {rows.size} of {missing.size} rows "
                          f"(first rows: {', '.join(str(r) for r in rows[:5])}); {why}.")


def check_strata(df: pd.DataFrame, name: Any, keys: Sequence[str], *, caller: str
                 ) -> NDArray[np.int64]:
    """Stratum codes 0..s-1 of column ``name``: not a key variable, none missing.

    The stratum is an extra key of the frequency counts (sdcMicro's ``strataVar``), so a
    record without one could not be counted: every record needs its stratum.
    """
    series = _column(df, name, "strata", caller)
    if name in keys:
        raise SchemaError(f"Strata column {name!r} of {caller} is also a key variable; the "
                          "frequencies are already counted within its values: name it once, "
                          "as the strata or as a key.")
    _refuse_missing(series, f"Strata column {name!r} of {caller}",
                    "every record needs its stratum, the frequencies are counted within each")
    return pd.factorize(series)[0].astype(np.int64, copy=False)


def check_threshold(threshold: Any, *, caller: str) -> float:
    """The risk threshold as a float in (0, 1]."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"The 'threshold' parameter of {caller} must be a float in (0, 1]. "
                        f"Got {threshold!r} of type {type(threshold).__name__} instead.")
    value = float(threshold)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"The 'threshold' parameter of {caller} must be a float in (0, 1]. "
                         f"Got {value!r} instead.")
    return value


def check_ks(ks: Any, *, caller: str) -> tuple[int, ...]:
    """The k of the k-anonymity counts: distinct ints >= 2, sorted."""
    if isinstance(ks, numbers.Integral):
        ks = (ks,)
    if not isinstance(ks, Sequence | set | frozenset) or isinstance(ks, str):
        raise TypeError(f"The 'ks' parameter of {caller} must be a sequence of ints >= 2. "
                        f"Got {ks!r} instead.")
    bad = [k for k in ks if isinstance(k, bool) or not isinstance(k, numbers.Integral)
           or int(k) < 2]
    if bad:
        raise ValueError(f"The 'ks' parameter of {caller} must hold ints >= 2. Got "
                         f"{', '.join(map(repr, bad))} instead.")
    return tuple(sorted({int(k) for k in ks}))
