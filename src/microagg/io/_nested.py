"""Nested cells: the lists and structs of a Parquet input's list and struct columns.

pandas reads a Parquet ``list<...>`` column as numpy arrays and a ``struct<...>`` column as
dicts (whose integer fields become floats where a row is missing), neither of which can be
hashed: counting distinct values or classes of identical records would fail with a bare
``unhashable type`` message. :func:`exact_nested` reads such columns again with their Parquet
types (``pandas.ArrowDtype``), so that a release writes them back unchanged;
:func:`distinct_codes` and :func:`nunique` compare their cells by content for the checks of
published values; :func:`check_storable` refuses, before anything is written, a nested column
in a format that cannot hold it (only Parquet can).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Hashable, Mapping
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["check_roles_hold_values", "check_storable", "content_keys", "distinct_codes",
           "exact_nested", "nested_columns", "nested_type", "nunique", "write_parquet"]

_SEQUENCES = (list, tuple, np.ndarray)


def _key(value: Any) -> Hashable:
    """A hashable stand-in for a cell, equal for equal cells (a missing value is None)."""
    if isinstance(value, Mapping):
        return ("struct", tuple((str(k), _key(v)) for k, v in value.items()))
    if isinstance(value, _SEQUENCES):
        return ("list", tuple(_key(v) for v in value))
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    return value if isinstance(value, Hashable) else repr(value)


def content_keys(values: pd.Series) -> pd.Series:
    """``values`` as hashable stand-ins, equal for equal cells (lists and structs compared
    by content), on the same index."""
    return pd.Series([_key(v) for v in values], index=values.index, dtype=object)


def distinct_codes(values: pd.Series) -> tuple[NDArray[np.intp], int]:
    """``pandas.factorize`` of ``values`` (missing values a value of their own): the code
    of each cell and the number of distinct cells; lists and structs compared by content.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> codes, n = distinct_codes(pd.Series([np.array([1, 2]), None, np.array([1, 2])]))
    >>> codes.tolist(), n
    ([0, 1, 0], 2)
    """
    try:
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
    except (TypeError, NotImplementedError):  # lists or structs (numpy or Arrow cells)
        codes, uniques = pd.factorize(content_keys(values), use_na_sentinel=False)
    return np.asarray(codes, dtype=np.intp), len(uniques)


def nunique(values: pd.Series) -> int:
    """``values.nunique(dropna=True)``, lists and structs compared by content."""
    try:
        return int(values.nunique(dropna=True))
    except (TypeError, NotImplementedError):
        return len({_key(v) for v in values.dropna()})


def _describe(value: Any) -> str:
    """The type of a nested cell as Parquet names it: ``list<int64>``, ``struct<a, b>``."""
    if isinstance(value, Mapping):
        return f"struct<{', '.join(map(str, value))}>"
    element = value.dtype if isinstance(value, np.ndarray) else type(value[0]).__name__ \
        if len(value) else "?"
    return f"list<{element}>"


def exact_nested(df: pd.DataFrame, file: pathlib.Path) -> pd.DataFrame:
    """``df`` read from the Parquet ``file``, its list, struct and map columns as stored."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    nested = [f.name for f in pq.read_schema(file) if pa.types.is_nested(f.type)
              and f.name in df.columns]
    if not nested:
        return df
    table = pq.read_table(file, columns=nested)
    for name in nested:
        df[name] = pd.Series(pd.arrays.ArrowExtensionArray(table.column(name)), index=df.index)
    return df


def write_parquet(df: pd.DataFrame, handle: IO[bytes]) -> None:
    """``df.to_parquet(handle, index=False)``, its :func:`exact_nested` columns written with
    their Parquet types but left out of pandas' metadata (pandas could not read back the
    ``ArrowDtype`` it would record there: it reads them as lists and dicts, like any other
    Parquet file's)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    exact = {c: kind for c in df.columns if (kind := _arrow_nested(df[c].dtype)) is not None}
    if not exact:
        df.to_parquet(handle, engine="pyarrow", index=False)
        return
    table = pa.Table.from_pandas(df.drop(columns=list(exact)), preserve_index=False)
    for col, kind in exact.items():
        table = table.add_column(list(df.columns).index(col), pa.field(str(col), kind),
                                 pa.chunked_array([pa.array(df[col].array)]))
    pq.write_table(table, handle)


def _arrow_nested(dtype: Any) -> Any:
    """The pyarrow type of an ``ArrowDtype`` list, struct or map column, else ``None``."""
    if not isinstance(dtype, pd.ArrowDtype):
        return None
    import pyarrow as pa

    return dtype.pyarrow_dtype if pa.types.is_nested(dtype.pyarrow_dtype) else None


def nested_type(series: pd.Series) -> str | None:
    """The type of a column of lists or structs (``list<element: int64>``), else ``None``."""
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        kind = _arrow_nested(dtype)
        return None if kind is None else str(kind)
    if dtype is not np.dtype(object):
        return None
    for value in series.to_numpy():
        if isinstance(value, (Mapping, *_SEQUENCES)):
            return _describe(value)
    return None


def nested_columns(df: pd.DataFrame) -> dict[str, str]:
    """The columns holding lists or structs, with their type."""
    found = {str(col): nested_type(df[col]) for col in df.columns}
    return {col: kind for col, kind in found.items() if kind is not None}


def check_storable(df: pd.DataFrame, output: str | os.PathLike[str]) -> None:
    """Refuse list and struct columns for an ``output`` (a path or a database URL) that is
    not a Parquet file.

    Raises
    ------
    ValueError
        Naming each such column and its type, and the two ways out.
    """
    from ._formats import PARQUET_EXTENSIONS, format_suffix
    from .sql import is_sql_url

    if not is_sql_url(output) and format_suffix(pathlib.Path(output)) in PARQUET_EXTENSIONS:
        return
    found = nested_columns(df)
    if found:
        listed = ", ".join(f"{col!r} ({kind})" for col, kind in found.items())
        raise ValueError(
            f"{len(found)} column(s) hold lists or structs, which only Parquet stores: "
            f"{listed}. Write {str(output)!r} as .parquet, or drop the column(s) "
            f"(--drop {','.join(found)}; identifiers=[...] in Python).")


def check_roles_hold_values(df: pd.DataFrame, roles: Mapping[str, tuple[str, ...]]) -> None:
    """Refuse a list or struct column given a role that compares its values (``roles``:
    the role's name, e.g. ``"quasi-identifier"``, to its columns).

    Raises
    ------
    SchemaError
        Naming each such column, its role and its type.
    """
    from ..exceptions import SchemaError

    problems = []
    for role, names in roles.items():
        found = nested_columns(df[list(dict.fromkeys(names))])
        problems += [f"{col!r} ({role}, {kind})" for col, kind in found.items()]
    if problems:
        raise SchemaError(
            f"{len(problems)} column(s) hold lists or structs, not one value per row: "
            f"{', '.join(problems)}. A quasi-identifier or a sensitive column is compared value "
            "by value; publish such a column unchanged (no role), drop it (--drop; "
            "identifiers=[...] in Python), or first flatten it into columns of plain values.")
