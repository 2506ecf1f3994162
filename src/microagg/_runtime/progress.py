"""Progress of long partitions: a callback a face sets for the duration of a run.

A face (the CLI) passes ``progress=`` to an engine, which listens with :func:`reporting`;
a partitioner that can measure its progress (exact MDAV and MDAV-1, :mod:`..partition.mdav`)
asks :func:`current_progress` for the callback and calls ``progress(grouped, n_samples)``
as records are grouped. The partitioner contract (``f(X, k, *, random_state, **params)``)
is unchanged: partitioners that measure nothing ignore it. A partitioner run block by block
(``--blocking``, :func:`~microagg.partition.blocking.microaggregate_blocks`) does not report
from inside the blocks (each would start again from 0): the blocked run reports 0 when the
blocks start, then the records of every block done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["PROGRESS_MIN_ROWS", "Progress", "current_progress", "reporting"]

Progress = Callable[[int, int], None]
"""``progress(grouped, n_samples)``: records grouped so far, out of ``n_samples``."""

PROGRESS_MIN_ROWS = 20_000
"""Inputs smaller than this run in one kernel call and report nothing: exact MDAV on them
takes about a second at most, less than a progress display's delay."""

_CURRENT: ContextVar[Progress | None] = ContextVar("microagg_progress", default=None)


def current_progress() -> Progress | None:
    """The callback listening now, or ``None``."""
    return _CURRENT.get()


@contextmanager
def reporting(progress: Progress | None) -> Iterator[None]:
    """Make ``progress`` the callback for the duration of the block (``None``: silence)."""
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)
