"""What the file engine (:mod:`.engine`) publishes besides the masked quasi-identifiers, judged
over the whole file in bounded memory, as the in-memory engine judges it on the whole table.

* :class:`AsText`: from a CSV input to a typed output (Parquet), each pass-through column keeps
  its parsed values only when every field of the file round-trips
  (:class:`~microagg.io._as_read.RoundTrip`, chunk by chunk); otherwise it is published as its
  text, an empty field missing (:mod:`microagg.io._as_read`);
* :class:`PairCounts`: the k left when an intruder also knows one published column
  (``checks["published_columns"]``,
  :func:`~microagg._pipeline.unmasked.published_column_checks`): the rows of each
  (group, value) pair are counted chunk by chunk, spilled to bucket files by the value's key,
  and summed at the end over the classes of identical published quasi-identifiers.

Values are compared as the in-memory engine compares the parsed table: a number by its value
(``1`` in a chunk of integers is ``1.0`` in a chunk of floats), missing values as one value,
anything else by a 64-bit key of its content (two different values of one class sharing a
key, at odds of about one in 10^18 per pair, would count as one).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...io._as_read import RoundTrip
from ...io._leftovers import private_file

__all__ = ["AsText", "PairCounts", "value_keys"]

_PAIR = np.dtype([("group", "<i8"), ("value", "<u8"), ("count", "<i8")])


class AsText:
    """The pass-through columns judged for a typed output, and which of them go as text."""

    def __init__(self, columns: Iterable[str]) -> None:
        self.rules = {str(c): RoundTrip() for c in columns}

    def add(self, parsed: pd.DataFrame, fields: pd.DataFrame) -> None:
        """Judge the next chunk: parsed, and as its fields' text (``""`` an empty field)."""
        for col, rule in self.rules.items():
            rule.add(parsed[col], fields[col])

    @property
    def columns(self) -> list[str]:
        """The columns published as their text (some field does not round-trip)."""
        return [col for col, rule in self.rules.items() if not rule.holds]


def value_keys(values: pd.Series) -> NDArray[np.uint64]:
    """A 64-bit key of each value: equal values share one whatever the chunk's parse.

    Numbers (and booleans) are keyed by value: a whole number as an integer, any other
    number, and a missing value, as a float; other values by their content.

    Examples
    --------
    >>> a = value_keys(pd.Series([1, 2]))
    >>> b = value_keys(pd.Series([2.0, None, -0.0]))
    >>> bool(a[1] == b[0]), bool(b[1] == value_keys(pd.Series([None, 1.0]))[0])
    (True, True)
    """
    if pd.api.types.is_integer_dtype(values) and not values.hasnans:
        return np.asarray(pd.util.hash_array(values.to_numpy(np.int64)), dtype=np.uint64)
    if pd.api.types.is_bool_dtype(values) or (pd.api.types.is_numeric_dtype(values)
            and not pd.api.types.is_complex_dtype(values)):
        numbers = values.to_numpy(np.float64, na_value=np.nan)
        keys = np.asarray(pd.util.hash_array(numbers), dtype=np.uint64)
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(numbers) & (numbers == np.round(numbers)) \
                & (np.abs(numbers) < 2.0**63)
        keys[whole] = pd.util.hash_array(numbers[whole].astype(np.int64))
        return keys
    try:
        return np.asarray(pd.util.hash_pandas_object(values, index=False), dtype=np.uint64)
    except (TypeError, NotImplementedError):  # lists or structs: keyed by their content
        from ...io._nested import content_keys

        text = content_keys(values).map(repr)
        return np.asarray(pd.util.hash_pandas_object(text, index=False), dtype=np.uint64)


class PairCounts:
    """Rows counted by (group, value) for each checked column, in bucket files by value key.

    Parameters
    ----------
    columns : sequence of str
        The published columns checked.
    work : pathlib.Path
        The private work folder (the files are 0600 and removed once read).
    buckets : int
        Files per column: each then holds about ``n / buckets`` pairs (a chunk's worth),
        what :meth:`smallest` holds in memory at a time.
    """

    def __init__(self, columns: Sequence[str], work: pathlib.Path, buckets: int) -> None:
        self.columns = [str(c) for c in columns]
        self.work, self.buckets = work, max(1, int(buckets))
        self._made: set[pathlib.Path] = set()

    def _path(self, j: int, bucket: int) -> pathlib.Path:
        return self.work / f"pairs{j}-{bucket}.rec"

    def add(self, labels: NDArray[np.int64], chunk: pd.DataFrame) -> None:
        """Count the next published rows (their groups ``labels``, their values in ``chunk``)."""
        for j, col in enumerate(self.columns):
            pairs = _counted(labels, value_keys(chunk[col]))
            bucket = (pairs["value"] % np.uint64(self.buckets)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            pairs = pairs[order]
            edges = np.searchsorted(bucket[order], np.arange(self.buckets + 1))
            for b in np.flatnonzero(edges[1:] > edges[:-1]):
                path = self._path(j, int(b))
                if path not in self._made:
                    private_file(path)
                    self._made.add(path)
                with open(path, "ab") as handle:
                    pairs[edges[b]:edges[b + 1]].tofile(handle)

    def smallest(self, class_of_group: NDArray[np.intp]) -> dict[str, int]:
        """The smallest count of rows over the (class, value) pairs of each column, the class
        of a group being ``class_of_group[group]``; the bucket files are removed."""
        smallest: dict[str, int] = {}
        for j, col in enumerate(self.columns):
            for b in range(self.buckets):
                path = self._path(j, b)
                if path not in self._made:
                    continue
                pairs = np.fromfile(path, dtype=_PAIR)
                os.unlink(path)
                self._made.discard(path)
                counts = _counted(class_of_group[pairs["group"]], pairs["value"],
                                  pairs["count"])["count"]
                least = int(counts.min())
                smallest[col] = min(smallest.get(col, least), least)
        return smallest


def _counted(groups: NDArray[np.integer], keys: NDArray[np.uint64],
             counts: NDArray[np.int64] | None = None) -> NDArray[np.void]:
    """The distinct (group, key) pairs with their total ``counts`` (each row once: 1)."""
    order = np.lexsort((keys, groups))
    groups, keys = np.asarray(groups, dtype=np.int64)[order], keys[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (groups[1:] != groups[:-1]) | (keys[1:] != keys[:-1])
    at = np.flatnonzero(starts)
    pairs = np.empty(at.size, dtype=_PAIR)
    pairs["group"], pairs["value"] = groups[at], keys[at]
    weights = np.ones(order.size, dtype=np.int64) if counts is None else counts[order]
    pairs["count"] = np.add.reduceat(weights, at) if at.size else 0
    return pairs
