"""Information loss of generalized releases: IL(Omega) of seed 002 and the normalized
certainty penalty (NCP)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..hierarchy import HierarchyTables

__all__ = ["il_omega", "normalized_certainty_penalty"]


def _parts(low: ArrayLike, high: ArrayLike, ranges: ArrayLike, nodes: ArrayLike,
           tables: Sequence[HierarchyTables]):
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    rng = np.asarray(ranges, dtype=np.float64)
    nod = np.asarray(nodes, dtype=np.intp)
    if lo.ndim == 1:
        lo, hi = lo.reshape(-1, 1), hi.reshape(-1, 1)
    if nod.ndim == 1:
        nod = nod.reshape(-1, 1)
    spans = np.where(rng > 0, (hi - lo) / np.where(rng > 0, rng, 1.0), 0.0) if lo.size else lo
    return spans, nod


def il_omega(low: ArrayLike, high: ArrayLike, ranges: ArrayLike, nodes: ArrayLike,
             tables: Sequence[HierarchyTables], *, normalized: bool = False) -> float:
    """IL(Omega) of seed 002, summed over the equivalence classes Omega.

    ``IL(Omega) = |Omega| * (sum_i (N_i,max - N_i,min) / (range of N_i in the table)
    + sum_j H(LCA of the class's C_j values) / H(hierarchy of C_j))``. Since every record of a
    class carries the same terms, this is the sum over records of their per-record terms,
    computed from each record's published interval (``low``, ``high``) and node.

    Parameters
    ----------
    low, high : array-like of shape (n_samples, r)
        The class's numeric interval for each record (its min and max on the original data).
    ranges : array-like of shape (r,)
        Range of each numeric column over the table (0 for a constant column: no loss).
    nodes : array-like of shape (n_samples, s)
        Published node id of each categorical value.
    tables : sequence of HierarchyTables
    normalized : bool, default=False
        Divide by ``n * (r + s)``: 0 for the original table, 1 when everything is
        generalized to the root / the full range.

    Examples
    --------
    >>> from microagg.hierarchy import Hierarchy
    >>> t = Hierarchy.from_mapping({"*": {"G": ["a", "b"], "H": ["c"]}}).tables()
    >>> g = t.ancestor[1, 0]   # node "G", level 1 of 2
    >>> il_omega([[20.0], [20.0]], [[30.0], [30.0]], [40.0], [[g], [g]], [t])
    1.5
    """
    spans, nod = _parts(low, high, ranges, nodes, tables)
    total = float(spans.sum())
    for j, t in enumerate(tables):
        total += float((t.node_level[nod[:, j]] / max(t.height, 1)).sum())
    if normalized:
        n = nod.shape[0] if nod.size else spans.shape[0]
        return total / (n * (spans.shape[1] + len(tables)))
    return total


def normalized_certainty_penalty(low: ArrayLike, high: ArrayLike, ranges: ArrayLike,
                                 nodes: ArrayLike, tables: Sequence[HierarchyTables],
                                 *, suppressed: ArrayLike | None = None,
                                 covered: ArrayLike | None = None) -> float:
    """NCP (Xu et al., KDD 2006; ARX's "loss" / Iyengar's LM): the mean over records and
    quasi-identifiers of the generalization's share of the domain, in [0, 1].

    Numeric: ``(high - low) / range``; categorical: ``(leaves under the node - 1) /
    (leaves of the hierarchy - 1)`` (0 for an original value, 1 for the root); ``covered``
    overrides the leaf counts (for value sets). A suppressed record counts 1 for every
    attribute.

    Parameters
    ----------
    low, high : array-like of shape (n_samples, r)
        The published interval of each record in each numeric quasi-identifier.
    ranges : array-like of shape (r,)
        The range (max - min) of each numeric quasi-identifier in the original table.
    nodes : array-like of shape (n_samples, s)
        The published hierarchy node of each record in each categorical quasi-identifier.
    tables : sequence of HierarchyTables
        The ``s`` hierarchies.
    suppressed : array-like of shape (n_samples,) of bool, default=None
        The suppressed records (each counts 1); ``None``: none.
    covered : array-like of shape (n_samples, s), default=None
        The number of leaves each published value covers, in place of the node's (value
        sets); ``None``: the node's leaves.

    Examples
    --------
    >>> from microagg.hierarchy import Hierarchy
    >>> t = Hierarchy.from_mapping({"*": {"G": ["a", "b"], "H": ["c"]}}).tables()
    >>> g = t.ancestor[1, 0]
    >>> normalized_certainty_penalty([[20.0], [20.0]], [[30.0], [30.0]], [40.0], [[g], [g]], [t])
    0.375
    """
    spans, nod = _parts(low, high, ranges, nodes, tables)
    n = nod.shape[0] if nod.size else spans.shape[0]
    per = spans.sum(axis=1) if spans.size else np.zeros(n)
    cov = None if covered is None else np.asarray(covered, dtype=np.float64).reshape(nod.shape)
    for j, t in enumerate(tables):
        leaves = t.node_leaves[nod[:, j]] if cov is None else cov[:, j]
        per = per + (leaves - 1) / max(len(t.leaves) - 1, 1)
    width = spans.shape[1] + len(tables)
    if suppressed is not None:
        sup = np.asarray(suppressed, dtype=bool)
        per = np.where(sup, float(width), per)
    return float(per.sum() / (n * width))
