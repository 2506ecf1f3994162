"""Input checks and the integer-indexed view of a graph shared by the graph methods."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._base.constraints import check_int

__all__ = ["check_graph", "check_graph_k", "csr_adjacency"]

SOURCE_KEY = "microagg_source_path"
"""Key of ``G.graph`` where :func:`read_graph` records the file a graph came from, so that
:func:`write_graph` refuses to overwrite it (never written to files)."""


def check_graph(G: Any, *, caller: str, name: str = "G") -> nx.Graph:
    """Return ``G`` after checking it is a simple undirected networkx graph with >= 1 vertex.

    Directed graphs and multigraphs are refused (with the call that converts them); so are
    self-loops, which would put a vertex in its own neighbourhood.
    """
    if not isinstance(G, nx.Graph):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a networkx.Graph. "
            f"Got {type(G).__name__} instead."
        )
    if G.is_directed():
        raise ValueError(
            f"The {name!r} parameter of {caller} is a directed graph; k-anonymity of "
            "neighbourhoods is defined here for undirected graphs. Convert it explicitly, "
            "e.g. G.to_undirected() (an edge in either direction becomes one edge)."
        )
    if G.is_multigraph():
        raise ValueError(
            f"The {name!r} parameter of {caller} is a multigraph "
            f"({G.number_of_edges()} edges on {nx.Graph(G).number_of_edges()} vertex pairs); "
            "parallel edges are not allowed. Convert it explicitly, e.g. networkx.Graph(G)."
        )
    n = G.number_of_nodes()
    if n == 0:
        raise ValueError(f"The {name!r} parameter of {caller} has no vertices.")
    loops = list(nx.selfloop_edges(G))
    if loops:
        shown = ", ".join(repr(u) for u, _ in loops[:5])
        raise ValueError(
            f"The {name!r} parameter of {caller} has {len(loops)} self-loop(s) "
            f"(at {shown}{', ...' if len(loops) > 5 else ''}); a vertex cannot be its own "
            "neighbour. Remove them, e.g. G.remove_edges_from(nx.selfloop_edges(G))."
        )
    return G


def check_graph_k(k: Any, *, n_vertices: int, caller: str) -> int:
    """Return ``k`` as an int after checking ``2 <= k <= n_vertices``."""
    return check_int(k, parameter="k", caller=caller, low=2, high=n_vertices,
                     rule=f"an int in [2, n_vertices={n_vertices}]")


def csr_adjacency(G: nx.Graph) -> tuple[list[Any], sp.csr_array]:
    """The vertices of ``G`` in its own order and its 0/1 adjacency matrix (sorted indices)."""
    nodes = list(G.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    m = G.number_of_edges()
    rows = np.empty(2 * m, dtype=np.int64)
    cols = np.empty(2 * m, dtype=np.int64)
    if m:
        pairs = np.fromiter(
            (index[x] for e in G.edges() for x in e), dtype=np.int64, count=2 * m
        ).reshape(m, 2)
        rows[:m], rows[m:] = pairs[:, 0], pairs[:, 1]
        cols[:m], cols[m:] = pairs[:, 1], pairs[:, 0]
    data = np.ones(2 * m, dtype=np.int8)
    A = sp.csr_array((data, (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    A.sort_indices()
    return nodes, A


def degrees_of(A: sp.csr_array) -> NDArray[np.int64]:
    """Degree of each vertex of a 0/1 adjacency matrix."""
    return np.diff(A.indptr).astype(np.int64)
