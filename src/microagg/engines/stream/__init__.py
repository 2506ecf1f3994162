"""k-anonymous microaggregation of a data stream under a delay bound (CASTLE-style).

The names are defined in :mod:`.engine` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .engine import (
        Published,
        anonymize_stream,
    )

__all__ = [
    "Published",
    "anonymize_stream",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".engine"), __all__,
                                   globals())
