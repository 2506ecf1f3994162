"""The epsilon-differentially private stage: the insensitive partition on bound-rescaled
quasi-identifiers, Laplace-noised group means, rows shuffled (:mod:`microagg.aggregate.dp`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from ..aggregate.dp import dp_microaggregation
from ..exceptions import PrivacyLeakWarning, SchemaError
from .notes import warn_user
from .numeric import Outcome, standard_scaling
from .request import Request

__all__ = ["bounds_for", "dp_stage"]


def bounds_for(qi: tuple[str, ...], values: NDArray[np.float64],
               bounds: Mapping[str, Sequence[float]] | None
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[str, ...]]:
    """Public bounds per quasi-identifier: from ``bounds``, else the data's range (named)."""
    given = dict(bounds or {})
    unknown = sorted(set(given) - set(qi))
    if unknown:
        raise SchemaError(
            f"bounds name column(s) {', '.join(map(repr, unknown))} that are not "
            f"quasi-identifiers; quasi-identifiers: {', '.join(map(repr, qi))}."
        )
    lower = values.min(axis=0)
    upper = values.max(axis=0)
    for j, col in enumerate(qi):
        if col not in given:
            continue
        pair = given[col]
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds[{col!r}] must be a pair (lower, upper) of numbers. Got {pair!r}."
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise ValueError(
                f"bounds[{col!r}] must be finite with lower <= upper. Got ({lo}, {hi})."
            )
        lower[j], upper[j] = lo, hi
    with np.errstate(over="ignore"):
        span = upper - lower
    wide = [f"{col!r} (from {lower[j]:g} to {upper[j]:g})"
            for j, col in enumerate(qi) if not np.isfinite(span[j])]
    if wide:
        raise SchemaError(
            f"The bounds of {', '.join(wide)} span more than the largest float (1.8e308); the "
            "epsilon-DP release rescales each column by its bounds' span. Divide the column "
            "by a power of ten (e.g. 1e10) first.")
    return lower, upper, tuple(c for c in qi if c not in given)


def dp_stage(request: Request, values: NDArray[np.float64], rng: np.random.Generator,
             timings: dict[str, float]) -> Outcome:
    """The DP release's labels and noisy values, and ``checks["differential_privacy"]``.

    The noise and the shuffle come from fresh OS entropy, never from the recorded seed:
    anyone holding the seed could regenerate the noise and subtract it."""
    qi, epsilon = request.quasi_identifiers, float(request.epsilon or 0.0)
    lower, upper, from_data = bounds_for(qi, values, request.bounds)
    privacy_notes: list[str] = []
    if from_data:
        warn_user(privacy_notes,
                  f"Bounds of {', '.join(map(repr, from_data))} were computed from the data: "
                  "they reveal the extreme records, so the release is NOT "
                  f"{request.epsilon}-differentially private. Pass public bounds (bounds=... / "
                  "--bounds) for the guarantee to hold.", PrivacyLeakWarning, first=True)
    secret_rng = np.random.default_rng()
    t = time.perf_counter()
    result = dp_microaggregation(values, request.k, epsilon=epsilon, lower=lower, upper=upper,
                                 random_state=secret_rng)
    timings["partition_and_noise"] = time.perf_counter() - t
    scaler, scaled = standard_scaling(values, "standard")  # for the measurements only
    outcome = Outcome(labels=result.labels, masked=result.masked, scaled=scaled,
                      scaler=scaler, method="insensitive", method_params=MappingProxyType({}),
                      scaling="bounds", privacy_notes=privacy_notes, shuffle=secret_rng)
    outcome.checks["differential_privacy"] = MappingProxyType({
        "epsilon": request.epsilon,
        "holds": not from_data,
        "neighbouring": "one record replaced by another (n is public)",
        "covered_columns": qi,
        "bounds": MappingProxyType({c: (float(lower[j]), float(upper[j]))
                                    for j, c in enumerate(qi)}),
        "bounds_from_data": from_data,
        "sensitivity_l1": result.sensitivity,
        "laplace_scale_rescaled": result.laplace_scale,
        "noise_source": "operating-system entropy, not recorded: the release is not "
                        "reproducible from its seed, by design",
        "model": "epsilon-differential privacy of the published values and group labels "
                 "as an unordered table (rows shuffled); the metrics in this release are "
                 "computed from the original data and are not covered",
    })
    if result.clipped_values:
        outcome.notes.append(f"{result.clipped_values} values lay outside their bounds and "
                             "were clipped before the noise (this count is not private).")
    return outcome
