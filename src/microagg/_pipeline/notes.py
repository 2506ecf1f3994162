"""Warnings owed to the user: raised where the user called microagg, and kept in the
release (``Release.warnings``)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

__all__ = ["warn_user"]

_PACKAGE = str(Path(__file__).resolve().parents[1])


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
    """Warn with ``message`` and keep it in ``notes`` (at the front when ``first``: the
    privacy warnings come before the others)."""
    warnings.warn(message, category, stacklevel=_stacklevel())
    if first:
        notes.insert(0, message)
    else:
        notes.append(message)
