"""Columns without a role that break k by themselves, refused before any work.

A column published unchanged with a value that fewer than ``k`` records share (an exact date
of birth, a near-unique income, a household's sampling weight) tells those records apart on
its own, whatever the masking of the quasi-identifiers: the release would be k-anonymous on
paper only. :func:`check_roleless_columns` refuses such columns when the Request is built,
like the identifier-like ones (:func:`~microagg._pipeline.unmasked.check_unmasked_identifiers`),
unless the user publishes them on purpose (``keep``, a schema's ``other`` role): those are
recorded in ``params["keep"]`` and the report never says "Protected". The measure is one
``value_counts`` per column without a role; missing values are no value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..exceptions import SchemaError

__all__ = ["RareValues", "check_roleless_columns", "rare_values"]


@dataclass(frozen=True)
class RareValues:
    """How a column breaks k by itself: its distinct values that occur on fewer than ``k``
    rows (``values``; ``unique``: on one row only), the rows holding them (``rows``), of
    ``distinct`` values and ``observed`` rows with a value (missing values not counted)."""

    values: int
    unique: int
    rows: int
    distinct: int
    observed: int

    def describe(self, k: int) -> str:
        """The counts in words.

        Examples
        --------
        >>> RareValues(values=3, unique=2, rows=4, distinct=5, observed=9).describe(2)
        '3 of its 5 distinct values occur on fewer than 2 rows (2 on one row only), on 4 of \
the 9 rows with a value'
        """
        return (f"{self.values:,} of its {self.distinct:,} distinct values occur on fewer than "
                f"{k} rows ({self.unique:,} on one row only), on {self.rows:,} of the "
                f"{self.observed:,} rows with a value")


def rare_values(series: pd.Series, k: int) -> RareValues | None:
    """The values of ``series`` that fewer than ``k`` rows share, or ``None`` when every
    value (missing values aside) occurs on at least ``k`` rows.

    Examples
    --------
    >>> rare_values(pd.Series(["a", "a", "b", None]), 2)
    RareValues(values=1, unique=1, rows=1, distinct=2, observed=3)
    >>> rare_values(pd.Series([1.0, 1.0, None]), 2) is None
    True
    """
    try:
        counts = series.value_counts(dropna=True, sort=False)
    except (TypeError, NotImplementedError):  # lists or structs (numpy or Arrow cells)
        from ..io._nested import content_keys

        counts = content_keys(series.dropna()).value_counts(sort=False)
    rare = counts[counts < k]
    if rare.empty:
        return None
    return RareValues(values=int(rare.size), unique=int((rare == 1).sum()),
                      rows=int(rare.sum()), distinct=int(counts.size),
                      observed=int(counts.sum()))


def check_roleless_columns(df: pd.DataFrame, published_as_is: Sequence[str],
                           keep: Sequence[str], k: int) -> tuple[str, ...]:
    """Refuse columns without a role that by themselves break ``k``.

    Parameters
    ----------
    df : DataFrame
        The whole table (an engine that reads the file itself holds only its first rows:
        it is not checked here).
    published_as_is : sequence of str
        The columns that would be published unchanged (no role of any kind).
    keep : sequence of str
        Columns published unchanged on purpose (``keep``, a schema's ``other``): never
        refused.
    k : int
        The k the release must reach.

    Returns
    -------
    tuple of str
        The kept columns that break k by themselves (recorded in ``params["keep"]``).

    Raises
    ------
    SchemaError
        Naming every such column, how many of its values and rows occur fewer than ``k``
        times, and the three ways out: a role, drop, or keep on purpose.

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30] * 4, "dob": ["1990-01-01"] * 2 + ["1991-02-03"] * 2})
    >>> check_roleless_columns(df, ["dob"], ["dob"], 3)
    ('dob',)
    """
    found = {str(c): r for c in published_as_is if (r := rare_values(df[c], k)) is not None}
    refused = {c: r for c, r in found.items() if c not in keep}
    if refused:
        raise SchemaError(roleless_refusal(refused, k, len(df)))
    return tuple(found)


def roleless_refusal(refused: dict[str, RareValues], k: int, n_rows: int) -> str:
    """The refusal's message: every column with its counts, then the three remedies."""
    listed = "; ".join(f"{c!r}: {r.describe(k)}" for c, r in refused.items())
    names = ",".join(refused)
    return (f"{len(refused)} column(s) without a role break {k}-anonymity by themselves: "
            f"published unchanged next to the masked quasi-identifiers, each tells records "
            f"apart on its own (of {n_rows:,} rows): {listed}. Give each a role: mask it as a "
            "quasi-identifier (add it to -q; quasi_identifiers=[...] in Python; role = "
            "\"quasi-identifier\" in a schema, type = \"date\" for dates), or drop it "
            f"(--drop {names}; identifiers=[...] in Python; role = \"identifier\" in a "
            f"schema); or publish it on purpose, recorded in the release (--keep {names}; "
            "keep=[...] in Python; role = \"other\" in a schema).")
