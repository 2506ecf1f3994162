"""The first draft of a schema (:func:`propose_schema`, re-exported by :mod:`microagg.schema`).

Roles and types are guessed from names and values, each with its reason as a comment; the
classic quasi-identifiers (dates, ages, postcodes, places) are proposed as such by name or
by their values, whatever their number of distinct values.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .._base.identifiers import IDENTIFIER_NAMES, identifier_reason
from .._base.validation import check_k
from .._pipeline.roleless import rare_values
from ..io._nested import nested_type, nunique

__all__ = ["propose_schema"]

_AGE_NAMES = re.compile(r"(^|_)(age|ages|birth_?year|year_of_birth|yob)($|_)", re.IGNORECASE)
_POSTCODE_NAMES = re.compile(r"(^|_)(post_?code|postal(_?code)?|zip(_?code)?|plz|cap)($|_)",
                             re.IGNORECASE)
_PLACE_NAMES = re.compile(r"(^|_)(region|municipality|city|town|district|county|country|state|"
                          r"province|place_of_birth|birth_?place|nationality)($|_)",
                          re.IGNORECASE)
_DATE_LIKE = re.compile(r"^\s*\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")
_DATE_FORMATS = ("ISO8601", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y")
DATE_SHARE = 0.95
"""Share of a text column's non-missing values that must parse as dates to propose a date."""

_WEIGHT_NAMES = re.compile(r"(w|wgt|wght|weights?|[a-z]*_weights?|weights?_[a-z]*|rb050|db090|"
                           r"pw|hw|fweight|pweight)", re.IGNORECASE)
"""Names of sampling weights (EU-SILC: ``rb050`` personal, ``db090`` household weight)."""
_HOUSEHOLD_NAMES = re.compile(r"(hid|hh_?id|household(_?id|_?nr|_?number)?|db030)",
                              re.IGNORECASE)
"""Names of household ids (EU-SILC: ``db030``)."""
_STRATA_NAMES = re.compile(r"(strata|stratum|[a-z0-9]+_strat(a|um)|strat(a|um)_[a-z0-9]+)",
                           re.IGNORECASE)
"""Names of design strata (``strata``, ``stratum``, ``psu_stratum``): only explicit names; a
region may or may not be the stratum, only the data steward knows."""
_SINGLE_ROLES = ("weight", "household", "strata")
"""The roles a schema gives at most one column each."""

_DATE_REASON = "dates (of birth, of events) are classic quasi-identifiers"
_SENTINELS = (-9.0, -99.0, -999.0, -8.0, -98.0, 99.0, 999.0, 9999.0)
"""Numbers surveys use as missing-value codes (refused, don't know, not applicable)."""
_TEXT_CODES = (".", "-", "NA", "N/A", "n/a")
"""Texts that mark a missing number where pandas reads them as text."""
CODE_SHARE = 0.01
"""Share of the rows (and at least 2) a sentinel must hold to be proposed as a code."""

DEFAULT_K = 5
"""The k a draft is proposed for when none is given (``microagg anonymize``'s default)."""


@dataclass(frozen=True)
class _Guess:
    """A column's proposed role and type, the reason, and extra lines of its table."""

    role: str
    type: str | None
    reason: str
    lines: tuple[str, ...] = ()


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _toml_string(name)


def propose_schema(df: pd.DataFrame, *, max_categories: int = 50, k: int = DEFAULT_K) -> str:
    """A first schema for ``df`` as TOML text, with the reasons as comments.

    Guesses: a column named like an identifier (id, name, email, phone, ssn, ...), a text
    column unique on every row or a record number (consecutive integers) is an
    ``identifier``; a constant column is ``other``. The classic quasi-identifiers are
    proposed as such with the reason: dates (a datetime column, or text of which at least
    95 % of the values parse as dates: ``type = "date"``), ages (named age, ``*_age``,
    birth_year), postcodes (postcode, zip, postal, plz, cap: text codes, categorical) and
    places (region, city, district, county, country, state, place of birth, nationality:
    categorical). Other numeric columns, even unique on every row (measurements), are numeric
    quasi-identifiers (whole numbers with a comment: published rounded to integers by
    default); other text columns with at most ``max_categories`` values are categorical
    quasi-identifiers, others ``other``. Nothing is guessed ``sensitive``: only the data
    steward knows. Missing-value codes are proposed (``missing = [...]``) where they are
    seen: a frequent ``-9``, ``-99``, ``999`` ... outside a numeric column's other values, a
    ``.`` in a column that is numbers otherwise (then proposed as numeric). A column with
    the SPSS measurement level ``ordinal``, or an ordered categorical, is proposed as
    ``type = "ordinal"`` with its order (value labels in the order of their codes).

    ``other`` (published unchanged, kept on purpose) is never proposed for a column that
    breaks ``k`` by itself (a value fewer than ``k`` rows share, missing values aside): such
    text is an ``identifier``, with the counts as the reason; a quasi-identifier that breaks
    ``k`` by itself says so in a comment.

    The survey roles are proposed from names and values: ``weight`` for a positive numeric
    column named like a sampling weight (weight, wgt, pw, hw, EU-SILC's rb050, db090),
    ``household`` for a column named like a household id (hid, hh_id, household_id, EU-SILC's
    db030) whose values group rows (a value shared by several rows, none missing), and
    ``strata`` only for a column named explicitly like a stratum (strata, stratum,
    psu_stratum): a region may or may not be the design stratum, so none is guessed from
    values. Each of these roles goes to one column (the first; a second one is guessed as an
    ordinary column with a comment). With a household id, the household-level columns
    (constant within every household, as
    :func:`microagg.steps.household.household_level_columns` finds them) are named in
    comments, with their treatment: the ``household`` step (sdcMicro's
    ``selectHouseholdData`` route) or ``Microaggregate(per_household=True)``.

    Parameters
    ----------
    df : pandas.DataFrame
        The table to describe.
    max_categories : int, default=50
        The most distinct values of a text column proposed as a categorical quasi-identifier.
    k : int, default=5
        The k the comments' warnings refer to (a value shared by fewer than k records).

    Examples
    --------
    >>> print(propose_schema(pd.DataFrame({"id": [1, 2], "age": [30, 40]})).splitlines()[6])
    [columns.id]  # its name looks like an identifier
    """
    k = check_k(k, n_samples=sys.maxsize, caller="propose_schema")
    from .schema_file import ROLES  # the schema's own list (schema.py imports this module)

    lines = ["# microagg schema: proposed from the data; check every role before use.",
             f"# roles: {', '.join(ROLES)} (weight, household and strata: one column each)",
             "# types: numeric, ordinal (order = [...]), categorical, date (format, publish)",
             "# strata: proposed only for a column named strata, stratum or *_stratum; a "
             "region is not",
             "# assumed to be the design stratum: give it the strata role yourself where it "
             "is one",
             ""]
    guesses = _guesses(df, max_categories, k)
    levels = _household_levels(df, guesses)
    for name, series, guess in guesses:
        reasons = [guess.reason]
        missing = int(series.isna().sum())
        if missing:
            reasons.append(f"{missing} missing")
        lines.append(f"[columns.{_toml_key(name)}]  # {'; '.join(reasons)}")
        lines.append(f"role = {_toml_string(guess.role)}")
        if guess.type is not None:
            lines.append(f"type = {_toml_string(guess.type)}")
        lines.extend(guess.lines)
        lines.extend(levels.get(name, ()))
        lines.append("")
    return "\n".join(lines)


def _guesses(df: pd.DataFrame, max_categories: int, k: int
             ) -> list[tuple[str, pd.Series, _Guess]]:
    """Each column's name, values (missing-value codes as missing) and guess; a second
    column named like a weight, household id or stratum is guessed as an ordinary column
    with a comment (a schema gives those roles one column each)."""
    from ..io._labelled import table_metadata

    metadata = table_metadata(df)
    taken: dict[str, str] = {}
    out = []
    for col in df.columns:
        name = str(col)
        series, codes = _seen_codes(df[col])
        guess = _ordinal(df[col], metadata, name) or _propose(series, name, max_categories)
        if guess.role in taken:
            first, role = taken[guess.role], guess.role
            guess = _propose(series, name, max_categories, survey=False)
            guess = replace(guess, lines=(*guess.lines, f"# named like a {role} column too, "
                                          f"but {first} has that role (one column each)"))
        elif guess.role in _SINGLE_ROLES:
            taken[guess.role] = name
        if codes:
            guess = replace(guess, lines=(*guess.lines, f"missing = [{', '.join(codes)}]  "
                                          "# missing-value codes seen: read as missing"))
        out.append((name, series, _never_other_when_breaking(guess, series, k)))
    return out


def _household_levels(df: pd.DataFrame, guesses: list[tuple[str, pd.Series, _Guess]]
                      ) -> dict[str, tuple[str, ...]]:
    """Comment lines marking the household-level columns (constant within every household
    of the proposed household id, :func:`microagg.steps.household.household_level_columns`),
    and a summary under the household id; none without a household id.

    The schema has no household-level key: the comments name the columns and the treatment
    (the ``household`` step, or ``Microaggregate(per_household=True)``), which the steward
    chooses.
    """
    household = next((name for name, _, g in guesses if g.role == "household"), None)
    if household is None:
        return {}
    from ..steps.household import household_level_columns

    candidates = [name for name, series, g in guesses
                  if name != household and g.role != "identifier" and nunique(series) > 1
                  and nested_type(series) is None]
    frame = df.set_axis([str(c) for c in df.columns], axis=1)
    found = household_level_columns(frame[[household, *candidates]], household)
    if not found:
        return {}
    levels: dict[str, tuple[str, ...]] = {
        name: (f"# household-level: constant within every household of {household}",)
        for name in found}
    levels[household] = (
        f"# household-level columns (constant within every household): {', '.join(found)};",
        "# the members of a household share them, so they re-link the household: treat them "
        "once per",
        "# household ([[steps]] name = \"household\", or Microaggregate(per_household=True) "
        "in Python)")
    return levels


def _date_format(series: pd.Series) -> str | None:
    """The first format of :data:`_DATE_FORMATS` in which at least :data:`DATE_SHARE` of the
    non-missing text values parse as dates (``None``: not dates)."""
    text = series.dropna().astype("str").str.strip()
    if text.empty or text.str.match(_DATE_LIKE).mean() < DATE_SHARE:
        return None
    for fmt in _DATE_FORMATS:
        parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        if parsed.notna().mean() >= DATE_SHARE:
            return fmt
    return None


def _integer_valued(series: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(series.dtype):
        return True
    values = series.dropna().to_numpy(dtype=np.float64)
    return bool(values.size) and bool(np.all(np.isfinite(values) & (values == np.round(values))))


def _numeric(reason: str, series: pd.Series) -> _Guess:
    """A numeric quasi-identifier; whole numbers get a comment on the default rounding."""
    lines = (("# whole numbers: published rounded to integers by default (round = 0); "
              "round = \"none\" publishes the exact means",) if _integer_valued(series) else ())
    return _Guess("quasi-identifier", "numeric", reason, lines)


def _classic(series: pd.Series, name: str, numeric: bool) -> _Guess | None:
    """Dates, ages, postcodes and places: quasi-identifiers by nature, with the reason."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return _Guess("quasi-identifier", "date", _DATE_REASON)
    if not numeric and not isinstance(series.dtype, pd.CategoricalDtype):
        fmt = _date_format(series)
        if fmt is not None:
            lines = () if fmt == "ISO8601" else (f"format = {_toml_string(fmt)}",)
            return _Guess("quasi-identifier", "date", f"{_DATE_REASON} (text dates)",
                          (*lines, "# publish = \"month\" or \"year\" publishes coarser dates"))
    if numeric and _AGE_NAMES.search(name):
        return _numeric("ages are classic quasi-identifiers", series)
    if _POSTCODE_NAMES.search(name):
        return _Guess("quasi-identifier", "categorical",
                      "postcodes are classic quasi-identifiers (codes, not quantities)")
    if _PLACE_NAMES.search(name):
        return _Guess("quasi-identifier", "categorical",
                      "places (of residence, of birth) are classic quasi-identifiers")
    return None


def _survey_role(series: pd.Series, name: str, numeric: bool) -> _Guess | None:
    """A sampling weight (a positive number named like one), a household id (named like one,
    grouping rows: some value shared by several rows, none missing) or a stratum (named
    explicitly like one, none missing), by name and values."""
    if _HOUSEHOLD_NAMES.fullmatch(name):
        if series.isna().any():
            return _Guess("identifier", None, "its name looks like a household id, but some "
                                              "rows have none (the household risk needs one "
                                              "on every row): give the missing ids, then "
                                              "the household role")
        if nunique(series) == len(series):
            return _Guess("identifier", None, "its name looks like a household id, but it is "
                                              "unique on every row: it groups no persons "
                                              "into households")
        return _Guess("household", None, "its name looks like a household id and it groups "
                                         "rows: the household risk needs it; dropped from the "
                                         "release unless kept")
    if _STRATA_NAMES.fullmatch(name) and not series.isna().any():
        return _Guess("strata", None, "its name says stratum: published unchanged, the "
                                      "risk's frequencies are counted within each stratum")
    if numeric and _WEIGHT_NAMES.fullmatch(name) and bool((series.dropna() > 0).all()):
        return _Guess("weight", None, "its name looks like a sampling weight: published "
                                      "unchanged, used for the population frequencies of "
                                      "the disclosure risk")
    return None


def _by_name_or_cells(series: pd.Series, name: str) -> _Guess | None:
    """An identifier by its name; a column of lists or structs (Parquet), published as is."""
    if IDENTIFIER_NAMES.search(name):
        return _Guess("identifier", None, "its name looks like an identifier")
    nested = nested_type(series)
    if nested is not None:
        return _Guess("other", None, f"{nested} cells: published unchanged, never compared "
                                     "value by value")
    return None
def _never_other_when_breaking(guess: _Guess, series: pd.Series, k: int) -> _Guess:
    """``guess``, except that a column a value of which fewer than ``k`` rows share is never
    ``other`` (published unchanged): text becomes an ``identifier`` (dropped) with the counts
    as the reason; a quasi-identifier gets a comment that it breaks k by itself."""
    if guess.role not in ("other", "quasi-identifier") or len(series) < k:
        return guess
    rare = rare_values(series, k)  # missing-value codes are missing already (_seen_codes)
    if rare is None:
        return guess
    counts = rare.describe(k)
    if guess.role == "quasi-identifier":
        return replace(guess, lines=(*guess.lines, f"# breaks k = {k} by itself: {counts}; "
                                                  "mask it, never publish it unchanged"))
    stop = "" if guess.reason.endswith((".", "?", "!")) else "."
    return _Guess("identifier", None,
                  f"{guess.reason}{stop} It breaks k = {k} by itself: {counts}; dropped, as "
                  "published unchanged it would tell those records apart (or mask it as a "
                  "categorical quasi-identifier with a hierarchy)")


def _propose(series: pd.Series, name: str, max_categories: int, *,
             survey: bool = True) -> _Guess:
    """The guessed role and type of one column, and the reason (a comment in the draft).

    A constant column is ``other``: it tells no records apart and is no quasi-identifier. A
    numeric column unique on every row is a measurement (expenditure, income), proposed as a
    quasi-identifier, unless it counts the rows (consecutive integers): then it is a record
    number, an ``identifier``, as is a text column unique on every row.
    """
    n = len(series)
    distinct = nunique(series)  # lists and structs (Parquet) compared by content
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    first = (_survey_role(series, name, numeric) if survey else None) \
        or _by_name_or_cells(series, name)
    if first is not None:
        return first
    if n > 1 and distinct <= 1:
        return _Guess("other", None, "constant: it tells no records apart, so it is neither "
                                     "a quasi-identifier nor sensitive")
    classic = _classic(series, name, numeric)
    if classic is not None:
        return classic
    reason = identifier_reason(series, name)  # a record number, text nearly unique
    if reason is not None:
        return _Guess("identifier", None, reason)
    if n > 1 and distinct == n and numeric:
        return _numeric(f"numeric, unique on each of the {n} rows: a measurement, a "
                        "quasi-identifier (or sensitive, if confidential)", series)
    if n > 1 and distinct == n:
        return _Guess("identifier", None, f"unique on each of the {n} rows")
    if numeric:
        return _numeric(f"numeric, {distinct} distinct values", series)
    if distinct <= max_categories:
        return _Guess("quasi-identifier", "categorical", f"{distinct} categories")
    return _Guess("other", "categorical", f"{distinct} distinct text values: free text?")


def _seen_codes(series: pd.Series) -> tuple[pd.Series, list[str]]:
    """The column with the missing-value codes it seems to use as missing, and those codes
    as TOML values (none: the column as it is)."""
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if not numeric:
        text = series.dropna().astype("str").str.strip()
        marks = [code for code in _TEXT_CODES if (text == code).any()]
        rest = pd.to_numeric(text[~text.isin(marks)], errors="coerce")
        if not marks or rest.empty or rest.isna().any():
            return series, []
        return pd.to_numeric(series.where(~series.isin(marks))), [_toml_string(m) for m in marks]
    values = series.dropna()
    counts = values.value_counts()
    codes = []
    for code in _SENTINELS:
        others = values[values != code]
        if counts.get(code, 0) < max(2, CODE_SHARE * len(series)) or others.empty:
            continue
        if (code < 0 and others.min() >= 0) or (code > 0 and others.max() < code / 2):
            codes.append(code)
    if not codes:
        return series, []
    return series.where(~series.isin(codes)), [f"{c:g}" for c in codes]


def _ordinal(series: pd.Series, metadata: Any, name: str) -> _Guess | None:
    """An ordered categorical, or an SPSS ``ordinal`` column read as its labels, as an
    ordinal quasi-identifier with its order."""
    if isinstance(series.dtype, pd.CategoricalDtype) and series.dtype.ordered:
        order = [str(c) for c in series.dtype.categories]
        reason = "an ordered categorical"
    elif metadata is not None and metadata.measures.get(name) == "ordinal" \
            and name in metadata.value_labels and not pd.api.types.is_numeric_dtype(series):
        coded = set(metadata.missing_codes.get(name, ()))
        mapping = {c: v for c, v in metadata.value_labels[name].items() if c not in coded}
        order = [str(label) for _, label in sorted(mapping.items(),
                                                   key=lambda item: _rank(item[0]))]
        reason = "SPSS measurement level ordinal"
    else:
        return None
    if len(order) < 2 or len(set(order)) != len(order):
        return None
    return _Guess("quasi-identifier", "ordinal", reason,
                  (f"order = [{', '.join(map(_toml_string, order))}]",))


def _rank(code: Any) -> tuple[int, float | str]:
    """Codes in their order: numbers by value, then texts (Stata's ``.a``)."""
    return (0, float(code)) if isinstance(code, (int, float)) else (1, str(code))
