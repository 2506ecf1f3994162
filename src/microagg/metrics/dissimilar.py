"""Utility and privacy measures of seed 004 (CDT): utility loss UL (Eqs. 9-12), privacy of
the quasi-identifiers P(Q) (Eq. 13), prevention of homogeneity P(S) (Eqs. 14-15) and the
privacy of the release P(D') (Eq. 16)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["privacy_of_quasi_identifiers", "privacy_of_release", "privacy_of_sensitive",
           "utility_loss"]


def _codes(values: ArrayLike) -> NDArray[np.intp]:
    return np.unique(np.asarray(values, dtype=object).astype(str).ravel(),
                     return_inverse=True)[1].ravel().astype(np.intp)


def _entropy_bits(counts: NDArray[np.float64]) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def utility_loss(classes: ArrayLike, numeric: ArrayLike | None = None,
                 categorical: Sequence[ArrayLike] = ()) -> float:
    """UL(D') of seed 004: the mean over records of ``sqrt(mean_j UL(A_j)^2)``.

    For a numeric quasi-identifier ``UL = (class max - class min) / (column max - column
    min)``; for a categorical one ``UL = (distinct values in the class - 1) / (distinct
    values in the column)`` (Eq. 10 as printed: the denominator is not reduced by one, so a
    fully generalized column does not reach 1). Every record of a class has the same UL, so
    the class-size weighted mean of Eq. 12 is the mean over records.

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    numeric : array-like of shape (n_samples, r) or None, default=None
        The original numeric quasi-identifiers.
    categorical : sequence of array-like of shape (n_samples,), default=()
        The original values of each categorical quasi-identifier.

    Examples
    --------
    >>> # class 0: ages span 10/40, letters {a, b}: (2 - 1)/2 -> sqrt((0.25^2 + 0.5^2)/2)
    >>> # class 1: span 20/40, {a}: 0 -> sqrt(0.5^2 / 2); UL = the mean over the 4 records
    >>> round(utility_loss([0, 0, 1, 1], [[10.0], [20.0], [30.0], [50.0]], [["a", "b", "a", "a"]]), 4)
    0.3744
    """
    cls = _codes(classes)
    n = cls.size
    terms: list[NDArray[np.float64]] = []
    if numeric is not None:
        num = np.asarray(numeric, dtype=np.float64).reshape(n, -1)
        order = np.argsort(cls, kind="stable")
        starts = np.concatenate(([0], np.cumsum(np.bincount(cls))))[:-1]
        lo = np.minimum.reduceat(num[order], starts, axis=0)[cls]
        hi = np.maximum.reduceat(num[order], starts, axis=0)[cls]
        span = num.max(axis=0) - num.min(axis=0)
        terms.extend((np.where(span > 0, (hi - lo) / np.where(span > 0, span, 1.0), 0.0)).T)
    for column in categorical:
        codes = _codes(column)
        pairs = np.unique(cls * (codes.max() + 1) + codes)
        distinct = np.bincount(pairs // (codes.max() + 1), minlength=cls.max() + 1)
        terms.append((distinct[cls] - 1) / np.unique(codes).size)
    if not terms:
        return 0.0
    stacked = np.vstack(terms)
    return float(np.sqrt((stacked ** 2).mean(axis=0)).mean())


def privacy_of_quasi_identifiers(classes: ArrayLike) -> float:
    """P(Q) = (e(ideal) - e(Q')) / e(ideal): ``e(ideal) = log2 n`` (every tuple unique),
    ``e(Q')`` the entropy of the published quasi-identifier tuples (one symbol per class).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).

    Examples
    --------
    >>> privacy_of_quasi_identifiers([0, 0, 1, 1])
    0.5
    """
    cls = _codes(classes)
    if cls.size <= 1:
        return 0.0
    ideal = np.log2(cls.size)
    return float((ideal - _entropy_bits(np.bincount(cls).astype(np.float64))) / ideal)


def privacy_of_sensitive(classes: ArrayLike, sensitive: Sequence[ArrayLike]) -> float:
    """P(S) = sqrt(mean over sensitive attributes i and classes j of PHA_ij^2), with
    ``PHA_ij`` the entropy of attribute i in class j over its ideal ``log2 |class j|`` (all
    values distinct); a class of one record has PHA = 0 (nothing hides its value).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : sequence of array-like of shape (n_samples,)
        The values of each sensitive attribute.

    Examples
    --------
    >>> privacy_of_sensitive([0, 0, 1, 1], [["a", "b", "c", "c"]])
    0.7071067811865476
    """
    cls = _codes(classes)
    sizes = np.bincount(cls)
    pha = []
    for column in sensitive:
        codes = _codes(column)
        for j, size in enumerate(sizes):
            if size <= 1:
                pha.append(0.0)
                continue
            counts = np.bincount(codes[cls == j]).astype(np.float64)
            pha.append(_entropy_bits(counts) / np.log2(size))
    return float(np.sqrt(np.mean(np.square(pha)))) if pha else 0.0


def privacy_of_release(p_q: float, p_s: float) -> float:
    """P(D') = sqrt((P(Q)^2 + P(S)^2) / 2) (Eq. 16).

    Parameters
    ----------
    p_q : float
        P(Q), from :func:`privacy_of_quasi_identifiers`.
    p_s : float
        P(S), from :func:`privacy_of_sensitive`.
    """
    return float(np.sqrt((p_q ** 2 + p_s ** 2) / 2.0))
