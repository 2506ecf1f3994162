"""Generalization hierarchies (value generalization hierarchy trees) for categorical data.

A :class:`Hierarchy` maps every original value (a leaf) to its path of generalizations up
to the root, one label per level: level 0 is the value itself, level ``height`` the root
(``*`` in ARX files). It gives the lowest common ancestor of a set of values, the
normalized hierarchical distance, and integer tables for the numeric kernels
(:class:`HierarchyTables`).

Sources: ARX-style CSV files (no header, ``;``, each row the value then its generalizations
up to the root), a nested mapping built in code, numeric intervals of given widths, or a
flat ``value -> *`` hierarchy.
"""

from __future__ import annotations

import itertools
import math
import pathlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import SchemaError

__all__ = ["Hierarchy", "HierarchyTables", "as_labels"]


def as_labels(values: ArrayLike) -> NDArray[np.object_]:
    """Values as hierarchy labels: strings, with integral floats written without ``.0``
    (so that an integer column read as float still finds ``"39"`` in an age hierarchy)."""
    arr = np.asarray(values, dtype=object).ravel()
    out = np.empty(arr.shape[0], dtype=object)
    for i, v in enumerate(arr):
        if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
            out[i] = str(int(v))
        elif isinstance(v, (bool, np.bool_)):
            out[i] = str(v)
        else:
            out[i] = str(v)
    return out


@dataclass(frozen=True)
class HierarchyTables:
    """Integer view of a hierarchy for the kernels (leaves coded ``0..n_leaves-1``).

    Attributes
    ----------
    leaves : tuple of str
        Leaf label of each code.
    height : int
        Number of levels above the leaves.
    ancestor : ndarray of shape (height + 1, n_leaves)
        Node id of each leaf's ancestor at each level (row 0: the leaf's own node).
    node_labels : tuple of str
        Label of each node id.
    node_level : ndarray of shape (n_nodes,)
    node_leaves : ndarray of shape (n_nodes,)
        Number of leaves under each node (for the certainty penalty).
    node_leaf : ndarray of shape (n_nodes,)
        One leaf under each node (to find joins from leaves).
    """

    leaves: tuple[str, ...]
    height: int
    ancestor: NDArray[np.intp]
    node_labels: tuple[str, ...]
    node_level: NDArray[np.intp]
    node_leaves: NDArray[np.intp]
    node_leaf: NDArray[np.intp]

    def group_node(self, codes: NDArray[np.intp]) -> int:
        """Node id of the lowest common ancestor of the leaves ``codes`` (non-empty)."""
        for level in range(self.height + 1):
            row = self.ancestor[level, codes]
            if (row == row[0]).all():
                return int(row[0])
        raise AssertionError("a hierarchy always has a single root")  # pragma: no cover

    def join_level(self, node_a: NDArray[np.intp], node_b: NDArray[np.intp]) -> NDArray[np.intp]:
        """Level of the lowest common ancestor of nodes ``a`` and ``b`` (elementwise)."""
        a = np.atleast_1d(np.asarray(node_a, dtype=np.intp))
        b = np.atleast_1d(np.asarray(node_b, dtype=np.intp))
        a, b = np.broadcast_arrays(a, b)
        leaf_a, leaf_b = self.node_leaf[a], self.node_leaf[b]
        out = np.full(a.shape, self.height, dtype=np.intp)
        floor = np.maximum(self.node_level[a], self.node_level[b])
        for level in range(self.height - 1, -1, -1):  # lowest level where they agree
            agree = self.ancestor[level, leaf_a] == self.ancestor[level, leaf_b]
            out = np.where(agree, level, out)
        return np.maximum(out, floor)


@dataclass(frozen=True)
class Hierarchy:
    """A value generalization hierarchy for one column.

    Parameters
    ----------
    paths : mapping of str -> tuple of str
        Each leaf value to its labels from level 0 (the value itself) to the root; every
        path has the same length and all end at the same root.
    column : str, default=""
        The column it generalizes (for error messages).
    source : str, default="code"
        Where it comes from (a file path, ``"mapping"``, ``"intervals"``, ``"flat"``).

    Examples
    --------
    >>> h = Hierarchy.from_mapping({"*": {"Gov": ["Federal", "State"], "Private": ["Inc"]}},
    ...                            column="workclass")
    >>> h.height, h.lca(["Federal", "State"]), h.lca(["Federal", "Inc"])
    (2, ('Gov', 1), ('*', 2))
    >>> h.distance("Federal", "State"), h.distance("Federal", "Federal")
    (0.5, 0.0)
    """

    paths: Mapping[str, tuple[str, ...]]
    column: str = ""
    source: str = "code"
    _tables: dict[str, HierarchyTables] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"hierarchy of column {self.column!r} ({self.source})"
        if not self.paths:
            raise SchemaError(f"The {where} is empty.")
        lengths = {len(p) for p in self.paths.values()}
        if len(lengths) != 1:
            raise SchemaError(f"Every row of the {where} must have the same number of levels; "
                              f"found {sorted(lengths)}.")
        roots = {p[-1] for p in self.paths.values()}
        if len(roots) != 1:
            raise SchemaError(f"The {where} has {len(roots)} roots ({', '.join(sorted(roots))}); "
                              "every path must end at the same root.")
        parent: dict[tuple[int, str], str] = {}
        for leaf, path in self.paths.items():
            if path[0] != leaf:
                raise SchemaError(f"In the {where}, the path of {leaf!r} must start with the "
                                  f"value itself; it starts with {path[0]!r}.")
            for level in range(1, len(path) - 1):
                key = (level, path[level])
                if parent.setdefault(key, path[level + 1]) != path[level + 1]:
                    raise SchemaError(
                        f"In the {where}, {path[level]!r} (level {level}) has two parents: "
                        f"{parent[key]!r} and {path[level + 1]!r}; a hierarchy must be a tree."
                    )
        object.__setattr__(self, "paths", MappingProxyType(dict(self.paths)))

    # ----------------------------------------------------------------------------------------
    # constructors

    @classmethod
    def from_csv(cls, path: str | pathlib.Path, *, column: str = "") -> Hierarchy:
        """Read an ARX-style hierarchy: no header, ``;``-separated, value then levels to root."""
        import pandas as pd

        p = pathlib.Path(path)
        try:
            frame = pd.read_csv(p, sep=";", header=None, dtype=str, keep_default_na=False)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"Hierarchy file for column {column!r} does not exist: {p}") from None
        except pd.errors.EmptyDataError:
            raise SchemaError(f"Hierarchy file for column {column!r} is empty: {p}") from None
        # ragged files come back padded with empty strings: drop the padding, so that the
        # level check below reports them
        rows = [tuple(v for v in r if v != "") for r in frame.itertuples(index=False, name=None)]
        duplicates = sorted(v for v, n in Counter(r[0] for r in rows).items() if n > 1)
        if duplicates:
            raise SchemaError(f"Hierarchy file {p} (column {column!r}) lists "
                              f"{', '.join(map(repr, duplicates[:5]))} more than once.")
        if frame.shape[1] == 1:  # a one-level file: every value generalizes to the root only
            return cls({r[0]: (r[0], "*") for r in rows}, column=column, source=str(p))
        if any(len(r) == 0 for r in rows):
            raise SchemaError(f"Hierarchy file {p} (column {column!r}) has an empty row.")
        return cls({r[0]: tuple(r) for r in rows}, column=column, source=str(p))

    def to_csv(self, path: str | pathlib.Path | None = None) -> str:
        """The hierarchy as an ARX CSV file: no header, ``;``-separated, one row per value
        then its labels up to the root (what :meth:`from_csv` reads back; a field holding
        ``;`` or a quote is quoted). With ``path``, also written there (UTF-8; complete or
        absent: a temporary file renamed).

        Examples
        --------
        >>> print(Hierarchy.intervals([3, 17], [10]).to_csv(), end="")
        3;0-9;*
        17;10-19;*
        """
        import csv
        import io

        out = io.StringIO()
        csv.writer(out, delimiter=";", lineterminator="\n").writerows(self.paths.values())
        text = out.getvalue()
        if path is not None:
            target = pathlib.Path(path)
            part = target.with_name(f".{target.name}.part")
            part.write_text(text, encoding="utf-8")
            part.replace(target)
        return text

    @classmethod
    def from_mapping(cls, tree: Mapping[str, Any], *, column: str = "") -> Hierarchy:
        """Build from a nested mapping ``{root: {child: {...} or [leaves]}}``.

        Leaves shallower than the deepest ones are repeated at the missing lower levels
        (so ``{"*": {"a": ["a1"], "b": []}}`` is not allowed, but mixed depths are).
        """
        if not isinstance(tree, Mapping) or len(tree) != 1:
            raise SchemaError(f"A hierarchy mapping for column {column!r} must have exactly one "
                              f"root key; got {list(tree) if isinstance(tree, Mapping) else tree!r}.")
        chains: list[list[str]] = []

        def walk(node: Any, above: list[str]) -> None:
            if isinstance(node, Mapping):
                for label, child in node.items():
                    walk(child, [*above, str(label)])
            elif isinstance(node, (list, tuple, set, frozenset)):
                if not node:
                    raise SchemaError(f"Hierarchy of column {column!r}: {above[-1]!r} has no "
                                      "values under it.")
                for leaf in node:
                    chains.append([*above, str(leaf)])
            else:
                chains.append([*above, str(node)])

        walk(tree, [])
        depth = max(len(c) for c in chains)
        paths: dict[str, tuple[str, ...]] = {}
        for chain in chains:
            leaf = chain[-1]
            padded = [leaf] * (depth - len(chain)) + chain[::-1]
            if leaf in paths:
                raise SchemaError(f"Hierarchy of column {column!r} lists {leaf!r} twice.")
            paths[leaf] = tuple(padded)
        return cls(paths, column=column, source="mapping")

    @classmethod
    def intervals(cls, values: Iterable[Any], widths: Sequence[float], *, column: str = ""
                  ) -> Hierarchy:
        """Numeric intervals: each value, then ``[lo, lo + w)`` for each width, then ``*``.

        Each width must be a multiple of the previous one, so that the intervals nest.

        Examples
        --------
        >>> Hierarchy.intervals([3, 17, 24], [5, 10]).paths["17"]
        ('17', '15-19', '10-19', '*')
        """
        ws = [float(w) for w in widths]
        if any(w <= 0 for w in ws) or any(
                not math.isclose(b / a, round(b / a)) or b <= a for a, b in itertools.pairwise(ws)):
            raise ValueError(f"Interval widths for column {column!r} must be > 0, increasing, and "
                             f"each a multiple of the previous one. Got {list(widths)!r}.")
        labels = as_labels(list(values))
        paths: dict[str, tuple[str, ...]] = {}
        for label in labels:
            if label in paths:
                continue
            v = float(label)
            path = [label]
            for w in ws:
                lo = math.floor(v / w) * w
                if float(w).is_integer() and float(lo).is_integer():
                    path.append(f"{int(lo)}-{int(lo + w) - 1}")
                else:
                    path.append(f"[{lo:g}, {lo + w:g})")
            path.append("*")
            paths[label] = tuple(path)
        return cls(paths, column=column, source=f"intervals {list(widths)!r}")

    @classmethod
    def flat(cls, values: Iterable[Any], *, column: str = "") -> Hierarchy:
        """Every value generalizes straight to ``*`` (suppression of the column)."""
        return cls({v: (v, "*") for v in dict.fromkeys(as_labels(list(values)))},
                   column=column, source="flat")

    # ----------------------------------------------------------------------------------------
    # queries

    @property
    def height(self) -> int:
        """Number of levels above the leaves."""
        return len(next(iter(self.paths.values()))) - 1

    def lca(self, values: Iterable[Any]) -> tuple[str, int]:
        """Label and level of the lowest common ancestor of ``values``."""
        labels = self._checked(values)
        paths = [self.paths[v] for v in dict.fromkeys(labels)]
        for level in range(self.height + 1):
            if len({p[level] for p in paths}) == 1:
                return paths[0][level], level
        raise AssertionError("unreachable: one root")  # pragma: no cover

    def distance(self, a: Any, b: Any) -> float:
        """Normalized hierarchical distance: level of ``lca(a, b)`` over the height."""
        return self.lca([a, b])[1] / self.height

    def encode(self, values: ArrayLike) -> NDArray[np.intp]:
        """Leaf codes of ``values`` (see :meth:`tables`); an unknown value raises."""
        tables = self.tables()
        index = {leaf: i for i, leaf in enumerate(tables.leaves)}
        labels = self._checked(np.asarray(values, dtype=object).ravel())
        return np.fromiter((index[v] for v in labels), dtype=np.intp, count=len(labels))

    def _checked(self, values: Iterable[Any]) -> list[str]:
        labels = list(as_labels(list(values)))
        missing = [v for v in dict.fromkeys(labels) if v not in self.paths]
        if missing:
            count = sum(1 for v in labels if v not in self.paths)
            raise SchemaError(
                f"Column {self.column!r}: {count} value(s) are not in its hierarchy "
                f"({self.source}): {', '.join(map(repr, missing[:10]))}"
                + (f" and {len(missing) - 10} more" if len(missing) > 10 else "") + "."
            )
        return labels

    def tables(self) -> HierarchyTables:
        """The integer tables (computed once)."""
        if "t" in self._tables:
            return self._tables["t"]
        leaves = tuple(self.paths)
        height = self.height
        node_id: dict[tuple[int, str], int] = {}
        labels: list[str] = []
        levels: list[int] = []
        ancestor = np.empty((height + 1, len(leaves)), dtype=np.intp)
        for j, leaf in enumerate(leaves):
            for level, label in enumerate(self.paths[leaf]):
                key = (level, label)
                if key not in node_id:
                    node_id[key] = len(labels)
                    labels.append(label)
                    levels.append(level)
                ancestor[level, j] = node_id[key]
        n_nodes = len(labels)
        node_leaves = np.zeros(n_nodes, dtype=np.intp)
        node_leaf = np.zeros(n_nodes, dtype=np.intp)
        for level in range(height, -1, -1):
            np.add.at(node_leaves, ancestor[level], 1)
            node_leaf[ancestor[level]] = np.arange(len(leaves))
        tables = HierarchyTables(
            leaves=leaves, height=height, ancestor=ancestor,
            node_labels=tuple(labels), node_level=np.asarray(levels, dtype=np.intp),
            node_leaves=node_leaves, node_leaf=node_leaf,
        )
        self._tables["t"] = tables
        return tables
