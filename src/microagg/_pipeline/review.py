"""A published file judged by the release's own rules: ``microagg check`` and ``microagg
report ORIGINAL PUBLISHED`` (:mod:`microagg.audit.check`, :mod:`microagg.audit.assess`).

* :func:`as_released` reads the quasi-identifiers as the release did: date columns as days
  since 1970-01-01 (:mod:`.dates`), ordinal columns as ordered categories (their ranks), so
  that the review's information loss is measured on the same numbers as the release's.
* :func:`review_checks` re-derives, from the published table alone, the checks the
  release's verifier makes (k, the published columns that break it, the identifier-like
  columns published) and the one :class:`~.verdict.Verdict` (:func:`~.verdict.decide`);
  given what the review knows of the release (:class:`Unmasked`: its k, its weight and
  the household of each row), the columns kept on purpose and those that re-link
  households by the release's own functions (:func:`~.kept.kept_on_purpose`,
  :func:`~.household_relink.household_relinking_check`), so that the verdict is the
  release's word for word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import dates as _dates
from .household_relink import household_relinking_check
from .kept import kept_on_purpose
from .unmasked import check_unmasked_identifiers, published_column_checks
from .verdict import Verdict, decide
from .verify import class_sizes, published_classes

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema

__all__ = ["Reading", "Unmasked", "as_released", "published_as_is", "reading_of",
           "review_checks"]

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


@dataclass(frozen=True)
class Unmasked:
    """What a review knows of how the release judged the columns it published unchanged.

    Attributes
    ----------
    k : int or None
        The k the release was asked for (its summary's ``params["k"]``, or ``-k``); ``None``:
        no column is judged by the k it breaks by itself.
    weight : str or None
        The sampling weight's column, when published (judged for re-linking households, not
        for the k it breaks by itself, as the release judges it).
    household : str or None
        The household id's column name (the original's).
    household_ids : pandas.Series or None
        The household id of each published row (the original's, row for row; the id itself
        is usually not published).
    treated : bool
        Whether a step of the release's plan treats the weight
        (:func:`~.kept.weight_treated`).
    """

    k: int | None = None
    weight: str | None = None
    household: str | None = None
    household_ids: pd.Series | None = None
    treated: bool = False


def _kept(published: pd.DataFrame, as_is: list[str], known: Unmasked | None
          ) -> tuple[str, ...]:
    """The columns the release recorded as published on purpose: every published column
    counts as kept (it was published), judged by the release's rule
    (:func:`~.kept.kept_on_purpose`); without ``known``, the identifier-like ones only."""
    if known is None:
        return check_unmasked_identifiers(published, as_is, as_is)
    judged = published
    if known.household is not None and known.household_ids is not None:
        judged = published.assign(**{known.household: known.household_ids.to_numpy()})
    household = known.household if known.household_ids is not None else None
    return kept_on_purpose(judged, as_is, as_is, weight=known.weight, household=household,
                           k=known.k, treated=known.treated)


def review_checks(published: pd.DataFrame, qi: Sequence[str], sens: Sequence[str],
                  k_required: int | None, *, steps: Sequence[Mapping[str, Any]] = (),
                  known: Unmasked | None = None, k_entry: Mapping[str, Any] | None = None
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
    known : Unmasked, optional
        What the review knows of the release (its k, weight, households): the columns kept
        on purpose are then judged as the release judged them, and the columns that
        re-link households are checked (``checks["household_relinking"]``).
    k_entry : mapping, optional
        ``checks["k_anonymity"]`` as the release's plan counts it
        (:func:`~.plan_review.summary_plan_checks`); by default k over ``qi`` on the
        published table.

    Returns
    -------
    checks : dict
        ``k_anonymity``, when a published column breaks k ``published_columns``
        (:func:`~.unmasked.published_column_checks`, the release's), when one re-links
        households ``household_relinking``
        (:func:`~.household_relink.household_relinking_check`, the release's), and
        ``steps`` when given.
    kept : tuple of str
        The published columns the release records as published on purpose
        (:func:`~.kept.kept_on_purpose` with every published column kept; without
        ``known``, those that look like identifiers,
        :func:`~microagg._base.identifiers.identifier_reason`).
    verdict : Verdict
        :func:`~.verdict.decide` of both.
    """
    sizes = class_sizes(published_classes(published, list(qi)))
    achieved = int(sizes.min()) if sizes.size else 0
    checks: dict[str, Any] = {"k_anonymity": MappingProxyType({
        "required": k_required, "achieved": achieved,
        "model": "k-anonymity of the published quasi-identifiers (re-derived from the file)"})}
    if k_entry is not None:
        checks["k_anonymity"] = MappingProxyType(dict(k_entry))
    as_is = published_as_is(published, qi, sens)
    broken = published_column_checks(published, list(qi), as_is,
                                     achieved if k_required is None else k_required)
    if broken is not None:
        checks["published_columns"] = broken
    if known is not None:
        relinked = household_relinking_check(
            published, known.household_ids, [c for c in as_is if c != known.household])
        if relinked is not None:
            checks["household_relinking"] = relinked
    if steps:
        checks["steps"] = tuple(steps)
    kept = _kept(published, as_is, known)
    return checks, kept, decide(checks, kept)
