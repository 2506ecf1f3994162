"""Read the next chunk of a file while this one is worked on (the file engine's passes)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["prefetched"]

_T = TypeVar("_T")
_END = object()
_WAIT = 0.1  # seconds between looks at the stop flag while the queue is full


class _Reader(Generic[_T]):
    """A thread that puts ``(ok, item)`` entries in a bounded queue: the items, then
    ``_END``, or the exception the iteration raised."""

    def __init__(self, items: Iterable[_T], ahead: int) -> None:
        self.items = items
        self.slots: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=max(1, int(ahead)))
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="microagg-prefetch",
                                       daemon=True)

    def _offer(self, entry: tuple[bool, object]) -> bool:
        while not self.stop.is_set():
            try:
                self.slots.put(entry, timeout=_WAIT)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        iterator = iter(self.items)
        try:
            for item in iterator:
                if not self._offer((True, item)):
                    return
            self._offer((True, _END))
        except BaseException as exc:  # handed to the consumer, raised there
            self._offer((False, exc))
        finally:  # a reader stopped early closes its files here, in its own thread
            close = getattr(iterator, "close", None)
            if close is not None:
                close()


def prefetched(items: Iterable[_T], ahead: int = 1) -> Iterator[_T]:
    """``items`` produced by a thread up to ``ahead`` items ahead of the consumer.

    The readers (pyarrow, pandas' C parser) release the GIL, so the next chunk is read while
    the caller routes, merges or writes this one. An exception in the reader is raised here,
    where the item would have come; closing the iterator early stops the reader after its
    current item. Memory: ``ahead`` more items.

    >>> list(prefetched(range(5)))
    [0, 1, 2, 3, 4]
    """
    reader = _Reader(items, ahead)
    reader.thread.start()
    try:
        while True:
            ok, item = reader.slots.get()
            if not ok:
                assert isinstance(item, BaseException)
                raise item
            if item is _END:
                return
            yield item  # type: ignore[misc]
    finally:
        reader.stop.set()
        reader.thread.join()
