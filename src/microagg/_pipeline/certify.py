"""``certify``: a certified optimality gap on a small release.

With ``anonymize(..., certify=True)`` (or seconds) / ``--certify SECONDS``, the release's
partition is compared with a proved lower bound on the SSE of **every** partition of the
same scaled quasi-identifiers into groups of at least k records
(:func:`microagg.bounds.lower_bound`: column generation with the k-NN, anchored and
enumeration bounds): ``metrics["certified_gap"]`` is ``100 (1 - LB / SSE)``, the most by
which the release's SSE can exceed the optimum's, in percent (0: proved optimal).

Limits: numeric microaggregation (no categorical quasi-identifiers, no epsilon-DP, no
attribute groups), complete quasi-identifiers, at most :data:`CERTIFY_ROWS` records (the
bound's enumeration and LP grow fast with n; see benchmarks/results/bounds-2026.md for what
60 s give on 834 to 4,092 records).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..exceptions import SchemaError

__all__ = ["CERTIFY_ROWS", "CERTIFY_SECONDS", "better_sse_found", "certify_metrics",
           "certify_option", "check_complete"]

CERTIFY_ROWS = 5_000
"""Most records a release can be certified on."""

CERTIFY_SECONDS = 60.0
"""Seconds spent on the bound by ``certify=True``."""


def certify_option(value: Any, *, n_rows: int | None, kind: str) -> float | None:
    """``certify`` as seconds (``None``: off), after its checks.

    ``True`` means :data:`CERTIFY_SECONDS`; a number is seconds (``> 0``). ``n_rows`` is
    ``None`` for an engine that reads the table itself (those refuse the option before)."""
    if value is None or value is False:
        return None
    if value is True:
        seconds = CERTIFY_SECONDS
    elif isinstance(value, (int, float, np.integer, np.floating)) and value > 0:
        seconds = float(value)
    else:
        raise ValueError(f"The 'certify' parameter must be True or a number of seconds > 0. "
                         f"Got {value!r} instead.")
    if kind != "numeric":
        raise SchemaError("certify bounds numeric microaggregation by group means: not "
                          "categorical quasi-identifiers, the epsilon-DP release or attribute "
                          "groups.")
    if n_rows is not None and n_rows > CERTIFY_ROWS:
        raise ValueError(f"certify proves a lower bound on tables of at most {CERTIFY_ROWS:,} "
                         f"records; this one has {n_rows:,}. Leave certify out, or certify a "
                         "sample of the table.")
    return seconds


def check_complete(values: NDArray[np.float64]) -> None:
    """Refuse quasi-identifiers with missing values (the bound needs every record)."""
    if np.isnan(values).any():
        raise SchemaError("certify needs complete quasi-identifiers: "
                          f"{int(np.isnan(values).any(axis=1).sum())} of {values.shape[0]} "
                          "rows have missing values. Impute or drop them first "
                          "(missing='impute:median'), or leave certify out.")


def better_sse_found(certificate: Mapping[str, Any]) -> float | None:
    """The SSE of the partition found while bounding when it is at least 1 % below the
    release's (worth telling the user: the quality mode can find one), else ``None``.

    >>> better_sse_found({"sse": 10.0, "best_sse_found": 9.5}), better_sse_found({"sse": 10.0})
    (9.5, None)
    """
    found, own = certificate.get("best_sse_found"), certificate.get("sse")
    return float(found) if found is not None and own and found < 0.99 * own else None


def certify_metrics(scaled: NDArray[np.float64], labels: NDArray[np.intp], k: int,
                    seconds: float, seed: int) -> dict[str, Any]:
    """The lower bound and the release's certified gap (module docstring) as metrics."""
    from ..bounds import lower_bound
    from ..metrics import sse

    check_complete(scaled)
    _, local = np.unique(labels, return_inverse=True)
    local = local.ravel()
    t = time.perf_counter()
    result = lower_bound(scaled, k, time_limit=seconds, random_state=seed,
                         initial_partitions=[local])
    value = float(sse(scaled, local))
    gap = 0.0 if value <= 0.0 else max(0.0, 100.0 * (1.0 - result.bound / value))
    return {
        "certified_gap": gap,
        "certificate": MappingProxyType({
            "sse": value, "sse_lower_bound": float(result.bound),
            "best_sse_found": float(min(result.best_sse, value)),
            "lp_certified": bool(result.lp_certified), "seconds": time.perf_counter() - t,
            "time_limit": float(seconds),
            "bound": ("linear relaxation (proved optimal)" if result.lp_certified else
                      max((("k-NN", result.knn_bound), ("anchored", result.anchored_bound),
                           ("enumeration", result.enumeration_bound)),
                          key=lambda pair: pair[1])[0]),
        }),
    }
