"""Metrics: information loss and disclosure risk of a release, as Python floats."""

from __future__ import annotations

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
    "utility_loss",
]
