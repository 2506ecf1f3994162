"""The Hierarchies page's form: which builder a column gets, the fields it starts with, and
the posted fields turned into a hierarchy (:mod:`microagg.hierarchy_builders`).

Form fields (stable names, also used by the tests): ``column``, ``kind`` (a key of
:data:`KINDS`), ``levels`` (1 to :data:`MAX_LEVELS`); for ``intervals`` and ``masking``
``level-L`` (a width, or breaks separated by commas; a number of characters masked) and
``origin``; for ``groups`` ``group-L-I`` (the level-L group of the column's I-th value, from
0; blank: the value keeps its label of the level below); for ``ordinal`` ``cut-L-I`` (a
checkbox: a new level-L range starts at the I-th value, from 1). Values are named by their
place in the list the server made from the upload, never by text the browser sends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from microagg.hierarchy import Hierarchy, as_labels
from microagg.hierarchy_builders import (
    HierarchyBuildError,
    grouping_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    ordinal_hierarchy,
)

__all__ = ["KINDS", "MAX_FIELD", "MAX_LEVELS", "MAX_VALUES", "build", "column_values",
           "default_fields", "default_kind", "levels_of"]

KINDS = {"intervals": "intervals of numbers", "groups": "groups of categories",
         "masking": "masking of codes from the right", "ordinal": "ranges of ordered values"}
"""The builders, by the form's ``kind``."""
MAX_LEVELS = 6
"""The most levels the form builds (the root ``*`` comes on top)."""
MAX_VALUES = 500
"""The most distinct values the groups and ordinal builders list."""
MAX_FIELD = 500
"""The longest text of one field (characters)."""


def default_kind(column_type: str) -> str:
    """The builder a column of ``column_type`` (:func:`~.plan_form.column_type`) starts
    with: intervals for numbers, ranges for ordinals, groups for the rest."""
    return {"numeric": "intervals", "ordinal": "ordinal"}.get(column_type, "groups")


def column_values(series: pd.Series, entry: Mapping[str, Any]) -> list[str]:
    """The column's distinct values as hierarchy labels, in the order the page lists them:
    an ordinal's declared ``order`` (then any value it lacks), an ordered category's
    order, numbers from the lowest, text sorted."""
    present = list(dict.fromkeys(as_labels(series.dropna().to_numpy())))
    order = entry.get("order")
    if isinstance(order, list) and order:
        declared = list(dict.fromkeys(as_labels(order)))
        return declared + [v for v in present if v not in set(declared)]
    if isinstance(series.dtype, pd.CategoricalDtype) and series.dtype.ordered:
        return list(dict.fromkeys(as_labels(series.cat.categories.to_numpy())))
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
            series.dtype):
        return sorted(present, key=float)
    return sorted(present)


def _nice_width(low: float, high: float) -> float:
    """A round width (1, 2 or 5 times a power of ten) making about 20 intervals."""
    span = (high - low) / 20 or 1.0
    power = 10 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= span)


def default_fields(kind: str, series: pd.Series, values: list[str]) -> dict[str, str]:
    """The fields a builder starts with: three doubling widths from a round one, masks of
    1, 2, 3 characters, one level of groups or ranges to fill in."""
    if kind == "intervals":
        numbers = pd.to_numeric(series, errors="coerce").dropna()
        if numbers.empty:
            return {"levels": "1", "level-1": "", "origin": "0"}
        width = _nice_width(float(numbers.min()), float(numbers.max()))
        return {"levels": "3", "origin": "0",
                **{f"level-{n}": f"{width * 2 ** (n - 1):g}" for n in (1, 2, 3)}}
    if kind == "masking":
        longest = max((len(v) for v in values), default=2)
        count = max(1, min(3, longest - 1))
        return {"levels": str(count), **{f"level-{n}": str(n) for n in range(1, count + 1)}}
    return {"levels": "1"}


def levels_of(form: Mapping[str, str]) -> tuple[int, list[str]]:
    """The number of levels the form asks for, and its problem (if any: then 1)."""
    text = form.get("levels", "1").strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_LEVELS:
        return int(text), []
    return 1, [f"levels: the number of levels must be a whole number in [1, {MAX_LEVELS}]; "
               f"got {text[:40]!r}."]


def _numbers(text: str, where: str, problems: list[str]) -> list[float]:
    out = []
    for token in (t.strip() for t in text.replace(";", ",").split(",")):
        try:
            number = float(token)
        except ValueError:
            problems.append(f"{where}: {token[:40]!r} is not a number (a width such as 5, "
                            "or breaks such as 0, 18, 65, inf).")
            continue
        if math.isnan(number):
            problems.append(f"{where}: nan is not a number a break can be.")
        out.append(number)
    return out


def _intervals(form: Mapping[str, str], n: int, series: pd.Series, values: list[str],
               column: str, problems: list[str]) -> Hierarchy | None:
    levels: list[float | list[float]] = []
    for level in range(1, n + 1):
        where = f"level-{level} (column {column!r})"
        text = form.get(f"level-{level}", "").strip()
        if not text:
            problems.append(f"{where}: give a width or breaks.")
            continue
        numbers = _numbers(text, where, problems)
        levels.append(numbers[0] if len(numbers) == 1 else numbers)
    origin = _numbers(form.get("origin", "0").strip() or "0", f"origin (column {column!r})",
                      problems)
    if len(origin) > 1 or (origin and not math.isfinite(origin[0])):
        problems.append(f"origin (column {column!r}): one finite number, where the widths' "
                        "intervals start.")
    if problems:
        return None
    return interval_hierarchy(series.to_numpy(), levels, column=column, origin=origin[0])


def _masking(form: Mapping[str, str], n: int, series: pd.Series, values: list[str],
             column: str, problems: list[str]) -> Hierarchy | None:
    counts = []
    for level in range(1, n + 1):
        text = form.get(f"level-{level}", "").strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 4):
            problems.append(f"level-{level} (column {column!r}): the number of characters "
                            f"masked must be a whole number >= 1; got {text[:40]!r}.")
            continue
        counts.append(int(text))
    if problems:
        return None
    return masking_hierarchy(series.to_numpy(), counts, column=column)


def _groups(form: Mapping[str, str], n: int, series: pd.Series, values: list[str],
            column: str, problems: list[str]) -> Hierarchy:
    levels = []
    for level in range(1, n + 1):
        groups: dict[str, list[str]] = {}
        for index, value in enumerate(values):
            name = form.get(f"group-{level}-{index}", "").strip()
            if name:
                groups.setdefault(name, []).append(value)
        levels.append(groups)
    return grouping_hierarchy(values, levels, column=column, keep_ungrouped=True)  # page order


def _ordinal(form: Mapping[str, str], n: int, series: pd.Series, values: list[str],
             column: str, problems: list[str]) -> Hierarchy:
    levels = [[value for index, value in enumerate(values) if index >= 1
               and form.get(f"cut-{level}-{index}")] for level in range(1, n + 1)]
    return ordinal_hierarchy(values, levels, values=series.to_numpy(), column=column)


def build(kind: str, form: Mapping[str, str], series: pd.Series, values: list[str],
          column: str) -> Hierarchy:
    """The hierarchy the posted ``form`` describes for ``series`` (the column ``column``
    of the upload, its values listed as ``values``, :func:`column_values`).

    Raises
    ------
    HierarchyBuildError
        Every problem of the form at once (the fields' own first, then the builder's),
        each naming the field or the value and the level.
    """
    problems = [f"{key}: at most {MAX_FIELD} characters; got {len(text):,}."
                for key, text in form.items() if len(text) > MAX_FIELD]
    if kind not in KINDS:
        problems.append(f"kind: unknown builder {kind[:40]!r}; the builders are "
                        f"{', '.join(KINDS)}.")
    n, found = levels_of(form)
    problems += found
    if kind in ("groups", "ordinal") and len(values) > MAX_VALUES:
        problems.append(f"Column {column!r} has {len(values):,} distinct values; the {kind} "
                        f"builder lists at most {MAX_VALUES}: use intervals or masking, or "
                        "upload a hierarchy file on the Roles page.")
    if problems:
        raise HierarchyBuildError(problems)
    built = _BUILDERS[kind](form, n, series, values, column, problems)
    if built is None:
        raise HierarchyBuildError(problems)
    return built


_BUILDERS = {"intervals": _intervals, "masking": _masking, "groups": _groups,
             "ordinal": _ordinal}
"""Each builder's reader of the form (the keys of :data:`KINDS`)."""
