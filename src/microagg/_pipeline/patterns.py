"""Missingness patterns of the quasi-identifiers: which records may share a group.

Under ``missing="pattern"`` a record is grouped only with records that miss the same
quasi-identifiers, so that every published class holds records of one pattern (a published
missing cell is a value of its own, :func:`~microagg._pipeline.verify.published_classes`). A
pattern too small (or, with l-diversity, too homogeneous) to form a class is merged into a
pattern that misses more, its extra observed cells blanked (suppressed): local suppression
in the sense of sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015), here applied
to whole patterns, so that missing stays missing and no value is invented. (Our design; we
know of no paper that prescribes this merging order.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["PatternPlan", "plan_patterns"]

Accept = Callable[[NDArray[np.intp]], bool]
"""Whether a set of rows (as a whole) may form classes of its own, besides holding >= k."""


@dataclass
class PatternPlan:
    """Where every record goes: its final pattern and the cells blanked to get there."""

    pattern: NDArray[np.intp]
    """Final pattern of each row (0..m-1)."""
    missing: NDArray[np.bool_]
    """(m, p): the quasi-identifiers each final pattern misses."""
    suppressed: NDArray[np.bool_]
    """(n, p): observed cells blanked (published missing)."""
    input_patterns: int
    steps: list[str] = field(default_factory=list)
    """What was merged, in plain words."""

    def rows(self, j: int) -> NDArray[np.intp]:
        """The rows of final pattern ``j``, in input order."""
        return np.flatnonzero(self.pattern == j)


def _label(missing: frozenset[int], names: tuple[str, ...]) -> str:
    if not missing:
        return "complete records"
    return "records missing " + ", ".join(repr(names[j]) for j in sorted(missing))


class _Planner:
    """The merging steps of :func:`plan_patterns` on a dict pattern -> rows."""

    def __init__(self, missing: NDArray[np.bool_], k: int, scaled: NDArray[np.float64],
                 accept: Accept | None, names: tuple[str, ...]) -> None:
        self.k, self.scaled, self.accept, self.names = k, scaled, accept, names
        keys, inverse = np.unique(missing, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        self.groups: dict[frozenset[int], NDArray[np.intp]] = {
            frozenset(np.flatnonzero(key).tolist()): np.flatnonzero(inverse == j)
            for j, key in enumerate(keys)}
        self.steps: list[str] = []

    def ok(self, rows: NDArray[np.intp]) -> bool:
        return rows.size >= self.k and (self.accept is None or self.accept(rows))

    def failing(self) -> list[frozenset[int]]:
        """Patterns that cannot stand alone, most observed first (a stable order)."""
        return sorted((key for key, rows in self.groups.items() if not self.ok(rows)),
                      key=lambda key: (len(key), sorted(key)))

    def merge(self, source: frozenset[int], target: frozenset[int], why: str) -> frozenset[int]:
        """Move every row of ``source`` into the pattern ``source | target``."""
        union = source | target
        parts = [self.groups.pop(source), self.groups.pop(target)]
        if union in self.groups:  # pooling {a} with {b} when {a, b} exists
            parts.append(self.groups.pop(union))
        moved = parts[0]
        self.groups[union] = np.sort(np.concatenate(parts))
        self.steps.append(f"{moved.size} {_label(source, self.names)} {why} "
                          f"{_label(union, self.names)}")
        return union

    def into_supersets(self) -> None:
        """Step 1: a failing pattern joins a pattern missing more columns (fewest blanked
        cells among those it makes viable, else fewest blanked cells)."""
        changed = True
        while changed:
            changed = False
            for key in self.failing():
                supersets = [t for t in self.groups if t > key]
                if not supersets:
                    continue
                rows = self.groups[key]
                best = min(supersets, key=lambda t: (
                    not self.ok(np.concatenate([self.groups[t], rows])), len(t - key),
                    -self.groups[t].size, sorted(t)))
                self.merge(key, best, "joined the")
                changed = True
                break

    def pool(self) -> frozenset[int] | None:
        """Step 2: the failing patterns left (none has a superset) pooled into one."""
        failing = self.failing()
        if not failing:
            return None
        pooled = failing[0]
        for key in failing[1:]:
            pooled = self.merge(key, pooled, "pooled with")
        return pooled

    def borrow(self, pooled: frozenset[int]) -> bool:
        """Step 3: the pool takes its nearest records from a pattern that stays viable and
        observes every column the pool observes (their extra cells blanked)."""
        rows = self.groups[pooled]
        need = self.k - rows.size
        if need <= 0:
            return False
        observed = np.array([j for j in range(self.scaled.shape[1]) if j not in pooled],
                            dtype=np.intp)
        for donor in sorted((t for t in self.groups if t < pooled),
                            key=lambda t: (len(pooled - t), -self.groups[t].size, sorted(t))):
            given = self.groups[donor]
            if given.size - need < self.k:
                continue
            if observed.size:
                centre = self.scaled[np.ix_(rows, observed)].mean(axis=0) if rows.size else 0.0
                gap = ((self.scaled[np.ix_(given, observed)] - centre) ** 2).sum(axis=1)
                order = np.argsort(gap, kind="stable")
            else:
                order = np.arange(given.size)
            take, keep = given[np.sort(order[:need])], given[np.sort(order[need:])]
            joined = np.sort(np.concatenate([rows, take]))
            if not (self.ok(joined) and self.ok(keep)):
                continue
            self.groups[donor], self.groups[pooled] = keep, joined
            self.steps.append(f"{need} nearest {_label(donor, self.names)} moved to the "
                              f"{_label(pooled, self.names)}")
            return True
        return False

    def absorb(self, pooled: frozenset[int]) -> frozenset[int]:
        """Step 4: the pool merges with the whole pattern that costs fewest blanked cells
        (ending, at worst, with every record in one pattern)."""
        rows = self.groups[pooled]
        others = [t for t in self.groups if t != pooled]
        if not others:
            raise ValueError("plan_patterns: the whole table cannot form a class (fewer than "
                             f"k={self.k} records, or the sensitive values are too few).")
        best = min(others, key=lambda t: (rows.size * len(t - pooled)
                                          + self.groups[t].size * len(pooled - t), sorted(t)))
        return self.merge(best, pooled, "merged with")


def plan_patterns(missing: NDArray[np.bool_], k: int, scaled: NDArray[np.float64], *,
                  names: tuple[str, ...], accept: Accept | None = None) -> PatternPlan:
    """Assign every record to a missingness pattern that can form classes of at least ``k``.

    1. A pattern with fewer than ``k`` records (or rejected by ``accept``) joins a pattern
       whose missing columns are a superset, its extra observed cells blanked;
    2. the failing patterns left are pooled (missing: the union of their missing columns);
    3. a pool still below ``k`` takes its nearest records (squared distance on ``scaled``,
       over the pool's observed columns, to the pool's mean) from a pattern that keeps at
       least ``k`` and observes everything the pool observes (their extra cells blanked);
    4. else the pool merges with the whole pattern that blanks the fewest cells, and so on:
       at worst every record ends in one pattern (the all-missing one when the patterns
       together miss every column).

    Parameters
    ----------
    missing : ndarray of shape (n_samples, n_features), dtype=bool
        The missing cells of the quasi-identifiers.
    k : int
        Minimum class size.
    scaled : ndarray of shape (n_samples, n_features)
        The scaled quasi-identifiers (NaN where missing), for step 3's nearest records.
    names : tuple of str
        The columns' names, for the plan's steps.
    accept : callable, default=None
        ``accept(rows) -> bool``: whether a pattern's rows may stand alone (l-diversity).

    Returns
    -------
    PatternPlan

    Examples
    --------
    >>> m = np.array([[0, 0]] * 4 + [[0, 1]] * 2 + [[1, 1]] * 3, dtype=bool)
    >>> plan = plan_patterns(m, 3, np.zeros((9, 2)), names=("a", "b"))
    >>> plan.pattern.tolist(), int(plan.suppressed.sum())
    ([0, 0, 0, 0, 1, 1, 1, 1, 1], 2)
    """
    n, p = missing.shape
    planner = _Planner(missing, k, scaled, accept, names)
    n_input = len(planner.groups)
    planner.into_supersets()
    pooled = planner.pool()
    while pooled is not None and not planner.ok(planner.groups[pooled]):
        if not planner.borrow(pooled):
            pooled = planner.absorb(pooled)
    keys = sorted(planner.groups, key=lambda key: (len(key), sorted(key)))
    pattern = np.empty(n, dtype=np.intp)
    final = np.zeros((len(keys), p), dtype=bool)
    for j, key in enumerate(keys):
        pattern[planner.groups[key]] = j
        final[j, sorted(key)] = True
    return PatternPlan(pattern=pattern, missing=final, suppressed=final[pattern] & ~missing,
                       input_patterns=n_input, steps=planner.steps)
