"""Distance-based record linkage with one-to-one (Hungarian) matching, beside the
nearest-neighbour DLD of :func:`microagg.metrics.dld_risk`."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from .interval import _check_pair

__all__ = ["linkage_one_to_one"]

_METRICS = ("euclidean", "sqeuclidean", "cityblock")


def linkage_one_to_one(original: ArrayLike, masked: ArrayLike, *, metric: str = "euclidean",
                       max_samples: int = 5000) -> float:
    """Share of records re-identified by global one-to-one distance-based record linkage.

    The intruder pairs every masked record with a DIFFERENT original record so that the
    total distance is minimal (the assignment problem, solved exactly by
    :func:`scipy.optimize.linear_sum_assignment`), instead of linking each masked record
    to its nearest original independently as DLD does (where several masked records may
    claim the same original). Distances are computed on the arrays as given: scale both
    with the ORIGINAL's scaling first.

    Identical masked records (a microaggregated group) are interchangeable: any
    permutation of the originals assigned to them is optimal too. A class of ``g``
    identical masked records that received ``c`` of its own originals therefore counts
    ``c / g`` correct links, the expected count when the intruder picks one of the equally
    good assignments at random (the one-to-one analogue of DLD's ``1/t`` for ties).
    sdcMicro's ``recordLinkage`` instead counts the single assignment its solver returns.

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_columns)
        Row ``i`` of ``masked`` is the release of row ``i`` of ``original``; must be finite.
    metric : {"euclidean", "sqeuclidean", "cityblock"}, default="euclidean"
        Record distance summed by the assignment; ``"euclidean"`` is the global
        distance-based record linkage of Herranz et al. (2015) and sdcMicro's
        ``recordLinkage(distance = "euclidean")``, ``"cityblock"`` its ``"manhattan"``.
        Minimising summed squared distances can give another assignment.
    max_samples : int, default=5000
        Refuse larger files: the cost matrix takes ``8 n^2`` bytes and the solver
        ``O(n^3)`` time (a few seconds at 5000).

    Returns
    -------
    float
        Expected share of correctly linked records, in [0, 1].

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. "Disclosure risk assessment in statistical microdata
    protection via advanced record linkage." Statistics and Computing 13 (2003), 343-354;
    Herranz, J., Nin, J., Rodríguez, P., Tassa, T. "Revisiting distance-based record
    linkage for privacy-preserving release of statistical datasets." Data & Knowledge
    Engineering 100 (2015), 78-93.

    Examples
    --------
    Both masked records are nearer the second original, so DLD links only one of them;
    the one-to-one assignment links both.

    >>> orig = [[0.0], [1.0]]
    >>> mask = [[0.6], [1.6]]
    >>> linkage_one_to_one(orig, mask)
    1.0
    """
    A, B = _check_pair(original, masked, caller="linkage_one_to_one")
    if metric not in _METRICS:
        raise ValueError(f"The 'metric' parameter of linkage_one_to_one must be one of "
                         f"{list(_METRICS)}. Got {metric!r} instead.")
    if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Integral) \
            or max_samples < 1:
        raise ValueError(f"The 'max_samples' parameter of linkage_one_to_one must be an int "
                         f">= 1. Got {max_samples!r} instead.")
    n = A.shape[0]
    if n > max_samples:
        raise ValueError(f"linkage_one_to_one: n_samples={n} exceeds max_samples={max_samples} "
                         f"(cost matrix of {8 * n * n / 2**30:.1f} GiB, O(n^3) solver); "
                         "raise max_samples or link a sample of records.")
    cost = cdist(B, A, metric=metric)
    rows, cols = linear_sum_assignment(cost)
    assigned = np.empty(n, dtype=np.intp)
    assigned[rows] = cols                       # masked record i -> original assigned[i]
    _, klass = np.unique(B, axis=0, return_inverse=True)
    klass = klass.ravel()
    size = np.bincount(klass).astype(np.float64)
    # original assigned[i] is correct for its class when it was released in the same class
    own = klass[assigned] == klass
    return float(np.sum(own / size[klass]) / n)
