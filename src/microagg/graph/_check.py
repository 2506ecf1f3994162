"""Achieved levels: k-anonymity of neighbourhoods (Stokes & Torra) and of degrees (Liu & Terzi)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._common import check_graph, csr_adjacency, degrees_of

__all__ = ["class_labels", "degree_k_anonymity", "degree_level", "graph_k_anonymity",
           "level_from_labels", "neighbourhood_classes"]


def class_labels(A: sp.csr_array) -> NDArray[np.intp]:
    """Label each vertex by its open neighbourhood: equal labels iff equal N(v) (exact)."""
    seen: dict[bytes, int] = {}
    indptr, indices = A.indptr, A.indices.astype(np.int64, copy=False)
    labels = np.empty(A.shape[0], dtype=np.intp)
    for v in range(A.shape[0]):
        key = indices[indptr[v]:indptr[v + 1]].tobytes()  # sorted indices: a canonical key
        labels[v] = seen.setdefault(key, len(seen))
    return labels


def level_from_labels(labels: NDArray[np.intp]) -> int:
    return int(np.bincount(labels).min())


def degree_level(degrees: NDArray[np.int64]) -> int:
    counts = np.bincount(degrees)
    return int(counts[counts > 0].min())


def graph_k_anonymity(G: nx.Graph) -> int:
    """The largest k for which ``G`` is k-anonymous in the sense of Stokes & Torra.

    ``G`` is k-anonymous when every vertex ``v`` has at least k - 1 other vertices with the
    same set of neighbours ``N(v) = {u : (u, v) in E}`` (seed 001, section 2.2,
    Definition 1). The neighbourhood is the *open* one, ``v`` itself excluded, as in the
    definition; with closed neighbourhoods the seed's 3-anonymous example (Table 2, whose
    diagonal is zero and whose groups of three share rows) would be only 1-anonymous.
    Isolated vertices all share the empty neighbourhood.

    Parameters
    ----------
    G : networkx.Graph
        Simple undirected graph with at least one vertex (no self-loops).

    Returns
    -------
    k : int
        Size of the smallest class of vertices with identical neighbourhoods (1 when some
        vertex is unique; ``n_vertices`` when all neighbourhoods are equal).

    Raises
    ------
    TypeError, ValueError
        If ``G`` is not a networkx graph, is directed, a multigraph, empty, or has
        self-loops.

    References
    ----------
    Stokes, K. and Torra, V. "Reidentification and k-anonymity: a model for disclosure risk
    in graphs." Soft Computing 16(10), 1657-1670 (2012). Seed 001, section 2.2.

    Examples
    --------
    The complete bipartite graph K(3, 3): each side shares the other side as neighbours.

    >>> import networkx as nx
    >>> graph_k_anonymity(nx.complete_bipartite_graph(3, 3))
    3
    >>> graph_k_anonymity(nx.path_graph(4))
    1
    """
    check_graph(G, caller="graph_k_anonymity")
    _, A = csr_adjacency(G)
    return level_from_labels(class_labels(A))


def neighbourhood_classes(G: nx.Graph) -> list[list[Any]]:
    """The vertices of ``G`` grouped by identical open neighbourhood (Definition 1).

    Parameters
    ----------
    G : networkx.Graph
        Simple undirected graph with at least one vertex.

    Returns
    -------
    classes : list of lists
        Each list holds the vertices sharing one neighbourhood, in ``G``'s vertex order;
        classes are ordered by their first vertex. ``graph_k_anonymity(G)`` is the length
        of the shortest.

    Examples
    --------
    >>> import networkx as nx
    >>> neighbourhood_classes(nx.star_graph(3))
    [[0], [1, 2, 3]]
    """
    check_graph(G, caller="neighbourhood_classes")
    nodes, A = csr_adjacency(G)
    labels = class_labels(A)
    classes: list[list[Any]] = [[] for _ in range(int(labels.max()) + 1)]
    for v, g in zip(nodes, labels.tolist(), strict=True):
        classes[g].append(v)
    return classes


def degree_k_anonymity(G: nx.Graph) -> int:
    """The largest k for which ``G`` is k-degree anonymous (Liu & Terzi 2008).

    Every degree value that occurs must occur at least k times; the level is the count of
    the rarest degree value.

    Parameters
    ----------
    G : networkx.Graph
        Simple undirected graph with at least one vertex.

    Returns
    -------
    k : int
        The number of vertices sharing the rarest degree value.

    References
    ----------
    Liu, K. and Terzi, E. "Towards identity anonymization on graphs." SIGMOD 2008.
    Seed 001, section 2.2, reference [34].

    Examples
    --------
    >>> import networkx as nx
    >>> degree_k_anonymity(nx.cycle_graph(5))
    5
    >>> degree_k_anonymity(nx.star_graph(3))
    1
    """
    check_graph(G, caller="degree_k_anonymity")
    _, A = csr_adjacency(G)
    return degree_level(degrees_of(A))
