"""Per-group sums and means, shared by the aggregators, the fuzzy draw and the engines."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["group_means"]


def group_means(values: NDArray[np.float64], labels: NDArray[np.intp]) -> NDArray[np.float64]:
    """Mean of every group 0..g-1 of ``values`` (each group non-empty), shape (g, p).

    One stable sort and one ``np.add.reduceat``: several times faster than ``np.add.at``,
    which dominated the out-of-core engine's block time.
    """
    sizes = np.bincount(labels)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return np.asarray(np.add.reduceat(values[order], starts, axis=0) / sizes[:, None],
                      dtype=np.float64)
