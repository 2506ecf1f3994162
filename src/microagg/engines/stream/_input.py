"""What the stream engine accepts (:mod:`.engine`): its parameters checked, and records or
chunks turned into validated float64 matrices whose errors name the arrival index and the
column of the first bad value."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.constraints import check_int
from ...exceptions import InternalError, SchemaError

__all__ = ["array_chunk", "check_params", "check_scale", "frame_to_matrix",
           "is_chunk", "rows_to_matrix"]

_SCALES = ("running", "none")


def check_params(k: Any, delay: Any, flush_age: Any, caller: str) -> tuple[int, int, int]:
    k = check_int(k, parameter="k", low=2, caller=caller)
    delay = check_int(
        delay, parameter="delay", low=k - 1,
        rule=f"an int >= k - 1 = {k - 1} (the first record must be published within 'delay' "
             "arrivals, in a group of k)", caller=caller)
    if flush_age is None:
        return k, delay, 0
    flush_age = check_int(flush_age, parameter="flush_age", low=0, high=delay,
                          rule=f"an int in [0, delay] = [0, {delay}]", caller=caller)
    return k, delay, flush_age


def check_scale(scale: Any, caller: str) -> str | NDArray[np.float64]:
    if isinstance(scale, str):
        if scale not in _SCALES:
            raise ValueError(
                f"The 'scale' parameter of {caller} must be one of {', '.join(_SCALES)} or an "
                f"array of positive column scales. Got {scale!r} instead."
            )
        return scale
    arr = np.asarray(scale)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not np.isfinite(arr).all() \
            or not (arr > 0).all():
        raise ValueError(
            f"The 'scale' parameter of {caller} must be one of {', '.join(_SCALES)} or a 1-d "
            f"array of finite positive column scales. Got {scale!r} instead."
        )
    return np.ascontiguousarray(arr, dtype=np.float64)


def _row_error(row: Any, position: int, p: int | None) -> TypeError | ValueError | None:
    """Why ``row`` (arrival ``position``) is not a finite numeric record of width ``p``."""
    if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
        return TypeError(f"Record {position} must be a sequence of numbers. "
                         f"Got {type(row).__name__} instead.")
    values = list(row)
    if p is not None and len(values) != p:
        return ValueError(f"Record {position} has {len(values)} values; expected {p} "
                          "(the width of the first record).")
    if not values:
        return ValueError(f"Record {position} is empty; at least one column is needed.")
    for j, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return TypeError(f"Record {position}, column {j}: {v!r} of type "
                             f"{type(v).__name__} is not a number.")
        if not math.isfinite(float(v)):
            return ValueError(f"Record {position}, column {j}: {float(v)!r} is not finite. "
                              "Impute or drop it first; microagg never imputes silently.")
    return None


def rows_to_matrix(rows: Sequence[Any], start: int, p: int | None) -> NDArray[np.float64]:
    """Stack rows (arrivals ``start, start + 1, ...``) into a validated (r, p) float64 matrix.

    One ``np.asarray`` for the common case; a bad batch is then checked row by row so that
    the error names the first bad record and column.
    """
    arr: NDArray[Any] | None
    try:
        arr = np.asarray(rows)
    except (ValueError, TypeError):
        arr = None
    if (arr is not None and arr.ndim == 2 and arr.dtype.kind in "iuf"
            and (p is None or arr.shape[1] == p) and arr.shape[1] > 0):
        out = np.ascontiguousarray(arr, dtype=np.float64)
        finite = np.isfinite(out)
        if finite.all():
            return out
    width = p
    for i, row in enumerate(rows):
        error = _row_error(row, start + i, width)
        if error is not None:
            raise error
        width = len(list(row))
    raise InternalError("a batch of rows failed to stack but every row checks")  # pragma: no cover


def frame_to_matrix(frame: pd.DataFrame, start: int, names: list[str] | None
                     ) -> NDArray[np.float64]:
    """Validate a DataFrame chunk (numeric, finite, same columns as the first chunk)."""
    cols = [str(c) for c in frame.columns]
    if names is not None and cols != names:
        raise SchemaError(
            f"The chunk starting at record {start} has columns {cols}; expected {names} "
            "(the columns of the first chunk)."
        )
    for c in frame.columns:
        col = frame[c]
        if col.dtype.kind not in "iuf":
            numeric = pd.to_numeric(col, errors="coerce")
            bad = np.flatnonzero(numeric.isna().to_numpy() & col.notna().to_numpy())
            if col.dtype.kind == "b" or not bad.size:
                bad = np.arange(len(col)) if col.dtype.kind == "b" else bad
            if bad.size:
                i = int(bad[0])
                v = col.iloc[i]
                if isinstance(v, str) and not v.strip():
                    raise ValueError(f"Record {start + i}, column {str(c)!r}: missing value. "
                                     "Impute or drop it first; microagg never imputes "
                                     "silently.")
                raise TypeError(f"Record {start + i}, column {str(c)!r}: {v!r} of type "
                                f"{type(v).__name__} is not a number.")
            if col.isna().any():
                i = int(np.flatnonzero(col.isna().to_numpy())[0])
                raise ValueError(f"Record {start + i}, column {str(c)!r}: missing value. "
                                 "Impute or drop it first; microagg never imputes silently.")
    out = np.ascontiguousarray(frame.to_numpy(dtype=np.float64, na_value=np.nan))
    if out.ndim != 2 or out.shape[1] == 0:
        raise ValueError(f"The chunk starting at record {start} has no columns.")
    finite = np.isfinite(out)
    if not finite.all():
        i, j = map(int, np.argwhere(~finite)[0])
        raise ValueError(f"Record {start + i}, column {cols[j]!r}: {float(out[i, j])!r} is not "
                         "finite. Impute or drop it first; microagg never imputes silently.")
    return out


def array_chunk(chunk: NDArray[Any], start: int, p: int | None) -> NDArray[np.float64]:
    if chunk.dtype.kind not in "iuf":
        raise TypeError(f"The chunk starting at record {start} must be numeric. "
                        f"Got dtype {chunk.dtype} instead.")
    if p is not None and chunk.shape[1] != p:
        raise ValueError(f"The chunk starting at record {start} has {chunk.shape[1]} columns; "
                         f"expected {p} (the width of the first chunk).")
    return rows_to_matrix(chunk, start, p)  # type: ignore[arg-type]


def is_chunk(obj: Any) -> bool:
    return isinstance(obj, pd.DataFrame) or (isinstance(obj, np.ndarray) and obj.ndim == 2)
