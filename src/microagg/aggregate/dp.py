"""Differentially private microaggregation: Laplace noise on the centroids of an insensitive
partition (Soria-Comas, Domingo-Ferrer, Sánchez & Martínez, VLDB J. 23(5), 2014).

The mechanism, for ``n`` records and ``p`` attributes with public bounds ``[lo_j, hi_j]``:

1. clip every value into its bounds and rescale to ``[0, 1]`` with the bounds (never with
   the data);
2. order the records by a total order of the domain that does not depend on the other
   records: squared distance to the lower corner of the bounds, ties broken by the values
   column by column; cut the order into consecutive groups of ``k`` (the last one takes the
   remaining ``n mod k``). Replacing one record moves it in the order and shifts the records
   in between by one place, so every group gains at most one record and loses at most one:
   the partition is *insensitive*;
3. each group's centroid then moves by at most ``1/|G|`` per rescaled attribute, so the
   vector of all centroids has L1 sensitivity ``S = p * sum_G 1/|G|`` (about
   ``p n / k**2``); adding Laplace noise of scale ``S / epsilon`` to every centroid
   coordinate is epsilon-differentially private (Dwork, McSherry, Nissim & Smith, 2006);
4. every record of a group is replaced by the group's noisy centroid (rescaled back), so the
   release is also k-anonymous; clipping the noisy centroids into the bounds is
   post-processing.

Neighbouring data sets differ in one record replaced by another (``n`` is public). The
guarantee covers the published noisy values and the group labels, as an unordered multiset:
the caller must shuffle the rows (the input order would tell which rows share a rank block)
and must not publish other columns alongside (they would be linked to their record).

The random source is part of the secret: anyone who knows the seed can regenerate the noise
and subtract it. :func:`~microagg.release.anonymize` therefore draws it from fresh
operating-system entropy and never records it; call :func:`dp_microaggregation` with
``random_state=None`` for the same reason (a seed is for tests only).

What it does not cover: bounds computed from the data (they reveal the extremes; a
:class:`~microagg.exceptions.PrivacyLeakWarning` says so), the information-loss and risk
figures computed from the original data (for the data holder's eyes only), and
floating-point attacks on the Laplace sampler (Mironov, CCS 2012), which this
implementation does not defend against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed

__all__ = ["DPResult", "check_epsilon", "dp_microaggregation", "insensitive_labels"]


def check_epsilon(epsilon: float) -> float:
    """``epsilon`` as a float, or a ValueError naming the allowed range."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            or not np.isfinite(epsilon) or not float(epsilon) > 0.0:
        raise ValueError(f"The 'epsilon' parameter must be a finite number > 0. Got {epsilon!r}.")
    return float(epsilon)


def insensitive_labels(U: ArrayLike, k: int, *, reference: ArrayLike | None = None
                       ) -> NDArray[np.intp]:
    """Insensitive partition: consecutive groups of ``k`` in a fixed total order of the domain.

    Records are ranked by squared distance to ``reference`` (default: the origin), ties
    broken by the values of column 0, then 1, ...; ranks ``0..k-1`` form group 0, the next
    ``k`` group 1, and the last group also takes the ``n mod k`` remaining records. Because
    the key of a record depends on that record alone, replacing one record changes every
    group by at most one record (step 2 of the module's mechanism).

    Parameters
    ----------
    U : array-like of shape (n_samples, n_features)
        Values on a data-independent scale (rescaled by public bounds).
    k : int
        Group size, ``2 <= k <= n_samples``.
    reference : array-like of shape (n_features,), default=None
        The point distances are measured from; the origin when ``None``.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Group numbers in rank order: group 0 holds the records nearest ``reference``.

    Examples
    --------
    >>> insensitive_labels([[0.9], [0.1], [0.5], [0.2], [0.7]], 2).tolist()
    [1, 0, 1, 0, 1]
    """
    A = check_matrix(U, caller="insensitive_labels", name="U")
    k = check_k(k, n_samples=A.shape[0], caller="insensitive_labels")
    ref = np.zeros(A.shape[1]) if reference is None else np.asarray(reference, dtype=np.float64)
    if ref.shape != (A.shape[1],):
        raise ValueError(f"reference has shape {ref.shape}; expected ({A.shape[1]},).")
    distance = ((A - ref) ** 2).sum(axis=1)
    # np.lexsort sorts by the LAST key first: distance, then column 0, 1, ...
    order = np.lexsort((*(A[:, j] for j in range(A.shape[1] - 1, -1, -1)), distance))
    n_groups = A.shape[0] // k
    labels = np.empty(A.shape[0], dtype=np.intp)
    labels[order] = np.minimum(np.arange(A.shape[0]) // k, n_groups - 1)
    return labels


@dataclass(frozen=True)
class DPResult:
    """What :func:`dp_microaggregation` returns besides nothing else: all of it is needed."""

    masked: NDArray[np.float64]
    """Released values on the original scale, rows in the input's order."""
    labels: NDArray[np.intp]
    """Rank block of each input row."""
    sensitivity: float
    """L1 sensitivity of the centroid vector, in bound-rescaled units."""
    laplace_scale: float
    """Scale of the Laplace noise per centroid coordinate, in bound-rescaled units."""
    clipped_values: int
    """How many input values lay outside their bounds and were clipped (data-dependent)."""


def dp_microaggregation(values: ArrayLike, k: int, *, epsilon: float, lower: ArrayLike,
                        upper: ArrayLike, clip_output: bool = True,
                        random_state: RandomState = None) -> DPResult:
    """Epsilon-differentially private microaggregation (see the module docstring).

    Parameters
    ----------
    values : array-like of shape (n_samples, n_features)
        Original values.
    k : int
        Group size, ``2 <= k <= n_samples``. The noise shrinks as ``n / k**2``: the release
        is useful only for large ``k`` (of the order of ``sqrt(n)`` or more).
    epsilon : float
        Privacy budget, > 0.
    lower, upper : array-like of shape (n_features,)
        Public bounds of each attribute, ``lower <= upper``; a column with
        ``lower == upper`` is published as that constant and costs no budget.
    clip_output : bool, default=True
        Clip the noisy centroids into the bounds (post-processing: no privacy cost, but it
        biases means near the bounds).
    random_state : None, int or numpy.random.Generator, default=None
        Leave ``None`` (fresh entropy) for real releases; a known seed reveals the noise.

    Returns
    -------
    DPResult

    References
    ----------
    Soria-Comas, J., Domingo-Ferrer, J., Sánchez, D., Martínez, S. "Enhancing data utility in
    differential privacy via microaggregation-based k-anonymity." VLDB J. 23(5) (2014)
    771-794.

    Examples
    --------
    >>> out = dp_microaggregation([[1.0], [2.0], [3.0], [4.0]], 2, epsilon=1.0,
    ...                           lower=[0.0], upper=[10.0], random_state=0)
    >>> out.labels.tolist(), out.sensitivity
    ([0, 0, 1, 1], 1.0)
    >>> bool(out.masked[0, 0] == out.masked[1, 0] and 0.0 <= out.masked[0, 0] <= 10.0)
    True
    """
    epsilon = check_epsilon(epsilon)
    X = check_matrix(values, caller="dp_microaggregation", name="values")
    k = check_k(k, n_samples=X.shape[0], caller="dp_microaggregation")
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    p = X.shape[1]
    if lo.shape != (p,) or hi.shape != (p,):
        raise ValueError(f"lower and upper must have shape ({p},); got {lo.shape} and {hi.shape}.")
    bad = [j for j in range(p) if not (np.isfinite(lo[j]) and np.isfinite(hi[j]) and lo[j] <= hi[j])]
    if bad:
        raise ValueError(
            "Bounds must be finite with lower <= upper; not so for column(s) "
            + ", ".join(f"{j} ({float(lo[j])}, {float(hi[j])})" for j in bad) + "."
        )
    _, rng = resolve_seed(random_state)
    clipped = np.clip(X, lo, hi)
    n_clipped = int((clipped != X).sum())
    width = hi - lo
    live = width > 0
    U = np.zeros_like(clipped)
    U[:, live] = (clipped[:, live] - lo[live]) / width[live]
    labels = insensitive_labels(U, k)
    sizes = np.bincount(labels).astype(np.float64)
    centroids = np.zeros((sizes.size, p))
    np.add.at(centroids, labels, U)
    centroids /= sizes[:, None]
    sensitivity = float(live.sum() * (1.0 / sizes).sum())
    scale = sensitivity / epsilon
    noisy = centroids + rng.laplace(0.0, scale, size=centroids.shape) * live
    if clip_output:
        noisy = np.clip(noisy, 0.0, 1.0)
    masked = lo + noisy[labels] * width
    return DPResult(masked=masked, labels=labels, sensitivity=sensitivity, laplace_scale=scale,
                    clipped_values=n_clipped)
