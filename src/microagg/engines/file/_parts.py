"""The file engine's result parts: each block's rows written in one contiguous file, sorted by
their row in the input, and read back in input order when the output is written.

A block's rows are spread over the whole input, so writing its group means at their input
positions (one file of n rows) dirties a page for every row: at 10^8 x 10 rows the 8 GB file
outgrew the page cache's dirty limit and was written back again and again (measured: 3,870 s
where ten times the 10^7 run predicted about 2,730 s). Here every write is sequential, and the
reader merges the parts chunk by chunk, with a fence per chunk of rows in each part (a part's
first record at or past that row) so that it reads only the records of the chunk asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...io._leftovers import private_file

__all__ = ["InputOrder", "Part", "part_dtype", "read_part", "write_part"]


def part_dtype(p: int, *, values: bool) -> np.dtype:
    """One record of a part: the row in the input, its group, its group's mean (``masked``)
    and, for the parts a second pass reads, its original values (``value``)."""
    fields: list[tuple[str, str] | tuple[str, str, tuple[int]]] = [
        ("row", "<i8"), ("label", "<i8"), ("masked", "<f8", (p,))]
    if values:
        fields.append(("value", "<f8", (p,)))
    return np.dtype(fields)


@dataclass(frozen=True)
class Part:
    """A part's file, its record type, its largest group label and its fences:
    ``fences[b]`` is the first record whose row is at least ``b * bucket``."""

    path: str
    dtype: np.dtype
    most: int
    fences: NDArray[np.int64]

    @property
    def size(self) -> int:
        return int(self.fences[-1])


def write_part(path: str, rows: NDArray[np.int64], labels: NDArray[np.int64],
               masked: NDArray[np.float64], values: NDArray[np.float64] | None, *,
               bucket: int, n: int) -> Part:
    """Write one block's records sorted by row to the new private file ``path``."""
    order = np.argsort(rows, kind="stable")
    dtype = part_dtype(masked.shape[1], values=values is not None)
    records = np.empty(rows.shape[0], dtype=dtype)
    records["row"] = rows[order]
    records["label"] = labels[order]
    records["masked"] = masked[order]
    if values is not None:
        records["value"] = values[order]
    with open(private_file(path), "wb") as handle:
        records.tofile(handle)
    edges = np.arange(0, -(-n // bucket) + 1, dtype=np.int64) * bucket
    fences = np.searchsorted(records["row"], edges).astype(np.int64)
    return Part(path, dtype, int(labels.max()) if labels.size else -1, fences)


def read_part(part: Part) -> NDArray[np.void]:
    """All the records of ``part``."""
    return np.fromfile(part.path, dtype=part.dtype)


def remove_parts(parts: list[Part]) -> None:
    """Delete the parts' files (what they held has been read)."""
    for part in parts:
        os.unlink(part.path)


class InputOrder:
    """The parts' labels and group means for rows ``first:stop`` of the input, in input
    order (:meth:`take`); memory: one chunk of rows, and the fences."""

    def __init__(self, parts: list[Part], *, bucket: int, p: int) -> None:
        self.parts, self.bucket, self.p = parts, bucket, p

    @property
    def most(self) -> int:
        """The largest group label."""
        return max(part.most for part in self.parts)

    def take(self, first: int, stop: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Labels and group means of rows ``first:stop``."""
        labels = np.empty(stop - first, dtype=np.int64)
        masked = np.empty((stop - first, self.p))
        low, high = first // self.bucket, -(-stop // self.bucket)
        filled = 0
        for part in self.parts:
            a, b = int(part.fences[low]), int(part.fences[min(high, part.fences.size - 1)])
            if b == a:
                continue
            records = np.fromfile(part.path, dtype=part.dtype, count=b - a,
                                  offset=a * part.dtype.itemsize)
            if first % self.bucket or stop % self.bucket:  # chunks off the fences
                records = records[(records["row"] >= first) & (records["row"] < stop)]
            at = records["row"] - first
            labels[at] = records["label"]
            masked[at] = records["masked"]
            filled += records.shape[0]
        if filled != stop - first:
            raise RuntimeError(f"The result parts hold {filled} of rows {first}:{stop} "
                               f"({stop - first} rows). This is a bug.")
        return labels, masked
