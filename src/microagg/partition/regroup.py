"""Refinement across block borders: the second pass of the engines that work block by block.

A blocked run (in memory, the file engine, the Dask engine) groups each block on its own, so
a record near a block border is grouped with neighbours on its side only: on 10 independent
columns most records are near some border of a block of 10^4-10^5 records, and the loss
shows (+5 to +21 % information loss against exact MDAV). When the partitioner has
a local search that can start from a given partition (the registry's ``refine_across``, e.g.
:func:`~microagg.partition.scale.refine_groups` for ``mdav-scale``), the engines run a second
pass:

1. every **group** (whole: its members publish the same centroid, so they all go the same
   way) is routed by its centroid through a second block tree, fitted on a **random
   rotation** of the data, whose borders are oblique to the first tree's and fall elsewhere;
2. each second block, holding whole groups from several first blocks, is improved by the
   local search (moves and swaps between near groups), which mends the first borders.

Every record is in exactly one second block, groups keep their labels, no group falls under
k, and the SSE never rises. Memory: one second block at a time (per worker).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._base.groups import group_means
from .blocking import BlockTree, fit_block_tree

__all__ = ["REGROUP_BLOCK", "RotatedTree", "fit_rotated_tree", "regroup_in_memory"]

REGROUP_BLOCK = 100_000
"""Most records of a block of the second pass (blocks hold half to all of it). Measured on
10^6 x 10 Gaussian records, k = 5 (``benchmarks/bench_quality_scale.py``): the larger the
second blocks, the more first-pass borders they mend, at a cost linear in the records."""


@dataclass(frozen=True)
class RotatedTree:
    """A block tree fitted on rotated data: ``route(X) = tree.route(X @ rotation)``."""

    tree: BlockTree
    rotation: NDArray[np.float64]

    @property
    def n_blocks(self) -> int:
        return self.tree.n_blocks

    def route(self, X: NDArray[np.float64]) -> NDArray[np.intp]:
        """Second block of each row of ``X`` (scaled like the data fitted)."""
        return self.tree.route(np.asarray(X, dtype=np.float64) @ self.rotation)


def fit_rotated_tree(sample: NDArray[np.float64], leaf: int, seed: int) -> RotatedTree:
    """A kd block tree with leaves of at most ``leaf`` rows of ``sample``, fitted on a random
    rotation of it (seeded by ``seed``)."""
    p = sample.shape[1]
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((p, p)))
    rotation = np.asarray(q * np.where(np.diag(r) < 0, -1.0, 1.0), dtype=np.float64)
    tree, _ = fit_block_tree(sample @ rotation, max(2, int(leaf)), blocking="kd")
    return RotatedTree(tree, rotation)


def regroup_in_memory(X: NDArray[np.float64], labels: NDArray[np.intp], k: int,
                      refine: Callable[..., NDArray[np.intp]], params: Mapping[str, Any], *,
                      seed: int, block_size: int = REGROUP_BLOCK) -> NDArray[np.intp]:
    """The second pass (module docstring) on a partition of ``X`` held in memory.

    ``refine(X_block, labels_block, k, random_state=..., **params)`` improves one second
    block; ``labels`` are any integer group labels whose groups all have ``k`` or more
    records. Returns the improved labels (the same label set).

    Examples
    --------
    >>> import numpy as np
    >>> from microagg.partition.scale import refine_groups
    >>> from microagg.metrics import sse
    >>> X = np.random.default_rng(0).normal(size=(2000, 3))
    >>> start = np.repeat(np.arange(400), 5)
    >>> out = regroup_in_memory(X, start, 5, refine_groups, {}, seed=0, block_size=500)
    >>> bool(sse(X, out) < sse(X, start)), int(np.bincount(out).min())
    (True, 5)
    """
    n = X.shape[0]
    if n <= block_size:
        return refine(X, labels, k, random_state=seed, **params)
    names, local = np.unique(labels, return_inverse=True)
    centroids = group_means(X, local.ravel())
    leaf = max(2, round(block_size * names.size / n))
    second = fit_rotated_tree(centroids, leaf, seed).route(centroids)[local.ravel()]
    out = np.asarray(labels, dtype=np.intp).copy()
    order = np.argsort(second, kind="stable")
    cuts = np.flatnonzero(np.diff(second[order])) + 1
    for b, rows in enumerate(np.split(order, cuts)):
        out[rows] = refine(np.ascontiguousarray(X[rows]), out[rows], k,
                           random_state=seed + 1 + b, **params)
    return out
