"""Noise addition on numeric columns: additive, correlated, ROMM and multiplicative, with
the verifier that checks the achieved noise-to-variance ratio and the preserved moments.

``noise`` is always a ratio of **variances** (sdcMicro's ``addNoise`` ``additive`` scales
the standard deviation, ``noise/100 * sd(x)``, while its ``correlated`` scales the
covariance, ``noise/100 * cov(x)``; its default 150 adds noise with 2.25 times the column's
variance): ``noise = 0.1`` adds noise whose variance is 10 % of the column's, i.e. whose
standard deviation is ``sqrt(0.1) = 0.316`` times the column's.

Missing values stay missing. Variances and covariances are those of the non-missing
values (``ddof = 1``); ``correlated`` and ``romm`` use the rows complete on every column
(``romm`` leaves incomplete rows unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import linalg, stats

from ._common import FALSE_ALARM, check_columns, moments, numeric_values
from .options import Noise

__all__ = ["apply_noise", "verify_noise"]

Matrix = NDArray[np.float64]


def _additive(X: Matrix, options: Noise, rng: np.random.Generator) -> Matrix:
    """``x + e``, ``e ~ N(0, noise * var(x))`` independently per column."""
    sd = np.sqrt(options.noise * np.nanvar(X, axis=0, ddof=1))
    return X + rng.standard_normal(X.shape) * sd


def _complete_covariance(X: Matrix) -> Matrix:
    """The covariance (``ddof = 1``) of the rows complete on every column."""
    complete = X[~np.isnan(X).any(axis=1)]
    if complete.shape[0] < 2:
        raise ValueError(f"The covariance of the noise needs at least 2 rows complete on "
                         f"every column; there are {complete.shape[0]}.")
    return np.atleast_2d(np.cov(complete, rowvar=False))


def _correlated(X: Matrix, options: Noise, rng: np.random.Generator) -> Matrix:
    """``x + e``, ``e ~ N(0, noise * Sigma)`` with Sigma the columns' covariance."""
    w, V = np.linalg.eigh(_complete_covariance(X))
    root = V * np.sqrt(np.clip(w, 0.0, None))  # Sigma = root @ root.T, also when singular
    return X + np.sqrt(options.noise) * rng.standard_normal(X.shape) @ root.T


def _multiplicative(X: Matrix, options: Noise, rng: np.random.Generator) -> Matrix:
    """``x * (1 + e)``, ``e ~ N(0, noise)`` per cell (zeros stay zero)."""
    return X * (1.0 + np.sqrt(options.noise) * rng.standard_normal(X.shape))


def _romm(X: Matrix, options: Noise, rng: np.random.Generator) -> Matrix:
    """Random orthogonal matrix masking in random blocks of about ``block_size`` complete
    rows: ``Y_b = A X_b`` with ``A = 11'/m + U O U'``, U an orthonormal basis orthogonal to
    the ones vector (Helmert) and O the orthogonal factor of ``I + s Z`` (Z standard
    normal, ``s = sqrt(noise / (m - 2))``, so that to first order in s the noise's variance
    is ``noise`` times each block's scatter, as for additive noise). ``A`` is orthogonal and keeps the ones vector, so each block's mean and scatter, hence the
    table's means and covariance, are kept exactly (Ting, Fienberg & Trottini 2008)."""
    out = X.copy()
    rows = np.flatnonzero(~np.isnan(X).any(axis=1))
    if rows.size < 3:
        raise ValueError(f"Method 'romm' of step 'noise' needs at least 3 rows complete on "
                         f"every column; there are {rows.size}.")
    order = rng.permutation(rows)
    blocks = np.array_split(order, max(1, rows.size // options.block_size))
    for m in sorted({b.size for b in blocks}):  # at most two sizes; one batched QR each
        index = np.stack([b for b in blocks if b.size == m])  # (blocks, m)
        U = linalg.helmert(m).T  # (m, m-1), orthonormal columns orthogonal to 1
        scale = np.sqrt(options.noise / max(m - 2, 1))
        Z = rng.standard_normal((index.shape[0], m - 1, m - 1))
        Q, R = np.linalg.qr(np.eye(m - 1) + scale * Z)
        O = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]  # nearest identity
        values = X[index]  # (blocks, m, p)
        out[index] = values.mean(axis=1, keepdims=True) + U @ (O @ (U.T @ values))
    return out


_METHODS: Mapping[str, Callable[[Matrix, Noise, np.random.Generator], Matrix]] = \
    MappingProxyType({"additive": _additive, "correlated": _correlated, "romm": _romm,
                      "multiplicative": _multiplicative})


def apply_noise(table: pd.DataFrame, options: Noise, rng: np.random.Generator, *,
                households: str | None = None, weights: str | None = None,
                strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Noise on ``options.variables``: a new table (same rows, order and index) and details.

    ``households``, ``weights`` and ``strata`` are not used: the noise's variance is that of
    the whole column, unweighted.

    Returns
    -------
    published : pandas.DataFrame
    details : dict
        ``method``, ``noise``, and per column ``noise_variance_ratio`` (achieved
        ``var(x' - x) / var(x)``), ``before`` / ``after`` (mean, sd), ``rows_perturbed``;
        ``correlation_before`` / ``correlation_after`` with several columns.

    References
    ----------
    Brand, R. "Microdata protection through noise addition." LNCS 2316, 2002.
    Ting, D., Fienberg, S. E. and Trottini, M. "Random orthogonal matrix masking methodology
    for microdata release." Int. J. Inf. Comput. Secur. 2(1), 2008.
    """
    check_columns(table, options.variables, step=options.name)
    X = np.column_stack([numeric_values(table, c, step=options.name)
                         for c in options.variables])
    Y = _METHODS[options.method](X, options, rng)
    published = table.copy()
    details: dict[str, Any] = {"method": options.method, "noise": options.noise,
                               "columns": {}}
    for j, column in enumerate(options.variables):
        published[column] = pd.Series(Y[:, j], index=table.index, name=column)
        delta = Y[:, j] - X[:, j]
        details["columns"][column] = {
            "noise_variance_ratio": float(np.nanvar(delta, ddof=1)
                                          / np.nanvar(X[:, j], ddof=1)),
            "before": moments(X[:, j]), "after": moments(Y[:, j]),
            "rows_perturbed": int((np.abs(delta) > 0).sum()),
        }
    if X.shape[1] > 1:
        details["correlation_before"] = pd.DataFrame(X).corr().to_numpy().tolist()
        details["correlation_after"] = pd.DataFrame(Y).corr().to_numpy().tolist()
    return published, details


def _chi_square_check(sample: Matrix, variance: float, level: float) -> dict[str, Any]:
    """Is ``sample`` ~ iid N(0, variance)? Its variance by the chi-square bounds and its mean
    by the normal bound, each at two-sided ``level``."""
    n = sample.size
    ratio = float(sample.var(ddof=1) / variance)
    low, high = (stats.chi2.ppf(level / 2, n - 1) / (n - 1),
                 stats.chi2.isf(level / 2, n - 1) / (n - 1))
    z = float(abs(sample.mean()) / np.sqrt(variance / n))
    z_bound = float(stats.norm.isf(level / 2))
    return {"ratio_to_promised": ratio, "ratio_bounds": [float(low), float(high)],
            "mean_z": z, "z_bound": z_bound,
            "holds": bool(low <= ratio <= high and z <= z_bound)}


def verify_noise(options: Noise, original: pd.DataFrame, published: pd.DataFrame, *,
                 households: str | None = None, weights: str | None = None,
                 strata: str | None = None,
                 false_alarm: float = FALSE_ALARM) -> dict[str, Any]:
    """Check the noise on the output against its model: the achieved noise-to-variance
    ratio within its chi-square bounds and the noise's mean within its normal bound
    (additive, correlated: with the noise's correlations within Fisher's bounds;
    multiplicative: on the factor ``x'/x - 1``), or for ROMM the means and covariance kept
    to rounding; missing cells must stay missing, and nothing else may change."""
    X = np.column_stack([original[c].to_numpy(np.float64, na_value=np.nan)
                         for c in options.variables])
    Y = np.column_stack([published[c].to_numpy(np.float64, na_value=np.nan)
                         for c in options.variables])
    moved = int((np.isnan(X) != np.isnan(Y)).sum())
    check = _CHECKS[options.method]
    report = check(X, Y, options, false_alarm)
    report["missing_moved"] = moved
    report["holds"] = bool(report["holds"] and moved == 0)
    return report


def _check_each_column(X: Matrix, Y: Matrix, options: Noise, variances: Matrix,
                       level: float) -> tuple[dict[str, Any], bool]:
    """Per column: the noise ``x' - x`` has variance ``noise * variance`` and mean 0."""
    columns, holds = {}, True
    for j, column in enumerate(options.variables):
        delta = (Y[:, j] - X[:, j])[~np.isnan(X[:, j]) & ~np.isnan(Y[:, j])]
        entry = _chi_square_check(delta, options.noise * variances[j], level)
        entry["noise_variance_ratio"] = entry["ratio_to_promised"] * options.noise
        columns[column], holds = entry, holds and entry["holds"]
    return columns, holds


def _model(options: Noise, false_alarm: float) -> str:
    return (f"{options.method} noise, variance {options.noise:g} x each column's variance "
            f"(chi-square and normal bounds, Bonferroni false-alarm rate {false_alarm:g})")


def _check_additive(X: Matrix, Y: Matrix, options: Noise, false_alarm: float
                    ) -> dict[str, Any]:
    """Additive noise: per column ratio and mean."""
    level = false_alarm / (2 * X.shape[1])
    columns, holds = _check_each_column(X, Y, options, np.nanvar(X, axis=0, ddof=1), level)
    return {"model": _model(options, false_alarm), "columns": columns, "holds": bool(holds)}


def _check_correlated(X: Matrix, Y: Matrix, options: Noise, false_alarm: float
                      ) -> dict[str, Any]:
    """Correlated noise: per column ratio and mean, and the noise's pairwise correlations
    equal to the data's within Fisher's z bounds."""
    p = X.shape[1]
    level = false_alarm / (2 * p + p * (p - 1) // 2)
    variances = np.diag(_complete_covariance(X))
    columns, holds = _check_each_column(X, Y, options, variances, level)
    report: dict[str, Any] = {"model": _model(options, false_alarm), "columns": columns}
    report.update(_check_noise_correlation(X, Y, level))
    report["holds"] = bool(holds and report["correlation_holds"])
    return report


def _check_noise_correlation(X: Matrix, Y: Matrix, level: float) -> dict[str, Any]:
    """The noise's correlations against the data's (complete rows), Fisher's z."""
    rows = ~np.isnan(X).any(axis=1) & ~np.isnan(Y).any(axis=1)
    sigma = _complete_covariance(X)
    scale = np.sqrt(np.diag(sigma))
    target = sigma / np.outer(scale, scale)
    noise = np.atleast_2d(np.corrcoef(Y[rows] - X[rows], rowvar=False))
    upper = np.triu_indices(X.shape[1], 1)
    clip = 1 - 1e-12
    z = np.abs(np.arctanh(np.clip(noise[upper], -clip, clip))
               - np.arctanh(np.clip(target[upper], -clip, clip))) * np.sqrt(rows.sum() - 3)
    bound = float(stats.norm.isf(level / 2))
    return {"max_noise_correlation_z": float(z.max()), "correlation_z_bound": bound,
            "correlation_holds": bool(z.max() <= bound)}


def _check_multiplicative(X: Matrix, Y: Matrix, options: Noise, false_alarm: float
                          ) -> dict[str, Any]:
    """The factor ``x'/x - 1`` on non-zero values: variance ``noise``, mean 0; zeros stay."""
    level = false_alarm / (2 * X.shape[1])
    columns, holds = {}, True
    for j, column in enumerate(options.variables):
        both = ~np.isnan(X[:, j]) & ~np.isnan(Y[:, j])
        zero = both & (X[:, j] == 0)
        factor = Y[both & ~zero, j] / X[both & ~zero, j] - 1.0
        entry = _chi_square_check(factor, options.noise, level)
        entry["zeros_changed"] = int((Y[zero, j] != 0).sum())
        columns[column] = entry
        holds = holds and entry["holds"] and entry["zeros_changed"] == 0
    return {"model": f"multiplicative noise x(1 + e), var(e) = {options.noise:g} (chi-square "
            f"and normal bounds, Bonferroni false-alarm rate {false_alarm:g})",
            "columns": columns, "holds": bool(holds)}


def _check_romm(X: Matrix, Y: Matrix, options: Noise, false_alarm: float) -> dict[str, Any]:
    """ROMM keeps the complete rows' means and covariance exactly; incomplete rows stay."""
    complete = ~np.isnan(X).any(axis=1)
    incomplete_changed = int((~np.isclose(X[~complete], Y[~complete], rtol=0, atol=0,
                                          equal_nan=True)).sum())
    a, b = X[complete], Y[complete]
    scale = np.abs(a).max(axis=0) + 1.0
    mean_gap = float((np.abs(a.mean(axis=0) - b.mean(axis=0)) / scale).max())
    cov_a, cov_b = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b,
                                                                              rowvar=False))
    cov_gap = float(np.abs(cov_a - cov_b).max() / np.abs(cov_a).max())
    ratios = ((b - a).var(axis=0, ddof=1) / a.var(axis=0, ddof=1)).tolist()
    tolerance = 1e-9
    return {"model": "ROMM: means and covariance of the complete rows kept (relative "
            f"rounding tolerance {tolerance:g})", "relative_mean_gap": mean_gap,
            "relative_covariance_gap": cov_gap, "incomplete_rows_changed": incomplete_changed,
            "noise_variance_ratio": dict(zip(options.variables, map(float, ratios), strict=True)),
            "holds": bool(mean_gap <= tolerance and cov_gap <= tolerance
                          and incomplete_changed == 0)}


_CHECKS: Mapping[str, Callable[[Matrix, Matrix, Noise, float], dict[str, Any]]] = \
    MappingProxyType({"additive": _check_additive, "correlated": _check_correlated,
                      "romm": _check_romm, "multiplicative": _check_multiplicative})
