"""k-anonymous microaggregation of a data stream under a delay bound (CASTLE-style).

Records arrive one at a time. Each is held in a buffer until it is published as a member of
a group of at least ``k`` records; the group's representative (the mean of its members, in
the original units) is computed once, at publication, and never recomputed. A record is
published at the latest ``delay`` arrivals after its own.

How it works (seed 001, section 2.5; Cao, Carminati, Ferrari & Tan 2011):

* the buffer holds the unpublished records, never more than ``delay + 1``;
* when the oldest buffered record reaches age ``delay`` (``delay`` records arrived after it),
  the buffer is partitioned with MDAV (or another registered method) on distances scaled
  with statistics of the records seen so far (never of future ones), and every group
  holding a record at least ``flush_age`` arrivals old is published (by default
  ``flush_age=0``: the whole buffer, which gave the lowest information loss in every test,
  see ``docs/topics/streams.md``); other groups are dissolved and wait for more neighbours;
* at the end of the stream the buffer is partitioned and published whole; if fewer than
  ``k`` records are left they are published with the representative of the nearest recently
  published cluster (CASTLE's *reuse*), whose published class then holds more than ``k``
  records.

A kept group has at least ``k`` records, and an empty buffer fills to ``delay + 1 >= k``
before its first record expires, so every flush but the last has ``k`` records or more:
reuse is needed only at the end of the stream.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ..._base.validation import RandomState, check_random_state
from ...partition import get_partitioner
from ._buffer import Batch, Published, StreamEngine, checked_records
from ._input import (
    array_chunk,
    check_params,
    check_scale,
    frame_to_matrix,
    is_chunk,
    rows_to_matrix,
)

__all__ = ["Published", "anonymize_stream"]


def _batches(rows: Any, *, k: int, delay: int, flush_age: int, method: str,
             scale: str | NDArray[np.float64], rng: np.random.Generator,
             ) -> Iterator[Batch]:
    """The engine driven by ``rows``: single records, or chunks (DataFrames / 2-d arrays)."""
    source: Iterator[Any] = iter([rows]) if is_chunk(rows) else iter(rows)
    try:
        first = next(source)
    except StopIteration:
        return
    source = itertools.chain([first], source)

    def make(p: int) -> StreamEngine:
        return StreamEngine(p, k=k, delay=delay, flush_age=flush_age, method=method, scale=scale,
                       rng=rng)

    engines: list[StreamEngine] = []  # the engine, made at the first record (its width)
    yield from (_chunk_batches if is_chunk(first) else _record_batches)(source, make, engines)
    if engines:
        yield from engines[0].close()


def _chunk_batches(source: Iterator[Any], make: Callable[[int], StreamEngine],
                   engines: list[StreamEngine]) -> Iterator[Batch]:
    """Chunks (DataFrames or 2-d arrays) pushed into the engine."""
    names: list[str] | None = None
    for chunk in source:
        engine = engines[0] if engines else None
        start = 0 if engine is None else engine.n_seen
        if isinstance(chunk, pd.DataFrame):
            X = frame_to_matrix(chunk, start, names)
            names = [str(c) for c in chunk.columns]
        elif isinstance(chunk, np.ndarray) and chunk.ndim == 2:
            X = array_chunk(chunk, start, None if engine is None else engine.p)
        else:
            raise TypeError(
                f"The chunk starting at record {start} is a {type(chunk).__name__}; a "
                "stream of chunks must hold only DataFrames or 2-d arrays."
            )
        if X.shape[0] == 0:
            continue
        if engine is None:
            engines.append(make(X.shape[1]))
        yield from engines[0].push(X)


def _record_batches(source: Iterator[Any], make: Callable[[int], StreamEngine],
                    engines: list[StreamEngine]) -> Iterator[Batch]:
    """Single records pushed into the engine, as many at a time as it has room for."""
    while True:
        engine = engines[0] if engines else None
        need = 1 if engine is None else engine.room()
        start = 0 if engine is None else engine.n_seen
        batch = list(itertools.islice(source, need))
        if not batch:
            break
        X = rows_to_matrix(batch, start, None if engine is None else engine.p)
        if engine is None:
            engines.append(make(X.shape[1]))
        yield from engines[0].push(X)


def anonymize_stream(rows: Iterable[Any] | pd.DataFrame | NDArray[Any], k: int, *,
                     delay: int, flush_age: int = 0, method: str = "mdav",
                     scale: str | ArrayLike = "running", random_state: RandomState = None,
                     ) -> Iterator[Published]:
    """Microaggregate a stream of records, publishing each within ``delay`` arrivals.

    A generator: it reads ``rows`` lazily and yields every record when it is published, in
    groups of at least ``k`` records that share one representative (the group mean, fixed at
    publication and never recomputed).

    Parameters
    ----------
    rows : iterable of records, or of chunks
        Either records (sequences or 1-d arrays of numbers, all of one width), or chunks
        (pandas DataFrames, e.g. ``pd.read_csv(..., chunksize=...)``, or 2-d arrays); a
        single DataFrame or 2-d array is one chunk. Every record must be finite and numeric;
        the first bad record stops the stream with an error naming its arrival index and
        column (records published before it stay published; buffered ones are not).
    k : int
        Minimum group size, ``k >= 2``.
    delay : int
        Delay bound, ``delay >= k - 1``: a record is published before the record ``delay``
        places after it is read. Also the buffer size (memory is O(delay * n_features)).
    flush_age : int, default=0
        A flush publishes every group of the buffer's partition that holds a record at least
        this many arrivals old, in ``[0, delay]``; the others wait to be regrouped with later
        arrivals. 0 publishes the whole buffer (a tumbling window of ``delay + 1`` records):
        the fastest, and the lowest information loss we measured. Larger values publish
        fewer groups per flush (more flushes, ``delay`` the most).
    method : str, default="mdav"
        Partitioner of the buffer (a key of :data:`microagg.partition.PARTITIONERS`).
    scale : "running", "none" or array-like of shape (n_features,), default="running"
        Scaling of the distances (never of the published values): the standard deviations
        of every record read so far (never of future ones), none, or fixed column scales.
    random_state : None, int or numpy.random.Generator, default=None
        Seed for randomized methods (MDAV is deterministic).

    Yields
    ------
    Published
        ``(arrival, values, cluster, delay)``: the record's arrival index, its published
        values (a tuple of floats, its cluster's representative), its cluster number and its
        delay. The order is the publication order.

    Raises
    ------
    ValueError
        A bad parameter, a bad record (wrong width, non-finite value), or a non-empty
        stream of fewer than ``k`` records (nothing can be published). An empty stream
        yields nothing.
    TypeError
        A non-numeric record.
    PrivacyViolationError
        A group under ``k`` was about to be published (a bug; nothing of it is yielded).

    Notes
    -----
    Guarantees: every record is published exactly once, at most ``delay`` arrivals after its
    own (also at the end of the stream); every published representative is shared by at
    least ``k`` records; representatives never change. When fewer than ``k`` records remain
    at the end of the stream, they are published with the representative of the nearest of
    the last ``(delay + 1) // k + 1`` published clusters (same cluster number): that class
    then holds more than ``k`` records and its representative is no longer exactly their
    mean. Verify a whole output with :func:`check_stream`.

    The arrival index is for the data holder: anyone who knows when a person's record
    arrived finds its published record by it, whatever ``k``; drop it (and the delay, which
    gives it back) before passing records to a third party, as :func:`stream_csv` does by
    default.

    References
    ----------
    Cao, J., Carminati, B., Ferrari, E. and Tan, K.-L. "CASTLE: continuously anonymizing
    data streams." IEEE Trans. Dependable Secure Comput. 8 (2011), 337-352 (seed 001,
    section 2.5).

    Examples
    --------
    >>> rows = [[float(i), float(i % 3)] for i in range(10)]
    >>> out = list(anonymize_stream(rows, 3, delay=4))
    >>> sorted(r.arrival for r in out) == list(range(10))
    True
    >>> max(r.delay for r in out) <= 4
    True
    >>> from microagg.engines.stream.check import check_stream
    >>> check_stream(out, k=3, delay=4).k >= 3
    True
    """
    k, delay, age = check_params(k, delay, flush_age, "anonymize_stream")
    scale_ = check_scale(scale, "anonymize_stream")
    get_partitioner(method)  # an unknown name fails now, listing the valid ones
    rng = check_random_state(random_state)
    return _iterate(rows, k=k, delay=delay, flush_age=age, method=method, scale=scale_, rng=rng)


def _iterate(rows: Any, *, k: int, delay: int, flush_age: int, method: str,
             scale: str | NDArray[np.float64], rng: np.random.Generator) -> Iterator[Published]:
    for batch in _batches(rows, k=k, delay=delay, flush_age=flush_age, method=method,
                          scale=scale, rng=rng):
        yield from checked_records(batch, k)


