"""What targeted record swapping reads from a table, checked before anything changes: one
row per household (its geography, similarity profile and carried-along values, each
constant within the household), the geography's nesting, and the risk of every record at
every level of the hierarchy (counts of its risk variables within its area, after sdcMicro
``recordSwap``'s k-anonymity rule: a record is at risk at a level if its count is below k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .options import SwapHouseholds

__all__ = ["Households", "codes", "combine", "level_risk", "nesting_problem", "prepare"]


def codes(series: pd.Series) -> NDArray[np.int64]:
    """Each value's code 0..m-1 (a missing value is a value of its own); numbers compared as
    floats, so 1 and 1.0 are one value."""
    values = series
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.astype(np.float64)
    found, _ = pd.factorize(values, use_na_sentinel=False)
    return np.asarray(found, dtype=np.int64)


def combine(columns: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
    """One code per distinct combination of the given code columns (same length)."""
    out = columns[0]
    for other in columns[1:]:
        width = int(other.max(initial=0)) + 1
        found, _ = pd.factorize(out * width + other)
        out = np.asarray(found, dtype=np.int64)
    return out


@dataclass(frozen=True)
class Households:
    """One row per household (codes), and each record's household."""

    member: NDArray[np.int64]
    """Each record's household, 0..h-1."""
    first: NDArray[np.int64]
    """The first record of each household (its household-level values' row)."""
    size: NDArray[np.int64]
    """Records per household."""
    geography: tuple[NDArray[np.int64], ...]
    """Each household's area code at each level, coarsest first."""
    profile: NDArray[np.int64]
    """Each household's similarity profile code."""
    risky: NDArray[np.bool_]
    """``risky[l, h]``: a record of household h is at risk at level l."""
    weight: NDArray[np.float64]
    """Each household's largest record risk (1 / count) at the finest level: the fill's
    sampling weight."""
    risky_records: tuple[int, ...]
    """Records at risk at each level."""

    @property
    def count(self) -> int:
        return int(self.first.size)

    def target_level(self) -> NDArray[np.int64]:
        """The coarsest level at which each household is at risk (-1: none)."""
        any_risk = self.risky.any(axis=0)
        return np.where(any_risk, np.argmax(self.risky, axis=0), -1).astype(np.int64)


def _household_codes(table: pd.DataFrame, households: str, *, step: str
                     ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    ids = table[households]
    if ids.isna().any():
        row = int(np.flatnonzero(ids.isna().to_numpy())[0])
        raise ValueError(f"Step {step!r}: the household id column {households!r} is missing "
                         f"in {int(ids.isna().sum())} rows (first: row {row}); every record "
                         "needs its household.")
    member, _ = pd.factorize(ids)
    member = np.asarray(member, dtype=np.int64)
    first = np.full(int(member.max(initial=-1)) + 1, -1, dtype=np.int64)
    first[member[::-1]] = np.arange(member.size - 1, -1, -1)
    return member, first


def _constant(table: pd.DataFrame, column: str, option: str, member: NDArray[np.int64],
              first: NDArray[np.int64], households: str, *, step: str) -> NDArray[np.int64]:
    """The column's codes, refused if they vary within a household (naming one)."""
    found = codes(table[column])
    bad = np.flatnonzero(found != found[first[member]])
    if bad.size:
        row = int(bad[0])
        hid = table[households].iloc[row]
        a = table[column].iloc[int(first[member[row]])]
        raise ValueError(f"Step {step!r}: column {column!r} (option {option!r}) varies within "
                         f"household {hid!r} ({a!r} and {table[column].iloc[row]!r}; "
                         f"{np.unique(member[bad]).size} households vary); it must be one "
                         "value per household, since the household moves as a whole.")
    return found


def nesting_problem(geography: Sequence[NDArray[np.int64]], labels: Sequence[pd.Series],
                    names: Sequence[str]) -> str | None:
    """Why the codes do not nest (an area of level l in two areas of level l - 1), or
    ``None``; ``labels[l]`` gives the value of each code."""
    for level in range(1, len(geography)):
        child, parent = geography[level], geography[level - 1]
        if int(combine([child, parent]).max(initial=-1)) + 1 == pd.unique(child).size:
            continue  # as many (area, parent) pairs as areas: one parent each
        pairs = np.unique(np.stack([child, parent], axis=1), axis=0)
        doubled = pairs[np.flatnonzero(np.diff(pairs[:, 0]) == 0)[0], 0]
        parents = pairs[pairs[:, 0] == doubled, 1]
        shown = ", ".join(repr(labels[level - 1].iloc[int(p)]) for p in parents[:3])
        return (f"value {labels[level].iloc[int(doubled)]!r} of {names[level]!r} lies in "
                f"{parents.size} areas of {names[level - 1]!r} ({shown}); the hierarchy must "
                f"nest: give every area of {names[level]!r} a code unique in the file (for "
                "example its parent's code and its own, joined)")
    return None


def level_risk(area: NDArray[np.int64], keys: NDArray[np.int64], k: int
               ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Each record at risk (its combination of keys counted fewer than ``k`` times in its
    area) and each record's count."""
    cell = combine([area, keys])
    count = np.bincount(cell)[cell]
    return count < k, count


def prepare(table: pd.DataFrame, options: SwapHouseholds, households: str | None
            ) -> Households:
    """The household table of ``table`` with every input check of the swap (before anything
    changes): the household role given, the columns present, the geography, similarity and
    carried-along columns constant within each household, the geography nested and
    complete."""
    step = options.name
    if households is None:
        raise ValueError(f"Step {step!r} swaps whole households: give the household id "
                         "column (households= in Python, --household COL, role = "
                         "\"household\" in a schema).")
    named = (households, *options.hierarchy, *options.similar, *options.risk_variables,
             *options.carry_along)
    missing = [c for c in named if c not in table.columns]
    if missing:
        raise ValueError(f"Step {step!r} names column(s) {missing} that are not in the "
                         f"table; the columns are {list(table.columns)}.")
    member, first = _household_codes(table, households, step=step)
    person_geo = []
    for column in options.hierarchy:
        if table[column].isna().any():
            raise ValueError(f"Step {step!r}: the geographic column {column!r} is missing in "
                             f"{int(table[column].isna().sum())} rows; every record needs "
                             "its area at every level.")
        person_geo.append(_constant(table, column, "hierarchy", member, first, households,
                                    step=step))
    for option, columns in (("similar", options.similar), ("carry_along",
                                                           options.carry_along)):
        for column in columns:
            _constant(table, column, option, member, first, households, step=step)
    geography = tuple(g[first] for g in person_geo)
    labels = [_labels(table[c]) for c in options.hierarchy]
    problem = nesting_problem(geography, labels, options.hierarchy)
    if problem:
        raise ValueError(f"Step {step!r}: the geography is not a hierarchy: {problem}.")
    profile = combine([codes(table[c]) for c in options.similar])[first]
    return _with_risk(table, options, member, first, person_geo, geography, profile)


def _labels(series: pd.Series) -> pd.Series:
    """The value of each code of :func:`codes` (same order)."""
    values = series
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.astype(np.float64)
    _, uniques = pd.factorize(values, use_na_sentinel=False)
    return pd.Series(np.asarray(uniques, dtype=object))


def _with_risk(table: pd.DataFrame, options: SwapHouseholds, member: NDArray[np.int64],
               first: NDArray[np.int64], person_geo: list[NDArray[np.int64]],
               geography: tuple[NDArray[np.int64], ...], profile: NDArray[np.int64]
               ) -> Households:
    n_households = first.size
    levels = len(person_geo)
    risky = np.zeros((levels, n_households), dtype=bool)
    weight = np.zeros(n_households)
    counted: list[int] = []
    if options.k > 0:
        keys = combine([codes(table[c]) for c in options.risk_variables])
        for level, area in enumerate(person_geo):
            at_risk, count = level_risk(area, keys, options.k)
            counted.append(int(at_risk.sum()))
            risky[level] = np.bincount(member, weights=at_risk,
                                       minlength=n_households) > 0
            if level == levels - 1:
                np.maximum.at(weight, member, 1.0 / count)
    else:
        counted = [0] * levels
        weight[:] = 1.0
    return Households(member=member, first=first,
                      size=np.bincount(member, minlength=n_households).astype(np.int64),
                      geography=geography, profile=profile, risky=risky, weight=weight,
                      risky_records=tuple(counted))
