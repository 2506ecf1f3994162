"""Information-loss measures: SSE, SST and IL = 100 * SSE / SST."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._base.groups import within_sse
from .._base.scaling import safe_exponents, to_safe_range
from .._base.validation import check_labels, check_matrix

__all__ = ["group_size_summary", "information_loss", "sse", "sst"]


def sst(X: ArrayLike) -> float:
    """Total sum of squares: squared Euclidean distances of the records to their mean.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The records.
    """
    A = check_matrix(X, caller="sst")
    return float(((A - A.mean(axis=0)) ** 2).sum())


def sse(X: ArrayLike, labels: ArrayLike) -> float:
    """Within-group sum of squares of a partition (seed 003, Eq. 2).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The records.
    labels : array-like of shape (n_samples,)
        The group of each record.

    Examples
    --------
    >>> sse([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1])
    4.0
    """
    A = check_matrix(X, caller="sse")
    lab = check_labels(labels, n_samples=A.shape[0])
    return within_sse(A, lab)


def information_loss(original: ArrayLike, masked: ArrayLike, labels: ArrayLike | None = None
                     ) -> float:
    """IL = 100 * sum ||x - x'||^2 / SST, in percent (0 = no loss).

    With mean aggregation ``x'`` is the group centroid and this is the ``100 * SSE / SST`` of
    Domingo-Ferrer & Mateo-Sanz (2002), the measure of the microaggregation literature
    (seed 003, Eq. 1). Computed on whatever scale the arrays are given in; ``labels`` is
    accepted for the metric contract and unused. A constant file (SST = 0) has IL 0 when
    nothing changed; a constant column published unchanged adds nothing to either sum.
    Values of extreme magnitude (1e308, 1e-300) are first multiplied by one exact power of
    two, which leaves the ratio unchanged and keeps the squares finite.

    Parameters
    ----------
    original : array-like of shape (n_samples, n_features)
        The original records.
    masked : array-like of shape (n_samples, n_features)
        The same records as published, in the same order.
    labels : array-like of shape (n_samples,), default=None
        Unused; accepted for the metric contract.

    Examples
    --------
    >>> round(information_loss([[0.0], [2.0], [10.0], [12.0]], [[1.0], [1.0], [11.0], [11.0]]), 4)
    3.8462
    """
    A = check_matrix(original, caller="information_loss", name="original")
    B = check_matrix(masked, caller="information_loss", name="masked")
    if A.shape != B.shape:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    common = safe_exponents(A, common=True)
    A, B = to_safe_range(A, common), to_safe_range(B, common)
    total = float(((A - A.mean(axis=0)) ** 2).sum())
    lost = float(((A - B) ** 2).sum())
    if total == 0.0:
        return 0.0 if lost == 0.0 else float("inf")
    return 100.0 * lost / total


def group_size_summary(labels: ArrayLike) -> dict[str, float]:
    """Number of groups and the smallest, largest and mean group size.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        The group of each record.
    """
    lab = np.asarray(labels)
    counts = np.bincount(lab) if lab.size else np.zeros(0, dtype=np.intp)
    counts = counts[counts > 0]
    if counts.size == 0:
        return {"n_groups": 0, "group_size_min": 0, "group_size_max": 0, "group_size_mean": 0.0}
    return {
        "n_groups": int(counts.size),
        "group_size_min": int(counts.min()),
        "group_size_max": int(counts.max()),
        "group_size_mean": float(counts.mean()),
    }
