"""The release report: one self-contained HTML file a data steward can open and understand
without reading code.

The names are defined in :mod:`.html` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .html import (
        render_report,
        write_report,
    )

__all__ = [
    "render_report",
    "write_report",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".html"), __all__,
                                   globals())
