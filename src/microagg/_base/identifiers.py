"""What makes a column look like a direct identifier (a name, a person id, a record number):
one rule for the release's refusal (:mod:`microagg._pipeline.unmasked`) and the schema
proposed by ``microagg init-schema`` (:mod:`microagg.schema._propose`)."""

from __future__ import annotations

import re

import pandas as pd

from ..io._nested import nunique

__all__ = ["IDENTIFIER_NAMES", "NEARLY_UNIQUE", "identifier_reason"]

IDENTIFIER_NAMES = re.compile(
    r"(^|[_\W])(id|ids|name|names|surname|firstname|lastname|ssn|email|e-mail|phone|mobile|"
    r"passport|address|street|uuid|key|iban|account)($|[_\W])", re.IGNORECASE)
"""Column names that say "direct identifier" (``person_id``, ``Name``, ``e-mail``)."""

NEARLY_UNIQUE = 0.95
"""A column whose distinct values cover at least this share of the rows tells the records
apart almost one by one: a direct identifier unless it is a measured quantity."""

_MIN_ROWS = 20
"""Uniqueness says nothing on a handful of rows (five distinct labels in five rows)."""


def identifier_reason(series: pd.Series, name: str) -> str | None:
    """Why a column looks like a direct identifier, or ``None``.

    The name (:data:`IDENTIFIER_NAMES`); text or codes (nearly) unique on every row; or
    consecutive whole numbers, one per row (a record number). Numbers that are merely
    distinct are measurements (an income unique on every row is a quasi-identifier to mask,
    not a name): their effect on k is measured by :func:`published_column_checks`. The same
    rules as :func:`microagg.schema.propose_schema`'s.

    Examples
    --------
    >>> identifier_reason(pd.Series(["a", "b"]), "person_id")
    'its name looks like an identifier'
    >>> identifier_reason(pd.Series([f"P{i}" for i in range(30)]), "code")
    'unique on 30 of 30 rows'
    >>> identifier_reason(pd.Series(range(101, 131)), "record")
    'consecutive whole numbers, one per row: a record number'
    >>> identifier_reason(pd.Series([3 * i + 1000 for i in range(30)]), "income") is None
    True
    """
    if IDENTIFIER_NAMES.search(name):
        return "its name looks like an identifier"
    n = len(series)
    if n < _MIN_ROWS or pd.api.types.is_bool_dtype(series):
        return None
    distinct = nunique(series)  # lists and structs (Parquet) compared by content
    if pd.api.types.is_numeric_dtype(series):
        if (pd.api.types.is_integer_dtype(series) and distinct == n
                and int(series.max()) - int(series.min()) == n - 1):
            return "consecutive whole numbers, one per row: a record number"
        return None
    if distinct >= NEARLY_UNIQUE * n:
        return f"unique on {distinct} of {n} rows"
    return None
