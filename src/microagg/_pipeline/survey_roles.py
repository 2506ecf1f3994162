"""The survey roles of a release request: the sampling weight and the household id (issue 19).

A sample survey's records stand for many persons each: the **weight** (``rb050`` in EU-SILC)
estimates how many, and the disclosure-risk measures need it to estimate population
frequencies (:mod:`microagg.metrics.survey_risk`). Records of one **household** (``db030``) are
re-identified together, so the household risk needs the household id. Neither is masked:
the weight is published unchanged, the household id is dropped like an identifier unless it
is kept on purpose (``keep``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import SchemaError, SurveyWeightWarning

__all__ = ["check_households", "check_weights", "survey_roles"]


def check_weights(values: Any, column: str) -> np.ndarray:
    """The sampling weights as float64, or a :class:`SchemaError` naming the column, the
    number of bad rows and the allowed range (finite numbers > 0).

    Weights summing to less than the number of records estimate a population smaller than
    the sample: a :class:`SurveyWeightWarning` (they may be normalized shares).

    Examples
    --------
    >>> check_weights(pd.Series([1.5, 2.0]), "w").tolist()
    [1.5, 2.0]
    >>> check_weights(pd.Series([1.5, 0.0, -1.0]), "w")
    Traceback (most recent call last):
    ...
    microagg.exceptions.SchemaError: Weight column 'w' must hold finite numbers > 0: 2 of 3 \
rows do not (1 zero, 1 negative).
    """
    series = pd.Series(values)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise SchemaError(f"Weight column {column!r} must be numeric (sampling weights > 0); "
                          f"it has dtype {series.dtype}.")
    w = series.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = {"missing": int(np.isnan(w).sum()), "infinite": int(np.isinf(w).sum()),
           "zero": int((w == 0).sum()), "negative": int((w < 0).sum())}
    n_bad = sum(bad.values())
    if n_bad:
        what = ", ".join(f"{n} {kind}" for kind, n in bad.items() if n)
        raise SchemaError(f"Weight column {column!r} must hold finite numbers > 0: {n_bad} of "
                          f"{len(w)} rows do not ({what}).")
    if w.size and w.sum() < w.size:
        warnings.warn(f"The weights of {column!r} sum to {w.sum():.4g}, below the "
                      f"{w.size} records of the sample: they estimate a population smaller "
                      "than the sample (normalized shares?), so population frequencies and "
                      "the individual risk are not meaningful.", SurveyWeightWarning,
                      stacklevel=2)
    return w


def check_households(values: Any, column: str) -> None:
    """A household id on every row, or a :class:`SchemaError` naming the missing ones."""
    missing = pd.Series(values).isna()
    if missing.any():
        rows = np.flatnonzero(missing.to_numpy())
        raise SchemaError(f"Household column {column!r} is missing on {rows.size} of "
                          f"{missing.size} rows (first rows: "
                          f"{', '.join(str(r) for r in rows[:5])}); every record needs its "
                          "household for the household risk.")


def survey_roles(df: pd.DataFrame, fields: Mapping[str, Any], options: Mapping[str, Any],
                 *, whole: bool = True) -> dict[str, Any]:
    """``weight`` and ``household`` checked, and the identifiers with the household id added
    (dropped from the release) unless it is kept on purpose (``keep``)."""
    weight, household = options.get("weights"), options.get("households")
    taken = {c: role for role in ("quasi_identifiers", "sensitive", "identifiers")
             for c in fields[role]}
    for option, column in (("weights", weight), ("households", household)):
        if column is None:
            continue
        if not isinstance(column, str):
            raise TypeError(f"{option} names one column (a string); got {column!r}.")
        if column not in df.columns:
            raise SchemaError(f"Unknown column {column!r} in {option}; available: "
                              f"{', '.join(map(repr, map(str, df.columns)))}.")
        if column in taken and not (option == "households" and taken[column] == "identifiers"):
            raise SchemaError(f"Column {column!r} is both the {option[:-1]} and in "
                              f"{taken[column]}.")
    if weight is not None and weight == household:
        raise SchemaError(f"Column {weight!r} cannot be both the weight and the household id.")
    if whole and weight is not None:
        check_weights(df[weight], weight)
    if whole and household is not None:
        check_households(df[household], household)
    identifiers = tuple(fields["identifiers"])
    if household is not None and household not in identifiers \
            and household not in fields["keep"]:
        identifiers += (household,)
    return {"weight": weight, "household": household, "identifiers": identifiers}
