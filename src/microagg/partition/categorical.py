"""MDAV for ordinal, nominal and numeric attributes: medians and modes as group prototypes.

Torra (2004) and Domingo-Ferrer & Torra (2005) carry microaggregation over to categorical
data by changing its two ingredients: the distance (ordinal attributes by the difference of
their ranks over the number of categories, nominal attributes 0 when equal and 1 when not,
or the semantic distance of a hierarchy) and the aggregation (the median for ordinal
attributes, the mode for nominal ones). With these, the MDAV heuristic runs unchanged.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k
from .mixed import MixedData

__all__ = ["mdav_categorical", "prototype"]


def _leaf_distances(data: MixedData) -> list[NDArray[np.float64]]:
    """Per categorical column, the (m, m) normalized hierarchical distance between leaves
    (a flat hierarchy gives 0 for equal values, 1 otherwise)."""
    out = []
    for t in data.tables:
        m = len(t.leaves)
        leaf_nodes = t.ancestor[0]
        levels = t.join_level(np.repeat(leaf_nodes, m), np.tile(leaf_nodes, m)).reshape(m, m)
        out.append(levels / max(t.height, 1))
    return out


def prototype(data: MixedData, rows: NDArray[np.intp]) -> tuple[NDArray[np.float64],
                                                                  NDArray[np.intp]]:
    """The prototype of ``rows``: the (lower) median of each numeric / ordinal column and the
    mode of each categorical column (the smallest code among equally frequent ones)."""
    numeric = data.numeric[rows]
    med = np.sort(numeric, axis=0)[(len(rows) - 1) // 2] if numeric.shape[1] else \
        np.zeros(0)
    modes = np.empty(data.codes.shape[1], dtype=np.intp)
    for j, t in enumerate(data.tables):
        modes[j] = int(np.argmax(np.bincount(data.codes[rows, j], minlength=len(t.leaves))))
    return med, modes


def _distance_to(data: MixedData, leaf: list[NDArray[np.float64]], rows: NDArray[np.intp],
                 numeric: NDArray[np.float64], codes: NDArray[np.intp]) -> NDArray[np.float64]:
    """Squared distance of ``rows`` to a point given by its numeric values and codes."""
    d = ((data.numeric[rows] - numeric) ** 2).sum(axis=1)
    for j, table in enumerate(leaf):
        d += table[codes[j], data.codes[rows, j]] ** 2
    return d


def mdav_categorical(X: ArrayLike | MixedData, k: int, *, random_state: RandomState = None
                     ) -> NDArray[np.intp]:
    """MDAV with medians and modes: microaggregation of ordinal, nominal and numeric data.

    The MDAV loop (Domingo-Ferrer & Torra 2005): while at least 3k records remain, take the
    record farthest from the prototype of the remaining ones, group it with its k-1 nearest,
    then do the same around the record farthest from the first; with 2k..3k-1 left, one more
    group around the farthest record; the rest form the last group. The prototype is the
    median of each numeric or ordinal column and the mode of each nominal column; the
    squared distance sums, over attributes, the squared min-max normalized difference
    (numeric and ordinal ranks: ``|rank a - rank b| / (observed ranks - 1)``) and the
    squared normalized hierarchical distance (a flat hierarchy: 0 if equal, 1 otherwise).
    Ties go to the lowest row. O(n^2 p / k) time, O(n p) memory.

    Parameters
    ----------
    X : MixedData or array-like of shape (n_samples, n_features)
        Mixed quasi-identifiers (ordinal columns as ranks in the numeric part), or plain
        numeric ones (then it is MDAV with the coordinate-wise median as centre).
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Torra, V. "Microaggregation for categorical variables: a median based approach." PSD
    2004, LNCS 3050, 162-174; Domingo-Ferrer, J., Torra, V. "Ordinal, continuous and
    heterogeneous k-anonymity through microaggregation." Data Min. Knowl. Disc. 11(2),
    195-212 (2005); seed 001, section 2.1.

    Examples
    --------
    >>> mdav_categorical([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]], 3).tolist()
    [1, 1, 1, 0, 0, 0]
    """
    data = X if isinstance(X, MixedData) else MixedData.build(X, None)
    n = data.n_samples
    k = check_k(k, n_samples=n, caller="mdav-categorical")
    leaf = _leaf_distances(data)
    labels = np.full(n, -1, dtype=np.intp)
    remaining = np.arange(n)
    group = 0

    def take_group(seed: int) -> None:
        nonlocal remaining, group
        d = _distance_to(data, leaf, remaining, data.numeric[seed], data.codes[seed])
        if len(remaining) > k:
            nearest = np.argsort(d, kind="stable")[:k]
        else:
            nearest = np.arange(len(remaining))
        labels[remaining[nearest]] = group
        group += 1
        keep = np.ones(len(remaining), dtype=bool)
        keep[nearest] = False
        remaining = remaining[keep]

    while len(remaining) >= 3 * k:
        centre_num, centre_codes = prototype(data, remaining)
        r = int(remaining[np.argmax(_distance_to(data, leaf, remaining, centre_num,
                                                 centre_codes))])
        take_group(r)
        s = int(remaining[np.argmax(_distance_to(data, leaf, remaining, data.numeric[r],
                                                 data.codes[r]))])
        take_group(s)
    if len(remaining) >= 2 * k:
        centre_num, centre_codes = prototype(data, remaining)
        r = int(remaining[np.argmax(_distance_to(data, leaf, remaining, centre_num,
                                                 centre_codes))])
        take_group(r)
    if len(remaining):
        labels[remaining] = group
    return labels
