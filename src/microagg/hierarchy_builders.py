"""Building generalization hierarchies from a column's values: intervals for numbers,
groupings for categories, masking for codes, adjacent ranges for ordinals (after ARX's
hierarchy wizard), and a preview on the data (write one with :meth:`Hierarchy.to_csv
<microagg.hierarchy.Hierarchy.to_csv>`).

Every builder returns a :class:`~microagg.hierarchy.Hierarchy` whose rows are the values
(level 0), then one label per level given, most specific first, then the root ``*``. Before
it builds, each one checks every level against the column and raises a
:class:`HierarchyBuildError` with *every* problem at once, each naming the value, the level
and the rule: every value covered at every level, and groups that nest (the values of one
level-L group all in the same group at level L + 1).

References
----------
Prasser, F. and Kohlmayer, F. "Putting statistical disclosure control into practice: the ARX
data anonymization tool." In Medical Data Privacy Handbook, Springer (2015): the hierarchy
builders (interval-based, redaction-based, order-based) and the CSV hierarchy format.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .exceptions import SchemaError
from .hierarchy import Hierarchy, as_labels

__all__ = ["HierarchyBuildError", "grouping_hierarchy", "hierarchy_preview",
           "interval_hierarchy", "masking_hierarchy", "ordinal_hierarchy"]

ROOT = "*"
"""The label of the root (ARX's)."""
_SHOWN = 10


class HierarchyBuildError(SchemaError):
    """The levels given do not make a hierarchy of the column; :attr:`problems` lists every
    problem, each naming the value, the level and the rule."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = list(problems)


def _observed(values: ArrayLike | Iterable[Any], column: str) -> list[str]:
    """The distinct non-missing values as hierarchy labels, in first-seen order."""
    labels = list(dict.fromkeys(_present(values)))
    if not labels:
        raise HierarchyBuildError([f"Column {column!r} has no value (every cell is missing): "
                                   "a hierarchy needs at least one."])
    return labels


def _present(values: Any) -> list[str]:
    """The non-missing values as hierarchy labels, every one (in order)."""
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values),
                     dtype=object).ravel()
    return list(as_labels([v for v in arr if not _missing(v)]))


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT, pandas.NA compare unequal to themselves
    except (TypeError, ValueError):
        return False


def _finish(rows: Mapping[str, Sequence[str]], column: str, source: str) -> Hierarchy:
    """The hierarchy of ``rows`` (value -> labels of levels 1..L), ``*`` appended, after
    the nesting and label checks (every problem at once)."""
    problems = _label_problems(rows, column) + _nesting_problems(rows, column)
    if problems:
        raise HierarchyBuildError(problems)
    paths = {value: (value, *labels, ROOT) for value, labels in rows.items()}
    return Hierarchy(paths, column=column, source=source)


def _label_problems(rows: Mapping[str, Sequence[str]], column: str) -> list[str]:
    problems = []
    for value, labels in rows.items():
        if value == "":
            problems.append(f"Column {column!r} has an empty text value: an ARX hierarchy "
                            "file cannot hold it (give it a name, or make it missing).")
        for level, label in enumerate(labels, start=1):
            if not label.strip():
                problems.append(f"Column {column!r}, value {value!r}: its label at level "
                                f"{level} is empty; every value needs a label at every level.")
    return problems


def _nesting_problems(rows: Mapping[str, Sequence[str]], column: str) -> list[str]:
    """Each level-L group whose values are in different groups at level L + 1."""
    problems = []
    height = len(next(iter(rows.values()), ()))
    for level in range(1, height):
        above: dict[str, tuple[str, str]] = {}
        split: set[str] = set()
        for value, labels in rows.items():
            group, parent = labels[level - 1], labels[level]
            first = above.setdefault(group, (value, parent))
            if first[1] != parent and group not in split:
                split.add(group)
                if len(split) > _SHOWN:
                    continue
                problems.append(
                    f"Column {column!r}: the level-{level} group {group!r} is split at level "
                    f"{level + 1}: value {first[0]!r} goes to {first[1]!r} and value "
                    f"{value!r} to {parent!r}; a level-{level + 1} group must be a union of "
                    f"level-{level} groups.")
        if len(split) > _SHOWN:
            problems.append(f"Column {column!r}: {len(split) - _SHOWN} more level-{level} "
                            f"groups are split at level {level + 1}.")
    return problems


# -------------------------------------------------------------------------------- intervals

def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _breaks(level: float | Sequence[float], number: int, low: float, high: float,
            origin: float, column: str) -> tuple[list[float], list[str]]:
    """The sorted breaks of one level (a width anchored at ``origin`` over ``[low, high]``,
    or the breaks given), and the problems of the level."""
    where = f"Column {column!r}, level {number}"
    if isinstance(level, (int, float, np.integer, np.floating)):
        width = float(level)
        if not (math.isfinite(width) and width > 0):
            return [], [f"{where}: the interval width must be a number > 0; got {level!r}."]
        first = origin + math.floor((low - origin) / width) * width
        count = math.floor((high - first) / width) + 2
        if count > 100_000:
            return [], [f"{where}: width {width:g} makes {count:,} intervals over "
                        f"[{low:g}, {high:g}]; the most is 100,000."]
        return [first + i * width for i in range(count)], []
    try:
        given = [float(b) for b in level]
    except (TypeError, ValueError):
        return [], [f"{where}: the breaks must be numbers; got {level!r}."]
    if len(given) < 2 or any(math.isnan(b) for b in given) or any(
            b >= c for b, c in itertools.pairwise(given)):
        return [], [f"{where}: the breaks must be at least two numbers in increasing order "
                    f"(-inf and inf allowed at the ends); got {list(level)!r}."]
    return given, []


def _interval_label(lo: float, hi: float) -> str:
    if math.isinf(lo):
        return f"< {hi:g}"
    if math.isinf(hi):
        return f">= {lo:g}"
    return f"[{lo:g}, {hi:g})"


def interval_hierarchy(values: ArrayLike | Iterable[Any],
                       levels: Sequence[float | Sequence[float]], *, column: str = "",
                       origin: float = 0.0) -> Hierarchy:
    """Intervals for a numeric column, one level per entry of ``levels``.

    Each level is a width (intervals ``[origin + i w, origin + (i + 1) w)``, labelled
    ``"[20, 25)"``) or a list of breaks (``[0, 18, 65, inf]``: ``"[0, 18)"``, ``"[18, 65)"``,
    ``">= 65"``); the levels must nest (each interval of level L inside one of level L + 1:
    widths each a multiple of the one before, breaks each among the breaks before).

    Parameters
    ----------
    values : array-like
        The column's values (numbers, or text of numbers; missing values ignored).
    levels : sequence of float or sequence of float
        Each level's width or breaks, most specific first.
    column : str, default=""
        The column (named by the messages).
    origin : float, default=0.0
        Where the widths' intervals start.

    Returns
    -------
    Hierarchy
        One row per distinct value: the value, each level's interval, ``*``.

    Raises
    ------
    HierarchyBuildError
        Every problem at once: a value that is not a number, a value outside a level's
        breaks, a level that splits an interval of the level before.

    Examples
    --------
    >>> interval_hierarchy([3, 17, 24], [5, 10], column="age").paths["17"]
    ('17', '[15, 20)', '[10, 20)', '*')
    >>> interval_hierarchy([3, 70], [[0, 18, 65, float("inf")]]).paths["70"]
    ('70', '>= 65', '*')
    """
    labels = _observed(values, column)
    numbers = {label: _number(label) for label in labels}
    problems = [f"Column {column!r}: value {label!r} is not a finite number; intervals need "
                "numbers." for label, n in numbers.items() if n is None][:_SHOWN]
    if not levels:
        problems.append(f"Column {column!r}: give at least one level (a width or breaks).")
    if problems:
        raise HierarchyBuildError(problems)
    finite = [n for n in numbers.values() if n is not None]
    low, high = min(finite), max(finite)
    rows: dict[str, list[str]] = {label: [] for label in labels}
    for number, level in enumerate(levels, start=1):
        breaks, found = _breaks(level, number, low, high, origin, column)
        problems += found
        if found:
            continue
        outside = [label for label, n in numbers.items()
                   if n is None or not breaks[0] <= n < breaks[-1]]
        for label in outside[:_SHOWN]:
            problems.append(f"Column {column!r}: value {label!r} is outside the breaks of "
                            f"level {number} ([{breaks[0]:g}, {breaks[-1]:g})); add a break "
                            "(-inf or inf at the ends) so that every value is covered.")
        for label, n in numbers.items():
            if label not in outside and n is not None:
                i = int(np.searchsorted(breaks, n, side="right")) - 1
                rows[label].append(_interval_label(breaks[i], breaks[i + 1]))
    if problems:
        raise HierarchyBuildError(problems)
    ordered = dict(sorted(rows.items(), key=lambda item: numbers[item[0]] or 0.0))
    return _finish(ordered, column, f"intervals {_level_text(levels)}")


def _level_text(levels: Sequence[Any]) -> str:
    return "; ".join(f"{w:g}" if isinstance(w, (int, float)) else
                     ", ".join(f"{float(b):g}" for b in w) for w in levels)


# -------------------------------------------------------------------------------- groupings

def grouping_hierarchy(values: ArrayLike | Iterable[Any],
                       levels: Sequence[Mapping[str, Sequence[Any]]], *, column: str = "",
                       keep_ungrouped: bool = False) -> Hierarchy:
    """Groups of categories, level by level: each level a mapping ``{group: [values]}``
    whose members are values of the column (a level-2 group lists every value under it).

    Parameters
    ----------
    values : array-like
        The column's values (missing values ignored).
    levels : sequence of mapping of str to sequence
        Each level's groups, most specific first.
    column : str, default=""
        The column (named by the messages).
    keep_ungrouped : bool, default=False
        A value no group of a level names keeps its label of the level below (its own
        value at level 1); ``False``: it is an error.

    Returns
    -------
    Hierarchy

    Raises
    ------
    HierarchyBuildError
        Every problem at once: a value in no group (``keep_ungrouped=False``), a value in
        two groups of a level, a member that is not a value of the column, a level-L group
        that does not nest in one level-(L + 1) group.

    Examples
    --------
    >>> h = grouping_hierarchy(["N1", "N2", "S1"], [{"North": ["N1", "N2"], "South": ["S1"]}],
    ...                        column="region")
    >>> h.paths["N2"], h.paths["S1"]
    (('N2', 'North', '*'), ('S1', 'South', '*'))
    """
    labels = _observed(values, column)
    known = set(labels)
    problems: list[str] = [] if levels else [
        f"Column {column!r}: give at least one level of groups."]
    rows: dict[str, list[str]] = {label: [] for label in labels}
    for number, groups in enumerate(levels, start=1):
        where: dict[str, str] = {}
        for group, members in groups.items():
            for member in as_labels(list(members)):
                if member not in known:
                    problems.append(f"Column {column!r}, level {number}: group {str(group)!r} "
                                    f"names {member!r}, which is not a value of the column.")
                elif where.setdefault(member, str(group)) != str(group):
                    problems.append(f"Column {column!r}, level {number}: value {member!r} is "
                                    f"in two groups, {where[member]!r} and {str(group)!r}.")
        missing = [v for v in labels if v not in where]
        if missing and not keep_ungrouped:
            shown = ", ".join(map(repr, missing[:_SHOWN]))
            more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
            problems.append(f"Column {column!r}, level {number}: {len(missing)} value(s) are "
                            f"in no group: {shown}{more}; every value must be covered.")
        for label in labels:
            below = rows[label][-1] if rows[label] else label
            rows[label].append(where.get(label, below))
    if problems:
        raise HierarchyBuildError(problems)
    return _finish(rows, column, f"groups ({len(levels)} level(s))")


# -------------------------------------------------------------------------------- masking

def masking_hierarchy(values: ArrayLike | Iterable[Any], levels: Sequence[int] | None = None,
                      *, column: str = "", mask: str = "*") -> Hierarchy:
    """Codes masked from the right, level by level (``12345`` -> ``1234*`` -> ``123**``).

    Parameters
    ----------
    values : array-like
        The column's codes (missing values ignored); codes of different lengths are
        masked each to its own length, and meet only at the root.
    levels : sequence of int, optional
        The number of characters masked at each level, increasing (``[1, 2, 3]``);
        default: 1, 2, ... up to one less than the longest code.
    column : str, default=""
        The column (named by the messages).
    mask : str, default="*"
        The masking character (one character).

    Returns
    -------
    Hierarchy

    Raises
    ------
    HierarchyBuildError
        A count that is not a whole number >= 1, counts that do not increase, a mask that
        is not one character.

    Examples
    --------
    >>> masking_hierarchy(["12345", "12399"], [1, 3], column="postcode").paths["12399"]
    ('12399', '1239*', '12***', '*')
    """
    labels = _observed(values, column)
    longest = max(len(v) for v in labels)
    counts = list(range(1, longest)) if levels is None else list(levels)
    problems = []
    if len(mask) != 1:
        problems.append(f"Column {column!r}: the mask must be one character; got {mask!r}.")
    if not counts:
        problems.append(f"Column {column!r}: give at least one level (the codes are "
                        f"{longest} character(s) long).")
    for number, count in enumerate(counts, start=1):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            problems.append(f"Column {column!r}, level {number}: the number of characters "
                            f"masked must be a whole number >= 1; got {count!r}.")
        elif number > 1 and isinstance(counts[number - 2], (int, np.integer)) \
                and count <= counts[number - 2]:
            problems.append(f"Column {column!r}, level {number}: {count} character(s) masked "
                            f"is not more than level {number - 1}'s {counts[number - 2]}; "
                            "each level must mask more.")
    if problems:
        raise HierarchyBuildError(problems)
    rows = {v: [v[:max(len(v) - c, 0)] + mask * min(c, len(v)) for c in counts]
            for v in sorted(labels)}
    return _finish(rows, column, f"masking {', '.join(map(str, counts))}")


# -------------------------------------------------------------------------------- ordinals

def _range_starts(ranks: list[str], levels: Sequence[Sequence[Any]], column: str,
                  problems: list[str]) -> list[list[int]]:
    """Each level's group starts (positions in ``ranks``, with 0 and the end); the
    problems of its cut points appended to ``problems``."""
    position = {v: i for i, v in enumerate(ranks)}
    previous: set[int] | None = None
    starts: list[list[int]] = []
    for number, cuts in enumerate(levels, start=1):
        found = set()
        for cut in as_labels(list(cuts)):
            if position.get(cut, 0) == 0:
                problems.append(f"Column {column!r}, level {number}: cut point {cut!r} must "
                                "be a value of the order other than the first.")
            elif previous is not None and position[cut] not in previous:
                problems.append(f"Column {column!r}, level {number}: cut point {cut!r} is not "
                                f"a cut of level {number - 1}, so it would split a "
                                f"level-{number - 1} group; a level's cuts must be among "
                                "those of the level below.")
            else:
                found.add(position[cut])
        starts.append([0, *sorted(found), len(ranks)])
        previous = found
    return starts


def ordinal_hierarchy(order: Sequence[Any], levels: Sequence[Sequence[Any]], *,
                      values: ArrayLike | Iterable[Any] | None = None,
                      column: str = "") -> Hierarchy:
    """Ordinal values grouped into adjacent ranges, level by level: each level the values
    at which a new group starts (its cut points); a group is labelled ``"first..last"``
    (a group of one value by the value).

    Parameters
    ----------
    order : sequence
        Every value, lowest first.
    levels : sequence of sequence
        Each level's cut points (values of ``order`` other than the first), most specific
        first; each level's cuts must be among the level before's (so the ranges nest).
    values : array-like, optional
        The column's values: each must be in ``order``.
    column : str, default=""
        The column (named by the messages).

    Returns
    -------
    Hierarchy
        One row per value of ``order``, in order.

    Raises
    ------
    HierarchyBuildError
        Every problem at once: a value of the column not in ``order``, a value twice in
        ``order``, a cut that is not a value of ``order`` (or is its first), a cut not among
        the level before's.

    Examples
    --------
    >>> h = ordinal_hierarchy(["none", "primary", "secondary", "tertiary"],
    ...                       [["primary", "tertiary"], ["tertiary"]], column="edu")
    >>> h.paths["secondary"]
    ('secondary', 'primary..secondary', 'none..secondary', '*')
    """
    ranks = list(as_labels(list(order)))
    problems = [f"Column {column!r}: value {v!r} is {n} times in the order; each value "
                "once." for v, n in Counter(ranks).items() if n > 1]
    if values is not None:
        outside = [v for v in _observed(values, column) if v not in set(ranks)]
        if outside:
            problems.append(f"Column {column!r}: {len(outside)} value(s) are not in the order:"
                            f" {', '.join(map(repr, outside[:_SHOWN]))}; every value of the "
                            "column must have its place.")
    if not levels:
        problems.append(f"Column {column!r}: give at least one level of cut points.")
    starts = _range_starts(ranks, levels, column, problems)
    if problems:
        raise HierarchyBuildError(problems)
    rows: dict[str, list[str]] = {v: [] for v in ranks}
    for bounds in starts:
        for lo, hi in itertools.pairwise(bounds):
            label = ranks[lo] if hi - lo == 1 else f"{ranks[lo]}..{ranks[hi - 1]}"
            for v in ranks[lo:hi]:
                rows[v].append(label)
    return _finish(rows, column, f"ordinal ranges ({len(levels)} level(s))")


# -------------------------------------------------------------------------------- out

def hierarchy_preview(hierarchy: Hierarchy, values: ArrayLike | Iterable[Any]
                      ) -> list[dict[str, Any]]:
    """Each row of the hierarchy with the records it covers: ``value``, ``count`` (records
    of ``values`` with that value), ``labels`` (levels 1..height) and ``group_counts``
    (records in each of those groups), in the hierarchy's order.

    Examples
    --------
    >>> h = masking_hierarchy(["123", "129", "451"], [1])
    >>> [(r["value"], r["count"], r["group_counts"]) for r in hierarchy_preview(h, ["123",
    ...  "129", "129", "451"])]
    [('123', 1, [3, 4]), ('129', 2, [3, 4]), ('451', 1, [1, 4])]
    """
    counts = Counter(_present(values))
    groups: Counter[tuple[int, str]] = Counter()
    for value, path in hierarchy.paths.items():
        for level in range(1, hierarchy.height + 1):
            groups[level, path[level]] += counts.get(value, 0)
    return [{"value": value, "count": counts.get(value, 0), "labels": list(path[1:]),
             "group_counts": [groups[level, path[level]]
                              for level in range(1, hierarchy.height + 1)]}
            for value, path in hierarchy.paths.items()]
