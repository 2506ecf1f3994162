"""PRAM's columns as the file engine's census plan counts them chunk by chunk: the categories
of the whole column (those :func:`microagg.steps.perturb.pram.categories_of` gives the whole
column: a categorical's own, else the sorted distinct values, then the user matrix's other
labels), the frequencies the invariant matrix is computed from, each chunk's codes, and the
changes the step's record reports."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...steps.perturb.options import Pram

__all__ = ["PramColumn", "pram_columns"]


class PramColumn:
    """One column of a PRAM step, counted over the chunks of a file."""

    def __init__(self, name: str, extra: list[str]) -> None:
        self.name = name
        self.extra = extra
        self.seen: pd.Series | None = None  # value -> count, over the chunks
        self.categorical: list[Any] | None = None
        self._categories: list[Any] | None = None
        self.base: NDArray[np.float64] = np.ones((1, 1))
        self.matrix: NDArray[np.float64] = np.ones((1, 1))
        self.stream: np.random.Generator = np.random.default_rng(0)
        self.records_changed = self.missing = 0
        self.before = self.after = np.zeros(0, dtype=np.int64)

    def count(self, series: pd.Series) -> None:
        """Pass 1: one chunk's values (a numeric column refused, as in memory)."""
        is_categorical = isinstance(series.dtype, pd.CategoricalDtype)
        if pd.api.types.is_numeric_dtype(series) and not is_categorical:
            raise TypeError(f"Step 'pram' needs a categorical column (object or category "
                            f"dtype); column {self.name!r} has dtype {series.dtype}. Recode it "
                            f"to categories first.")
        if is_categorical:
            known = self.categorical or []
            have = set(known)
            self.categorical = known + [c for c in series.cat.categories if c not in have]
        counts = series.value_counts(dropna=True, sort=False)
        self.seen = counts if self.seen is None else self.seen.add(counts, fill_value=0)

    @property
    def categories(self) -> list[Any]:
        """The column's categories (after pass 1)."""
        if self._categories is None:
            if self.categorical is not None:
                found = list(self.categorical)
            else:
                present = [v for v, n in self.seen.items() if n > 0] if self.seen is not None \
                    else []
                try:
                    found = sorted(present)
                except TypeError:  # mixed types: order by text
                    found = sorted(present, key=str)
            known = {str(c) for c in found}
            found += [label for label in self.extra if label not in known]
            if len({str(c) for c in found}) != len(found):
                raise ValueError(f"Column {self.name!r} has two categories with the same "
                                 "text; PRAM's matrix names categories by their text.")
            self._categories = found
            size = len(found)
            self.before = np.zeros(size, dtype=np.int64)
            self.after = np.zeros(size, dtype=np.int64)
        return self._categories

    def frequencies(self) -> NDArray[np.float64]:
        """Each category's count over the file (the invariant matrix's ``p``)."""
        out = np.zeros(len(self.categories))
        if self.seen is not None:
            where = pd.Index(self.categories, dtype=object).get_indexer(
                pd.Index(self.seen.index, dtype=object))
            np.add.at(out, where[where >= 0], self.seen.to_numpy(dtype=np.float64)[where >= 0])
        return out

    def codes(self, series: pd.Series) -> NDArray[np.intp]:
        """One chunk's codes among :attr:`categories` (-1 missing)."""
        index = pd.Index(self.categories, dtype=object)
        if isinstance(series.dtype, pd.CategoricalDtype):
            at = index.get_indexer(pd.Index(series.cat.categories, dtype=object))
            own = series.cat.codes.to_numpy()
            return np.where(own >= 0, at[np.maximum(own, 0)], -1).astype(np.intp)
        found = index.get_indexer(pd.Index(series.to_numpy(dtype=object), dtype=object))
        return np.where(series.isna().to_numpy(), -1, found).astype(np.intp)

    def changed(self, codes: NDArray[np.intp], new: NDArray[np.intp]) -> None:
        """Pass 2: one chunk's codes before and after PRAM, for the step's record."""
        present = codes >= 0
        size = len(self.categories)
        self.records_changed += int((codes[present] != new[present]).sum())
        self.before += np.bincount(codes[present], minlength=size)
        self.after += np.bincount(new[present], minlength=size)
        self.missing += int((~present).sum())


def pram_columns(options: Pram) -> list[PramColumn]:
    """One counter per column of the step."""
    return [PramColumn(c, list(options.matrix.get(c, {}))) for c in options.variables]
