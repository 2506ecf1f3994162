"""k-anonymous microaggregation of a data stream under a delay bound (CASTLE-style): the
stream engine (:mod:`microagg.engines.stream`, :mod:`~microagg.engines.stream_check`,
:mod:`~microagg.engines.stream_csv`), kept here under its public name."""

from __future__ import annotations

from .engines.stream import Published, anonymize_stream
from .engines.stream_check import StreamCheck, StreamChecker, check_stream
from .engines.stream_csv import stream_csv

__all__ = [
    "Published",
    "StreamCheck",
    "StreamChecker",
    "anonymize_stream",
    "check_stream",
    "stream_csv",
]
