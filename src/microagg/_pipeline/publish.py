"""The publish step of every in-memory release: dates back, numbers rounded, then verified again.

A stage publishes each group's representative as a float (a mean of ages is 29.285714...).
Every in-memory release runs ``stage -> publish -> verify -> measure -> Release`` once
(:mod:`.assemble`); :func:`publish` is the second of these, on the masked table:

1. :func:`restore_dates`: date quasi-identifiers (:mod:`.dates`) back to dates;
2. :func:`round_numbers`: quasi-identifiers rounded to their digits (``Release.params
   ["rounding"]``);
3. :func:`rounding_check`: the classes of identical quasi-identifiers counted before and
   after (``Release.checks["rounding"]``).

The verifier then derives k (and l, t when asked) from the published table only.

Rounding a group's common representative never splits a group, but it can merge classes
(29.3 and 28.9 both become 29); with a noisy aggregation each record has its own values and
rounding can change the reported k either way. Nothing is assumed: the final table is verified.
Rounding and dates are post-processing, so the epsilon-DP guarantee is unchanged. The
stages measure their metrics (information loss, linkage risk, ...) on the numbers as
published (:func:`published_numbers`: rounded, dates at their published day), so that
``microagg report`` on the written files gives the release's own figures.

Default rounding (:func:`rounding_for`): a numeric quasi-identifier whose original values are
all integers (an int dtype, or floats with integral values) is published rounded to integers;
``rounding=False`` (``--round none``) opts out, ``rounding={"age": None}`` (``round = "none"``)
keeps one column's means. The engines that read files themselves (file, dask, stream) publish
unrounded means and refuse dates and explicit rounding.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..exceptions import SchemaError
from . import dates as _dates
from .verify import published_classes

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema
    from .request import Request

__all__ = ["DIGITS", "Published", "prepare", "publish", "published_numbers", "published_params",
           "restore_dates", "round_numbers", "rounding_check", "rounding_for"]

DIGITS = (-10, 15)
"""The allowed range of a column's rounding digits (0: integers, -1: tens, 2: cents)."""


def prepare(df: pd.DataFrame, qi: Sequence[str], options: Mapping[str, Any],
            schema: Schema | None, *, reads_files: bool = False
            ) -> tuple[pd.DataFrame, Mapping[str, Any]]:
    """The Request's ``dates`` and ``rounding`` (from the options and the schema), with the
    date quasi-identifiers of ``df`` converted to days (:func:`.dates.prepare`).

    An engine that reads the table itself (``reads_files``) gets neither: it refuses the
    options beforehand, and publishes means unrounded.
    """
    if reads_files:
        return df, {"dates": MappingProxyType({}), "rounding": MappingProxyType({})}
    from_schema = {c: s for c, s in (schema.dates if schema is not None else {}).items()
                   if c in qi}  # a date of another role is published as it is
    declared = _merged(_dates.as_date_specs(options.get("dates")),
                       _dates.as_date_specs(from_schema, source="the schema's dates"),
                       "dates")
    df, specs = _dates.prepare(df, qi, declared)
    option = options.get("rounding")
    given = _checked_rounding(option)
    if schema is not None and schema.rounding:
        if option is False:
            raise SchemaError("rounding=False (--round none) contradicts the schema's round "
                              f"keys ({', '.join(map(repr, schema.rounding))}).")
        given = _merged(given, dict(schema.rounding), "rounding")
    rounding = rounding_for(df, qi, given, specs, default=option is not False)
    return df, {"dates": specs, "rounding": rounding}


def _merged(given: dict[str, Any], from_schema: dict[str, Any], name: str) -> dict[str, Any]:
    clash = sorted(set(given) & set(from_schema))
    if clash:
        raise SchemaError(f"{name} {clash} repeat the schema's declarations.")
    return {**given, **from_schema}


def _checked_rounding(option: Any) -> dict[str, int | None]:
    """The ``rounding`` option's explicit columns (``None``, ``True`` or ``False``: none)."""
    if option is None or isinstance(option, bool):
        return {}
    if not isinstance(option, Mapping):
        raise TypeError("The 'rounding' parameter takes None (integer-valued columns rounded "
                        "to integers), False (no rounding) or a mapping of column to digits "
                        f"(None: not rounded). Got {option!r}.")
    low, high = DIGITS
    for col, digits in option.items():
        if digits is not None and (isinstance(digits, bool) or not isinstance(
                digits, (int, np.integer)) or not low <= digits <= high):
            raise ValueError(f"rounding[{col!r}] must be an int of digits in [{low}, {high}] "
                             f"(0: integers, -1: tens) or None. Got {digits!r}.")
    return {str(c): (None if d is None else int(d)) for c, d in option.items()}


def _integer_valued(column: pd.Series) -> bool:
    """Numbers (not booleans) whose non-missing values are all integers."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column) \
            or pd.api.types.is_complex_dtype(column.dtype):  # refused by its type later
        return False
    if pd.api.types.is_integer_dtype(column.dtype):
        return True
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[~np.isnan(values)]
    return bool(values.size) and bool(np.all(np.isfinite(values) & (values == np.round(values))))


def rounding_for(df: pd.DataFrame, qi: Sequence[str], given: Mapping[str, int | None],
                 dates: Mapping[str, Any], *, default: bool = True) -> Mapping[str, int]:
    """Digits of each quasi-identifier to round: those ``given`` (``None``: not rounded),
    and with ``default`` every other integer-valued numeric one to integers (0).

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30, 41], "bmi": [21.5, 30.2]})
    >>> dict(rounding_for(df, ["age", "bmi"], {}, {}))
    {'age': 0}
    """
    not_qi = [c for c in given if c not in qi]
    on_dates = [c for c in given if c in dates]
    text = [c for c in given if c in qi and c not in dates and given[c] is not None
            and (not pd.api.types.is_numeric_dtype(df[c].dtype)
                 or pd.api.types.is_bool_dtype(df[c]))]
    problems = ([f"{', '.join(map(repr, not_qi))} are not quasi-identifiers (other columns "
                 "are published as they are)"] if not_qi else []) + (
        [f"{', '.join(map(repr, on_dates))} are dates (their precision is 'publish')"]
        if on_dates else []) + (
        [f"{', '.join(map(repr, text))} are not numeric"] if text else [])
    if problems:
        raise SchemaError("rounding applies to numeric quasi-identifiers only: "
                          + "; ".join(problems) + ".")
    out: dict[str, int] = {}
    for col in qi:
        if col in given:
            if given[col] is not None:
                out[col] = int(given[col])  # type: ignore[arg-type]  # None excluded above
        elif default and col not in dates and _integer_valued(df[col]):
            out[col] = 0
    return MappingProxyType(out)


def restore_dates(published: pd.DataFrame, request: Request) -> pd.DataFrame:
    """Step 1: date quasi-identifiers as dates again (:func:`.dates.restore`)."""
    return _dates.restore(published, request.dates)


def round_numbers(published: pd.DataFrame, rounding: Mapping[str, int]) -> pd.DataFrame:
    """Step 2: each column of ``rounding`` rounded to its digits; to ``int64`` when the digits
    are <= 0 and no value is missing. A column published as text (a generalized interval
    ``[28, 35]`` of original values) or as categories is left as it is.

    Examples
    --------
    >>> round_numbers(pd.DataFrame({"age": [29.29, 49.7]}), {"age": 0})["age"].tolist()
    [29, 50]
    """
    out = published.copy() if rounding else published
    for col, digits in rounding.items():
        column = out[col]
        if not pd.api.types.is_numeric_dtype(column.dtype) \
                or pd.api.types.is_bool_dtype(column):
            continue
        values = np.round(column.to_numpy(dtype=np.float64, na_value=np.nan), digits) + 0.0
        whole = digits <= 0 and bool(np.all(np.isfinite(values))) \
            and bool(np.all(np.abs(values) < 2.0**53))
        out[col] = pd.Series(values.astype(np.int64) if whole else values, index=column.index)
    return out


def published_numbers(values: NDArray[np.float64], columns: Sequence[str],
                      request: Request) -> NDArray[np.float64]:
    """The quasi-identifiers ``values`` (one column per name in ``columns``) as the release
    publishes them, as numbers: each rounded to its digits (:func:`round_numbers`), each
    date at the day of its published date (:func:`.dates.published_days`: a date published
    by month counts as the first of its month). The release measures its metrics on these,
    so that a review of the written files reproduces them.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> request = SimpleNamespace(rounding={"age": 0}, dates={})
    >>> published_numbers(np.array([[29.29, 1.5]]), ["age", "bmi"], request).tolist()
    [[29.0, 1.5]]
    """
    out = np.array(values, dtype=np.float64)
    for j, col in enumerate(columns):
        if col in request.rounding:
            out[:, j] = np.round(out[:, j], request.rounding[col]) + 0.0
        elif col in request.dates:
            out[:, j] = _dates.published_days(out[:, j], request.dates[col])
    return out


def rounding_check(table: pd.DataFrame, after: NDArray[np.intp], request: Request
                   ) -> Mapping[str, Any]:
    """``checks["rounding"]``: the classes of identical quasi-identifiers of the masked
    ``table`` and ``after`` (those of the published table, after :func:`restore_dates` and
    :func:`round_numbers`), and the k of each."""
    before = published_classes(table, list(request.quasi_identifiers))
    return MappingProxyType({
        "columns": MappingProxyType(dict(request.rounding)),
        "dates": MappingProxyType({c: s.publish for c, s in request.dates.items()}),
        "classes_before": int(before.max()) + 1, "classes_after": int(after.max()) + 1,
        "k_before": int(np.bincount(before).min()), "k_after": int(np.bincount(after).min()),
        "model": "rounding and date precision applied after aggregation: the classes of "
                 "identical published quasi-identifiers recounted and k (l, t) verified "
                 "again on the final table; metrics describe the values as published",
    })


@dataclass(frozen=True)
class Published:
    """The table as the release publishes it, and what publishing it did."""

    data: pd.DataFrame
    rounding: Mapping[str, Any] | None = None
    """``checks["rounding"]`` (:func:`rounding_check`), when a date or a rounding applies."""
    classes: NDArray[np.intp] | None = None
    """The classes of identical published quasi-identifiers, when counted here."""

    def quasi_identifier_classes(self, qi: Sequence[str]) -> NDArray[np.intp]:
        """The classes of identical published quasi-identifiers ``qi`` (the verifier's
        :func:`~.verify.published_classes`), counted once."""
        return self.classes if self.classes is not None else published_classes(self.data,
                                                                                list(qi))


def publish(table: pd.DataFrame, request: Request, timings: dict[str, float]) -> Published:
    """The masked ``table`` (identifiers dropped, quasi-identifiers replaced, dates as days)
    as published: :func:`restore_dates`, then :func:`round_numbers`; with a date or a
    rounding, ``timings["publish"]`` and the figures of :func:`rounding_check`."""
    if not request.dates and not request.rounding:
        return Published(table)
    started = time.perf_counter()
    published = round_numbers(restore_dates(table, request), request.rounding)
    classes = published_classes(published, list(request.quasi_identifiers))
    check = rounding_check(table, classes, request)
    timings["publish"] = time.perf_counter() - started
    return Published(published, check, classes)


def published_params(request: Request) -> dict[str, Any]:
    """The entries of ``Release.params`` that say how the table was published."""
    return {
        "dates": MappingProxyType({c: MappingProxyType(s.summary())
                                   for c, s in request.dates.items()}),
        "rounding": MappingProxyType(dict(request.rounding)),
    }
