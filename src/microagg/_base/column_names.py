"""Column names as a table spells them: one rule for every command, schema and option.

A name is the column of that exact name; failing that, the one column equal to it in Unicode
NFC (an accent typed as one character matches a header that stores a letter and a combining
accent, as macOS file names do) with surrounding spaces dropped (the command line drops
them). A name that matches no column, or several, stays as given, for the caller to report
with the table's columns.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["loose_name", "match_column", "match_columns"]


def loose_name(name: str) -> str:
    """A column name as compared loosely: Unicode NFC, surrounding spaces dropped.

    Examples
    --------
    >>> loose_name(" e\u0301ge ") == "\u00e9ge"
    True
    """
    return unicodedata.normalize("NFC", name).strip()


def match_columns(names: Sequence[str] | None, columns: Iterable[object]) -> list[str] | None:
    """Each of ``names`` as the table spells it (see the module docstring).

    Examples
    --------
    >>> match_columns(["e\u0301ge", "age"], ["\u00e9ge", " age "])
    ['ége', ' age ']
    """
    if names is None:
        return None
    header = [c for c in columns if isinstance(c, str)]
    return [match_column(name, header) for name in names]


def match_column(name: str, columns: Iterable[object]) -> str:
    """One name as the table spells it (see :func:`match_columns`)."""
    header = [c for c in columns if isinstance(c, str)]
    if name in header:
        return name
    found = [c for c in header if loose_name(c) == loose_name(name)]
    return found[0] if len(found) == 1 else name
