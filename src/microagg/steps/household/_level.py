"""Household-level columns: found, checked, treated once per household and copied back, and
the measure of how far a published column re-links the members of a household.

A missing value counts as a value of its own here: a household whose members hold a value
and a missing value varies (copying one member's value to the others would fill in or erase
data, which the step never does silently).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from ...metrics._survey_checks import check_households

__all__ = ["Relinking", "household_level_columns", "per_household", "relinking",
           "relinking_columns", "varying_households"]


def _codes(series: pd.Series) -> np.ndarray:
    """Codes of a column's values with missing values as one code of their own."""
    codes = pd.factorize(series, use_na_sentinel=True)[0].astype(np.int64)
    codes[codes < 0] = codes.max(initial=-1) + 1
    return codes


def varying_households(table: pd.DataFrame, households: str, column: str) -> pd.Index:
    """The ids of the households whose members hold more than one value of ``column``
    (a missing value counts as a value of its own)."""
    frame = pd.DataFrame({"h": table[households].to_numpy(), "v": _codes(table[column])})
    distinct = frame.groupby("h", sort=False)["v"].nunique()
    return distinct.index[distinct.to_numpy() > 1]


def household_level_columns(table: pd.DataFrame, households: str,
                            columns: Sequence[str] | None = None) -> tuple[str, ...]:
    """The household-level columns: constant within every household.

    Parameters
    ----------
    table : DataFrame
        One row per person.
    households : str
        The household id column (no missing id).
    columns : sequence of str, optional
        Columns declared household-level: each is checked and an error raised for the first
        that varies. ``None``: every other column is tested and those constant within every
        household returned (in the table's order).

    Returns
    -------
    tuple of str
        The household-level columns.

    Raises
    ------
    SchemaError
        For a declared column that varies within a household: the column, how many
        households vary, and one example household id (this message goes to the user, never
        into a published artefact).

    Examples
    --------
    >>> t = pd.DataFrame({"h": [1, 1, 2], "region": ["a", "a", "b"], "age": [30, 5, 40]})
    >>> household_level_columns(t, "h")
    ('region',)
    """
    check_households(table, households, caller="household_level_columns")
    if columns is None:
        return tuple(str(c) for c in table.columns if c != households
                     and varying_households(table, households, c).empty)
    unknown = [c for c in columns if c not in table.columns]
    if unknown:
        raise SchemaError(f"Unknown household-level column(s) {', '.join(map(repr, unknown))}; "
                          f"available: {', '.join(map(repr, map(str, table.columns)))}.")
    for column in columns:
        varying = varying_households(table, households, column)
        if not varying.empty:
            n_households = table[households].nunique()
            example = varying[0].item() if isinstance(varying[0], np.generic) else varying[0]
            raise SchemaError(
                f"Column {column!r} is declared household-level but varies within "
                f"{varying.size:,} of the {n_households:,} households (e.g. household "
                f"{example!r}); a missing value counts as a value of its own. Make it "
                "constant within each household, or do not declare it household-level.")
    return tuple(columns)


def per_household(table: pd.DataFrame, households: str, columns: Sequence[str],
                  fn: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    """Treat household-level columns once per household and copy the result to every member.

    Parameters
    ----------
    table : DataFrame
        One row per person; ``columns`` constant within every household (checked).
    households : str
        The household id column.
    columns : sequence of str
        The household-level columns ``fn`` sees and may change.
    fn : callable
        Takes the household table (one row per household, in order of first appearance,
        indexed by household id, holding ``columns``) and returns a table of the same index
        with new values of some of ``columns``.

    Returns
    -------
    DataFrame
        A new table: same rows, order and index; only the columns ``fn`` returned changed.

    Examples
    --------
    >>> t = pd.DataFrame({"h": [7, 7, 8], "w": [10.0, 10.0, 30.0]})
    >>> per_household(t, "h", ["w"], lambda hh: hh.assign(w=hh["w"] * 2))["w"].tolist()
    [20.0, 20.0, 60.0]
    """
    household_level_columns(table, households, columns)
    first = ~table[households].duplicated()
    level = table.loc[first, list(columns)].set_axis(table.loc[first, households].to_numpy())
    treated = fn(level.copy())
    if not treated.index.equals(level.index):
        raise ValueError("per_household: fn must return the household table's index "
                         f"({level.shape[0]} households) unchanged.")
    changed = [c for c in treated.columns if c not in columns]
    if changed:
        raise ValueError(f"per_household: fn returned column(s) {changed} that are not "
                         f"household-level columns {list(columns)}.")
    out = table.copy()
    positions = pd.Index(level.index).get_indexer(table[households].to_numpy())
    for column in treated.columns:
        values = treated[column].to_numpy()[positions]
        out[column] = pd.Series(values, index=table.index).astype(treated[column].dtype)
    return out


@dataclass(frozen=True)
class Relinking:
    """How far one published column (or combination) re-links households.

    ``households_identified`` households (of ``households`` with a value) hold a value that no
    other household holds; ``share`` is their share; ``records_linked`` counts the rows that
    share such a value with at least one housemate (rows an intruder groups into one household
    from this column alone)."""

    households: int
    households_identified: int
    share: float
    records_linked: int

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain JSON-ready values."""
        return asdict(self)


def relinking(published: pd.DataFrame, households: str, columns: str | Sequence[str]
              ) -> Relinking:
    """The re-linking measure of ``columns`` (one column, or several read together).

    A household is *identified* by the column when one of its published values (a missing
    value is no value) occurs on its own members' rows only: every row holding that value
    belongs to that household, so the value alone says which rows are one household. The
    measure is the share of the households with a value that are identified (0 when every
    value is shared by at least two households), and the records linked are the rows of
    identified households that hold such a value together with at least one housemate.

    Examples
    --------
    Households 1 and 2 share weight 10; household 3's weight 30 is its own:

    >>> t = pd.DataFrame({"h": [1, 1, 2, 3, 3], "w": [10.0, 10.0, 10.0, 30.0, 30.0]})
    >>> relinking(t, "h", "w")
    Relinking(households=3, households_identified=1, share=0.3333333333333333, records_linked=2)
    """
    names = [columns] if isinstance(columns, str) else list(columns)
    present = published[names].notna().all(axis=1).to_numpy()
    frame = published.loc[present, names].copy()
    frame["_h"] = published.loc[present, households].to_numpy()
    keys = frame.groupby(names, sort=False, dropna=False)
    n_households = keys["_h"].transform("nunique").to_numpy()
    n_rows = keys["_h"].transform("size").to_numpy()
    own = n_households == 1
    identified = pd.unique(frame["_h"].to_numpy()[own])
    with_value = int(frame["_h"].nunique())
    return Relinking(households=with_value, households_identified=int(identified.size),
                     share=float(identified.size / with_value) if with_value else 0.0,
                     records_linked=int((own & (n_rows >= 2)).sum()))


def relinking_columns(published: pd.DataFrame, households: str, candidates: Sequence[str]
                      ) -> dict[str, Relinking]:
    """The published columns among ``candidates`` that identify at least one household
    (:func:`relinking` share > 0), each with its measure, in the order given.

    Examples
    --------
    >>> t = pd.DataFrame({"h": [1, 1, 2, 2], "w": [5.0, 5.0, 7.0, 7.0], "r": ["a"] * 4})
    >>> list(relinking_columns(t, "h", ["w", "r"]))
    ['w']
    """
    check_households(published, households, caller="relinking_columns")
    found = {str(c): relinking(published, households, c) for c in candidates}
    return {c: r for c, r in found.items() if r.households_identified > 0}
