"""A published file judged by the release's own rules: ``microagg check`` and ``microagg
report ORIGINAL PUBLISHED`` (:mod:`microagg.audit.check`, :mod:`microagg.audit.assess`).

* :func:`as_released` reads the quasi-identifiers as the release did: date columns as days
  since 1970-01-01 (:mod:`.dates`), ordinal columns as ordered categories (their ranks), so
  that the review's information loss is measured on the same numbers as the release's.
* :func:`review_checks` re-derives, from the published table alone, the checks the
  release's verifier makes (k, the published columns that break it, the identifier-like
  columns published) and the one :class:`~.verdict.Verdict` (:func:`~.verdict.decide`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._base.identifiers import identifier_reason
from . import dates as _dates
from .unmasked import published_column_checks
from .verdict import Verdict, decide
from .verify import class_sizes, published_classes

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema

__all__ = ["Reading", "as_released", "published_as_is", "reading_of", "review_checks"]

Reading = tuple[Mapping[str, str | None], Mapping[str, Sequence[str]]]
"""How the release read its quasi-identifiers: date columns (their strftime format,
``None``: ISO 8601) and ordinal columns (their order)."""


def reading_of(schema: Schema | None, qi: Sequence[str],
               params: Mapping[str, Any] | None = None) -> Reading:
    """The dates and ordinal orders of the quasi-identifiers ``qi``, from a schema (its
    ``date`` and ``ordinal`` columns) and a release summary's ``params["dates"]``."""
    dates: dict[str, str | None] = {}
    for col, spec in dict((params or {}).get("dates") or {}).items():
        fmt = dict(spec).get("format")
        dates[str(col)] = None if fmt in (None, "ISO 8601") else str(fmt)
    orders: dict[str, Sequence[str]] = {}
    if schema is not None:
        for col, spec in schema.columns.items():
            if col in qi and spec.type == "date":
                dates[col] = spec.format
            elif col in qi and spec.type == "ordinal" and spec.order:
                orders[col] = tuple(spec.order)
    return ({c: f for c, f in dates.items() if c in qi}, orders)


def _days(series: pd.Series, fmt: str | None, column: str) -> pd.Series | None:
    """Days since 1970-01-01 of a date column, or ``None`` when a value is not one date
    (a generalized interval of dates stays text, compared as a category)."""
    if pd.api.types.is_numeric_dtype(series.dtype):
        return None
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        days = _dates.to_days(series, _dates.DateSpec(), column=column)[0]
        return pd.Series(days, index=series.index)
    text = series.astype("str").str.strip().where(series.notna())
    parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce")
    if (text.notna() & parsed.isna()).any():
        return None
    return (parsed - pd.Timestamp(0)) / pd.Timedelta(1, "D")


def _ranked(series: pd.Series, order: Sequence[str]) -> pd.Series | None:
    """An ordinal column as ordered categories, or ``None`` when a value is outside the
    order (a published range ``[primary, degree]`` stays text)."""
    text = series.astype(str).where(series.notna())
    if not text.dropna().isin(list(order)).all():
        return None
    return pd.Series(pd.Categorical(text, categories=list(order), ordered=True),
                     index=series.index)


def as_released(table: pd.DataFrame, reading: Reading) -> pd.DataFrame:
    """``table`` with its date columns as days and its ordinal columns as ordered
    categories, as the release read them; a column some value of which is no date (or
    outside the order) is left as it is.

    Converting one value per value never merges or splits a class of identical published
    quasi-identifiers, so k is the same on either reading.

    Examples
    --------
    >>> table = pd.DataFrame({"born": ["1970-01-02", "1970-01-11"], "edu": ["low", "high"]})
    >>> out = as_released(table, ({"born": None}, {"edu": ["low", "high"]}))
    >>> out["born"].tolist(), out["edu"].cat.codes.tolist()
    ([1.0, 10.0], [0, 1])
    """
    dates, orders = reading
    out = table
    for col, fmt in dates.items():
        if col in table.columns and (days := _days(table[col], fmt, col)) is not None:
            out = out.assign(**{col: days.to_numpy(dtype=np.float64)})
    for col, order in orders.items():
        if col in table.columns and (ranked := _ranked(table[col], order)) is not None:
            out = out.assign(**{col: ranked})
    return out


def published_as_is(published: pd.DataFrame, qi: Sequence[str], sens: Sequence[str]
                    ) -> list[str]:
    """The published columns without a masked or sensitive role: those an intruder may
    know as they are (the release checks the same ones)."""
    roles = {*qi, *sens}
    return [str(c) for c in published.columns if c not in roles]


def review_checks(published: pd.DataFrame, qi: Sequence[str], sens: Sequence[str],
                  k_required: int | None, *, steps: Sequence[Mapping[str, Any]] = ()
                  ) -> tuple[dict[str, Any], tuple[str, ...], Verdict]:
    """The release's checks re-derived from a published table, and its verdict.

    Parameters
    ----------
    published : DataFrame
        The published table as read.
    qi, sens : sequence of str
        Its quasi-identifiers and sensitive columns.
    k_required : int or None
        The k it must reach; ``None``: the achieved k is only reported, and the published
        columns are measured against it (one that lowers it is named).
    steps : sequence of mapping, default=()
        A plan's step checks re-derived from the file
        (:func:`~.plan_review.review_steps`): ``checks["steps"]``, one that does not hold
        makes the verdict "not protected", as the release's.

    Returns
    -------
    checks : dict
        ``k_anonymity``, when a published column breaks k ``published_columns``
        (:func:`~.unmasked.published_column_checks`, the release's), and ``steps`` when
        given.
    kept : tuple of str
        The published columns that look like identifiers
        (:func:`~microagg._base.identifiers.identifier_reason`, the rule by which a release
        refuses them unless they are kept on purpose).
    verdict : Verdict
        :func:`~.verdict.decide` of both.
    """
    sizes = class_sizes(published_classes(published, list(qi)))
    achieved = int(sizes.min()) if sizes.size else 0
    checks: dict[str, Any] = {"k_anonymity": MappingProxyType({
        "required": k_required, "achieved": achieved,
        "model": "k-anonymity of the published quasi-identifiers (re-derived from the file)"})}
    as_is = published_as_is(published, qi, sens)
    broken = published_column_checks(published, list(qi), as_is,
                                     achieved if k_required is None else k_required)
    if broken is not None:
        checks["published_columns"] = broken
    if steps:
        checks["steps"] = tuple(steps)
    kept = tuple(c for c in as_is if identifier_reason(published[c], c) is not None)
    return checks, kept, decide(checks, kept)
