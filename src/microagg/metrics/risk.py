"""Disclosure-risk measures: distance-based record linkage (DLD)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial import cKDTree

from .._validation import check_matrix

__all__ = ["dld_risk"]


def dld_risk(original: ArrayLike, masked: ArrayLike, labels: ArrayLike | None = None, *,
             attributes: Sequence[int] | None = None) -> float:
    """Distance-based record linkage risk: the share of correctly linked records (DLD, Eq. 4
    of seed 000).

    An intruder links each masked record to its nearest original record (squared Euclidean
    distance on the arrays as given: scale both with the ORIGINAL's scaling first). A masked
    record counts 1 if its own original is the unique nearest, ``1/t`` if it is one of ``t``
    originals at exactly the nearest distance, 0 otherwise; the result is the mean over
    records, in [0, 1]. O(n log n) with a k-d tree; masked records that are identical (a
    microaggregated group) are linked once.

    The linkage runs on the same attributes on both sides: the masked columns against the
    original data restricted to those columns. ``attributes`` restricts both further, to the
    columns an intruder actually knows (the variant used when the external file holds only
    some of the quasi-identifiers).

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_columns)
        Row ``i`` of ``masked`` is the release of row ``i`` of ``original``.
    labels : ignored
        Accepted for the common metric signature.
    attributes : sequence of int, default=None
        Column positions known to the intruder; ``None`` means all columns.

    References
    ----------
    Domingo-Ferrer, J., Mateo-Sanz, J. M., Torra, V. "Comparing SDC methods for microdata on
    the basis of information loss and disclosure risk." ETK-NTTS (2001); the DLD of seed 000.

    Examples
    --------
    >>> dld_risk([[0.0], [1.0], [10.0]], [[0.0], [1.0], [10.0]])
    1.0
    >>> dld_risk([[0.0], [1.0], [10.0], [11.0]], [[0.5], [0.5], [10.5], [10.5]])
    0.5
    >>> dld_risk([[0.0, 5.0], [1.0, 5.0]], [[0.1, 5.0], [0.9, 5.0]], attributes=[1])
    0.5
    """
    A = check_matrix(original, caller="dld_risk", name="original")
    B = check_matrix(masked, caller="dld_risk", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    if attributes is not None:
        cols = np.asarray(attributes)
        if cols.ndim != 1 or cols.size == 0 or not np.issubdtype(cols.dtype, np.integer) \
                or cols.min() < 0 or cols.max() >= A.shape[1] or np.unique(cols).size != cols.size:
            raise ValueError(
                f"The 'attributes' parameter of dld_risk must list distinct column positions "
                f"in 0..{A.shape[1] - 1}. Got {list(attributes)!r} instead."
            )
        A = np.ascontiguousarray(A[:, cols])
        B = np.ascontiguousarray(B[:, cols])
    unique, inverse = np.unique(B, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    tree = cKDTree(A)
    nearest, _ = tree.query(unique, k=1)
    # every original within the nearest distance (plus rounding room), then exact ties only
    radius = nearest * (1.0 + 1e-9) + 1e-12
    candidates = tree.query_ball_point(unique, r=radius)
    score = np.zeros(A.shape[0])
    for u, cand in enumerate(candidates):
        cand = np.asarray(cand, dtype=np.intp)
        d = ((A[cand] - unique[u]) ** 2).sum(axis=1)
        tied = cand[d == d.min()]
        # only the originals released as this very vector score; the others keep the score
        # their own masked vector gives them
        own = tied[inverse[tied] == u]
        score[own] = 1.0 / tied.size
    return float(score.mean())
