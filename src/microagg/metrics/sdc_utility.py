"""Numeric utility measures as sdcMicro's ``dUtility`` computes them: IL1s as a sum and the
eigenvalue comparison (classical and robust)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .interval import _check_pair, _mcd_covariance, _standardise

__all__ = ["eigenvalue_utility", "il1s_total"]


def il1s_total(original: ArrayLike, masked: ArrayLike) -> float:
    """IL1s as sdcMicro 5.x returns it (``dUtility(method = "IL1s")``): the SUM over records
    and columns of ``|x_ij - x'_ij| / (sqrt(2) s_j)``.

    ``s_j`` is the standard deviation (ddof=1) of the original column. This is
    ``n_samples * n_columns`` times :func:`microagg.metrics.il1s`, which reports the
    per-cell MEAN (the ``"IL1old"`` of sdcMicro and the normalisation of Yancey et al.);
    the sum grows with the file size, the mean does not. A constant original column
    contributes 0, as in :func:`~microagg.metrics.il1s` (sdcMicro drops its 0/0 terms as
    NaN but returns Inf if such a column was changed).

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_columns)
        Row ``i`` of ``masked`` is the release of row ``i`` of ``original``; must be finite.

    Returns
    -------
    float
        The sum, >= 0 (0 = nothing changed).

    References
    ----------
    Yancey, W. E., Winkler, W. E., Creecy, R. H. "Disclosure risk assessment in perturbative
    microdata protection." Inference Control in Statistical Databases, LNCS 2316 (2002).
    Mateo-Sanz, J. M., Sebé, F., Domingo-Ferrer, J. "Outlier protection in continuous
    microdata masking." PSD 2004, LNCS 3050, 201-215. sdcMicro ``dUtility``.

    Examples
    --------
    >>> round(il1s_total([[0.0], [2.0]], [[1.0], [1.0]]), 12)  # s = sqrt(2): 2 * 1/2
    1.0
    """
    A, B = _check_pair(original, masked, caller="il1s_total")
    s = A.std(axis=0, ddof=1) if A.shape[0] > 1 else np.zeros(A.shape[1])
    ok = s > 0
    terms = np.abs(A[:, ok] - B[:, ok]) / (np.sqrt(2.0) * s[ok])
    return float(terms.sum())


def eigenvalue_utility(original: ArrayLike, masked: ArrayLike, *, robust: bool = False,
                       random_state: int = 0) -> float:
    """Eigenvalue utility measure of sdcMicro (``dUtility(method = "eigen")``): the summed
    relative change of the eigenvalues of the correlation matrix, ``sum_j |l_j - l'_j| / l_j``.

    ``l_1 >= ... >= l_m`` are the eigenvalues of the covariance of the column-standardised
    original (its correlation matrix), ``l'_j`` those of the standardised masked data,
    paired by rank. 0 means the correlation structure's spectrum is unchanged. With
    ``robust=True`` the covariances are reweighted MCD estimates of the standardised data
    (sdcMicro's ``"robeigen"``; see :func:`~microagg.metrics.interval.robust_interval_disclosure`
    for the estimator and how it can differ from robustbase's).

    Parameters
    ----------
    original, masked : array-like of shape (n_samples, n_columns)
        Row ``i`` of ``masked`` is the release of row ``i`` of ``original``; finite, no
        constant column (it cannot be standardised), at least 2 rows
        (``n_samples > n_columns + 1`` with ``robust=True``).
    robust : bool, default=False
        Use the MCD covariance instead of the classical one.
    random_state : int, default=0
        Seed of the FAST-MCD subset search; used only with ``robust=True``.

    Returns
    -------
    float
        The sum, >= 0. Near-zero eigenvalues of the original (collinear columns) make it
        very large.

    References
    ----------
    Templ, M. and Meindl, B. "Robust statistics meets SDC: new disclosure risk measures for
    continuous microdata masking." PSD 2008, LNCS 5262, 113-126. sdcMicro ``dUtility``.

    Examples
    --------
    The columns of ``x`` correlate at 0.6 (eigenvalues 1.6 and 0.4); the masked columns are
    identical (eigenvalues 2 and 0): ``0.4 / 1.6 + 0.4 / 0.4 = 1.25``.

    >>> x = [[0.0, 1.0], [1.0, 0.0], [2.0, 3.0], [3.0, 2.0]]
    >>> eigenvalue_utility(x, x)
    0.0
    >>> round(eigenvalue_utility(x, [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]), 4)
    1.25
    """
    A, B = _check_pair(original, masked, caller="eigenvalue_utility")
    n, m = A.shape
    if n < 2 or (robust and n <= m + 1):
        need = f"n_columns + 1 = {m + 1}" if robust else "1"
        raise ValueError(f"eigenvalue_utility needs n_samples > {need}: n_samples={n}.")
    e1 = _spectrum(_standardise(A, name="original"), robust, random_state)
    e2 = _spectrum(_standardise(B, name="masked"), robust, random_state)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.abs(e1 - e2) / e1))


def _spectrum(Z: NDArray[np.float64], robust: bool, random_state: int) -> NDArray[np.float64]:
    """Eigenvalues of the (classical or MCD) covariance, in decreasing order."""
    cov = _mcd_covariance(Z, random_state=random_state) if robust \
        else np.atleast_2d(np.cov(Z, rowvar=False))
    return np.asarray(np.linalg.eigvalsh(cov)[::-1], dtype=np.float64)
