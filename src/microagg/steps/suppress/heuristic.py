"""The fast heuristic of local suppression to k-anonymity: a greedy on the distinct key
patterns (after the idea of sdcMicro's ``localSuppression``, Templ, Kowarik & Meindl 2015,
J. Stat. Softw. 67(4), 4.3), sized so that each decision is a few dictionary look-ups.

Each round takes the patterns whose class is below k, smallest class first, and blanks, in
every record of the pattern, the smallest set of keys (one, else two) whose blanking brings
the class to k, the least important keys first; when no such set exists it blanks the one
key that enlarges the class most and the next round goes on. Under ``"category"`` a pattern
that stays below k with every key blanked is filled up by blanking spare records of the
classes above k (the records with the fewest observed keys first).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from numpy.typing import NDArray

from .counts import PatternCounter, class_sizes

__all__ = ["greedy_blanks"]


def _blanked(pattern: tuple[int, ...], keys: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-1 if j in keys else v for j, v in enumerate(pattern))


def _choice(counter: PatternCounter, pattern: tuple[int, ...], size: int, k: int,
            rank: NDArray[np.int64], any_: bool) -> tuple[int, ...]:
    """The keys to blank in ``pattern`` (``size`` records): the fewest that reach k, the
    least important first; else the one key that enlarges the class most."""
    observed = [j for j, v in enumerate(pattern) if v >= 0]
    extra = 0 if any_ else size  # under "category" the records are not yet in their class
    by_importance = sorted(observed, key=lambda j: -rank[j])
    for width in (1, 2):
        found = [keys for keys in combinations(by_importance, width)
                 if counter.count(_blanked(pattern, keys)) + extra >= k]
        if found:
            return found[0]
    gains = [(counter.count(_blanked(pattern, (j,))), -position)
             for position, j in enumerate(by_importance)]
    return (by_importance[-max(gains)[1]],) if gains else ()


def greedy_blanks(codes: NDArray[np.int64], k: int, missing: str,
                  rank: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Cells to blank so that every record's class on ``codes`` (one stratum, one subset of
    keys; ``-1`` missing) holds at least ``k`` records under ``missing``.

    ``rank[j]``: the importance of key j, higher = less important (blanked first).
    Validation is assumed (``len(codes) >= k``). Returns a boolean mask of ``codes``'s shape.
    """
    n, width = codes.shape
    blank = np.zeros((n, width), dtype=bool)
    if n == 0 or width == 0:
        return blank
    current = codes.copy()
    any_ = missing == "any"
    for _ in range(2 * width + 2 * n):
        sizes = class_sizes(current, missing)
        if sizes.min() >= k:
            return blank
        uniq, inverse, counts = np.unique(current, axis=0, return_inverse=True,
                                          return_counts=True)
        inverse = inverse.ravel()
        counter = PatternCounter(width, missing)
        patterns = [tuple(int(v) for v in row) for row in uniq]
        for pattern, count in zip(patterns, counts, strict=True):
            counter.add(pattern, int(count))
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        small = np.flatnonzero(np.bincount(inverse, weights=(sizes < k).astype(float),
                                           minlength=len(uniq)) > 0)
        small = small[np.argsort(counts[small], kind="stable")]
        for p in small:
            pattern, size = patterns[p], int(counts[p])
            if counter.count(pattern) >= k:
                continue  # an earlier blanking brought it up
            keys = _choice(counter, pattern, size, k, rank, any_)
            rows = order[starts[p]:starts[p + 1]]
            if not keys:
                _fill_up(current, blank, sizes, rows, k)
                break
            target = _blanked(pattern, keys)
            counter.add(pattern, -size)
            counter.add(target, size)
            cols = np.asarray(keys, dtype=np.intp)
            current[np.ix_(rows, cols)] = -1
            blank[np.ix_(rows, cols)] = True
    raise RuntimeError(f"local suppression found no k={k} anonymous pattern within its "
                       "rounds; this is a bug, please report it")


def _fill_up(current: NDArray[np.int64], blank: NDArray[np.bool_], sizes: NDArray[np.int64],
             rows: NDArray[np.intp], k: int) -> None:
    """Under ``"category"``: fill the all-missing class of ``rows`` up to k by blanking every
    key of spare records (their class stays >= k), fewest observed keys first, and when those
    are too few, of whole classes, smallest first."""
    del sizes, rows
    need = k - int((current < 0).all(axis=1).sum())
    _, inverse, counts = np.unique(current, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    spare = counts - k
    observed = (current >= 0).sum(axis=1)
    order = np.argsort(observed, kind="stable")
    for row in order:
        if need <= 0:
            return
        if observed[row] and spare[inverse[row]] > 0:
            spare[inverse[row]] -= 1
            blank[row] |= current[row] >= 0
            current[row] = -1
            need -= 1
    for group in np.argsort(counts, kind="stable"):
        if need <= 0:
            return
        members = np.flatnonzero((inverse == group) & (current >= 0).any(axis=1))
        blank[members] |= current[members] >= 0
        current[members] = -1
        need -= members.size
