"""Generalization of mixed-data groups (seed 002, MAGE): numeric columns to the group mean or
the group's interval, categorical columns to the closest common generalization (the lowest
common ancestor in the column's hierarchy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_option
from .._base.validation import check_labels
from ..hierarchy import HierarchyTables

__all__ = ["NUMERIC_MODES", "Generalized", "class_nodes", "generalize"]

NUMERIC_MODES = ("mean", "interval")


def _sorted_segments(labels: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(np.bincount(labels))))[:-1]
    return order, starts


def class_nodes(codes: ArrayLike, labels: ArrayLike, tables: HierarchyTables) -> NDArray[np.intp]:
    """Node id of the lowest common ancestor of each group's leaves, shape (n_groups,)."""
    lab = check_labels(labels, n_samples=np.asarray(codes).shape[0])
    cod = np.asarray(codes, dtype=np.intp)
    order, starts = _sorted_segments(lab)
    n_groups = starts.size
    node = np.full(n_groups, -1, dtype=np.intp)
    for level in range(tables.height + 1):
        ids = tables.ancestor[level, cod[order]]
        same = np.minimum.reduceat(ids, starts) == np.maximum.reduceat(ids, starts)
        fresh = same & (node < 0)
        node[fresh] = ids[starts[fresh]]
    return node


@dataclass(frozen=True)
class Generalized:
    """The generalized quasi-identifiers, one row per record.

    ``numeric`` holds the published numeric values (group means, or NaN in interval mode);
    ``low`` and ``high`` the group's interval on the original scale (equal to the mean in
    mean mode); ``nodes`` the published hierarchy node of each categorical column, ``labels``
    its text, and ``covered`` how many leaves the published value stands for (the node's
    leaves, or the size of a value set).
    """

    numeric: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    nodes: NDArray[np.intp]
    labels: tuple[NDArray[np.object_], ...]
    covered: NDArray[np.intp]


def generalize(numeric: ArrayLike | None, codes: ArrayLike | None,
               tables: Sequence[HierarchyTables], labels: ArrayLike, *,
               numeric_mode: str = "mean",
               categorical_sets: Sequence[bool] | None = None) -> Generalized:
    """Generalize every group (see the module docstring).

    ``categorical_sets[j]`` publishes column j as the sorted set of the group's values
    (``"Chennai, Madurai"``, seed 004's Table 9) instead of their common ancestor.

    Examples
    --------
    >>> from microagg.hierarchy import Hierarchy
    >>> h = Hierarchy.from_mapping({"*": {"Gov": ["Federal", "State"], "Private": ["Inc"]}})
    >>> out = generalize([[30.0], [40.0], [50.0]], h.encode(["Federal", "State", "Inc"])[:, None],
    ...                  [h.tables()], [0, 0, 1])
    >>> out.numeric.ravel().tolist(), out.labels[0].tolist()
    ([35.0, 35.0, 50.0], ['Gov', 'Gov', 'Inc'])
    """
    check_option(numeric_mode, NUMERIC_MODES, parameter="numeric_mode")
    lab_raw = np.asarray(labels)
    n = lab_raw.shape[0]
    lab = check_labels(lab_raw, n_samples=n)
    num = np.zeros((n, 0)) if numeric is None else np.asarray(numeric, dtype=np.float64)
    cod = np.zeros((n, 0), dtype=np.intp) if codes is None else np.asarray(codes, dtype=np.intp)
    if num.ndim == 1:
        num = num.reshape(-1, 1)
    if cod.ndim == 1:
        cod = cod.reshape(-1, 1)
    order, starts = _sorted_segments(lab)
    if num.shape[1]:
        rows = num[order]
        lo = np.minimum.reduceat(rows, starts, axis=0)[lab]
        hi = np.maximum.reduceat(rows, starts, axis=0)[lab]
        mean = (np.add.reduceat(rows, starts, axis=0) / np.bincount(lab)[:, None])[lab]
    else:
        lo = hi = mean = num
    if numeric_mode == "mean":
        published, lo, hi = mean, mean, mean
    else:
        published = np.full_like(mean, np.nan)
    nodes = np.empty((n, len(tables)), dtype=np.intp)
    covered = np.empty((n, len(tables)), dtype=np.intp)
    texts = []
    sets = list(categorical_sets) if categorical_sets is not None else [False] * len(tables)
    for j, t in enumerate(tables):
        node = class_nodes(cod[:, j], lab, t)[lab]
        nodes[:, j] = node
        if sets[j]:
            pairs = np.unique(np.stack([lab, cod[:, j]], axis=1), axis=0)
            leaves = np.asarray(t.leaves, dtype=object)
            groups = np.split(pairs[:, 1], np.flatnonzero(np.diff(pairs[:, 0])) + 1)
            text = np.array([", ".join(sorted(leaves[g])) for g in groups], dtype=object)
            texts.append(text[lab])
            covered[:, j] = np.array([g.size for g in groups])[lab]
        else:
            texts.append(np.asarray(t.node_labels, dtype=object)[node])
            covered[:, j] = t.node_leaves[node]
    return Generalized(numeric=published, low=lo, high=hi, nodes=nodes, labels=tuple(texts),
                       covered=covered)
