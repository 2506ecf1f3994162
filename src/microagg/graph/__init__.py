"""Graphs: k-anonymity of neighbourhoods and degrees, and masking methods that reach it.

Seed 001, section 2.2: a graph is k-anonymous (Stokes & Torra, Definition 1) when every
vertex shares its set of neighbours with at least k - 1 other vertices; it is k-degree
anonymous (Liu & Terzi 2008) when every degree value is shared by at least k vertices.

This subpackage needs the optional dependency networkx (``pip install microagg[graph]``);
``import microagg`` alone never imports it.
"""

from __future__ import annotations

try:
    import networkx as _nx  # noqa: F401  (the guard: fail here with an install hint)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "microagg.graph needs the optional dependency networkx: pip install microagg[graph]"
    ) from exc

from ._check import degree_k_anonymity, graph_k_anonymity, neighbourhood_classes
from ._degree import DegreeAnonymization, k_degree_anonymize, optimal_degree_sequence
from ._io import GRAPH_EXTENSIONS, read_graph, write_graph
from ._neighbourhood import NeighbourhoodAnonymization, neighbourhood_anonymize

__all__ = [
    "GRAPH_EXTENSIONS",
    "DegreeAnonymization",
    "NeighbourhoodAnonymization",
    "degree_k_anonymity",
    "graph_k_anonymity",
    "k_degree_anonymize",
    "neighbourhood_anonymize",
    "neighbourhood_classes",
    "optimal_degree_sequence",
    "read_graph",
    "write_graph",
]
