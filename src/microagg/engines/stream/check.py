"""The stream's verifier: a published stream re-checked record by record, and the levels it
achieves (:class:`StreamCheck`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..._base.constraints import check_int
from ...exceptions import PrivacyViolationError
from .engine import Published

__all__ = ["StreamCheck", "StreamChecker", "check_stream"]


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
        self.k = check_int(k, parameter="k", low=2, caller="StreamChecker")
        self.delay = check_int(delay, parameter="delay", low=0, caller="StreamChecker")
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
        time = self._check_order(index, delay)
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

    def _check_order(self, index: int, delay: int) -> int:
        """A valid index and delay, in publication order; returns the publication time."""
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
        return time

    @property
    def smallest_cluster(self) -> int:
        """The fewest records a cluster had when it was first published (0 before any)."""
        return min((entry[2] for entry in self._clusters.values()), default=0)

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
