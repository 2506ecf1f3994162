"""Pass-through columns published as the input spelled them.

A column the release does not mask (no role, ``other``, ``sensitive``, the weight) is
published unchanged. Parsing a CSV file or an Excel sheet may change it: ``01234`` becomes the
number 1234, the texts ``NA``, ``None``, ``null``, ``nan`` become missing. The release still
computes on the parsed values (t-closeness needs numbers); :func:`published_as_read` gives the
table to write, each pass-through column back as the input had it:

* **CSV to CSV**: every field byte for byte (``01234``, ``NA``, ``1.50``, empty fields);
* **CSV to a typed format** (Parquet, ``.xlsx``, ``.dta``, ``.sav``, a database table): a
  column keeps its parsed type only when every field round-trips: a plain number (``-12``,
  ``3.5``, ``1e3``: no leading zero, no sign ``+``, at most 15 significant digits in a
  column of floats), ``True`` / ``False`` in a boolean column, or an empty field (missing).
  Otherwise the column is published as its text, every field verbatim, an empty field
  missing. A field that spells one of the column's missing-value codes (``-9``, ``.``) counts
  as an empty one: it is missing (:mod:`microagg.io._missing_codes` writes the code back to
  ``.sav`` and ``.dta``), and a column of numbers with ``.`` for missing stays numeric;
* **Excel**: a column where a text cell was read as missing (pandas reads the text ``NA`` as
  missing) is published as its cells: to ``.xlsx``, text cells as text and numbers as numbers;
  to the formats that hold one type per column, every cell as text (a number as typed, ``1``).
  Other columns keep their cells' types.

Formats that store their types (Parquet, Stata, SPSS, database tables) are read as they are:
there is nothing to restore. The rows of the release must be the input's, in its order.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from ..exceptions import InternalError
from ._formats import CSV_EXTENSIONS, EXCEL_EXTENSIONS, format_suffix
from ._labelled import read_excel
from ._missing_codes import MissingCode, spelled_codes

__all__ = ["AsRead", "RoundTrip", "published_as_read", "read_as_read", "round_trips"]

Target = Literal["csv", "xlsx", "typed"]

_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
"""A number whose value is all its text says (no leading zero, no ``+``, no spaces)."""
_FLOAT_DIGITS = 15
"""Significant digits a float64 holds exactly for any decimal text."""


@dataclass(frozen=True)
class AsRead:
    """An input's cells as written, for its pass-through columns.

    Attributes
    ----------
    cells : pandas.DataFrame
        The columns, row for row: CSV fields as strings (an empty field ``""``), or Excel
        cells as stored (text cells as text, ``NA`` too; empty cells missing).
    spelled : bool
        Whether the cells are the fields' text (CSV) rather than typed Excel cells.
    """

    cells: pd.DataFrame
    spelled: bool


def read_as_read(source: str | os.PathLike[str], *, sep: str | None = None,
                 columns: Sequence[str] | None = None) -> AsRead | None:
    """The cells of ``columns`` (default all) of a CSV or ``.xlsx`` input as written.

    Returns ``None`` for the formats that store their types (Parquet, Stata, SPSS) and for a
    database table: what they read is what they hold.
    """
    from .sql import is_sql_url
    from .tables import read_verbatim

    if is_sql_url(source):
        return None
    file = pathlib.Path(source).expanduser()
    suffix = format_suffix(file)
    if suffix in CSV_EXTENSIONS:
        return AsRead(read_verbatim(file, sep=sep, columns=columns), spelled=True)
    if suffix in EXCEL_EXTENSIONS:
        cells = read_excel(file, as_stored=True)
        if columns is not None:
            cells = cells[[c for c in cells.columns if c in columns]]
        return AsRead(cells, spelled=False)
    return None


def published_as_read(data: pd.DataFrame, as_read: AsRead | None, *,
                      masked: Collection[str], output: str | os.PathLike[str],
                      missing: Mapping[str, Sequence[MissingCode]] | None = None
                      ) -> pd.DataFrame:
    """The table to write to ``output``: each column not in ``masked`` as the input had it.

    Parameters
    ----------
    data : pandas.DataFrame
        The release's table (rows in the input's order).
    as_read : AsRead or None
        The input's cells (:func:`read_as_read`); ``None``: ``data`` is returned.
    masked : collection of str
        The columns the release changed (its quasi-identifiers).
    output : str or path-like
        Where the table goes (its extension, or a database URL, decides the rule above).
    missing : mapping of str to sequence, optional
        Each column's missing-value codes (see the module's rule).

    Raises
    ------
    InternalError
        If ``data`` and the cells do not have the same number of rows (nothing is written).
    """
    if as_read is None:
        return data
    keep = [c for c in data.columns if c not in masked and c in as_read.cells.columns]
    if not keep:
        return data
    if len(as_read.cells) != len(data):
        raise InternalError(f"The input gave {len(data)} rows, then {len(as_read.cells)} as "
                            "written; nothing was written.")
    target = _target(output)
    out = data.copy()
    for col in keep:
        cells = as_read.cells[col].set_axis(out.index)
        if as_read.spelled:
            coded = cells.isin(spelled_codes((missing or {}).get(col, ())))
            out[col] = _from_text(out[col], cells.mask(coded & (target != "csv"), ""), target)
        else:
            out[col] = _from_excel(out[col], cells, target)
    return out


def _target(output: str | os.PathLike[str]) -> Target:
    from .sql import is_sql_url

    if is_sql_url(output):
        return "typed"
    suffix = format_suffix(pathlib.Path(output))
    return "csv" if suffix in CSV_EXTENSIONS else "xlsx" if suffix in EXCEL_EXTENSIONS \
        else "typed"


def _from_text(parsed: pd.Series, fields: pd.Series, target: Target) -> pd.Series:
    """A CSV column: its fields (to CSV), its parsed values (when they round-trip), or its
    text with empty fields missing."""
    if target == "csv":
        return fields
    if round_trips(parsed, fields):
        return parsed
    return fields.where(fields != "")


def round_trips(parsed: pd.Series, fields: pd.Series) -> bool:
    """Whether the parsed column says all its fields do (see the module's rule).

    Examples
    --------
    >>> import pandas as pd
    >>> round_trips(pd.Series([1.5, 1000.0, None]), pd.Series(["1.50", "1e3", ""]))
    True
    >>> round_trips(pd.Series([1234, 5]), pd.Series(["01234", "5"]))
    False
    >>> round_trips(pd.Series([1.0, None]), pd.Series(["1", "NA"]))
    False
    """
    rule = RoundTrip()
    rule.add(parsed, fields)
    return rule.holds


@dataclass
class RoundTrip:
    """The rule of :func:`round_trips` judged on a column chunk by chunk (an engine that
    reads a file in chunks): :attr:`holds` is what the rule says of the whole column.

    A chunk's parse may differ from the whole column's (integers in one chunk, floats where
    another has an empty field): the kinds seen are kept, and the column holds its numbers
    only when every chunk was numeric (booleans: every chunk boolean), every given field is
    spelled as a plain number (``True`` / ``False``), and, when some chunk parsed as floats
    (so the whole column does), every field has at most 15 significant digits.

    Examples
    --------
    >>> import pandas as pd
    >>> rule = RoundTrip()
    >>> rule.add(pd.Series([1, 2]), pd.Series(["1", "2"]))
    >>> rule.add(pd.Series([3.5, None]), pd.Series(["3.5", ""]))
    >>> rule.holds
    True
    >>> rule.add(pd.Series([4]), pd.Series(["04"]))
    >>> rule.holds
    False
    """

    kinds: set[str] = field(default_factory=set)
    spelled: bool = True
    """Every given field spelled as its parsed value says."""
    short: bool = True
    """Every given numeric field has at most 15 significant digits."""

    def add(self, parsed: pd.Series, fields: pd.Series) -> None:
        """Judge the next chunk: its parsed values and its fields' text (``""`` empty)."""
        given = fields[fields != ""]
        if pd.api.types.is_bool_dtype(parsed):
            self.kinds.add("bool")
            self.spelled &= bool(given.isin(["True", "False"]).all())
        elif pd.api.types.is_numeric_dtype(parsed):
            self.kinds.add("float" if pd.api.types.is_float_dtype(parsed) else "integer")
            self.spelled &= bool(given.str.fullmatch(_NUMBER).all())
            digits = given.str.replace(r"[eE].*$", "", regex=True).str.replace(
                r"[-.]", "", regex=True).str.lstrip("0").str.len()
            self.short &= bool((digits <= _FLOAT_DIGITS).all())
        else:
            self.kinds.add("text")

    @property
    def holds(self) -> bool:
        """Whether the column keeps its parsed values (else it is published as its text)."""
        if self.kinds == {"bool"}:
            return self.spelled
        if not self.kinds or not self.kinds <= {"integer", "float"}:
            return not self.kinds  # no chunk: nothing to write
        return self.spelled and ("float" not in self.kinds or self.short)


def _from_excel(parsed: pd.Series, cells: pd.Series, target: Target) -> pd.Series:
    """An Excel column: as parsed, unless a text cell was read as missing; then its cells
    (to ``.xlsx``) or every cell as text."""
    text_lost = parsed.isna() & cells.map(lambda v: isinstance(v, str)).astype(bool)
    if not text_lost.any():
        return parsed
    if target == "xlsx":
        return cells
    return cells.map(_cell_as_text)


def _cell_as_text(value: object) -> object:
    """A cell in a text column: a number as typed (``1``, not ``1.0``); missing stays so."""
    if value is None or isinstance(value, str) or pd.isna(value):  # type: ignore[call-overload]
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
