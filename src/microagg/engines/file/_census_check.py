"""What the file engine's census plan (:mod:`.plan_census`) counts as it reads chunks: each
column's values as codes shared between the chunks (:class:`Coder`), the swap's verifier
on the written file, its published household values gathered chunk by chunk
(:class:`SwapCheck`), and the figures before and after each step on the plan's keys
(:class:`KeyFigures`: the smallest class, the unique share, the SSE/SST of the numeric
keys, as :func:`microagg.steps._state.figures` computes them on a whole table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...steps.record_swap._prepare import Households
from ...steps.record_swap.options import SwapHouseholds

__all__ = ["Coder", "KeyFigures", "SwapCheck"]


def _factorized(series: pd.Series) -> tuple[NDArray[np.intp], pd.Index]:
    """The chunk's codes and the value of each code: numbers as floats (1 and 1.0 one
    value), everything else as its text (missing: ``None``, one value of its own)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        own = series.cat.codes.to_numpy().astype(np.intp)
        labels = [str(c) for c in series.cat.categories] + [None]
        return np.where(own < 0, len(labels) - 1, own), pd.Index(labels, dtype=object)
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        return codes.astype(np.intp), pd.Index(uniques, dtype=np.float64)
    codes, uniques = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=False)
    labels = [None if pd.isna(v) else str(v) for v in uniques]
    return codes.astype(np.intp), pd.Index(labels, dtype=object)


class Coder:
    """One column's values as integer codes, the same value the same code in every chunk
    (numbers compared as floats, everything else as its text; missing is a value)."""

    def __init__(self) -> None:
        self.index: pd.Index | None = None

    def __call__(self, series: pd.Series) -> NDArray[np.int64]:
        codes, uniques = _factorized(series)
        if self.index is None:
            self.index = uniques
        elif self.index.dtype != uniques.dtype:  # numbers in one chunk, text in another
            self.index = self.index.astype(object)
            uniques = uniques.astype(object)
        at = self.index.get_indexer(uniques)
        if (at < 0).any():
            self.index = self.index.append(uniques[at < 0])
            at = self.index.get_indexer(uniques)
        return at.astype(np.int64)[codes]


class SwapCheck:
    """The swap's verifier on the written file, read back in chunks (rows in the input's
    order): each household's published values at its first record, the households whose
    members disagree, and whether the similarity columns are unchanged."""

    def __init__(self, options: SwapHouseholds, hh: Households,
                 before: dict[str, pd.Series]) -> None:
        self.options, self.hh = options, hh
        self.coders = {c: Coder() for c in (*options.columns, *options.similar)}
        self.before = {c: self.coders[c](before[c]) for c in options.columns}
        self.similar = {c: self.coders[c](before[c]) for c in options.similar}
        self.after = {c: np.full(hh.count, -1, dtype=np.int64) for c in options.columns}
        self.split = np.zeros(hh.count, dtype=bool)
        self.similar_kept = True

    def add(self, chunk: pd.DataFrame, first_row: int) -> None:
        """One chunk of the written file, its first row's position."""
        rows = np.arange(first_row, first_row + len(chunk))
        member = self.hh.member[rows]
        leads = self.hh.first[member] == rows
        for column in self.options.columns:
            found = self.coders[column](chunk[column])
            after = self.after[column]
            after[member[leads]] = found[leads]
            self.split[member[found != after[member]]] = True
        for column in self.options.similar:
            found = self.coders[column](chunk[column])
            self.similar_kept &= bool(np.array_equal(found, self.similar[column][rows]))

    def households(self) -> dict[str, Any]:
        """What :func:`~microagg.steps.record_swap.verify.household_report` reads."""
        first = self.hh.first
        return {"before": [self.before[c][first] for c in self.options.columns],
                "after": [self.after[c] for c in self.options.columns],
                "inconsistent": int(self.split.sum()), "similar_kept": self.similar_kept}


class KeyFigures:
    """Risk and utility on the plan's keys of one version of the table, added up chunk by
    chunk: the counts of each combination of the keys (k and the unique share) and, for
    the numeric keys, the sums of the SSE/SST against the original."""

    def __init__(self, keys: Sequence[str], numeric: Sequence[str]) -> None:
        self.keys, self.numeric = list(keys), list(numeric)
        self.coders = [Coder() for _ in self.keys]
        self.counts: pd.Series | None = None
        self.sums = np.zeros((3, len(self.numeric)))  # sum a, sum a^2, sum (a - b)^2
        self.n = 0

    def add(self, original: pd.DataFrame, current: pd.DataFrame) -> None:
        """The same rows of the original and of this version (the keys' columns)."""
        codes = np.stack([c(current[k]) for c, k in zip(self.coders, self.keys, strict=True)],
                         axis=1)
        counts = pd.DataFrame(codes).value_counts(sort=False)
        self.counts = counts if self.counts is None else self.counts.add(counts, fill_value=0)
        if self.numeric:
            a = original.loc[:, self.numeric].to_numpy(dtype=np.float64, na_value=np.nan)
            b = current.loc[:, self.numeric].to_numpy(dtype=np.float64, na_value=np.nan)
            self.sums += np.stack([np.nansum(a, axis=0), np.nansum(a * a, axis=0),
                                   np.nansum((a - b) ** 2, axis=0)])
        self.n += len(current)

    def figures(self) -> dict[str, Any]:
        """``k_anonymity``, ``unique_share`` and ``information_loss`` (SSE/SST in percent,
        each numeric key standardized by the original's variance; constant ones add
        nothing); ``records_unique`` too."""
        sizes = self.counts.to_numpy() if self.counts is not None else np.zeros(0)
        unique = int(sizes[sizes == 1].sum())
        loss = 0.0
        if self.numeric and self.n:
            mean = self.sums[0] / self.n
            variance = np.maximum(self.sums[1] / self.n - mean * mean, 0.0)
            varying = variance > 1e-12 * np.maximum(1.0, mean * mean)
            if varying.any():
                lost = (self.sums[2][varying] / variance[varying]).sum()
                loss = float(100.0 * lost / (self.n * int(varying.sum())))
        return {"k_anonymity": int(sizes.min()) if sizes.size else 0,
                "unique_share": unique / self.n if self.n else 0.0,
                "information_loss": loss, "records_unique": unique, "classes": int(sizes.size)}
