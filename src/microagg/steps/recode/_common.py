"""What the recoding steps share: the column checks made before anything changes, and
the small helpers of their details. Validation lives here; the workers assume it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...exceptions import SchemaError


def column_of(table: pd.DataFrame, column: str, *, step: str) -> pd.Series:
    """The column ``column`` of ``table``, or a :class:`SchemaError` listing the columns."""
    if column not in table.columns:
        raise SchemaError(f"Step {step!r}: column {column!r} is not in the table; its "
                          f"columns are {', '.join(map(str, table.columns))}.")
    return table[column]


def numeric_values(series: pd.Series, *, step: str) -> NDArray[np.float64]:
    """A numeric column as float64 (NaN missing); a text, date or boolean column refused."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        example = next((v for v in series if not _missing(v)), None)
        raise SchemaError(f"Step {step!r} needs a numeric column; column {series.name!r} is "
                          f"{dtype} (e.g. {example!r}). Recode categories with the 'recode' "
                          "step and dates with 'recode_date'.")
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(values)
    if infinite.any():
        raise SchemaError(f"Step {step!r}: column {series.name!r} has {int(infinite.sum())} "
                          "infinite value(s); the allowed values are finite numbers or "
                          "missing.")
    return values


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) \
        or value is pd.NA or value is pd.NaT


def number_text(value: float) -> str:
    """A number as a short exact label: ``20`` for 20.0, ``2.5`` for 2.5."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def with_column(table: pd.DataFrame, column: str, values: Any) -> pd.DataFrame:
    """A new table: ``table`` with ``column`` replaced (same rows, order and index)."""
    out = table.copy()
    out[column] = pd.Series(values, index=table.index, name=column) \
        if not isinstance(values, pd.Series) else values.set_axis(table.index)
    return out


def counts(values: pd.Series) -> dict[str, int]:
    """Records per published value (missing left out), as text keys, largest first."""
    table = values.dropna().astype(str).value_counts(sort=True)
    return {str(k): int(v) for k, v in table.items()}
