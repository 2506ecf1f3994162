"""Check a published file someone else produced: the k, l and t it achieves, homogeneous
classes and the re-identification risk of its equivalence classes.

Everything is computed from the published table alone (like pyCANON), by the one verifier
(:mod:`microagg._pipeline.verify`): the equivalence classes are the sets of rows with identical
quasi-identifiers, found with one vectorized factorization (no Python loop over rows or
classes).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._pipeline.rules import check_diversity
from .._pipeline.verify import class_sizes, published_classes
from ..exceptions import SchemaError
from ..metrics import homogeneity
from ..models import l_diversity, t_closeness
from ..schema.schema_file import check_unique_columns

__all__ = ["FileCheck", "check_table", "equivalence_classes"]


@dataclass(frozen=True)
class FileCheck:
    """What a published table achieves (every figure re-derived from the table)."""

    rows: int
    classes: int
    k: int
    risk: dict[str, float]
    """Re-identification risk of a record in its class (1 / class size): ``max`` (= 1/k),
    ``mean``, and the share of records in classes smaller than 2, 3, 5 and 10."""
    l_diversity: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per sensitive column: the l every class reaches, by diversity."""
    t_closeness: dict[str, float] = field(default_factory=dict)
    """Per sensitive column: the largest EMD of a class to the whole table."""
    homogeneity: dict[str, dict[str, float | int]] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {"rows": self.rows, "classes": self.classes, "k": self.k, "risk": self.risk,
                "l_diversity": self.l_diversity, "t_closeness": self.t_closeness,
                "homogeneity": self.homogeneity, "seconds": self.seconds}


def equivalence_classes(df: pd.DataFrame, columns: Sequence[str]) -> NDArray[np.intp]:
    """Class number of each row: rows with identical values in ``columns`` share one.

    Missing values count as a value of their own (a published ``NaN`` is what an intruder
    sees). Vectorized: each column is factorized, the codes combined into one key per row.

    Examples
    --------
    >>> equivalence_classes(pd.DataFrame({"a": [1, 1, 2], "b": ["x", "x", "x"]}), ["a", "b"])
    array([0, 0, 1])
    """
    if not columns:
        raise SchemaError("Name at least one quasi-identifier to form the classes.")
    return published_classes(df, list(columns))


def check_table(df: pd.DataFrame, *, quasi_identifiers: Sequence[str],
                sensitive: Sequence[str] = (), diversities: Sequence[str] = ("distinct",
                                                                             "entropy"),
                closeness: bool = True) -> FileCheck:
    """The k-anonymity, l-diversity, t-closeness, homogeneity and class risk of a table.

    Parameters
    ----------
    df : pandas.DataFrame
        A published table.
    quasi_identifiers : sequence of str
        The columns an intruder may know.
    sensitive : sequence of str, default=()
        Columns whose disclosure l and t measure (missing values are refused: say what they
        mean first).
    diversities : sequence of {"distinct", "entropy", "recursive"}
        Which l to report (recursive with c = 2).
    closeness : bool, default=True
        Also compute t (the EMD: ordered for numeric columns, equal distances otherwise).

    Examples
    --------
    >>> table = pd.DataFrame({"age": [30, 30, 40, 40], "disease": ["a", "b", "a", "a"]})
    >>> result = check_table(table, quasi_identifiers=["age"], sensitive=["disease"])
    >>> result.k, result.l_diversity["disease"]["distinct"], result.homogeneity["disease"]["homogeneous_classes"]
    (2, 1.0, 1)
    """
    start = time.perf_counter()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"check_table expects a pandas DataFrame. Got {type(df).__name__}.")
    check_unique_columns(df.columns, source="the table")
    missing = [c for c in [*quasi_identifiers, *sensitive] if c not in df.columns]
    if missing:
        raise SchemaError(f"Column(s) {', '.join(map(repr, missing))} are not in the table; "
                          f"its columns: {', '.join(map(str, df.columns))}.")
    both = sorted(set(quasi_identifiers) & set(sensitive))
    if both:
        raise SchemaError(f"Column(s) {both} are both quasi-identifiers and sensitive.")
    for diversity in diversities:
        check_diversity(diversity)
    if len(df) == 0:
        raise SchemaError("The table has no rows; there is nothing to check.")
    classes = equivalence_classes(df, list(quasi_identifiers))
    sizes = class_sizes(classes)
    per_record = 1.0 / sizes[classes]
    risk = {"max": float(per_record.max()), "mean": float(per_record.mean()),
            **{f"share_in_classes_below_{m}": float(np.mean(sizes[classes] < m))
               for m in (2, 3, 5, 10)}}
    l_values: dict[str, dict[str, float]] = {}
    t_values: dict[str, float] = {}
    homogeneous: dict[str, dict[str, float | int]] = {}
    for col in sensitive:
        n_missing = int(df[col].isna().sum())
        if n_missing:
            raise SchemaError(f"Sensitive column {col!r} has {n_missing} missing values in "
                              f"{len(df)} rows; fill or drop them first.")
        values = df[col].to_numpy()
        l_values[col] = {d: float(l_diversity(classes, values, diversity=d)) for d in
                         diversities}
        homogeneous[col] = homogeneity(classes, values)
        if closeness:
            t_values[col] = float(t_closeness(classes, values))
    return FileCheck(rows=len(df), classes=int(sizes.size), k=int(sizes.min()), risk=risk,
                     l_diversity=l_values, t_closeness=t_values, homogeneity=homogeneous,
                     seconds=time.perf_counter() - start)
