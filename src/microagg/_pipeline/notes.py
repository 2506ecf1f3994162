"""Warnings owed to the user: raised where the user called microagg, and kept in the
release (``Release.warnings``).

Each kept warning is a :class:`Note`: its text, exactly as warned (a ``str``: printed,
compared, written to JSON as the text), that also carries the warning's class
(:func:`warning_class`), so that an output can sort the warnings by what they are
(:class:`~microagg.exceptions.PrivacyLeakWarning` or another) rather than by their words.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

__all__ = ["Note", "warn_user", "warning_class"]

_PACKAGE = str(Path(__file__).resolve().parents[1])


class Note(str):
    """A warning's text with its warning class (``category``).

    Examples
    --------
    >>> from microagg.exceptions import PrivacyLeakWarning
    >>> note = Note("Column 'zip' breaks k.", PrivacyLeakWarning)
    >>> note == "Column 'zip' breaks k.", note.category.__name__
    (True, 'PrivacyLeakWarning')
    """

    category: type[Warning]

    def __new__(cls, text: str, category: type[Warning]) -> Note:
        note = super().__new__(cls, text)
        note.category = category
        return note

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its class (a release handed from a worker process keeps it)."""
        return (Note, (str(self), self.category))


def warning_class(note: str) -> type[Warning] | None:
    """The warning class a release's warning was raised with; ``None`` for a plain text
    (a note no warning raised, or warnings read back from a summary JSON).

    Examples
    --------
    >>> warning_class(Note("x", UserWarning)).__name__, warning_class("x")
    ('UserWarning', None)
    """
    category = getattr(note, "category", None)
    return category if isinstance(category, type) and issubclass(category, Warning) else None


def _stacklevel() -> int:
    """The stack level of the first frame outside microagg (so that the warning points at
    the user's call, however deep in the pipeline it is raised)."""
    frame = sys._getframe(2)  # the caller of warn_user
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn_user(notes: list[str], message: str, category: type[Warning], *,
              first: bool = False) -> None:
    """Warn with ``message`` and keep it in ``notes`` as a :class:`Note` of ``category`` (at
    the front when ``first``: the privacy warnings come before the others)."""
    warnings.warn(message, category, stacklevel=_stacklevel())
    note = Note(message, category)
    if first:
        notes.insert(0, note)
    else:
        notes.append(note)
