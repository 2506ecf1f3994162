"""Out-of-core release of a file too large for memory: the file engine
(:mod:`microagg.engines.file`), kept here under its public name."""

from __future__ import annotations

from .engines._chunks import iter_chunks
from .engines.file import anonymize_file

__all__ = ["anonymize_file", "iter_chunks"]
