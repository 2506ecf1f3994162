"""The series columns of a table: chosen by list, glob pattern or prefix, and checked."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["check_identifiers", "select_series_columns", "series_matrix"]

_GLOB = "*?["


def _listing(columns: Sequence[object], limit: int = 12) -> str:
    names = [repr(str(c)) for c in columns[:limit]]
    more = f" and {len(columns) - limit} more" if len(columns) > limit else ""
    return ", ".join(names) + more


def select_series_columns(df: pd.DataFrame, series_columns: str | Sequence[str]
                          ) -> list[str]:
    """The series columns in the table's order: a list of names, a glob pattern
    (``"t*"``, ``"x[0-9]*"``) or a prefix (``"t"``: every column whose name starts with it).

    Examples
    --------
    >>> df = pd.DataFrame(columns=["id", "t1", "t2", "t10"])
    >>> select_series_columns(df, "t*"), select_series_columns(df, "t1")
    (['t1', 't2', 't10'], ['t1', 't10'])
    """
    names = [str(c) for c in df.columns]
    if isinstance(series_columns, str):
        pattern = series_columns
        glob = any(ch in pattern for ch in _GLOB)
        chosen = [c for c in names
                  if (fnmatch.fnmatchcase(c, pattern) if glob else c.startswith(pattern))]
        if not chosen:
            raise ValueError(f"The 'series_columns' parameter {pattern!r} matches no column "
                             f"(read as a {'glob pattern' if glob else 'prefix'}). "
                             f"Available columns: {_listing(names)}.")
        return chosen
    chosen = [str(c) for c in series_columns]
    if not chosen:
        raise ValueError("The 'series_columns' parameter is empty: name at least one column.")
    missing = [c for c in chosen if c not in names]
    if missing:
        raise ValueError(f"Series column(s) {_listing(missing)} not in the table. Available "
                         f"columns: {_listing(names)}.")
    if len(set(chosen)) != len(chosen):
        twice = sorted({c for c in chosen if chosen.count(c) > 1})
        raise ValueError(f"Series column(s) {_listing(twice)} named more than once.")
    return chosen


def check_identifiers(df: pd.DataFrame, identifiers: str | Sequence[str],
                      series: Sequence[str]) -> list[str]:
    """The identifier columns (dropped from the release): present, and not series columns."""
    ids = [identifiers] if isinstance(identifiers, str) else [str(c) for c in identifiers]
    missing = [c for c in ids if c not in df.columns]
    if missing:
        raise ValueError(f"Identifier column(s) {_listing(missing)} not in the table. "
                         f"Available columns: {_listing(list(df.columns))}.")
    both = [c for c in ids if c in series]
    if both:
        raise ValueError(f"Column(s) {_listing(both)} are both identifiers and series "
                         "columns; an identifier is dropped, a series column is published.")
    return ids


def series_matrix(df: pd.DataFrame, columns: Sequence[str]) -> NDArray[np.float64]:
    """The (n_series, length) float64 matrix of ``columns``; every problem is reported at
    once, naming each column with its count of non-numeric or missing values."""
    problems = []
    for col in columns:
        values = df[col]
        if values.dtype.kind in "biuf":
            numbers = values.astype(np.float64)
            text = 0
        else:
            numbers = pd.to_numeric(values, errors="coerce")
            text = int((numbers.isna() & values.notna()).sum())
        missing = int(values.isna().sum())
        infinite = int(np.isinf(numbers.to_numpy(dtype=np.float64)).sum())
        parts = [f"{text} non-numeric" if text else "", f"{missing} missing (NaN)"
                 if missing else "", f"{infinite} infinite" if infinite else ""]
        found = ", ".join(p for p in parts if p)
        if found:
            problems.append(f"{col!r}: {found}")
    if problems:
        raise ValueError("Series columns must hold finite numbers in every row; found "
                         f"{'; '.join(problems)}. Impute, interpolate or drop those rows "
                         "first; microagg never imputes silently.")
    return np.ascontiguousarray(df.loc[:, list(columns)].to_numpy(dtype=np.float64))
