"""Aggregators: what replaces each group's values (mean, median, mode, or noisy values).

The names are defined in :mod:`.aggregators` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .aggregators import (
        AGGREGATION_PARAMS,
        AGGREGATORS,
        NOISY_AGGREGATORS,
        Aggregator,
        aggregate,
        aggregation_params,
        check_noise_within_groups,
        get_aggregator,
        group_mean,
        group_median,
        group_mode,
        group_ranges,
        is_noisy,
        random_k_anonymous,
        rho_aggregation,
        synthetic_microdata,
    )

__all__ = [
    "AGGREGATION_PARAMS",
    "AGGREGATORS",
    "NOISY_AGGREGATORS",
    "Aggregator",
    "aggregate",
    "aggregation_params",
    "check_noise_within_groups",
    "get_aggregator",
    "group_mean",
    "group_median",
    "group_mode",
    "group_ranges",
    "is_noisy",
    "random_k_anonymous",
    "rho_aggregation",
    "synthetic_microdata",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".aggregators"), __all__,
                                   globals())
