"""Group representatives of time series: the pointwise mean, or the DTW barycentre (DBA).

Not an entry of :data:`microagg.aggregate.AGGREGATORS`, although its signature fits
``(values, labels, *, random_state) -> masked``: that registry is offered for any
quasi-identifiers (``anonymize``, ``--aggregation``, the workbench), where DBA would warp
unrelated attributes into each other (it aligns column ``j`` of one record with column
``j + 3`` of another), and it would make a core registry depend on the optional tslearn.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import check_choice, check_labels, check_matrix
from .distance import check_band

__all__ = ["REPRESENTATIVES", "series_representatives"]

REPRESENTATIVES = ("mean", "dba")
"""``mean``: pointwise mean (the Euclidean centroid); ``dba``: DTW barycentre averaging."""

_DBA_MAX_ITER = 30
_DBA_TOL = 1e-5


def series_representatives(values: ArrayLike, labels: ArrayLike, *, method: str = "mean",
                           band: int | None = None) -> NDArray[np.float64]:
    """Replace every series by its group's representative series.

    Parameters
    ----------
    values : array-like of shape (n_series, length)
        The original series, finite.
    labels : array-like of shape (n_series,)
        Group of each series (consecutive from 0).
    method : {"mean", "dba"}, default="mean"
        ``"mean"``: the pointwise mean, the series minimising the within-group sum of
        squared Euclidean distances. ``"dba"``: the DTW barycentre of
        :func:`tslearn.barycenters.dtw_barycenter_averaging` (started from the mean,
        ``max_iter=30``, ``tol=1e-5``; deterministic), which approximately minimises the
        sum of squared DTW distances; needs tslearn (``pip install microagg[series]``).
    band : int or None, default=None
        Sakoe-Chiba radius of the DTW used by DBA (``None``: no band).

    Returns
    -------
    masked : ndarray of shape (n_series, length)
        Row ``i`` is the representative of the group of series ``i``: identical rows within
        each group.

    References
    ----------
    Petitjean, F., Ketterlin, A. and Gançarski, P. "A global averaging method for dynamic
    time warping, with applications to clustering." Pattern Recognition 44(3) (2011);
    Nin, J. and Torra, V. RSCTC 2006, LNCS 4259 (series centroids in microaggregation).

    Examples
    --------
    >>> series_representatives([[0.0, 2.0], [2.0, 4.0], [10.0, 10.0], [12.0, 12.0]],
    ...                        [0, 0, 1, 1]).tolist()
    [[1.0, 3.0], [1.0, 3.0], [11.0, 11.0], [11.0, 11.0]]
    """
    V = check_matrix(values, caller="series_representatives", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    check_choice(method, REPRESENTATIVES, name="method", caller="series_representatives")
    width = check_band(band, caller="series_representatives")
    centres = group_centres(V, lab, method, width)
    return np.ascontiguousarray(centres[lab])


def group_centres(V: NDArray[np.float64], labels: NDArray[np.intp], method: str,
                  band: int | None) -> NDArray[np.float64]:
    """One representative per group, shape (n_groups, length); validation is assumed."""
    counts = np.bincount(labels).astype(np.float64)
    sums = np.zeros((counts.size, V.shape[1]))
    np.add.at(sums, labels, V)
    means = sums / counts[:, None]
    if method == "mean":
        return means
    try:
        with warnings.catch_warnings():  # tslearn warns on import when h5py is absent
            warnings.filterwarnings("ignore", message=".*h5py", category=UserWarning)
            from tslearn.barycenters import dtw_barycenter_averaging
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("The DTW barycentre (representative='dba') needs tslearn: "
                          "pip install 'microagg[series]'.") from error
    params = ({} if band is None else
              {"global_constraint": "sakoe_chiba", "sakoe_chiba_radius": band})
    order = np.argsort(labels, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(labels))])
    centres = np.empty_like(means)
    for g in range(counts.size):
        members = V[order[bounds[g]:bounds[g + 1]]]
        centres[g] = dtw_barycenter_averaging(
            members[:, :, None], barycenter_size=V.shape[1], init_barycenter=means[g][:, None],
            max_iter=_DBA_MAX_ITER, tol=_DBA_TOL, metric_params=params).ravel()
    return centres
