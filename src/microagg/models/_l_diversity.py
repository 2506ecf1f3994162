"""l-diversity achieved by published classes (Machanavajjhala, Kifer, Gehrke &
Venkitasubramaniam, ACM TKDD 1(1), 2007). Public through :mod:`microagg.models`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_option
from ..exceptions import PrivacyViolationError

__all__ = ["DIVERSITIES", "check_l", "check_l_diversity", "class_counts", "l_diversity",
           "levels"]

DIVERSITIES = ("distinct", "entropy", "recursive")


def class_counts(classes: NDArray[np.intp], codes: NDArray[np.intp]) -> NDArray[np.int64]:
    """(n_classes, n_values) counts of each sensitive value in each class."""
    n_classes = int(classes.max()) + 1
    n_values = int(codes.max()) + 1
    counts = np.zeros((n_classes, n_values), dtype=np.int64)
    np.add.at(counts, (classes, codes), 1)
    return counts


def levels(counts: NDArray[np.int64], diversity: str, c: float) -> NDArray[np.float64]:
    """The l each class (row of counts) achieves under ``diversity``."""
    if diversity == "distinct":
        return (counts > 0).sum(axis=1).astype(np.float64)
    if diversity == "entropy":
        total = counts.sum(axis=1, keepdims=True)
        p = np.where(counts > 0, counts / np.maximum(total, 1), 1.0)
        return np.exp(-(p * np.log(p)).sum(axis=1))
    # recursive (c, l): r_1 < c (r_l + r_{l+1} + ... + r_m), r sorted decreasing; the largest
    # such l (0 if even l = 1 fails, which happens only for c <= 1)
    r = -np.sort(-counts, axis=1)
    tails = np.cumsum(r[:, ::-1], axis=1)[:, ::-1]  # tails[:, l-1] = r_l + ... + r_m
    ok = r[:, :1] < c * tails
    ok &= tails > 0
    # ok is monotone in l (tails shrink): the count of True is the largest l
    return ok.sum(axis=1).astype(np.float64)


def l_diversity(classes: ArrayLike, sensitive: ArrayLike, *, diversity: str = "distinct",
                c: float = 2.0) -> float:
    """The l that every class achieves for one sensitive attribute (the minimum over classes).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : array-like of shape (n_samples,)
        Sensitive value of each record (any hashable values; coded internally).
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
        * distinct: the number of distinct sensitive values;
        * entropy: ``exp(H)`` with ``H`` the entropy of the class's sensitive values (a class
          is entropy l-diverse when ``H >= log l``);
        * recursive: the largest l with ``r_1 < c (r_l + ... + r_m)`` for the class's value
          counts sorted decreasingly (Machanavajjhala et al., Def. 4.3; seed 004 prints the
          condition with ``x_1 + x_2 + ...`` on the right, a typo: the sum starts at r_l).
    c : float, default=2.0
        The constant of recursive (c, l)-diversity.

    Returns
    -------
    float
        An integer for distinct and recursive, a real number for entropy.

    Examples
    --------
    >>> l_diversity([0, 0, 0, 1, 1, 1], ["a", "b", "b", "a", "b", "c"])
    2.0
    >>> round(l_diversity([0, 0, 1, 1], ["a", "b", "a", "a"], diversity="entropy"), 3)
    1.0
    >>> l_diversity([0, 0, 0, 0], ["a", "a", "b", "c"], diversity="recursive", c=1.5)
    2.0
    """
    cls = np.asarray(classes, dtype=np.intp).ravel()
    values = np.asarray(sensitive, dtype=object).ravel()
    if cls.shape != values.shape:
        raise ValueError(f"classes has {cls.size} entries but sensitive has {values.size}.")
    if cls.size == 0:
        return 0.0
    check_option(diversity, DIVERSITIES, parameter="diversity")
    _, codes = np.unique(values.astype(str), return_inverse=True)
    _, cls = np.unique(cls, return_inverse=True)
    return float(levels(class_counts(cls, codes.ravel()), diversity, c).min())


def check_l(l: Any) -> float:
    """``l`` as a float ``>= 1``, or a ValueError naming the allowed range.

    Parameters
    ----------
    l : object
        The requested l: a finite number ``>= 1`` (a bool is refused).
    """
    if isinstance(l, bool) or not isinstance(l, (int, float, np.integer, np.floating)) \
            or not np.isfinite(l) or l < 1:
        raise ValueError(f"The 'l' parameter must be a number >= 1. Got {l!r} instead.")
    return float(l)


def check_l_diversity(classes: ArrayLike, sensitive: ArrayLike, l: float, *,
                      diversity: str = "distinct", c: float = 2.0) -> float:
    """Return the achieved l; raise :class:`PrivacyViolationError` if it is below ``l``.

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : array-like of shape (n_samples,)
        Sensitive value of each record.
    l : float
        The l the release promises.
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
        The kind of l-diversity, as in :func:`l_diversity`.
    c : float, default=2.0
        The constant of recursive (c, l)-diversity.
    """
    achieved = l_diversity(classes, sensitive, diversity=diversity, c=c)
    if achieved < l - 1e-12:
        raise PrivacyViolationError(
            f"The published classes are only {diversity} {achieved:.4g}-diverse, below the "
            f"required l={l}. Nothing was released. This is a bug in microagg."
        )
    return achieved
