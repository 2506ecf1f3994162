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
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._groups import group_means
from .._validation import RandomState, check_random_state
from ..exceptions import InternalError, PrivacyViolationError
from ..partition import get_partitioner
from ._stream_input import (
    array_chunk,
    check_params,
    check_scale,
    frame_to_matrix,
    is_chunk,
    rows_to_matrix,
)

__all__ = ["Published", "anonymize_stream"]


class Published(NamedTuple):
    """One released record, as yielded by :func:`anonymize_stream`.

    The stream's output order is the publication order, not the arrival order; ``arrival``
    says which input record this is.
    """

    arrival: int
    """Arrival index of the record in the input stream (0-based)."""
    values: tuple[float, ...]
    """The published values: its cluster's representative (one tuple shared by the cluster)."""
    cluster: int
    """Published cluster, numbered 0, 1, ... in publication order."""
    delay: int
    """Records that arrived after this one before it was published (``<= delay``)."""



# ------------------------------------------------------------------------------------------
# the engine: buffer, flushes, reuse


@dataclass
class _Batch:
    """Records published by one flush, in arrival order."""

    index: NDArray[np.int64]
    cluster: NDArray[np.int64]
    values: NDArray[np.float64]  # (r, p) representatives
    delay: NDArray[np.int64]
    payload: NDArray[Any] | None
    reps: dict[int, tuple[float, ...]]  # cluster -> representative tuple
    reused: bool = False  # the clusters were published before (the stream's tail)


class _Engine:
    """The stream state. Inputs are assumed validated (finite float64 rows of width p)."""

    def __init__(self, p: int, *, k: int, delay: int, flush_age: int, method: str,
                 scale: str | NDArray[np.float64], rng: np.random.Generator,
                 payload_width: int = 0) -> None:
        if isinstance(scale, np.ndarray) and scale.shape != (p,):
            raise ValueError(
                f"The 'scale' parameter has {scale.shape[0]} entries but the records have "
                f"{p} columns."
            )
        self.p, self.k, self.delay, self.flush_age = p, k, delay, flush_age
        self.partitioner = get_partitioner(method)
        self.scale = scale
        self.rng = rng
        cap = delay + 1
        self.buf = np.empty((cap, p), dtype=np.float64)
        self.idx = np.empty(cap, dtype=np.int64)
        self.payload = np.empty((cap, payload_width), dtype=object) if payload_width else None
        self.m = 0  # buffered records
        self.n_seen = 0  # arrivals so far
        self.n_clusters = 0
        # running column statistics (Chan et al.'s pairwise update): count, mean, M2
        self.mean = np.zeros(p)
        self.m2 = np.zeros(p)
        # recent published clusters, for reuse at the end: (id, representative)
        self.recent: deque[tuple[int, NDArray[np.float64]]] = deque(
            maxlen=(delay + 1) // k + 1)

    # -- arrivals ------------------------------------------------------------------------

    def room(self) -> int:
        """Arrivals that can be taken before the next flush is due (>= 1)."""
        deadline = (self.idx[0] if self.m else self.n_seen) + self.delay
        return int(deadline - self.n_seen + 1)

    def push(self, X: NDArray[np.float64], payload: NDArray[Any] | None = None
             ) -> Iterator[_Batch]:
        """Take the rows of ``X`` in order; yield the batches published meanwhile."""
        pos, r = 0, X.shape[0]
        while pos < r:
            take = min(r - pos, self.room())
            part = X[pos:pos + take]
            self.buf[self.m:self.m + take] = part
            self.idx[self.m:self.m + take] = np.arange(self.n_seen, self.n_seen + take)
            if self.payload is not None and payload is not None:
                self.payload[self.m:self.m + take] = payload[pos:pos + take]
            self._update_stats(part)
            self.m += take
            self.n_seen += take
            pos += take
            if self.room() == 0:
                yield self._flush(final=False)

    def _update_stats(self, part: NDArray[np.float64]) -> None:
        n_a, n_b = self.n_seen, part.shape[0]
        mean_b = part.mean(axis=0)
        m2_b = ((part - mean_b) ** 2).sum(axis=0)
        delta = mean_b - self.mean
        n = n_a + n_b
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta**2 * (n_a * n_b / n)

    def _scales(self) -> NDArray[np.float64]:
        if isinstance(self.scale, np.ndarray):
            return self.scale
        if self.scale == "none" or self.n_seen == 0:
            return np.ones(self.p)
        std = np.sqrt(self.m2 / self.n_seen)
        return np.where(std > 0, std, 1.0)

    # -- publication ---------------------------------------------------------------------

    def _flush(self, *, final: bool) -> _Batch:
        """Partition the buffer and publish its old groups (all groups when ``final``)."""
        m, k = self.m, self.k
        t = self.n_seen - 1  # arrival index of the latest record read
        X = self.buf[:m]
        idx = self.idx[:m]
        if m < k:
            if not final:  # a kept group has >= k records, else the buffer is delay + 1
                raise InternalError(f"stream flush with {m} < k={k} buffered records")
            return self._reuse(t)
        scaled = X / self._scales()
        labels = np.asarray(self.partitioner(scaled, k, random_state=self.rng), dtype=np.intp)
        sizes = np.bincount(labels)
        if sizes.min() < k:
            raise PrivacyViolationError(
                f"The partitioner {self.partitioner.name!r} returned a group of "
                f"{int(sizes.min())} < k={k} records; nothing of it was published."
            )
        if final:
            publish = np.ones(m, dtype=bool)
        else:
            old = (t - idx) >= self.flush_age
            chosen = np.zeros(sizes.size, dtype=bool)
            chosen[labels[old]] = True
            publish = chosen[labels]
        # clusters numbered by their oldest member (the buffer is in arrival order)
        pub_labels = labels[publish]
        groups, first = np.unique(pub_labels, return_index=True)
        groups = groups[np.argsort(first, kind="stable")]
        cluster_of = np.full(sizes.size, -1, dtype=np.int64)
        cluster_of[groups] = np.arange(self.n_clusters, self.n_clusters + groups.size)
        means = group_means(X, labels)
        reps: dict[int, tuple[float, ...]] = {}
        for g in groups:
            c = int(cluster_of[g])
            rep = means[g].copy()
            rep.flags.writeable = False
            reps[c] = tuple(rep.tolist())
            self.recent.append((c, rep))
        self.n_clusters += groups.size
        # output grouped by cluster (members in arrival order): the position of a record
        # in the batch says no more about its arrival than its cluster does
        rows = np.flatnonzero(publish)
        rows = rows[np.argsort(cluster_of[labels[rows]], kind="stable")]
        batch = _Batch(
            index=idx[rows].copy(),
            cluster=cluster_of[labels[rows]],
            values=means[labels[rows]],
            delay=t - idx[rows],
            payload=None if self.payload is None else self.payload[rows].copy(),
            reps=reps,
        )
        keep = ~publish
        n_keep = int(keep.sum())
        self.buf[:n_keep] = X[keep]
        self.idx[:n_keep] = idx[keep]
        if self.payload is not None:
            self.payload[:n_keep] = self.payload[:m][keep]
        self.m = n_keep
        return batch

    def _reuse(self, t: int) -> _Batch:
        """Publish the < k buffered records with the nearest recent cluster's representative."""
        m = self.m
        if not self.recent:
            raise ValueError(
                f"n_samples={self.n_seen} should be >= k={self.k} in anonymize_stream: the "
                "stream ended before a group of k records could be formed, so nothing can "
                "be published."
            )
        ids = np.array([c for c, _ in self.recent], dtype=np.int64)
        R = np.stack([rep for _, rep in self.recent])
        s = self._scales()
        X = self.buf[:m]
        d = (((X[:, None, :] - R[None, :, :]) / s) ** 2).sum(axis=2)
        near = np.argmin(d, axis=1)
        batch = _Batch(
            index=self.idx[:m].copy(),
            cluster=ids[near],
            values=R[near],
            delay=t - self.idx[:m],
            payload=None if self.payload is None else self.payload[:m].copy(),
            reps={int(ids[j]): tuple(R[j].tolist()) for j in np.unique(near)},
            reused=True,
        )
        self.m = 0
        return batch

    def close(self) -> Iterator[_Batch]:
        """Publish everything still buffered."""
        if self.m:
            yield self._flush(final=True)


# ------------------------------------------------------------------------------------------
# the face


def _batches(rows: Any, *, k: int, delay: int, flush_age: int, method: str,
             scale: str | NDArray[np.float64], rng: np.random.Generator,
             ) -> Iterator[_Batch]:
    """The engine driven by ``rows``: single records, or chunks (DataFrames / 2-d arrays)."""
    source: Iterator[Any] = iter([rows]) if is_chunk(rows) else iter(rows)
    try:
        first = next(source)
    except StopIteration:
        return
    source = itertools.chain([first], source)

    def make(p: int) -> _Engine:
        return _Engine(p, k=k, delay=delay, flush_age=flush_age, method=method, scale=scale,
                       rng=rng)

    engines: list[_Engine] = []  # the engine, made at the first record (its width)
    yield from (_chunk_batches if is_chunk(first) else _record_batches)(source, make, engines)
    if engines:
        yield from engines[0].close()


def _chunk_batches(source: Iterator[Any], make: Callable[[int], _Engine],
                   engines: list[_Engine]) -> Iterator[_Batch]:
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


def _record_batches(source: Iterator[Any], make: Callable[[int], _Engine],
                    engines: list[_Engine]) -> Iterator[_Batch]:
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
    >>> from microagg.stream import check_stream
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
        yield from _checked(batch, k)


def _checked(batch: _Batch, k: int) -> list[Published]:
    """The batch as :class:`Published` records, after re-counting its new clusters (>= k)."""
    if not batch.reused and batch.cluster.size:
        ids, counts = np.unique(batch.cluster, return_counts=True)
        if counts.min() < k:
            c = int(ids[np.argmin(counts)])
            raise PrivacyViolationError(
                f"Cluster {c} was about to be published with {int(counts.min())} < k={k} "
                "records; nothing of it was yielded."
            )
    reps = batch.reps
    return [Published(i, reps[c], c, d) for i, c, d in
            zip(batch.index.tolist(), batch.cluster.tolist(), batch.delay.tolist(),
                strict=True)]
