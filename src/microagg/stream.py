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

import csv
import gzip
import io
import itertools
import math
import numbers
import os
import pathlib
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ._groups import group_means
from ._validation import RandomState, check_random_state
from .exceptions import InternalError, PrivacyViolationError, SchemaError
from .io import _atomic_write, check_output_path
from .partition import get_partitioner

__all__ = [
    "Published",
    "StreamCheck",
    "StreamChecker",
    "anonymize_stream",
    "check_stream",
    "stream_csv",
]

_SCALES = ("running", "none")


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


@dataclass(frozen=True)
class StreamCheck:
    """Levels achieved by a published stream, as re-derived by :func:`check_stream`."""

    k: int
    """Smallest number of records sharing one published value (the achieved k)."""
    max_delay: int
    """Largest delay of a published record (the achieved delay bound)."""
    n_samples: int
    """Records published (each exactly once)."""
    n_clusters: int
    """Clusters published."""
    n_reused: int
    """Records published with the representative of an earlier cluster (the stream's tail)."""


# ------------------------------------------------------------------------------------------
# parameters


def _check_int(value: Any, *, name: str, minimum: int, rule: str, caller: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be an int {rule}. "
            f"Got {value!r} of type {type(value).__name__} instead."
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"The {name!r} parameter of {caller} must be an int {rule}. "
                         f"Got {value} instead.")
    return value


def _check_params(k: Any, delay: Any, flush_age: Any, caller: str) -> tuple[int, int, int]:
    k = _check_int(k, name="k", minimum=2, rule=">= 2", caller=caller)
    delay = _check_int(
        delay, name="delay", minimum=k - 1,
        rule=f">= k - 1 = {k - 1} (the first record must be published within 'delay' "
             "arrivals, in a group of k)", caller=caller)
    if flush_age is None:
        return k, delay, 0
    flush_age = _check_int(flush_age, name="flush_age", minimum=0,
                           rule=f"in [0, delay] = [0, {delay}]", caller=caller)
    if flush_age > delay:
        raise ValueError(
            f"The 'flush_age' parameter of {caller} must be an int in [0, delay] = "
            f"[0, {delay}]. Got {flush_age} instead."
        )
    return k, delay, flush_age


def _check_scale(scale: Any, caller: str) -> str | NDArray[np.float64]:
    if isinstance(scale, str):
        if scale not in _SCALES:
            raise ValueError(
                f"The 'scale' parameter of {caller} must be one of {', '.join(_SCALES)} or an "
                f"array of positive column scales. Got {scale!r} instead."
            )
        return scale
    arr = np.asarray(scale)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not np.isfinite(arr).all() \
            or not (arr > 0).all():
        raise ValueError(
            f"The 'scale' parameter of {caller} must be one of {', '.join(_SCALES)} or a 1-d "
            f"array of finite positive column scales. Got {scale!r} instead."
        )
    return np.ascontiguousarray(arr, dtype=np.float64)


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
# input validation


def _row_error(row: Any, position: int, p: int | None) -> TypeError | ValueError | None:
    """Why ``row`` (arrival ``position``) is not a finite numeric record of width ``p``."""
    if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
        return TypeError(f"Record {position} must be a sequence of numbers. "
                         f"Got {type(row).__name__} instead.")
    values = list(row)
    if p is not None and len(values) != p:
        return ValueError(f"Record {position} has {len(values)} values; expected {p} "
                          "(the width of the first record).")
    if not values:
        return ValueError(f"Record {position} is empty; at least one column is needed.")
    for j, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return TypeError(f"Record {position}, column {j}: {v!r} of type "
                             f"{type(v).__name__} is not a number.")
        if not math.isfinite(float(v)):
            return ValueError(f"Record {position}, column {j}: {float(v)!r} is not finite. "
                              "Impute or drop it first; microagg never imputes silently.")
    return None


def _rows_to_matrix(rows: Sequence[Any], start: int, p: int | None) -> NDArray[np.float64]:
    """Stack rows (arrivals ``start, start + 1, ...``) into a validated (r, p) float64 matrix.

    One ``np.asarray`` for the common case; a bad batch is then checked row by row so that
    the error names the first bad record and column.
    """
    arr: NDArray[Any] | None
    try:
        arr = np.asarray(rows)
    except (ValueError, TypeError):
        arr = None
    if (arr is not None and arr.ndim == 2 and arr.dtype.kind in "iuf"
            and (p is None or arr.shape[1] == p) and arr.shape[1] > 0):
        out = np.ascontiguousarray(arr, dtype=np.float64)
        finite = np.isfinite(out)
        if finite.all():
            return out
    width = p
    for i, row in enumerate(rows):
        error = _row_error(row, start + i, width)
        if error is not None:
            raise error
        width = len(list(row))
    raise InternalError("a batch of rows failed to stack but every row checks")  # pragma: no cover


def _frame_to_matrix(frame: pd.DataFrame, start: int, names: list[str] | None
                     ) -> NDArray[np.float64]:
    """Validate a DataFrame chunk (numeric, finite, same columns as the first chunk)."""
    cols = [str(c) for c in frame.columns]
    if names is not None and cols != names:
        raise SchemaError(
            f"The chunk starting at record {start} has columns {cols}; expected {names} "
            "(the columns of the first chunk)."
        )
    for c in frame.columns:
        col = frame[c]
        if col.dtype.kind not in "iuf":
            numeric = pd.to_numeric(col, errors="coerce")
            bad = np.flatnonzero(numeric.isna().to_numpy() & col.notna().to_numpy())
            if col.dtype.kind == "b" or not bad.size:
                bad = np.arange(len(col)) if col.dtype.kind == "b" else bad
            if bad.size:
                i = int(bad[0])
                v = col.iloc[i]
                if isinstance(v, str) and not v.strip():
                    raise ValueError(f"Record {start + i}, column {str(c)!r}: missing value. "
                                     "Impute or drop it first; microagg never imputes "
                                     "silently.")
                raise TypeError(f"Record {start + i}, column {str(c)!r}: {v!r} of type "
                                f"{type(v).__name__} is not a number.")
            if col.isna().any():
                i = int(np.flatnonzero(col.isna().to_numpy())[0])
                raise ValueError(f"Record {start + i}, column {str(c)!r}: missing value. "
                                 "Impute or drop it first; microagg never imputes silently.")
    out = np.ascontiguousarray(frame.to_numpy(dtype=np.float64, na_value=np.nan))
    if out.ndim != 2 or out.shape[1] == 0:
        raise ValueError(f"The chunk starting at record {start} has no columns.")
    finite = np.isfinite(out)
    if not finite.all():
        i, j = map(int, np.argwhere(~finite)[0])
        raise ValueError(f"Record {start + i}, column {cols[j]!r}: {float(out[i, j])!r} is not "
                         "finite. Impute or drop it first; microagg never imputes silently.")
    return out


def _array_chunk(chunk: NDArray[Any], start: int, p: int | None) -> NDArray[np.float64]:
    if chunk.dtype.kind not in "iuf":
        raise TypeError(f"The chunk starting at record {start} must be numeric. "
                        f"Got dtype {chunk.dtype} instead.")
    if p is not None and chunk.shape[1] != p:
        raise ValueError(f"The chunk starting at record {start} has {chunk.shape[1]} columns; "
                         f"expected {p} (the width of the first chunk).")
    return _rows_to_matrix(chunk, start, p)  # type: ignore[arg-type]


def _is_chunk(obj: Any) -> bool:
    return isinstance(obj, pd.DataFrame) or (isinstance(obj, np.ndarray) and obj.ndim == 2)


# ------------------------------------------------------------------------------------------
# public API


def _batches(rows: Any, *, k: int, delay: int, flush_age: int, method: str,
             scale: str | NDArray[np.float64], rng: np.random.Generator,
             ) -> Iterator[_Batch]:
    """The engine driven by ``rows``: single records, or chunks (DataFrames / 2-d arrays)."""
    source: Iterator[Any] = iter([rows]) if _is_chunk(rows) else iter(rows)
    try:
        first = next(source)
    except StopIteration:
        return
    source = itertools.chain([first], source)
    engine: _Engine | None = None
    names: list[str] | None = None

    def make(p: int) -> _Engine:
        return _Engine(p, k=k, delay=delay, flush_age=flush_age, method=method, scale=scale,
                       rng=rng)

    if _is_chunk(first):
        for chunk in source:
            start = 0 if engine is None else engine.n_seen
            if isinstance(chunk, pd.DataFrame):
                X = _frame_to_matrix(chunk, start, names)
                names = [str(c) for c in chunk.columns]
            elif isinstance(chunk, np.ndarray) and chunk.ndim == 2:
                X = _array_chunk(chunk, start, None if engine is None else engine.p)
            else:
                raise TypeError(
                    f"The chunk starting at record {start} is a {type(chunk).__name__}; a "
                    "stream of chunks must hold only DataFrames or 2-d arrays."
                )
            if X.shape[0] == 0:
                continue
            if engine is None:
                engine = make(X.shape[1])
            yield from engine.push(X)
    else:
        while True:
            need = 1 if engine is None else engine.room()
            start = 0 if engine is None else engine.n_seen
            batch = list(itertools.islice(source, need))
            if not batch:
                break
            X = _rows_to_matrix(batch, start, None if engine is None else engine.p)
            if engine is None:
                engine = make(X.shape[1])
            yield from engine.push(X)
    if engine is not None:
        yield from engine.close()


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
    >>> check_stream(out, k=3, delay=4).k >= 3
    True
    """
    k, delay, age = _check_params(k, delay, flush_age, "anonymize_stream")
    scale_ = _check_scale(scale, "anonymize_stream")
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


# ------------------------------------------------------------------------------------------
# verification


class StreamChecker:
    """Re-check a published stream record by record; :meth:`result` gives the levels.

    Use it to verify an output as it goes by (memory: one bit per record, plus one entry
    per cluster); :func:`check_stream` wraps it for a whole output. It relies only on the
    published records: the ``arrival`` index, ``values``, ``cluster`` and ``delay`` fields,
    in publication order.

    Parameters
    ----------
    k : int
        Required minimum class size.
    delay : int
        Required delay bound.
    """

    def __init__(self, *, k: int, delay: int) -> None:
        self.k = _check_int(k, name="k", minimum=2, rule=">= 2", caller="StreamChecker")
        self.delay = _check_int(delay, name="delay", minimum=0, rule=">= 0",
                                caller="StreamChecker")
        self._seen = bytearray()
        self._count = 0
        self._last_time = -1
        self._max_delay = 0
        self._n_reused = 0
        # cluster -> [values, publication time of its first records, size at that time]
        self._clusters: dict[int, list[Any]] = {}
        # published values -> [time the class appeared, size at that time]
        self._classes: dict[tuple[float, ...], list[int]] = {}

    def _fail(self, message: str) -> None:
        raise PrivacyViolationError(f"Published stream check failed: {message}")

    def update(self, record: Published) -> None:
        """Check one published record (in publication order)."""
        index, values, cluster, delay = (int(record[0]), tuple(record[1]), int(record[2]),
                                         int(record[3]))
        if index < 0:
            self._fail(f"record with negative index {index}.")
        if not 0 <= delay <= self.delay:
            self._fail(f"record {index} was published with delay {delay}, outside "
                       f"[0, {self.delay}].")
        time = index + delay
        if time < self._last_time:
            self._fail(f"record {index} (published after arrival {time}) comes after a "
                       f"record published after arrival {self._last_time}: the output is "
                       "not in publication order.")
        self._last_time = time
        if index >= len(self._seen):
            self._seen.extend(bytes(max(index + 1 - len(self._seen), len(self._seen))))
        if self._seen[index]:
            self._fail(f"record {index} was published twice.")
        self._seen[index] = 1
        self._count += 1
        self._max_delay = max(self._max_delay, delay)
        entry = self._clusters.get(cluster)
        if entry is None:
            self._clusters[cluster] = [values, time, 1]
        else:
            if entry[0] != values:
                self._fail(f"cluster {cluster} changed its representative from {entry[0]} "
                           f"to {values} (record {index}).")
            if entry[1] == time:
                entry[2] += 1
            else:
                self._n_reused += 1
        cls = self._classes.get(values)
        if cls is None:
            self._classes[values] = [time, 1]
        elif cls[0] == time:
            cls[1] += 1

    def result(self, n_samples: int | None = None) -> StreamCheck:
        """Levels of everything checked so far; raises if a guarantee does not hold.

        ``n_samples`` (default: the number of records checked) is the length of the input
        stream: every arrival index ``0 .. n_samples - 1`` must have been published.
        """
        n = self._count if n_samples is None else int(n_samples)
        inside = sum(self._seen[:n])
        if inside != n or self._count != n:
            self._fail(f"{self._count} records were published for a stream of {n}: "
                       f"{n - inside} missing, {self._count - inside} beyond its end.")
        if self._count and self._last_time > n - 1:
            self._fail(f"a record was published after arrival {self._last_time}, beyond the "
                       f"end of the stream ({n} records).")
        small = [(c, e[2]) for c, e in self._clusters.items() if e[2] < self.k]
        if small:
            c, size = min(small, key=lambda item: item[1])
            self._fail(f"{len(small)} cluster(s) were first published with fewer than "
                       f"k={self.k} records (cluster {c}: {size}).")
        achieved = min((v[1] for v in self._classes.values()), default=0)
        if self._count and achieved < self.k:
            self._fail(f"a published value was shared by {achieved} < k={self.k} records "
                       "when it appeared.")
        return StreamCheck(k=achieved, max_delay=self._max_delay, n_samples=self._count,
                           n_clusters=len(self._clusters), n_reused=self._n_reused)


def check_stream(published: Iterable[Published], *, k: int, delay: int,
                 n_samples: int | None = None) -> StreamCheck:
    """Re-derive the k and delay levels of a published stream; raise if they are not met.

    Parameters
    ----------
    published : iterable of Published
        The whole output of :func:`anonymize_stream`, in publication order (or any records
        ``(arrival, values, cluster, delay)``).
    k : int
        Required minimum number of records sharing each published value, counted when the
        value first appears (later reuse only adds to it).
    delay : int
        Required delay bound.
    n_samples : int, optional
        Length of the input stream; default the number of published records.

    Returns
    -------
    StreamCheck
        Achieved k, largest delay, counts of records, clusters and reused records.

    Raises
    ------
    PrivacyViolationError
        A record is missing, published twice or out of publication order; a delay exceeds
        the bound; a cluster's values change; a cluster or a published value has fewer
        than ``k`` records when it is first published.

    Examples
    --------
    >>> out = [Published(0, (1.0,), 0, 1), Published(1, (1.0,), 0, 0)]
    >>> check_stream(out, k=2, delay=1)
    StreamCheck(k=2, max_delay=1, n_samples=2, n_clusters=1, n_reused=0)
    """
    checker = StreamChecker(k=k, delay=delay)
    for record in published:
        checker.update(record)
    return checker.result(n_samples)


# ------------------------------------------------------------------------------------------
# CSV in, CSV out


def _open_source(source: Any) -> tuple[Any, bool]:
    """``(what pandas reads, is_path)`` for a path, ``"-"`` (stdin) or a text handle."""
    if isinstance(source, str) and source == "-":
        return sys.stdin, False
    if isinstance(source, (str, os.PathLike)):
        path = pathlib.Path(source).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"The 'source' file {str(path)!r} does not exist.")
        return path, True
    return source, False


def stream_csv(source: str | os.PathLike[str] | IO[str], destination: str | os.PathLike[str]
               | IO[str], *, columns: Sequence[str], k: int, delay: int,
               keep: Sequence[str] = (), sep: str = ",", chunk_rows: int = 10_000,
               flush_age: int = 0, method: str = "mdav",
               scale: str | ArrayLike = "running", random_state: RandomState = None,
               index_column: str | None = None, cluster_column: str | None = None,
               delay_column: str | None = None) -> StreamCheck:
    """Microaggregate a CSV stream into a CSV file, reading and writing incrementally.

    The input is read ``chunk_rows`` rows at a time; each published record is written as
    soon as it is released, in publication order, grouped by cluster: the optional arrival
    index, the ``columns`` (published values), the ``keep`` columns (copied verbatim), then
    the optional cluster and delay columns. The output is re-checked as it is written
    (:class:`StreamChecker`).

    The arrival index is not written by default: whoever knows when a person's record
    arrived would find its row by that index (and read its ``keep`` columns), whatever
    ``k``. Without it, rows are shuffled within each cluster (seeded by ``random_state``),
    so the row order does not reveal the arrival order either. The delay column reveals the
    arrival index too (arrival = publication - delay).

    Parameters
    ----------
    source : path, "-" or text handle
        CSV with a header row; ``"-"`` reads standard input. ``.gz`` paths are decompressed.
    destination : path, "-" or text handle
        A path is written to a temporary file beside it and renamed onto it at the end
        (nothing is left on failure); ``"-"`` (standard output) or a handle is written as
        the stream goes and flushed after each publication, so a failure leaves what was
        already published there.
    columns : sequence of str
        The numeric quasi-identifiers to microaggregate.
    k, delay, flush_age, method, scale, random_state
        As in :func:`anonymize_stream`.
    keep : sequence of str, default=()
        Other columns published unchanged (e.g. sensitive attributes); every other input
        column is dropped. Never list identifiers here.
    sep : str, default=","
        Field separator of input and output.
    chunk_rows : int, default=10_000
        Rows read at a time (smaller means lower latency on a live pipe).
    index_column : str, optional
        When given, write the arrival index (0-based) first under that name, to join the
        output back to the input; keep such a file with the data holder (see above).
    cluster_column, delay_column : str, optional
        When given, also write each record's cluster number / delay under that name.

    Returns
    -------
    StreamCheck
        The levels achieved by the written output.

    Raises
    ------
    SchemaError
        A listed column is missing from the header (the valid names are listed), or a column
        is listed twice.
    ValueError, TypeError
        As :func:`anonymize_stream`, with the arrival index (the data row number, 0-based)
        and the column of a bad value.
    """
    caller = "stream_csv"
    k, delay, age = _check_params(k, delay, flush_age, caller)
    scale_ = _check_scale(scale, caller)
    get_partitioner(method)
    rng = check_random_state(random_state)
    shuffle = np.random.default_rng(rng.integers(0, 2**63 - 1))  # own stream: same groups
    chunk_rows = _check_int(chunk_rows, name="chunk_rows", minimum=1, rule=">= 1",
                            caller=caller)
    columns, keep = [str(c) for c in columns], [str(c) for c in keep]
    if not columns:
        raise SchemaError("The 'columns' parameter of stream_csv must name at least one "
                          "column.")
    out_names = [*([] if index_column is None else [index_column]), *columns, *keep,
                 *(c for c in (cluster_column, delay_column) if c is not None)]
    dupes = sorted({c for c in out_names if out_names.count(c) > 1})
    if dupes:
        raise SchemaError(f"Column name(s) {', '.join(map(repr, dupes))} appear twice in the "
                          "output (columns, keep, index/cluster/delay columns).")
    reader_input, is_path = _open_source(source)
    wanted = set(columns) | set(keep)
    target: pathlib.Path | None = None
    if isinstance(destination, (str, os.PathLike)) and str(destination) != "-":
        target = check_output_path(
            destination, inputs=[reader_input] if is_path else [],
            extensions=(".csv", ".txt", ".tsv", ".csv.gz", ".txt.gz", ".tsv.gz"),
            parameter="destination")

    def frames() -> Iterator[tuple[pd.DataFrame, NDArray[Any]]]:
        reader = pd.read_csv(reader_input, sep=sep, chunksize=chunk_rows,
                             usecols=lambda c: c in wanted, dtype=dict.fromkeys(keep, str),
                             keep_default_na=False)
        with reader:
            first = True
            for chunk in reader:
                if first:
                    missing = [c for c in (*columns, *keep) if c not in chunk.columns]
                    if missing:
                        raise SchemaError(
                            f"Column(s) {', '.join(map(repr, missing))} are not in the "
                            f"header of {caller}'s source."
                        )
                    first = False
                yield chunk[columns], chunk[keep].to_numpy(dtype=object)

    def run(handle: IO[str], flush: bool) -> StreamCheck:
        writer = csv.writer(handle, delimiter=sep, lineterminator="\n")
        writer.writerow(out_names)
        checker = StreamChecker(k=k, delay=delay)
        engine: _Engine | None = None
        for frame, payload in frames():
            start = 0 if engine is None else engine.n_seen
            X = _frame_to_matrix(frame, start, columns)
            if X.shape[0] == 0:
                continue
            if engine is None:
                engine = _Engine(X.shape[1], k=k, delay=delay, flush_age=age, method=method,
                                 scale=scale_, rng=rng, payload_width=len(keep))
            for batch in engine.push(X, payload):
                _write_batch(writer, batch, k, checker, cluster_column, delay_column,
                             index_column is not None, shuffle)
                if flush:
                    handle.flush()
        if engine is not None:
            for batch in engine.close():
                _write_batch(writer, batch, k, checker, cluster_column, delay_column,
                             index_column is not None, shuffle)
        handle.flush()
        return checker.result(None if engine is None else engine.n_seen)

    if target is None:
        handle = sys.stdout if destination is None or str(destination) == "-" else destination
        return run(handle, flush=True)  # type: ignore[arg-type]

    results: list[StreamCheck] = []

    def write(raw: IO[bytes]) -> None:
        binary: IO[bytes] = raw
        gz = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if target.suffix == ".gz" \
            else None
        if gz is not None:
            binary = gz  # type: ignore[assignment]
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        try:
            results.append(run(text, flush=False))
            text.flush()
        finally:
            text.detach()
            if gz is not None:
                gz.close()

    _atomic_write(target, write)
    return results[0]


def _write_batch(writer: Any, batch: _Batch, k: int, checker: StreamChecker,
                 cluster_column: str | None, delay_column: str | None, with_index: bool,
                 rng: np.random.Generator) -> None:
    records = _checked(batch, k)
    payload = batch.payload
    order: Iterable[int] = range(len(records))
    if not with_index and len(records):
        # without the arrival index, shuffle within each cluster so that the order of the
        # rows does not reveal the order of arrival either
        perm = rng.permutation(len(records))
        order = perm[np.argsort(batch.cluster[perm], kind="stable")].tolist()
    for r in order:
        record = records[r]
        checker.update(record)
        row: list[Any] = [record.arrival] if with_index else []
        row.extend(record.values)
        if payload is not None:
            row.extend(payload[r])
        if cluster_column is not None:
            row.append(record.cluster)
        if delay_column is not None:
            row.append(record.delay)
        writer.writerow(row)
