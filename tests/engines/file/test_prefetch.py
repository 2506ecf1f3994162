"""The file engine reads its next chunk in a thread (engines/file/_prefetch.py)."""

from __future__ import annotations

import threading
import time

import pytest

from microagg.engines.file._prefetch import prefetched


def test_items_in_order_and_at_most_one_ahead() -> None:
    made: list[int] = []

    def produce():
        for i in range(6):
            made.append(i)
            yield i

    seen = []
    for item in prefetched(produce()):
        time.sleep(0.05)  # the reader has time to run ahead, but only by one
        assert len(made) - len(seen) <= 3  # this item, the one queued, the one being put
        seen.append(item)
    assert seen == list(range(6))


def test_a_reader_error_is_raised_where_the_item_would_come() -> None:
    def produce():
        yield 1
        raise ValueError("row 7: not a number")

    got = []
    with pytest.raises(ValueError, match="row 7: not a number"):
        for item in prefetched(produce()):
            got.append(item)
    assert got == [1]


def test_stopping_early_stops_and_closes_the_reader() -> None:
    closed = threading.Event()

    def produce():
        try:
            yield from range(1000)
        finally:
            closed.set()

    stream = prefetched(produce())
    assert next(stream) == 0
    stream.close()
    assert closed.wait(2.0)
    assert not any(t.name == "microagg-prefetch" and t.is_alive()
                   for t in threading.enumerate())
