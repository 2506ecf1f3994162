"""A straightforward NumPy MDAV: the readable reference that the numba kernel must match.

Not registered and not used by releases. Tests compare the fast kernel with it record for
record, and ``benchmarks/`` runs it in the same process as the baseline timing. It follows
the same rules as :func:`microagg.partition.mdav` (squared Euclidean distance, lowest row
index wins ties, ``s`` searched outside ``r``'s group) with whole-array NumPy operations.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["mdav_numpy"]


def _group_around(X: NDArray[np.float64], rest: NDArray[np.intp], seed: int, k: int):
    """Positions (into ``rest``) of ``seed`` and its k-1 nearest, plus the distances."""
    d = ((X[rest] - X[rest[seed]]) ** 2).sum(axis=1)
    key = d.copy()
    key[seed] = -1.0
    order = np.argsort(key, kind="stable")[:k]
    return order, d


def mdav_numpy(X: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """MDAV (Domingo-Ferrer & Torra 2005) in plain NumPy; O(n^2 p / k) time like the kernel."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.intp)
    rest = np.arange(n)
    g = 0
    while rest.size >= 3 * k:
        centroid = X[rest].mean(axis=0)
        r = int(np.argmax(((X[rest] - centroid) ** 2).sum(axis=1)))
        grp_r, d_r = _group_around(X, rest, r, k)
        d_r[grp_r] = -np.inf
        s = int(np.argmax(d_r))
        labels[rest[grp_r]] = g
        keep = np.ones(rest.size, dtype=bool)
        keep[grp_r] = False
        s = int(keep[:s].sum())  # position of s once r's group is gone
        rest = rest[keep]
        grp_s, _ = _group_around(X, rest, s, k)
        labels[rest[grp_s]] = g + 1
        keep = np.ones(rest.size, dtype=bool)
        keep[grp_s] = False
        rest = rest[keep]
        g += 2
    if rest.size >= 2 * k:
        centroid = X[rest].mean(axis=0)
        r = int(np.argmax(((X[rest] - centroid) ** 2).sum(axis=1)))
        grp_r, _ = _group_around(X, rest, r, k)
        labels[rest[grp_r]] = g
        keep = np.ones(rest.size, dtype=bool)
        keep[grp_r] = False
        rest = rest[keep]
        g += 1
    labels[rest] = g
    return labels
