"""Metrics: information loss and disclosure risk of a release, as Python floats.

The names load on first use (PEP 562): importing this package, or one of its modules such
as :mod:`~microagg.metrics.survey_risk`, loads none of the other metrics' dependencies (the
numba kernels, scipy's k-d tree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime.lazy import lazy_names

if TYPE_CHECKING:  # what the names are, for type checkers; loaded on access below
    from .analysis_utility import Analyses, utility_by_analysis
    from .clustering import (
        clustering_information_loss,
        fuzzy_clustering_information_loss,
        fuzzy_rand_index,
        il1s,
        moment_changes,
    )
    from .dissimilar import (
        privacy_of_quasi_identifiers,
        privacy_of_release,
        privacy_of_sensitive,
        utility_loss,
    )
    from .generalization import il_omega, normalized_certainty_penalty
    from .risk import dld_risk, homogeneity, intersection_attack, query_answering
    from .utility import group_size_summary, information_loss, sse, sst

__all__ = [
    "Analyses",
    "clustering_information_loss",
    "dld_risk",
    "fuzzy_clustering_information_loss",
    "fuzzy_rand_index",
    "group_size_summary",
    "homogeneity",
    "il1s",
    "il_omega",
    "information_loss",
    "intersection_attack",
    "moment_changes",
    "normalized_certainty_penalty",
    "privacy_of_quasi_identifiers",
    "privacy_of_release",
    "privacy_of_sensitive",
    "query_answering",
    "sse",
    "sst",
    "utility_by_analysis",
    "utility_loss",
]

_WHERE = {
    "Analyses": ".analysis_utility",
    "clustering_information_loss": ".clustering",
    "dld_risk": ".risk",
    "fuzzy_clustering_information_loss": ".clustering",
    "fuzzy_rand_index": ".clustering",
    "group_size_summary": ".utility",
    "homogeneity": ".risk",
    "il1s": ".clustering",
    "il_omega": ".generalization",
    "information_loss": ".utility",
    "intersection_attack": ".risk",
    "moment_changes": ".clustering",
    "normalized_certainty_penalty": ".generalization",
    "privacy_of_quasi_identifiers": ".dissimilar",
    "privacy_of_release": ".dissimilar",
    "privacy_of_sensitive": ".dissimilar",
    "query_answering": ".risk",
    "sse": ".utility",
    "sst": ".utility",
    "utility_by_analysis": ".analysis_utility",
    "utility_loss": ".dissimilar",
}

__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__, globals())
