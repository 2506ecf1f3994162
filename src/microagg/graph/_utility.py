"""What a masked graph keeps: the clustering coefficient and the shortest-path length, on the
sparse adjacency (the utility measures of :class:`~microagg.graph.DegreeAnonymization`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse import csgraph

__all__ = ["average_clustering", "average_path_length"]


def _as_float_csr(A: sp.csr_array) -> sp.csr_array:
    return sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)


def average_clustering(A: sp.csr_array) -> float:
    """Mean local clustering coefficient, zeros included (networkx's ``average_clustering``).

    Triangles through each vertex are ``diag(A^3) / 2``, computed as the row sums of
    ``(A @ A) * A`` on the sparse matrix.
    """
    F = _as_float_csr(A)
    tri = np.asarray((F @ F).multiply(F).sum(axis=1)).ravel() / 2.0
    d = np.diff(A.indptr).astype(np.float64)
    pairs = d * (d - 1.0) / 2.0
    local = np.divide(tri, pairs, out=np.zeros_like(tri), where=pairs > 0)
    return float(local.mean())


def average_path_length(A: sp.csr_array, sources: NDArray[np.intp]) -> float:
    """Mean shortest-path length from ``sources`` to every vertex they reach (BFS).

    With every vertex as a source and a connected graph this is networkx's
    ``average_shortest_path_length``; on a disconnected graph, unreachable pairs are left out.
    """
    F = _as_float_csr(A)
    total = 0.0
    count = 0
    for start in range(0, sources.shape[0], 16):
        dist = csgraph.shortest_path(F, method="D", directed=False, unweighted=True,
                                     indices=sources[start:start + 16])
        reach = np.isfinite(dist) & (dist > 0)
        total += float(dist[reach].sum())
        count += int(reach.sum())
    return total / count if count else 0.0
