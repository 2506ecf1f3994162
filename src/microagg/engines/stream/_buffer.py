"""The stream engine's state: the buffer of unpublished records, its flushes and the reuse
at the end of the stream (how it works: :mod:`microagg.engines.stream`). Inputs are assumed
validated; :mod:`~microagg.engines.stream` and :mod:`~microagg.engines.stream.csv_files` drive it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..._base.groups import group_means
from ...exceptions import InternalError, PrivacyViolationError
from ...partition import get_partitioner

__all__ = ["Batch", "Published", "StreamEngine", "checked_records"]


class Published(NamedTuple):
    """One released record, as yielded by :func:`~microagg.engines.stream.anonymize_stream`.

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
class Batch:
    """Records published by one flush, in arrival order."""

    index: NDArray[np.int64]
    cluster: NDArray[np.int64]
    values: NDArray[np.float64]  # (r, p) representatives
    delay: NDArray[np.int64]
    payload: NDArray[Any] | None
    reps: dict[int, tuple[float, ...]]  # cluster -> representative tuple
    reused: bool = False  # the clusters were published before (the stream's tail)


class StreamEngine:
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
             ) -> Iterator[Batch]:
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

    def _flush(self, *, final: bool) -> Batch:
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
        batch = Batch(
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

    def _reuse(self, t: int) -> Batch:
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
        batch = Batch(
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

    def close(self) -> Iterator[Batch]:
        """Publish everything still buffered."""
        if self.m:
            yield self._flush(final=True)


def checked_records(batch: Batch, k: int) -> list[Published]:
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
