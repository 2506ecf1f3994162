"""Scaling of quasi-identifiers for the distances (never for the published values)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .constraints import check_option

__all__ = ["SAFE_MAGNITUDE", "SCALINGS", "Scaler", "apply_scaler", "fit_scaler", "from_safe_range", "safe_exponents",
           "to_safe_range"]

SCALINGS = ("standard", "minmax", "none")

SAFE_MAGNITUDE = 2.0**500
"""Columns whose largest magnitude lies above this, or below its inverse (but above 0), are
brought near 1 by an exact power of two before any sum of squares: 1e308 squared overflows,
1e-300 squared underflows to 0 (and a standard deviation with it)."""

Scaler = tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]
"""(varying columns, power-of-two exponent, centre, spread) fitted on the ORIGINAL data;
a column is scaled as ``(ldexp(x, -exponent) - centre) / spread``."""


def safe_exponents(values: NDArray[np.float64], *, common: bool = False) -> NDArray[np.int64]:
    """Per column, the power of two that brings its largest magnitude near 1, or 0 when the
    column needs none (``|x| <= 2**500`` and, unless all zero, ``max |x| >= 2**-500``).

    Multiplying by a power of two is exact (short of the subnormal range), so ordinary data is
    left bit for bit unchanged. ``common=True`` gives every column the exponent of the largest
    magnitude in the whole array (ratios across columns kept, for the metrics in original
    units), or 0 when no column needs one.

    Examples
    --------
    >>> safe_exponents(np.array([[1e308, 1.0, 1e-300], [0.0, 2.0, 0.0]])).tolist()
    [1024, 0, -996]
    """
    peak = np.abs(values).max(axis=0) if values.shape[0] else np.zeros(values.shape[1])
    _, exponent = np.frexp(peak)
    extreme = (peak > SAFE_MAGNITUDE) | ((peak > 0) & (peak < 1.0 / SAFE_MAGNITUDE))
    if common:
        top = int(np.frexp(peak.max())[1]) if extreme.any() else 0
        return np.full(values.shape[1], top, dtype=np.int64)
    return np.where(extreme, exponent, 0).astype(np.int64)


def to_safe_range(values: NDArray[np.float64], exponents: NDArray[np.int64]
                  ) -> NDArray[np.float64]:
    """``values * 2**-exponents`` column by column (the same array when all exponents are 0)."""
    if not exponents.any():
        return values
    return np.ascontiguousarray(np.ldexp(values, -exponents))


def from_safe_range(values: NDArray[np.float64], exponents: NDArray[np.int64]
                    ) -> NDArray[np.float64]:
    """The inverse of :func:`to_safe_range`."""
    if not exponents.any():
        return values
    return np.ascontiguousarray(np.ldexp(values, exponents))


def fit_scaler(values: NDArray[np.float64], scaling: str) -> Scaler:
    """Fit z-scores (ddof=1), min-max to [0, 1] or the identity on the varying columns.

    Constant columns are left out (they would divide by zero and tell no records apart); if
    every column is constant, all are kept unscaled. Columns of extreme magnitude (1e308,
    1e-300, subnormals) are first brought near 1 by an exact power of two
    (:func:`safe_exponents`), so that no sum of squares overflows or underflows; with
    ``"none"`` all columns share one power of two, which keeps the distances' proportions.
    Missing cells (NaN) are left out of the fit: it uses each column's observed values (a
    column with none counts as constant), and they stay NaN when scaled.
    """
    check_option(scaling, SCALINGS, parameter="scaling")
    if np.isnan(values).any():
        return _fit_observed(values, scaling)
    varying = values.max(axis=0) > values.min(axis=0)  # np.ptp overflows at 1e308
    if not varying.any():
        varying = np.ones(values.shape[1], dtype=bool)
        scaling = "none"
    exponent = safe_exponents(values[:, varying], common=scaling == "none")
    V = to_safe_range(values[:, varying], exponent)
    if scaling == "standard":
        return varying, exponent, V.mean(axis=0), V.std(axis=0, ddof=1)
    if scaling == "minmax":
        lo = V.min(axis=0)
        return varying, exponent, lo, V.max(axis=0) - lo
    return varying, exponent, np.zeros(V.shape[1]), np.ones(V.shape[1])


def _fit_observed(values: NDArray[np.float64], scaling: str) -> Scaler:
    """:func:`fit_scaler` on the observed (non-NaN) values of each column."""
    observed = ~np.isnan(values)
    has = observed.any(axis=0)
    lo = np.where(has, np.nanmin(np.where(observed, values, np.inf), axis=0), 0.0)
    hi = np.where(has, np.nanmax(np.where(observed, values, -np.inf), axis=0), 0.0)
    varying = hi > lo
    if not varying.any():
        varying = np.asarray(has if has.any() else np.ones(values.shape[1], dtype=bool))
        scaling = "none"
    exponent = safe_exponents(np.where(observed, values, 0.0)[:, varying],
                              common=scaling == "none")
    V = to_safe_range(values[:, varying], exponent)
    if scaling == "standard":
        return varying, exponent, np.nanmean(V, axis=0), np.nanstd(V, axis=0, ddof=1)
    if scaling == "minmax":
        low = np.nanmin(V, axis=0)
        return varying, exponent, low, np.nanmax(V, axis=0) - low
    return varying, exponent, np.zeros(V.shape[1]), np.ones(V.shape[1])


def apply_scaler(values: NDArray[np.float64], scaler: Scaler) -> NDArray[np.float64]:
    """``values`` (original or masked) scaled with a scaler fitted on the original data."""
    varying, exponent, centre, spread = scaler
    return np.ascontiguousarray((to_safe_range(values[:, varying], exponent) - centre) / spread)
