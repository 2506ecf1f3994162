"""A scikit-learn style face for partitioners: ``MicroAggregator(k=5).fit_predict(X)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClusterMixin

from ._base.scaling import SCALINGS, apply_scaler, fit_scaler
from ._base.validation import RandomState, check_choice, check_matrix
from .aggregate.aggregators import aggregate
from .partition import get_partitioner

__all__ = ["MicroAggregator"]


class MicroAggregator(ClusterMixin, BaseEstimator):
    """Microaggregation as a scikit-learn clusterer: groups of at least ``k`` records.

    The data are standardized (z-scores, ddof=1; constant columns left out of the
    distances) before the partition unless ``scaling="none"``. ``fit_transform`` returns the group means on the
    original scale, i.e. the masked data.

    Parameters
    ----------
    k : int, default=3
        Minimum group size.
    method : str, default="mdav"
        A key of :data:`microagg.partition.PARTITIONERS`.
    scaling : {"standard", "minmax", "none"}, default="standard"
    method_params : mapping, default=None
        Extra method parameters.
    random_state : None, int or numpy.random.Generator, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_groups_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [1.1], [1.2], [8.0], [8.1], [8.2]])
    >>> MicroAggregator(k=3).fit(X).labels_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    def __init__(self, k: int = 3, *, method: str = "mdav", scaling: str = "standard",
                 method_params: Mapping[str, Any] | None = None,
                 random_state: RandomState = None) -> None:
        self.k = k
        self.method = method
        self.scaling = scaling
        self.method_params = method_params
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: Any = None) -> MicroAggregator:
        """Partition ``X``; sets ``labels_`` and ``n_groups_``."""
        A = check_matrix(X, caller="MicroAggregator.fit")
        check_choice(self.scaling, SCALINGS, name="scaling", caller="MicroAggregator")
        Z = apply_scaler(A, fit_scaler(A, self.scaling))
        partitioner = get_partitioner(self.method)
        self.labels_: NDArray[np.intp] = partitioner(
            Z, self.k, random_state=self.random_state,
            **dict(self.method_params or {}),
        )
        self.n_groups_ = int(self.labels_.max()) + 1
        return self

    def fit_transform(self, X: ArrayLike, y: Any = None) -> NDArray[np.float64]:
        """Fit, then return ``X`` with each row replaced by its group mean."""
        self.fit(X)
        return aggregate(check_matrix(X, caller="MicroAggregator.fit_transform"), self.labels_)
