"""Hybrid microdata: every group replaced by synthetic records with the group's exact moments.

Domingo-Ferrer & González-Nicolás (2010) obtain *hybrid* data by microaggregating the file
and then replacing each cluster by the output of a synthetic-data generator run on that
cluster alone. With a generator that preserves means and covariances exactly, the hybrid
file preserves them exactly too, per group and therefore over the whole file (the
between-group part is untouched and every within-group scatter matrix is kept). The group
size moves the result between the two ends: groups of one record give back the original
file, one group of all the records gives a fully synthetic file.

The generator, per group ``G`` of ``g`` records with values ``X_G`` (``g x p``):

1. centre: ``Xc = X_G - mean``; columns that are constant inside the group are set aside
   and published unchanged (they stay exactly constant);
2. scale every other column by its norm inside the group (so the rank decision below does
   not depend on the units of the columns) and take the thin SVD ``U S Vt``; only the
   leading ``r = min(g - 1, p)`` singular values can be non-zero (the rows are centred),
   and those at or below ``max(g, p) * eps * S[0]`` are set to zero, so exact linear
   relations between columns inside the group survive;
3. draw a ``g x r`` standard normal matrix ``Z``, remove its column means (project out the
   vector of ones) and orthonormalize it by a QR decomposition whose ``R`` has a positive
   diagonal: ``Q = Zc R^-1`` is then a deterministic function of the draw, orthogonal to
   the vector of ones, with ``Q^T Q = I``;
4. publish ``mean + Q S Vt`` (scaled back).

Then the synthetic records have exactly the mean of the group and the scatter matrix
``V S^2 Vt = Xc^T Xc``, so the same sample covariance. ``Q`` is uniformly distributed over
the orthonormal ``g x r`` frames orthogonal to the vector of ones, so the synthetic group is
a uniformly random point among all the sets of ``g`` records with these first two moments:
the normal-model draw of Mateo-Sanz, Martínez-Ballesté & Domingo-Ferrer (2004; ``dataGen``
in sdcMicro), which standardizes a normal sample by its own Cholesky factor and imposes the
target one, gives the same distribution when the covariance has full rank, and the
construction above also covers groups with ``g <= p`` (rank-deficient covariance). It is
IPSO (Burridge 2003) with an intercept-only model, as written by Langsrud (2019).

Numerics: the projection in step 3 is done with one Householder reflector that maps the
first coordinate axis onto the vector of ones, so ``Q`` is orthogonal to it to rounding
error whatever the conditioning of the draw (mathematically the same ``Q``).

What it does not promise: synthetic records are not k-anonymous (almost surely every
published record is unique), nothing here is differential privacy, and statistics other
than the per-group mean vector and covariance matrix (medians, ranges, signs, integrality)
are not preserved; a synthetic value can fall outside the group's range or the column's
domain (a negative age). A group of ``g`` records whose covariance has rank ``g - 1`` (always
the case when ``g <= p`` for data in general position) gets a random orthogonal mixture of
its centred records; in particular a group of **two** records comes back as the same two
records, possibly swapped (no other pair has that mean and covariance), so hybrid data
protect nothing in groups of two. The published group reveals its mean and covariance
exactly, by design.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import (
    RandomState,
    check_labels,
    check_matrix,
    check_nonnegative,
    check_random_state,
)
from ..exceptions import InternalError

__all__ = ["check_synthetic_moments", "synthetic_microdata"]

_EPS = float(np.finfo(np.float64).eps)
_CHUNK = 1 << 22  # floats per batched (groups, g, p) or (groups, p, p) stack in the checker


def _size_classes(labels: NDArray[np.intp]) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """For every group size ``g``: the row indices of the groups of that size, shape (m, g).

    Groups come in increasing label order within a size, rows in their input order within
    a group; sizes come in increasing order (so the random draws are reproducible).
    """
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for g in np.unique(counts):
        groups = np.flatnonzero(counts == g)
        yield int(g), order[starts[groups][:, None] + np.arange(g)]


def _orthonormal_centred(Z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Zc R^-1`` for a stack ``Z`` of shape (m, g, r), ``r <= g - 1``: column means removed,
    orthonormalized by QR with a positive diagonal of ``R``.

    The centred columns are written in an orthonormal basis of the complement of the vector
    of ones, the columns 2..g of the reflector ``P = I - 2 v v^T / v^T v`` with
    ``v = 1 + sqrt(g) e_1`` (``P e_1 = -1 / sqrt(g)``), factored there, and mapped back: the
    result is orthogonal to the vector of ones to rounding error.
    """
    g = Z.shape[1]
    root = np.sqrt(g)
    v = np.ones(g)
    v[0] += root
    beta = 2.0 / (2.0 * root * (root + 1.0))  # 2 / (v^T v)
    W = Z - beta * v[None, :, None] * (v @ Z)[:, None, :]  # P Z
    Q0, R = np.linalg.qr(W[:, 1:, :])  # the coordinates of Zc in the basis, (m, g-1, r)
    sign = np.sign(np.diagonal(R, axis1=1, axis2=2))
    sign[sign == 0] = 1.0
    Q0 *= sign[:, None, :]
    Q = np.concatenate((np.zeros_like(Q0[:, :1, :]), Q0), axis=1)  # [0; Q0]
    Q -= beta * v[None, :, None] * Q0.sum(axis=1)[:, None, :]  # P [0; Q0]
    return Q


def _synthesize(X: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
    """Synthetic groups for a stack ``X`` of shape (m, g, p), ``g >= 2``."""
    m, g, p = X.shape
    mean = X.mean(axis=1, keepdims=True)
    const = X.max(axis=1) == X.min(axis=1)  # (m, p)
    Xc = np.where(const[:, None, :], 0.0, X - mean)
    scale = np.sqrt(np.einsum("mgp,mgp->mp", Xc, Xc))
    Y = Xc / np.where(scale > 0.0, scale, 1.0)[:, None, :]
    _, S, Vt = np.linalg.svd(Y, full_matrices=False)
    r = min(g - 1, p)
    S, Vt = S[:, :r], Vt[:, :r, :]
    S = np.where(S > max(g, p) * _EPS * S[:, :1], S, 0.0)
    Q = _orthonormal_centred(rng.standard_normal((m, g, r)))
    dev = Q @ (S[:, :, None] * Vt) * scale[:, None, :]
    return np.where(const[:, None, :], X, mean + dev)


def synthetic_microdata(values: ArrayLike, labels: ArrayLike, *,
                        random_state: RandomState = None) -> NDArray[np.float64]:
    """Replace every group by synthetic records with exactly its mean vector and covariance.

    The hybrid-microdata aggregator of Domingo-Ferrer & González-Nicolás (2010): each group
    of the partition is replaced by a random set of as many records with the same mean and
    the same (sample) covariance matrix; see the module docstring for the construction.
    Groups of one record come back unchanged, columns that are constant inside a group stay
    exactly constant there, and groups with no more records than columns are handled (their
    covariance is rank-deficient and is still reproduced exactly). Since every group keeps
    its mean and its scatter matrix, the whole file keeps its mean and covariance too.
    A group of two records comes back as the same two records, possibly swapped: it is the
    only pair with that mean and covariance.

    The full text of the paper was not available to us; its abstract states the principle
    (microaggregate, then run a synthetic generator on every cluster; with one that keeps
    means and covariances exactly, the hybrid file keeps them). The generator used here is
    the exact-moment normal draw described in the module docstring, our own construction,
    equivalent in distribution to the Cholesky-based generator of Mateo-Sanz et al. (2004)
    when the group covariance has full rank.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns)
        Finite values on the original scale.
    labels : array-like of shape (n_samples,)
        The partition: integer group labels, consecutive from 0.
    random_state : None, int >= 0 or numpy.random.Generator, default=None
        Source of the normal draws; the same seed gives the same output.

    Returns
    -------
    masked : ndarray of shape (n_samples, n_columns)
        The synthetic records, row ``i`` belonging to the group of input row ``i``.

    Raises
    ------
    ValueError
        Non-finite or empty ``values``, or ``labels`` of the wrong length or not
        consecutive from 0.
    TypeError
        Non-numeric ``values`` or non-integer ``labels``.

    See Also
    --------
    check_synthetic_moments : verifies the per-group means and covariances of an output.

    Notes
    -----
    The published records are almost surely all distinct: the output is not k-anonymous,
    and the noise is not differential privacy. What is promised is the exact preservation
    of each group's first two moments (to rounding error; :func:`check_synthetic_moments`
    verifies it).

    Cost: one batched SVD and QR per distinct group size, ``O(n p min(g, p))`` in all.

    References
    ----------
    Seed 001, section 2.8.
    J. Domingo-Ferrer and Ú. González-Nicolás, "Hybrid microdata using microaggregation",
    Information Sciences 180(15), 2834-2844, 2010.
    J. M. Mateo-Sanz, A. Martínez-Ballesté and J. Domingo-Ferrer, "Fast generation of
    accurate synthetic microdata", Privacy in Statistical Databases, LNCS 3050, 2004.
    J. Burridge, "Information preserving statistical obfuscation", Statistics and
    Computing 13(4), 2003.
    Ø. Langsrud, "Information preserving regression-based tools for statistical
    disclosure control", Statistics and Computing 29(5), 2019.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0], [2.0, 14.0], [4.0, 11.0], [7.0, 3.0], [5.0, 5.0]])
    >>> labels = np.array([0, 0, 0, 1, 1])
    >>> out = synthetic_microdata(X, labels, random_state=0)
    >>> bool(np.allclose(out[:3].mean(axis=0), X[:3].mean(axis=0)))
    True
    >>> bool(np.allclose(np.cov(out[:3].T), np.cov(X[:3].T)))
    True
    >>> bool(np.allclose(np.cov(out.T), np.cov(X.T)))  # the whole file too
    True
    >>> synthetic_microdata([[1.0, 2.0], [3.0, 4.0]], [0, 1]).tolist()  # singletons stay
    [[1.0, 2.0], [3.0, 4.0]]
    """
    V = check_matrix(values, caller="synthetic_microdata", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    rng = check_random_state(random_state)
    out = V.copy()
    for g, idx in _size_classes(lab):
        if g >= 2:
            out[idx] = _synthesize(V[idx], rng)
    return out


def _group_moments(X: NDArray[np.float64], idx: NDArray[np.intp]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Means (m, p) and sample covariances (m, p, p) of the groups ``X[idx]``, ``g >= 2``."""
    G = X[idx]
    mean = G.mean(axis=1)
    D = G - mean[:, None, :]
    return mean, np.einsum("mgi,mgj->mij", D, D) / (idx.shape[1] - 1)


def check_synthetic_moments(values: ArrayLike, masked: ArrayLike, labels: ArrayLike, *,
                            rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """Verify that every group of ``masked`` has the mean and covariance of ``values``.

    For group ``G`` and columns ``j, l``, with the group's original mean ``m_j``, standard
    deviation ``s_j`` (ddof=1; 0 for a single record), magnitude ``a_j = |m_j| + s_j`` and
    the column's standard deviation ``c_j`` over the whole file (its largest absolute value
    if the column is constant, 1 if it is all zero), the check requires::

        |mean_masked_j - m_j|        <= rtol * a_j + atol * c_j
        |cov_masked_jl - cov_jl|     <= rtol * (a_j s_l + s_j a_l) / 2 + atol * c_j c_l

    that is, a discrepancy relative to the group's own scale (the rounding error of the
    synthetic records grows with the magnitude of the values, not only with their spread)
    plus an absolute floor relative to the column's scale. Covariances of single-record
    groups are not compared (their mean is the record itself).

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns)
        The original values.
    masked : array-like of shape (n_samples, n_columns)
        The synthetic values, e.g. from :func:`synthetic_microdata`.
    labels : array-like of shape (n_samples,)
        The partition used to make ``masked``.
    rtol : float >= 0, default=1e-7
        Tolerance relative to the group's scale.
    atol : float >= 0, default=1e-9
        Tolerance relative to the column's scale over the file.

    Raises
    ------
    microagg.exceptions.InternalError
        A group's mean or covariance differs beyond the tolerance; the message names the
        number of failures and the worst one: its group, column(s), both values, the
        difference and the tolerance.
    ValueError, TypeError
        Invalid inputs (shapes, non-finite values, labels, tolerances).

    References
    ----------
    Seed 001, section 2.8; J. Domingo-Ferrer and Ú. González-Nicolás, Information
    Sciences 180(15), 2010.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 10.0], [2.0, 14.0], [4.0, 11.0], [7.0, 3.0], [5.0, 5.0]])
    >>> labels = [0, 0, 0, 1, 1]
    >>> check_synthetic_moments(X, synthetic_microdata(X, labels, random_state=1), labels)
    >>> bad = X.copy()
    >>> bad[0, 1] += 1.0
    >>> from microagg.exceptions import InternalError
    >>> try:
    ...     check_synthetic_moments(X, bad, labels)
    ... except InternalError as exc:
    ...     print(str(exc).split("the worst is ")[1])
    group 0, column 1: variance 3.0 in masked vs 4.333333333333333 in values (difference 1.33, tolerance 2.88e-06).
    """
    caller = "check_synthetic_moments"
    V = check_matrix(values, caller=caller, name="values")
    M = check_matrix(masked, caller=caller, name="masked")
    if M.shape != V.shape:
        raise ValueError(
            f"The 'masked' parameter of {caller} must have the shape of 'values' "
            f"{V.shape}. Got shape {M.shape} instead."
        )
    lab = check_labels(labels, n_samples=V.shape[0])
    rtol = check_nonnegative(rtol, name="rtol", caller=caller)
    atol = check_nonnegative(atol, name="atol", caller=caller)
    p = V.shape[1]
    col = V.std(axis=0)
    mag = np.abs(V).max(axis=0)
    col = np.where(col > 0.0, col, np.where(mag > 0.0, mag, 1.0))
    failures = _Failures()
    for g, idx_all in _size_classes(lab):
        step = max(1, _CHUNK // (g * p + p * p))
        for lo in range(0, idx_all.shape[0], step):
            _check_groups(V, M, lab, idx_all[lo:lo + step], col, (rtol, atol), failures)
    if failures.worst is not None:
        n_bad = failures.n_bad
        raise InternalError(
            f"The synthetic groups do not keep the moments of the original groups: {n_bad} "
            f"mean or covariance entr{'y' if n_bad == 1 else 'ies'} out of tolerance "
            f"(rtol={rtol:g}, atol={atol:g}); the worst is {failures.worst[1]}."
        )


class _Failures:
    """The entries out of tolerance found by :func:`check_synthetic_moments`: how many, and
    the worst (largest ratio of difference to tolerance, the first one on ties)."""

    def __init__(self) -> None:
        self.n_bad = 0
        self.worst: tuple[float, str] | None = None

    def record(self, ratio: NDArray[np.float64],
               describe: Callable[[tuple[int, ...]], str]) -> None:
        bad = ratio > 1.0
        if not bad.any():
            return
        self.n_bad += int(bad.sum())
        at = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
        if self.worst is None or ratio[at] > self.worst[0]:
            self.worst = (float(ratio[at]), describe(at))


def _check_groups(V: NDArray[np.float64], M: NDArray[np.float64], lab: NDArray[np.intp],
                  idx: NDArray[np.intp], col: NDArray[np.float64], tolerances: tuple[float, float],
                  failures: _Failures) -> None:
    """Compare the means and covariances of the groups whose records are the rows of ``idx``
    (groups of one size), recording the entries out of tolerance in ``failures``."""
    rtol, atol = tolerances
    g = idx.shape[1]
    groups = lab[idx[:, 0]]
    if g == 1:
        mo, mm = V[idx[:, 0]], M[idx[:, 0]]
        so = np.zeros_like(mo)
    else:
        mo, co = _group_moments(V, idx)
        mm, cm = _group_moments(M, idx)
        so = np.sqrt(np.maximum(np.diagonal(co, axis1=1, axis2=2), 0.0))
    ao = np.abs(mo) + so
    diff = np.abs(mm - mo)
    tol = rtol * ao + atol * col
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff > tol, np.where(tol > 0, diff / tol, np.inf), 0.0)

    def mean_text(at: tuple[int, ...]) -> str:
        t, j = at
        return (f"group {int(groups[t])}, column {j}: mean {float(mm[t, j])!r} in "
                f"masked vs {float(mo[t, j])!r} in values (difference {diff[t, j]:.3g}, "
                f"tolerance {tol[t, j]:.3g})")

    failures.record(ratio, mean_text)
    if g == 1:
        return
    cdiff = np.abs(cm - co)
    ctol = (rtol * 0.5 * (ao[:, :, None] * so[:, None, :] + so[:, :, None] * ao[:, None, :])
            + atol * col[:, None] * col[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        cratio = np.where(cdiff > ctol, np.where(ctol > 0, cdiff / ctol, np.inf), 0.0)
    cratio = np.triu(cratio)  # each pair once

    def cov_text(at: tuple[int, ...]) -> str:
        t, j, l = at
        what = f"column {j}: variance" if j == l else f"columns {j} and {l}: covariance"
        return (f"group {int(groups[t])}, {what} {float(cm[t, j, l])!r} in masked vs "
                f"{float(co[t, j, l])!r} in values (difference {cdiff[t, j, l]:.3g}, "
                f"tolerance {ctol[t, j, l]:.3g})")

    failures.record(cratio, cov_text)
