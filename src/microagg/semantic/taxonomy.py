"""An is-a taxonomy (a DAG: a concept may have several parents) built from an ARX-style
hierarchy, from explicit edges, or from an OWL/RDF file (``rdfs:subClassOf``)."""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..exceptions import SchemaError

if TYPE_CHECKING:
    from ..hierarchy import Hierarchy, HierarchyTables

__all__ = ["Taxonomy"]


@dataclass(frozen=True)
class Taxonomy:
    """An is-a taxonomy: each concept with its direct parents (taxonomic subsumers).

    Parameters
    ----------
    parents : mapping of str -> tuple of str
        Every concept (an id) to its direct parents; a root has ``()``. Parents not listed as
        keys are added as roots.
    labels : mapping of str -> str, optional
        The published text of a concept (its id when absent).
    name : str, default=""
        Where it comes from (``"hierarchy of 'occupation'"``, ``"WordNet 3.0"``), for messages.

    Examples
    --------
    >>> t = Taxonomy.from_edges([("dog", "mammal"), ("cat", "mammal"), ("mammal", "animal")])
    >>> sorted(t.ancestors("dog")), t.depth("dog"), t.leaves
    (['animal', 'dog', 'mammal'], 3, ('cat', 'dog'))

    References
    ----------
    Sanchez, D., Batet, M., Isern, D., Valls, A. "Ontology-based semantic similarity: a new
    feature-based approach." Expert Systems with Applications 39 (2012) 7718-7728.
    """

    parents: Mapping[str, tuple[str, ...]]
    labels: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict, repr=False,
                                                  compare=False)
    _depth: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        full = {str(c): tuple(dict.fromkeys(str(p) for p in ps if str(p) != str(c)))
                for c, ps in self.parents.items()}
        for ps in list(full.values()):
            for p in ps:
                full.setdefault(p, ())
        if not full:
            raise SchemaError(f"The taxonomy {self.name!r} has no concept.")
        object.__setattr__(self, "parents", MappingProxyType(full))
        object.__setattr__(self, "labels", MappingProxyType(
            {c: str(self.labels.get(c, c)) for c in full}))
        for concept in full:  # raises on a cycle
            self.ancestors(concept)

    # ----------------------------------------------------------------------------------------
    # constructors

    @classmethod
    def from_edges(cls, edges: Iterable[tuple[str, str]], *, name: str = "edges",
                   labels: Mapping[str, str] | None = None) -> Taxonomy:
        """Build from ``(child, parent)`` pairs."""
        parents: dict[str, list[str]] = {}
        for child, parent in edges:
            parents.setdefault(str(child), []).append(str(parent))
            parents.setdefault(str(parent), [])
        return cls({c: tuple(ps) for c, ps in parents.items()}, labels=labels or {}, name=name)

    @classmethod
    def from_chains(cls, chains: Iterable[Sequence[str]], *, name: str) -> Taxonomy:
        """Build from paths ``(value, parent, ..., root)``; repeated labels in a row (a
        shallow leaf padded to the hierarchy's height) are one concept."""
        edges: list[tuple[str, str]] = []
        singles: list[str] = []
        for chain in chains:
            path = [str(c) for i, c in enumerate(chain) if i == 0 or str(c) != str(chain[i - 1])]
            singles.append(path[0])
            edges += list(itertools.pairwise(path))
        parents: dict[str, list[str]] = {c: [] for c in singles}
        for child, parent in edges:
            parents.setdefault(child, []).append(parent)
            parents.setdefault(parent, [])
        return cls({c: tuple(ps) for c, ps in parents.items()}, name=name)

    @classmethod
    def from_hierarchy(cls, hierarchy: Hierarchy) -> Taxonomy:
        """The taxonomy of an ARX-style :class:`~microagg.hierarchy.Hierarchy`: each value's
        path to the root is a chain of is-a links."""
        return cls.from_chains(hierarchy.paths.values(),
                               name=f"hierarchy of {hierarchy.column!r}")

    @classmethod
    def from_tables(cls, tables: HierarchyTables, *, name: str = "hierarchy") -> Taxonomy:
        """The taxonomy of a hierarchy's integer tables (the partitioners' view)."""
        return cls.from_chains(
            ([tables.node_labels[int(tables.ancestor[level, leaf])]
              for level in range(tables.height + 1)] for leaf in range(len(tables.leaves))),
            name=name)

    @classmethod
    def from_owl(cls, path: str | pathlib.Path) -> Taxonomy:
        """Read the ``rdfs:subClassOf`` links between named classes of an OWL/RDF file
        (any format rdflib reads); a class's label is its ``rdfs:label`` or local name.

        Needs the optional ``rdflib`` package.
        """
        try:
            import rdflib
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Reading an OWL/RDF ontology needs rdflib: "
                              "pip install rdflib") from None
        graph = rdflib.Graph()
        graph.parse(str(path))
        RDFS = rdflib.RDFS

        def local(node: object) -> str:
            text = str(node)
            return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]

        edges = [(local(c), local(p)) for c, p in graph.subject_objects(RDFS.subClassOf)
                 if isinstance(c, rdflib.URIRef) and isinstance(p, rdflib.URIRef)]
        labels = {local(c): str(lab) for c, lab in graph.subject_objects(RDFS.label)}
        return cls.from_edges(edges, name=str(path), labels=labels)

    # ----------------------------------------------------------------------------------------
    # queries

    @property
    def concepts(self) -> tuple[str, ...]:
        """Every concept, sorted."""
        return tuple(sorted(self.parents))

    @property
    def leaves(self) -> tuple[str, ...]:
        """Concepts that are no concept's parent, sorted."""
        inner = {p for ps in self.parents.values() for p in ps}
        return tuple(sorted(c for c in self.parents if c not in inner))

    @property
    def roots(self) -> tuple[str, ...]:
        """Concepts without a parent, sorted."""
        return tuple(sorted(c for c, ps in self.parents.items() if not ps))

    def __contains__(self, concept: object) -> bool:
        return concept in self.parents

    def label(self, concept: str) -> str:
        """The published text of ``concept``."""
        return self.labels[concept]

    def ancestors(self, concept: str) -> frozenset[str]:
        """``T(c)``: the taxonomic subsumers of ``concept``, the concept included."""
        found = self._ancestors.get(concept)
        if found is not None:
            return found
        if concept not in self.parents:
            raise KeyError(f"Concept {concept!r} is not in the taxonomy {self.name!r}.")
        stack, seen, order = [concept], {concept}, []
        while stack:  # iterative: WordNet paths are deep
            c = stack.pop()
            order.append(c)
            for p in self.parents[c]:
                if p == concept:
                    raise SchemaError(f"The taxonomy {self.name!r} has a cycle through "
                                      f"{concept!r}: a concept cannot subsume itself.")
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        result = frozenset(seen)
        self._ancestors[concept] = result
        return result

    def depth(self, concept: str) -> int:
        """Number of concepts on the longest path from a root down to ``concept`` (a root
        has depth 1), as in Wu & Palmer's measure on a DAG."""
        found = self._depth.get(concept)
        if found is not None:
            return found
        todo = [concept]
        while todo:
            c = todo[-1]
            missing = [p for p in self.parents[c] if p not in self._depth]
            if missing:
                todo += missing
                continue
            todo.pop()
            self._depth[c] = 1 + max((self._depth[p] for p in self.parents[c]), default=0)
        return self._depth[concept]

    def descendants_count(self) -> dict[str, int]:
        """Number of concepts each concept subsumes (itself excluded): ``hypo(c)``."""
        count = dict.fromkeys(self.parents, 0)
        for c in self.parents:
            for a in self.ancestors(c):
                if a != c:
                    count[a] += 1
        return count
