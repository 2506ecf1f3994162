"""Cost models of the enforcers: what adding a record to a class, or merging two classes,
loses (SSE for numeric microaggregation, IL(Omega) for mixed data)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..aggregate.generalize import class_nodes
from ..hierarchy import HierarchyTables

__all__ = ["ILOmegaCost", "SSECost"]


class SSECost:
    """Cost of adding a record to a class: the SSE increase (numeric microaggregation)."""

    def __init__(self, X: NDArray[np.float64], labels: NDArray[np.intp], n_classes: int):
        self.X = X
        self.count = np.bincount(labels, minlength=n_classes).astype(np.float64)
        self.sums = np.zeros((n_classes, X.shape[1]))
        np.add.at(self.sums, labels, X)

    def costs(self, row: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        n = self.count[classes]
        centre = self.sums[classes] / n[:, None]
        return n / (n + 1.0) * ((self.X[row] - centre) ** 2).sum(axis=1)

    def merge_cost(self, a: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        na, nb = self.count[a], self.count[classes]
        d = self.sums[a] / na - self.sums[classes] / nb[:, None]
        return na * nb / (na + nb) * (d ** 2).sum(axis=1)

    def add(self, row: int, cls: int) -> None:
        self.count[cls] += 1.0
        self.sums[cls] += self.X[row]

    def merge(self, a: int, b: int) -> None:
        self.count[a] += self.count[b]
        self.sums[a] += self.sums[b]

    def reset(self, cls: int, rows: NDArray[np.intp]) -> None:
        self.count[cls] = rows.size
        self.sums[cls] = self.X[rows].sum(axis=0)


class ILOmegaCost:
    """Cost of adding a record to a class for mixed data: the IL(Omega) increase of seed 002
    (numeric span over the table's range, plus generalization level over hierarchy height,
    times the class size).

    Parameters
    ----------
    numeric : ndarray of shape (n_samples, r)
        The numeric quasi-identifiers.
    codes : ndarray of shape (n_samples, s)
        The leaf code of each record in each categorical quasi-identifier's hierarchy.
    tables : sequence of HierarchyTables
        The ``s`` hierarchies.
    labels : ndarray of shape (n_samples,)
        The current classes (``0..n_classes-1``).
    n_classes : int
        The number of classes.
    """

    def __init__(self, numeric: NDArray[np.float64], codes: NDArray[np.intp],
                 tables: Sequence[HierarchyTables], labels: NDArray[np.intp], n_classes: int):
        self.num = np.asarray(numeric, dtype=np.float64).reshape(labels.size, -1)
        self.codes = np.asarray(codes, dtype=np.intp).reshape(labels.size, -1)
        self.tables = tuple(tables)
        rng = self.num.max(axis=0) - self.num.min(axis=0) if self.num.size else np.zeros(0)
        self.range = np.where(rng > 0, rng, np.inf)
        self.count = np.bincount(labels, minlength=n_classes).astype(np.float64)
        r = self.num.shape[1]
        self.lo = np.full((n_classes, r), np.inf)
        self.hi = np.full((n_classes, r), -np.inf)
        np.minimum.at(self.lo, labels, self.num)
        np.maximum.at(self.hi, labels, self.num)
        self.node = np.zeros((n_classes, len(self.tables)), dtype=np.intp)
        for j, t in enumerate(self.tables):
            self.node[:, j] = class_nodes(self.codes[:, j], labels, t)
        self.per = self._per_record(self.lo, self.hi, self.node)  # each class's IL per record
        # join level of every (node, leaf) pair: a table lookup per candidate class
        self.join_with_leaf = []
        for t in self.tables:
            nodes = np.repeat(np.arange(len(t.node_labels)), len(t.leaves))
            leaves = np.tile(t.ancestor[0], len(t.node_labels))
            self.join_with_leaf.append(
                t.join_level(nodes, leaves).reshape(len(t.node_labels), len(t.leaves)))

    def _per_record(self, lo, hi, node) -> NDArray[np.float64]:
        out = ((hi - lo) / self.range).sum(axis=1)
        for j, t in enumerate(self.tables):
            out = out + t.node_level[node[:, j]] / max(t.height, 1)
        return out

    def _node_at(self, node_a, node_b) -> NDArray[np.intp]:
        """Node ids of the joins (for the state updates)."""
        out = np.empty_like(node_b)
        for j, t in enumerate(self.tables):
            level = t.join_level(node_a[..., j], node_b[:, j])
            out[:, j] = t.ancestor[level, t.node_leaf[node_b[:, j]]]
        return out

    def costs(self, row: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        x = self.num[row]
        lo = np.minimum(self.lo[classes], x)
        hi = np.maximum(self.hi[classes], x)
        new = ((hi - lo) / self.range).sum(axis=1)
        nodes = self.node[classes]
        for j, t in enumerate(self.tables):  # join levels from the (node, leaf) table
            new += self.join_with_leaf[j][nodes[:, j], self.codes[row, j]] / max(t.height, 1)
        n = self.count[classes]
        return (n + 1.0) * new - n * self.per[classes]

    def merge_cost(self, a: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        lo = np.minimum(self.lo[classes], self.lo[a])
        hi = np.maximum(self.hi[classes], self.hi[a])
        node = self._node_at(self.node[a], self.node[classes])
        na, nb = self.count[a], self.count[classes]
        new = self._per_record(lo, hi, node)
        return (na + nb) * new - na * self.per[a] - nb * self.per[classes]

    def add(self, row: int, cls: int) -> None:
        self.reset(cls, None, extra=row)

    def merge(self, a: int, b: int) -> None:
        self.count[a] += self.count[b]
        self.lo[a] = np.minimum(self.lo[a], self.lo[b])
        self.hi[a] = np.maximum(self.hi[a], self.hi[b])
        self.node[a] = self._node_at(self.node[a], self.node[[b]])[0]
        self._refresh(a)

    def _refresh(self, cls: int) -> None:
        self.per[cls] = self._per_record(self.lo[[cls]], self.hi[[cls]], self.node[[cls]])[0]

    def reset(self, cls: int, rows: NDArray[np.intp] | None, *, extra: int | None = None
              ) -> None:
        if rows is not None:  # the class becomes exactly these rows
            self.count[cls] = rows.size
            self.lo[cls] = self.num[rows].min(axis=0)
            self.hi[cls] = self.num[rows].max(axis=0)
            for j, t in enumerate(self.tables):
                self.node[cls, j] = t.group_node(self.codes[rows, j])
            self._refresh(cls)
            return
        assert extra is not None
        self.count[cls] += 1.0
        self.lo[cls] = np.minimum(self.lo[cls], self.num[extra])
        self.hi[cls] = np.maximum(self.hi[cls], self.num[extra])
        leaf_nodes = np.array([[t.ancestor[0, self.codes[extra, j]]
                                for j, t in enumerate(self.tables)]], dtype=np.intp)
        self.node[cls] = self._node_at(self.node[cls], leaf_nodes)[0]
        self._refresh(cls)
