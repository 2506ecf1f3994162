"""k-anonymity achieved by published quasi-identifiers. Public through :mod:`microagg.models`."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import PrivacyViolationError

__all__ = ["check_k_anonymity", "k_anonymity"]


def k_anonymity(published: ArrayLike) -> int:
    """The k that the published quasi-identifiers achieve: the size of the smallest set of
    records that share the same values in every column (0 for an empty table).

    Computed from the data alone, never from the labels of a partition.

    Parameters
    ----------
    published : array-like of shape (n_samples, n_features)
        The published quasi-identifiers (one row per record).

    Examples
    --------
    >>> k_anonymity([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [3.0, 4.0], [3.0, 4.0]])
    2
    """
    A = np.asarray(published)
    if A.ndim == 1:
        A = A.reshape(-1, 1)
    if A.shape[0] == 0:
        return 0
    if A.dtype.kind == "f":
        A = A + 0.0  # -0.0 and 0.0 are the same published value
    if A.dtype.kind in "fiub":
        # rows as byte strings: one hash-free sort of n keys instead of a p-column lexsort
        rows = np.ascontiguousarray(A).view(np.dtype((np.void, A.dtype.itemsize * A.shape[1])))
        _, counts = np.unique(rows.ravel(), return_counts=True)
    else:
        _, counts = np.unique(A, axis=0, return_counts=True)
    return int(counts.min())


def check_k_anonymity(published: ArrayLike, k: int) -> int:
    """Return the achieved k; raise :class:`PrivacyViolationError` if it is below ``k``.

    Parameters
    ----------
    published : array-like of shape (n_samples, n_features)
        The published quasi-identifiers.
    k : int
        The k the release promises.
    """
    achieved = k_anonymity(published)
    if achieved < k:
        raise PrivacyViolationError(
            f"The published quasi-identifiers are only {achieved}-anonymous, below the "
            f"required k={k}. Nothing was released. This is a bug in microagg."
        )
    return achieved
