"""t-closeness (Li, Li & Venkatasubramanian, ICDE 2007): the Earth Mover's Distance, the t a
release achieves, and merging classes until it is reached. Public through
:mod:`microagg.models`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_option
from ..exceptions import PrivacyViolationError
from ..hierarchy import HierarchyTables
from ._costs import SSECost

__all__ = ["GROUND_DISTANCES", "SensitiveDistribution", "check_t", "check_t_closeness",
           "earth_movers_distance", "enforce_t_closeness", "t_closeness"]


GROUND_DISTANCES = ("equal", "ordered", "hierarchical")


def check_t(t: Any) -> float:
    """``t`` as a float in [0, 1], or a ValueError naming the allowed range.

    Parameters
    ----------
    t : object
        The requested t (a number in [0, 1]).
    """
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(t) <= 1.0:
        raise ValueError(f"The 't' parameter must be a number in [0, 1]. Got {t!r} instead.")
    return float(t)


def _emd_rows(P: NDArray[np.float64], q: NDArray[np.float64], distance: str,
              tables: HierarchyTables | None = None) -> NDArray[np.float64]:
    """EMD between each row of ``P`` (class distributions) and ``q`` (the table's)."""
    diff = P - q
    m = q.size
    if distance == "equal":
        return 0.5 * np.abs(diff).sum(axis=1)
    if distance == "ordered":
        if m <= 1:
            return np.zeros(P.shape[0])
        return np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
    assert tables is not None
    H = max(tables.height, 1)
    n_nodes = len(tables.node_labels)
    extra = np.zeros((P.shape[0], n_nodes))
    np.add.at(extra.T, tables.ancestor[0], diff.T)  # leaves
    total = np.zeros(P.shape[0])
    for level in range(1, tables.height + 1):
        # each node at `level - 1` passes its extra to its parent
        child = np.unique(tables.ancestor[level - 1])
        parent = tables.ancestor[level, tables.node_leaf[child]]
        pos = np.zeros((P.shape[0], n_nodes))
        neg = np.zeros((P.shape[0], n_nodes))
        np.add.at(pos.T, parent, np.maximum(extra[:, child], 0.0).T)
        np.add.at(neg.T, parent, np.maximum(-extra[:, child], 0.0).T)
        nodes = np.unique(parent)
        total += (level / H) * np.minimum(pos[:, nodes], neg[:, nodes]).sum(axis=1)
        extra[:, nodes] = pos[:, nodes] - neg[:, nodes]
    return total


def earth_movers_distance(p: ArrayLike, q: ArrayLike, *, distance: str = "equal",
                          hierarchy: HierarchyTables | None = None) -> float:
    """Earth Mover's Distance between two distributions over the same ordered values.

    * ``equal``: every pair of distinct values at distance 1 (categorical):
      ``EMD = sum |p_i - q_i| / 2``;
    * ``ordered``: values in order, distance ``|i - j| / (m - 1)`` (numeric, ordinal):
      ``EMD = sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1)``;
    * ``hierarchical``: distance = level of the lowest common ancestor over the height;
      ``p``, ``q`` follow the hierarchy's leaf codes.

    Li, Li & Venkatasubramanian, "t-Closeness: Privacy beyond k-anonymity and
    l-diversity", ICDE 2007, section 4.

    Parameters
    ----------
    p, q : array-like of shape (m,)
        Two distributions (shares summing to 1) over the same ``m`` values, in their order.
    distance : {"equal", "ordered", "hierarchical"}, default="equal"
        The ground distance between values, as above.
    hierarchy : HierarchyTables or None, default=None
        The hierarchy of a ``hierarchical`` distance (its leaves are the ``m`` values).

    Examples
    --------
    >>> earth_movers_distance([0.99, 0.01], [0.89, 0.11])  # seed 004's D1, D2
    0.1
    >>> earth_movers_distance([0.6, 0.4], [0.5, 0.5])      # D3, D4: the same EMD
    0.1
    """
    P = np.asarray(p, dtype=np.float64).reshape(1, -1)
    Q = np.asarray(q, dtype=np.float64).ravel()
    check_option(distance, GROUND_DISTANCES, parameter="distance")
    if P.shape[1] != Q.size:
        raise ValueError(f"p has {P.shape[1]} values and q {Q.size}.")
    if distance == "hierarchical" and hierarchy is None:
        raise ValueError("The hierarchical distance needs the hierarchy's tables.")
    return round(float(_emd_rows(P, Q, distance, hierarchy)[0]), 12)


class SensitiveDistribution:
    """One sensitive column prepared for t-closeness: value codes, ground distance, and the
    table's distribution.

    Missing values (``None``, ``NaN``) are not a sensitive value: they get code ``-1``, the
    table's distribution ``q`` is that of the observed values, and a class is compared by
    its observed values only (a class with none is at distance 0: it reveals no value).

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        The sensitive value of each record (numbers or labels; missing values allowed).
    distance : {"auto", "equal", "ordered"}, default="auto"
        The ground distance without a hierarchy; ``auto``: ordered for numbers, equal
        otherwise.
    hierarchy : Hierarchy, HierarchyTables or None, default=None
        A hierarchy of the values: the distance is then hierarchical.
    """

    def __init__(self, values: ArrayLike, *, distance: str = "auto",
                 hierarchy: Any = None):
        import pandas as pd  # pd.isna: None, NaN and NaT alike; loaded when used

        arr = np.asarray(values, dtype=object).ravel()
        observed = ~pd.isna(arr)
        seen = arr[observed]
        if hierarchy is not None:
            tables = hierarchy.tables() if hasattr(hierarchy, "tables") else hierarchy
            codes = (hierarchy.encode(seen) if hasattr(hierarchy, "encode")
                     else np.asarray(seen, np.intp))
            self.distance, self.tables = "hierarchical", tables
            self.m = len(tables.leaves)
        else:
            numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                          and not isinstance(v, bool) for v in seen)
            if distance == "auto":
                distance = "ordered" if numeric else "equal"
            check_option(distance, ("equal", "ordered"), parameter="distance",
                         where="without a hierarchy")
            keys = seen.astype(np.float64) if numeric else seen.astype(str)
            _, codes = np.unique(keys, return_inverse=True)  # sorted: the order of `ordered`
            self.distance, self.tables = distance, None
            self.m = int(codes.max()) + 1 if codes.size else 1
        self.codes = np.full(arr.size, -1, dtype=np.intp)
        self.codes[observed] = np.asarray(codes, dtype=np.intp).ravel()
        self.n_missing = int((~observed).sum())
        observed_codes = self.codes[observed]
        self.q = (np.bincount(observed_codes, minlength=self.m) / observed_codes.size
                  if observed_codes.size else np.full(self.m, 1.0 / self.m))

    def emd(self, classes: NDArray[np.intp], n_classes: int | None = None
            ) -> NDArray[np.float64]:
        """EMD of every class (0..g-1) to the table's distribution (0 for a class without an
        observed value)."""
        g = int(classes.max()) + 1 if n_classes is None else int(n_classes)
        counts = np.zeros((g, self.m))
        seen = self.codes >= 0
        np.add.at(counts, (np.asarray(classes)[seen], self.codes[seen]), 1.0)
        sizes = counts.sum(axis=1, keepdims=True)
        P = np.divide(counts, sizes, out=np.tile(self.q, (g, 1)), where=sizes > 0)
        return _emd_rows(P, self.q, self.distance, self.tables)


def t_closeness(classes: ArrayLike, sensitive: ArrayLike | SensitiveDistribution, *,
                distance: str = "auto", hierarchy: Any = None) -> float:
    """The t a release achieves: the largest EMD between a class's sensitive distribution and
    the whole table's (``distance="auto"``: ordered for numbers, equal otherwise;
    hierarchical when a hierarchy is given).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : array-like of shape (n_samples,) or SensitiveDistribution
        Sensitive value of each record, or the column already prepared.
    distance : {"auto", "equal", "ordered"}, default="auto"
        The ground distance (see :func:`earth_movers_distance`).
    hierarchy : Hierarchy, HierarchyTables or None, default=None
        A hierarchy of the values, for the hierarchical distance.

    Examples
    --------
    >>> t_closeness([0, 0, 1, 1], [1, 2, 3, 4])  # ordered: {1,2} vs {1,2,3,4} -> 1/3
    0.333333333333
    """
    cls = np.unique(np.asarray(classes).ravel(), return_inverse=True)[1].ravel()
    dist = sensitive if isinstance(sensitive, SensitiveDistribution) else \
        SensitiveDistribution(sensitive, distance=distance, hierarchy=hierarchy)
    return round(float(dist.emd(cls).max()), 12)


def enforce_t_closeness(labels: ArrayLike, sensitive: list[SensitiveDistribution], *,
                        t: float, cost: Any = None, X: ArrayLike | None = None
                        ) -> NDArray[np.intp]:
    """Merge the class farthest from the table's distribution with its cheapest partner
    until every class is within ``t`` for every sensitive column (after Soria-Comas,
    Domingo-Ferrer, Sánchez & Martínez, "t-closeness through microaggregation", ICDE 2016 /
    IEEE TKDE 2015: merging classes moves their distribution towards the table's). Ends,
    since one class holding every record has EMD 0.

    ``cost`` is a cost model as for :func:`enforce_l_diversity` (default: SSE on ``X``).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        A partition (group of each record).
    sensitive : list of SensitiveDistribution
        Every sensitive column, prepared.
    t : float
        The largest EMD allowed between a class and the whole table.
    cost : object, default=None
        Cost model as for :func:`enforce_l_diversity`; ``None`` uses the SSE increase on ``X``.
    X : array-like of shape (n_samples, n_features), default=None
        The scaled quasi-identifiers of the default cost model.
    """
    lab = np.unique(np.asarray(labels, dtype=np.intp).ravel(), return_inverse=True)[1].ravel()
    t = check_t(t)
    n_groups = int(lab.max()) + 1
    if cost is None:
        if X is None:
            raise ValueError("enforce_t_closeness needs X (for the SSE cost) or a cost model.")
        cost = SSECost(np.asarray(X, dtype=np.float64), lab, n_groups)
    alive = np.ones(n_groups, dtype=bool)
    while True:
        worst = np.zeros(n_groups)
        for dist in sensitive:
            worst = np.maximum(worst, dist.emd(lab, n_groups))
        worst[~alive] = -1.0
        a = int(np.argmax(worst))
        if worst[a] <= t + 1e-12 or alive.sum() == 1:
            break
        others = np.flatnonzero(alive)
        others = others[others != a]
        b = int(others[np.argmin(cost.merge_cost(a, others))])
        cost.merge(a, b)
        lab[lab == b] = a
        alive[b] = False
    return np.unique(lab, return_inverse=True)[1].ravel().astype(np.intp)


def check_t_closeness(classes: ArrayLike, sensitive: SensitiveDistribution, t: float) -> float:
    """Return the achieved t; raise :class:`PrivacyViolationError` if it exceeds ``t``.

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : SensitiveDistribution
        The sensitive column, prepared.
    t : float
        The t the release promises.
    """
    achieved = t_closeness(classes, sensitive)
    if achieved > t + 1e-9:
        raise PrivacyViolationError(
            f"The published classes are only {achieved:.4g}-close, above the required t={t}. "
            "Nothing was released. This is a bug in microagg.")
    return achieved
