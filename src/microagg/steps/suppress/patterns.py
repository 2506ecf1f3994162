"""The heuristic of local suppression on the distinct key patterns and their counts only
(sdcMicro's ``localSuppression``, Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4), 4.3),
for a table read in chunks: pass 1 counts the patterns, this decides the keys to blank per
pattern, pass 2 blanks them record by record.

It makes the decisions of :func:`~.heuristic.greedy_blanks` and of the rounds of
:func:`~.core.apply_suppress` on the same table, round for round: every record of a pattern
is blanked alike there, so the table of patterns with their counts carries all they read. It
runs the heuristic mode without strata or household keys; a ``"category"`` pattern that
stays below k with every key blanked (the heuristic then blanks single spare records, chosen
by their row) is refused, naming the in-memory engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...metrics._survey_freq import key_frequencies
from .counts import PatternCounter
from .heuristic import _blanked, _choice

__all__ = ["count_patterns", "pattern_blanks", "pattern_codes", "pattern_rank", "pattern_sizes",
           "suppress_patterns"]


def count_patterns(chunks: Any, keys: tuple[str, ...]) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """The distinct patterns of ``keys`` over ``chunks`` (an iterable of DataFrames), merged.

    Returns the patterns as a DataFrame of the keys' values (missing as NaN / None) and
    their counts; the codes of :func:`pattern_codes` on it are those of
    :func:`~.counts.encode` on the whole table (sorted values, ``-1`` missing).
    """
    merged: pd.Series | None = None
    for chunk in chunks:
        counts = chunk.loc[:, list(keys)].astype(object).value_counts(dropna=False, sort=False)
        merged = counts if merged is None else merged.add(counts, fill_value=0)
    if merged is None:
        return pd.DataFrame({key: [] for key in keys}), np.zeros(0, dtype=np.int64)
    frame = merged.index.to_frame(index=False)
    frame.columns = list(keys)
    return frame, merged.to_numpy().astype(np.int64)


def pattern_codes(patterns: pd.DataFrame, keys: tuple[str, ...]) -> NDArray[np.int64]:
    """(P, d) codes of the patterns: the rank of each value among its key's sorted values,
    ``-1`` missing (the codes :func:`~.counts.encode` gives the whole table)."""
    out = np.empty((len(patterns), len(keys)), dtype=np.int64)
    for j, key in enumerate(keys):
        out[:, j] = pd.factorize(patterns[key], sort=True, use_na_sentinel=True)[0]
    return out


def pattern_rank(codes: NDArray[np.int64], keys: tuple[str, ...],
                 importance: tuple[str, ...]) -> NDArray[np.int64]:
    """``rank[j]`` (higher = less important) as :func:`~.core.importance_rank` gives it:
    the given order of the keys (most important first), else more categories = less
    important, ties in key order."""
    width = codes.shape[1]
    if importance:
        return np.asarray([importance.index(key) for key in keys], dtype=np.int64)
    categories = [len(np.unique(codes[codes[:, j] >= 0, j])) for j in range(width)]
    order = sorted(range(width), key=lambda j: (categories[j], j))
    rank = np.empty(width, dtype=np.int64)
    rank[order] = np.arange(width)
    return rank


def pattern_sizes(current: NDArray[np.int64], counts: NDArray[np.int64], missing: str
           ) -> NDArray[np.int64]:
    """Each pattern's class size, in records, under the semantics (the counts as weights)."""
    if current.shape[1] == 0:
        return np.full(len(current), int(counts.sum()), dtype=np.int64)
    if missing == "category":
        current = np.where(current < 0, current.max(axis=0, initial=-1) + 1, current)
    weights = counts.astype(np.float64)
    return np.rint(key_frequencies(np.ascontiguousarray(current), weights,
                                   missing=missing)[1]).astype(np.int64)


def pattern_blanks(codes: NDArray[np.int64], counts: NDArray[np.int64], k: int, missing: str,
                   rank: NDArray[np.int64]) -> NDArray[np.bool_]:
    """The cells of ``codes`` (patterns, repeated or not, with ``counts`` records each) that
    :func:`~.heuristic.greedy_blanks` blanks in every record of each pattern."""
    n, width = codes.shape
    blank = np.zeros((n, width), dtype=bool)
    if n == 0 or width == 0:
        return blank
    current = codes.copy()
    any_ = missing == "any"
    for _ in range(2 * width + 2 * int(counts.sum())):
        sizes = pattern_sizes(current, counts, missing)
        if sizes[counts > 0].min(initial=k) >= k:
            return blank
        uniq, inverse = np.unique(current, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        totals = np.bincount(inverse, weights=counts, minlength=len(uniq)).astype(np.int64)
        counter = PatternCounter(width, missing)
        patterns = [tuple(int(v) for v in row) for row in uniq]
        for pattern, count in zip(patterns, totals, strict=True):
            counter.add(pattern, int(count))
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        below = ((sizes < k) & (counts > 0)).astype(float)
        small = np.flatnonzero(np.bincount(inverse, weights=below, minlength=len(uniq)) > 0)
        small = small[np.argsort(totals[small], kind="stable")]
        for p in small:
            pattern, size = patterns[p], int(totals[p])
            if counter.count(pattern) >= k:
                continue
            keys = _choice(counter, pattern, size, k, rank, any_)
            if not keys:
                raise ValueError(
                    f"Local suppression to k={k} with missing='category' must blank single "
                    f"records of a pattern ({size} record(s) stay below k with every key "
                    "blanked); the patterns alone cannot choose them. Run it in memory "
                    "(--engine local).")
            rows = order[starts[p]:starts[p + 1]]
            counter.add(pattern, -size)
            counter.add(_blanked(pattern, keys), size)
            cols = np.asarray(keys, dtype=np.intp)
            current[np.ix_(rows, cols)] = -1
            blank[np.ix_(rows, cols)] = True
    raise RuntimeError(f"local suppression found no k={k} anonymous pattern within its "
                       "rounds; this is a bug, please report it")


def _satisfied(current: NDArray[np.int64], counts: NDArray[np.int64],
               requirements: Any, missing: str) -> bool:
    return all(pattern_sizes(current[:, list(subset)], counts, missing)[counts > 0].min(initial=k)
               >= k for subset, k in requirements)


def suppress_patterns(codes: NDArray[np.int64], counts: NDArray[np.int64], requirements: Any,
                      missing: str, rank: NDArray[np.int64]) -> NDArray[np.int64]:
    """The published codes of each pattern (``-1`` blanked): the rounds of the in-memory
    heuristic over the required subsets (``requirements``: ``(subset, k)`` pairs, as
    :attr:`~.options.SuppressToK.requirements`), repeated until the recount agrees."""
    current = codes.copy()
    for _ in range(4 * codes.shape[1] + 4):
        if _satisfied(current, counts, requirements, missing):
            return current
        before = int((current < 0).sum())
        for subset, k in requirements:
            cols = np.asarray(subset, dtype=np.intp)
            part = current[:, cols]
            part[pattern_blanks(part, counts, k, missing, rank[cols])] = -1
            current[:, cols] = part
        if int((current < 0).sum()) == before:
            break
    if not _satisfied(current, counts, requirements, missing):
        raise RuntimeError("local suppression did not reach k on every required subset; "
                           "this is a bug, please report it")
    return current
