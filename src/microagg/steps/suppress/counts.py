"""Class sizes of key patterns under a missing-value semantics: the verifying count (every
record, vectorized, the rule of sdcMicro's ``freqCalc``) and an incremental counter of
distinct patterns for the heuristic.

``"any"`` (sdcMicro 5.8.1 ``freqCalc``, ``R/freqCalc.r``; the default of ``localSuppression``
with ``alpha = 1``): a missing value matches any value; record i's class is every record j
that agrees with it on every key both have observed. As in ``freqCalc``, with two or more
keys a record whose keys are all observed does not count the records whose keys are all
missing (those get the whole table, or stratum). ``"category"``: a missing value is one
more category of its key. The verifying count is the project's
:func:`microagg.metrics.survey_risk.frequencies` (the one ``microagg risk`` uses).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...metrics._survey_freq import key_frequencies

__all__ = ["PatternCounter", "class_sizes", "encode"]


def encode(table: pd.DataFrame, keys: tuple[str, ...]) -> NDArray[np.int64]:
    """(n, d) int64 codes of the keys, ``-1`` for a missing value (None, NaN, NaT)."""
    out = np.empty((len(table), len(keys)), dtype=np.int64)
    for j, key in enumerate(keys):
        out[:, j] = pd.factorize(table[key], sort=True, use_na_sentinel=True)[0]
    return out


def class_sizes(codes: NDArray[np.int64], missing: str,
                strata: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """Each record's class size on the columns of ``codes`` (``-1`` missing) under the
    semantics, counted within its stratum when ``strata`` (codes >= 0) is given."""
    if codes.shape[1] == 0:
        return np.full(codes.shape[0], codes.shape[0], dtype=np.int64)
    if missing == "category":
        codes = np.where(codes < 0, codes.max(axis=0, initial=-1) + 1, codes)
    return key_frequencies(np.ascontiguousarray(codes), None, missing=missing,
                           strata=strata)[0]


def _mask(pattern: tuple[int, ...]) -> int:
    return sum(1 << j for j, v in enumerate(pattern) if v < 0)


class PatternCounter:
    """Records per distinct pattern, kept so that the class size of any pattern is a few
    dictionary look-ups: under ``"any"``, one table per (missing mask M, observed subset K)
    holds how many records with mask M have each projection on K; a pattern's class sums,
    over the masks present, the table of (M, its observed keys outside M)."""

    def __init__(self, width: int, missing: str) -> None:
        self.width = width
        self.any = missing == "any"
        self.full = (1 << width) - 1
        self.tables: defaultdict[tuple[int, int], defaultdict[tuple[int, ...], int]] = \
            defaultdict(lambda: defaultdict(int))
        self.masks: defaultdict[int, int] = defaultdict(int)

    def _subsets(self, observed: list[int]) -> list[tuple[int, tuple[int, ...]]]:
        if not self.any:
            return [(self.full, tuple(range(self.width)))]
        return [(sum(1 << j for j in sub), sub) for size in range(len(observed) + 1)
                for sub in combinations(observed, size)]

    def add(self, pattern: tuple[int, ...], count: int) -> None:
        """Add (or, with a negative count, remove) ``count`` records of ``pattern``."""
        mask = _mask(pattern) if self.any else 0
        self.masks[mask] += count
        observed = [j for j in range(self.width) if pattern[j] >= 0]
        for kmask, sub in self._subsets(observed):
            self.tables[(mask, kmask)][tuple(pattern[j] for j in sub)] += count

    def count(self, pattern: tuple[int, ...]) -> int:
        """Class size of a record with ``pattern`` among the records held."""
        if not self.any:
            return self.tables[(0, self.full)].get(pattern, 0)
        mask = _mask(pattern)
        if mask == self.full:
            return sum(self.masks.values())
        total = 0
        for other, size in self.masks.items():
            if size == 0 or (mask == 0 and other == self.full and self.width > 1):
                continue  # freqCalc: complete keys do not count all-missing keys
            kmask = self.full & ~mask & ~other
            table = self.tables.get((other, kmask))
            if table:
                total += table.get(tuple(pattern[j] for j in range(self.width)
                                         if kmask >> j & 1), 0)
        return total
