"""The file engine: release a file too large for memory: stream, block, microaggregate block
by block, write in the input's order (seed 001, section 2.6).

The names are defined in :mod:`.engine` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .engine import (
        anonymize_file,
        iter_chunks,
        run_file,
    )

__all__ = [
    "anonymize_file",
    "iter_chunks",
    "run_file",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".engine"), __all__,
                                   globals())
