"""Missing-value codes: read as missing, written back where the release left them.

Surveys code the reasons a value is missing: ``-9`` refused, ``99`` don't know, a ``.`` in a
CSV export. SPSS declares such codes per column (user-missing values: up to three codes, or a
range and a code); Stata has 26 extended missing values ``.a`` to ``.z``. A schema's
``missing = [-9, 99, "."]`` (or ``--missing COL=CODE,...``) declares codes for any format.

Read (:func:`declared_missing`, :func:`readstat_missing`), every coded cell is missing
(``NaN``) for the computation, and the metadata keeps the codes and each coded cell's code
(:class:`~microagg.io.TableMetadata` ``missing_codes`` and ``coded_cells``). Written to
``.sav`` or ``.dta`` (:func:`restore_codes`), a column the release did not mask gets its code
back in every cell that was coded in the input and is still missing: numeric codes as SPSS
user-missing values, letters as Stata extended missing values. A numeric code written to
Stata, or a letter to SPSS, has no place there: the cell is system-missing. A cell the release
made missing (suppressed) is system-missing, its column's value labels kept; a text cell made
missing is written blank, which SPSS is told is missing (a user-missing blank,
:func:`declare_blank_text`) and Stata reads as missing (its missing string is the empty one).
Read back (:func:`blank_text_missing`), a blank text cell of a ``.dta`` file, or of a ``.sav``
column that declares the blank missing, is missing. CSV outputs have
the code as read in every pass-through column (:mod:`microagg.io._as_read`); Parquet and Excel
outputs have missing cells.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import LabelsDroppedWarning

__all__ = ["STATA_LETTER", "MissingCode", "blank_text_missing", "declare_blank_text",
           "declared_missing", "is_stata_letter", "parse_missing_codes", "readstat_missing", "restore_codes", "spelled_codes",
           "with_missing_codes"]

MissingCode = float | str | tuple[float, float]
"""A code: a number, a text (``"."``, a Stata letter ``"a"``), or an SPSS range ``(lo, hi)``."""
STATA_LETTER = re.compile(r"^[a-z]$")
_SPSS_DISCRETE = 3  # user-missing codes of one SPSS column: 3 values, or a range and 1 value


def is_stata_letter(code: Any) -> bool:
    """Whether ``code`` is a Stata extended missing value's letter (``"a"`` is ``.a``)."""
    return isinstance(code, str) and bool(STATA_LETTER.match(code))


def spelled_codes(codes: Sequence[MissingCode]) -> set[str]:
    """The ways a CSV field spells ``codes`` (``-9``, ``-9.0``, ``.``), for its reader.

    Examples
    --------
    >>> sorted(spelled_codes([-9, "."]))
    ['-9', '-9.0', '.']
    """
    found: set[str] = set()
    for code in codes:
        if isinstance(code, tuple):
            continue
        found.add(str(code))
        if isinstance(code, (int, float)) and float(code).is_integer():
            found |= {str(int(code)), f"{float(code)}"}
    return found


def _is_coded(series: pd.Series, codes: Sequence[MissingCode]) -> pd.Series:
    """Which cells of ``series`` hold one of ``codes`` (a number, a text, a range)."""
    hit = pd.Series(False, index=series.index)
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    values = pd.to_numeric(series, errors="coerce") if not numeric else series
    for code in codes:
        if isinstance(code, tuple):
            hit |= values.between(code[0], code[1]).fillna(False).astype(bool)
        elif isinstance(code, str):
            hit |= series.astype(object).eq(code).fillna(False).astype(bool)
        else:
            hit |= values.eq(code).fillna(False).astype(bool)
            if not numeric:
                hit |= series.astype(object).isin(spelled_codes([code])).fillna(False)
    return hit


def declared_missing(df: pd.DataFrame, missing: Mapping[str, Sequence[MissingCode]],
                     coded: dict[str, dict[int, Any]], *, source: str) -> pd.DataFrame:
    """``df`` with the cells holding a declared code missing, recorded in ``coded``.

    A text column that holds numbers only once its codes are missing (a ``.`` in a CSV
    column of numbers) becomes numeric.

    Raises
    ------
    ValueError
        If a column of `missing` is not in the table (nothing is read).
    """
    absent = [str(c) for c in missing if c not in df.columns]
    if absent:
        raise ValueError(f"Missing-value codes are declared for column(s) "
                         f"{', '.join(map(repr, absent))}, which {source} does not have "
                         f"(its {df.shape[1]} columns: {', '.join(map(repr, map(str, df.columns[:8])))}"
                         f"{', ...' if df.shape[1] > 8 else ''}).")
    out = df
    for col, codes in missing.items():
        hit = _is_coded(out[col], codes).to_numpy()
        if not hit.any():
            continue
        if out is df:
            out = df.copy()
        series = out[col]
        cells = coded.setdefault(col, {})
        for position in np.flatnonzero(hit):
            value = series.iloc[position]
            cells.setdefault(int(position), value.item() if hasattr(value, "item") else value)
        kept = series.where(~hit)
        if not pd.api.types.is_numeric_dtype(kept):
            as_numbers = pd.to_numeric(kept.dropna(), errors="coerce")
            if as_numbers.notna().all() and len(as_numbers):
                kept = pd.to_numeric(kept)
        out[col] = kept
    return out


def readstat_missing(df: pd.DataFrame, meta: Any, fmt: str
                     ) -> tuple[pd.DataFrame, dict[str, tuple[MissingCode, ...]],
                                dict[str, dict[int, Any]]]:
    """A table read by pyreadstat with ``user_missing=True``: its coded cells missing.

    Returns the table, each column's declared codes (SPSS ``missing_ranges``: a value, or a
    ``(lo, hi)`` range; Stata: the letters its cells use) and each coded cell's code.
    """
    codes: dict[str, tuple[MissingCode, ...]] = {}
    if fmt == "sav":
        for col, ranges in (getattr(meta, "missing_ranges", None) or {}).items():
            if col in df.columns and pd.api.types.is_numeric_dtype(df[col]):
                codes[col] = tuple(r["lo"] if r["lo"] == r["hi"] else (r["lo"], r["hi"])
                                   for r in ranges)
    else:
        for col, letters in (getattr(meta, "missing_user_values", None) or {}).items():
            if col in df.columns and letters:
                codes[col] = tuple(sorted(str(letter) for letter in letters))
    coded: dict[str, dict[int, Any]] = {}
    out = declared_missing(df, codes, coded, source="the file")
    return blank_text_missing(out, meta, fmt), codes, coded


def _text_column(series: pd.Series) -> bool:
    if pd.api.types.is_string_dtype(series) and series.dtype != object:
        return True
    return series.dtype == object and bool(series.map(lambda v: isinstance(v, str)).any())


def blank_text_missing(df: pd.DataFrame, meta: Any, fmt: str) -> pd.DataFrame:
    """``df`` with the blank cells of its text columns missing where the file says a blank is
    missing: every text column of a Stata file (Stata's missing string is ``""``), the text
    columns of an SPSS file that declare the blank user-missing (as :func:`declare_blank_text`
    writes them). The other values of the column are kept as text (``"01234"`` stays text)."""
    if fmt == "sav":
        columns = [col for col, ranges in (getattr(meta, "missing_ranges", None) or {}).items()
                   if col in df.columns and any(r["lo"] == "" == r["hi"] for r in ranges)]
    else:
        columns = [col for col in df.columns if _text_column(df[col])]
    out = df
    for col in columns:
        series = out[col]
        blank = (series == "").fillna(False).to_numpy(dtype=bool)
        if blank.any():
            if out is df:
                out = df.copy()
            out[col] = series.where(~blank)
    return out


def declare_blank_text(out: pd.DataFrame, declared: dict[str, list[Any]]) -> None:
    """Declare the blank user-missing (in ``declared``, pyreadstat's ``missing_ranges``) for
    every text column of ``out`` with a missing cell, which an SPSS file writes blank: a
    suppressed text cell is then missing in SPSS too, not a valid empty value."""
    for col in out.columns:
        series = out[col]
        if col not in declared and _text_column(series) and bool(series.isna().any()):
            declared[str(col)] = [""]


def restore_codes(out: pd.DataFrame, codes: Mapping[str, Sequence[MissingCode]],
                  coded: Mapping[str, Mapping[int, Any]], fmt: str
                  ) -> tuple[pd.DataFrame, dict[str, list[Any]]]:
    """The table to write to ``fmt`` with the codes it can hold back in their cells.

    Returns the table and pyreadstat's declaration of them (``missing_ranges`` for SPSS,
    ``missing_user_values`` for Stata). Only cells still missing get their code.
    """
    declared: dict[str, list[Any]] = {}
    for col, column_codes in codes.items():
        if col not in out.columns or not _numeric_column(out[col]):
            continue
        fits = [c for c in column_codes if _fits(c, fmt)]
        if not fits or not _declarable(col, fits, fmt):
            continue
        declared[col] = [{"lo": c[0], "hi": c[1]} if isinstance(c, tuple) else c
                         for c in fits] if fmt == "sav" else sorted(map(str, fits))
        cells = {p: v for p, v in coded.get(col, {}).items() if p < len(out) and _fits(v, fmt)
                 and _within(v, fits)}
        if not cells:
            continue
        series = out[col].astype(object) if fmt == "dta" else out[col].astype("float64")
        positions = np.fromiter(cells, dtype=np.int64)
        still_missing = series.iloc[positions].isna().to_numpy()
        values = series.to_numpy(copy=True)
        for position, missing in zip(positions, still_missing, strict=True):
            if missing:
                values[position] = cells[int(position)]
        out = out.assign(**{col: pd.Series(values, index=out.index, dtype=series.dtype)})
    return out, declared


def _numeric_column(series: pd.Series) -> bool:
    return (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)) \
        or bool(series.isna().all())


def _fits(code: Any, fmt: str) -> bool:
    """Whether ``fmt`` holds ``code``: SPSS numbers and ranges, Stata letters."""
    if fmt == "dta":
        return is_stata_letter(code)
    if isinstance(code, tuple):
        return True
    return isinstance(code, (int, float)) and not isinstance(code, bool) \
        and math.isfinite(code)


def _within(value: Any, codes: Collection[Any]) -> bool:
    return any(value == c if not isinstance(c, tuple) else c[0] <= value <= c[1]
               for c in codes)


def _declarable(col: str, codes: Sequence[MissingCode], fmt: str) -> bool:
    """Whether SPSS can declare ``codes`` (3 values, or a range and a value); else warn."""
    if fmt != "sav":
        return True
    ranges = sum(isinstance(c, tuple) for c in codes)
    if (ranges == 0 and len(codes) <= _SPSS_DISCRETE) or (ranges == 1 and len(codes) <= 2):
        return True
    warnings.warn(f"The missing-value codes of column {col!r} ({list(codes)}) were not "
                  "written: SPSS declares at most 3 codes, or a range and one code, per "
                  "column; its coded cells are system-missing.", LabelsDroppedWarning,
                  stacklevel=5)
    return False


def with_missing_codes(df: pd.DataFrame, missing: Mapping[str, Sequence[MissingCode]] | None,
                       *, source: str) -> pd.DataFrame:
    """:func:`microagg.io.read_table`'s table with the declared codes of `missing` read as
    missing, and the codes (with those of the file) in its metadata.

    Raises
    ------
    ValueError
        If a column of `missing` is not in the table.
    """
    if not missing:
        return df
    from dataclasses import replace

    from ._labelled import METADATA_KEY, TableMetadata, table_metadata

    metadata = table_metadata(df) or TableMetadata(source_format="csv")
    coded = {col: dict(cells) for col, cells in metadata.coded_cells.items()}
    attrs = dict(df.attrs)
    out = declared_missing(df, missing, coded, source=source)
    codes = dict(metadata.missing_codes)
    for col, column_codes in missing.items():
        codes[col] = tuple(dict.fromkeys([*codes.get(col, ()), *column_codes]))
    out.attrs.update(attrs)
    out.attrs[METADATA_KEY] = replace(metadata, missing_codes=codes, coded_cells=coded,
                                      n_rows=len(out))
    return out


def parse_missing_codes(items: Sequence[str] | None, *, option: str
                        ) -> dict[str, tuple[MissingCode, ...]]:
    """``["income=-9,-8", "bmi=."]`` -> ``{"income": (-9.0, -8.0), "bmi": (".",)}``.

    A code that reads as a number is that number; any other is a text (``.``, ``NA``).

    Raises
    ------
    ValueError
        If an item is not ``COLUMN=CODE,CODE...`` or names a column twice.
    """
    parsed: dict[str, tuple[MissingCode, ...]] = {}
    for item in items or ():
        name, eq, rest = item.partition("=")
        codes = [code.strip() for code in rest.split(",")]
        if not eq or not name.strip() or name.strip() in parsed or not all(codes):
            raise ValueError(f"{option} takes COLUMN=CODE,CODE... (e.g. {option} "
                             f"income=-9,-8 {option} bmi=.), each column once. Got {item!r}.")
        parsed[name.strip()] = tuple(_code(code) for code in codes)
    return parsed


def _code(text: str) -> MissingCode:
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text
