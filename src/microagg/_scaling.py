"""Scaling of quasi-identifiers for the distances (never for the published values)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["SCALINGS", "Scaler", "fit_scaler"]

SCALINGS = ("standard", "minmax", "none")

Scaler = tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64]]
"""(varying columns, centre, spread) fitted on the ORIGINAL data."""


def fit_scaler(values: NDArray[np.float64], scaling: str) -> Scaler:
    """Fit z-scores (ddof=1), min-max to [0, 1] or the identity on the varying columns.

    Constant columns are left out (they would divide by zero and tell no records apart); if
    every column is constant, all are kept unscaled.
    """
    if scaling not in SCALINGS:
        raise ValueError(f"Unknown scaling {scaling!r}. Valid scalings: {', '.join(SCALINGS)}.")
    varying = np.ptp(values, axis=0) > 0
    if not varying.any():
        varying = np.ones(values.shape[1], dtype=bool)
        scaling = "none"
    V = values[:, varying]
    if scaling == "standard":
        return varying, V.mean(axis=0), V.std(axis=0, ddof=1)
    if scaling == "minmax":
        lo = V.min(axis=0)
        return varying, lo, V.max(axis=0) - lo
    return varying, np.zeros(V.shape[1]), np.ones(V.shape[1])


def apply_scaler(values: NDArray[np.float64], scaler: Scaler) -> NDArray[np.float64]:
    """``values`` (original or masked) scaled with a scaler fitted on the original data."""
    varying, centre, spread = scaler
    return np.ascontiguousarray((values[:, varying] - centre) / spread)
