"""The ``recode`` step: categories of one column grouped by a mapping or replaced by their
ancestor at a level of a generalization hierarchy (sdcMicro's ``groupAndRename`` and
``globalRecode``; ARX's value generalization hierarchies)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from ...hierarchy import Hierarchy, as_labels
from ._common import column_of, counts, with_column
from .options import Recode

__all__ = ["apply_recode", "recode_mapping"]


def _hierarchy(options: Recode) -> Hierarchy:
    hierarchy = options.hierarchy
    if isinstance(hierarchy, str):
        hierarchy = Hierarchy.from_csv(hierarchy, column=options.column)
    if not isinstance(hierarchy, Hierarchy):
        raise TypeError(f"The 'hierarchy' option of step 'recode' (column "
                        f"{options.column!r}) must be a microagg.hierarchy.Hierarchy or the "
                        f"path of an ARX-style CSV file. Got {hierarchy!r} instead.")
    if options.level > hierarchy.height:
        raise ValueError(f"The 'level' option of step 'recode' must be in [0, "
                         f"{hierarchy.height}] (the height of the hierarchy of column "
                         f"{options.column!r}). Got {options.level} instead.")
    return hierarchy


def recode_mapping(options: Recode, labels: Any) -> dict[str, str]:
    """Each value of ``labels`` (the column's observed values as text) that the step
    changes, to what it becomes; a value named by the groups but absent from the column, or
    a value outside the hierarchy, raises a :class:`SchemaError` naming it.

    Parameters
    ----------
    options : Recode
        The step's options.
    labels : iterable of str
        The distinct observed values of the column, as :func:`~microagg.hierarchy.as_labels`
        writes them.

    Returns
    -------
    dict of str to str
        Old value to new value, for the values that change only.
    """
    present = list(dict.fromkeys(labels))
    if options.groups is not None:
        known = set(present)
        unknown = [old for olds in options.groups.values() for old in olds if old not in known]
        if unknown:
            shown = ", ".join(map(repr, sorted(present)[:20]))
            raise SchemaError(
                f"Step 'recode': the 'groups' option names {len(unknown)} value(s) that "
                f"column {options.column!r} does not have: {', '.join(map(repr, unknown[:10]))}"
                f". The column's values are {shown}"
                + (f" and {len(present) - 20} more" if len(present) > 20 else "") + ".")
        return {old: new for new, olds in options.groups.items() for old in olds if old != new}
    hierarchy = _hierarchy(options)
    outside = [v for v in present if v not in hierarchy.paths]
    if outside:
        raise SchemaError(f"Step 'recode': {len(outside)} value(s) of column "
                          f"{options.column!r} are not in its hierarchy ({hierarchy.source}): "
                          f"{', '.join(map(repr, outside[:10]))}; the hierarchy's values are "
                          f"{', '.join(map(repr, list(hierarchy.paths)[:10]))}"
                          + (" ..." if len(hierarchy.paths) > 10 else "") + ".")
    return {v: hierarchy.paths[v][options.level] for v in present
            if hierarchy.paths[v][options.level] != v}


def apply_recode(table: pd.DataFrame, options: Recode, rng: np.random.Generator, *,
                 households: str | None = None, weights: str | None = None,
                 strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Group the categories of ``options.column``.

    A value the mapping does not name keeps its value; a missing cell stays missing. A
    numeric column is recoded as text (``39.0`` is the category ``"39"``); a categorical
    column stays categorical with the new categories. The recoding is a function of the
    value alone: ``rng``, ``households``, ``weights`` and ``strata`` do not change it.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; it is not modified.
    options : Recode
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic).
    households, weights, strata : str, optional
        Unused: every record's value is recoded the same way.

    Returns
    -------
    table : pandas.DataFrame
        A new table, the same rows, order and index; only ``options.column`` changed.
    details : dict
        ``column``, ``by`` (``"groups"`` or the hierarchy's source and level), ``mapping``
        (old -> new, for the values present that change), ``counts`` (records per published
        value), ``records_changed`` and ``missing`` (cells left missing).

    References
    ----------
    Templ, M., Kowarik, A. and Meindl, B. "Statistical disclosure control for micro-data
    using the R package sdcMicro." J. Stat. Softw. 67(4) (2015), section 3
    (``groupAndRename``, ``globalRecode``).
    """
    series = column_of(table, options.column, step=options.name)
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    missing = codes < 0
    distinct = np.asarray(uniques, dtype=object)
    labels = as_labels(distinct)
    mapping = recode_mapping(options, labels)
    numeric = pd.api.types.is_numeric_dtype(series.dtype)
    images = np.array([mapping.get(label, label if numeric else value)
                       for label, value in zip(labels, distinct, strict=True)] + [None],
                      dtype=object)  # the last one: a missing cell stays missing
    values = images[np.where(missing, len(distinct), codes)]
    new: pd.Series = pd.Series(values, index=series.index, name=options.column)
    if isinstance(series.dtype, pd.CategoricalDtype):
        new = new.astype("category")
    out = with_column(table, options.column, new)
    moved = np.array([label in mapping for label in labels] + [False], dtype=bool)
    rows = int(moved[np.where(missing, len(distinct), codes)].sum())
    by = "groups" if options.groups is not None else \
        f"hierarchy {getattr(options.hierarchy, 'source', options.hierarchy)} level " \
        f"{options.level}"
    return out, {"column": options.column, "by": by, "mapping": dict(sorted(mapping.items())),
                 "counts": counts(new), "records_changed": rows,
                 "missing": int(missing.sum())}
