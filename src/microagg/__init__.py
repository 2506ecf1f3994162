"""microagg: safe release of microdata by microaggregation, with verified guarantees.

Public API
----------
anonymize          DataFrame in, verified :class:`Release` out.
Release            The published data with its parameters, seed, checks, metrics, warnings.
MicroAggregator    scikit-learn style clusterer (``fit_predict`` / ``labels_``).
partition          the partitioners: ``partition.PARTITIONERS`` (registry by name) and
                   ``partition.partition(X, k, method=...)``.
load_dataset       Bundled benchmark data sets (Census, Tarragona, EIA, ...).
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._numba_cache import configure_cache

configure_cache()  # before any kernel is defined: where (and whether) numba may cache

from . import partition
from .datasets import load_dataset
from .estimator import MicroAggregator
from .exceptions import (
    ConstantColumnWarning,
    InternalError,
    LowUtilityWarning,
    PrivacyLeakWarning,
    PrivacyViolationError,
    SchemaError,
)
from .hierarchy import Hierarchy
from .partition import PARTITIONERS
from .release import Release, anonymize

__all__ = [
    "PARTITIONERS",
    "ConstantColumnWarning",
    "Hierarchy",
    "InternalError",
    "LowUtilityWarning",
    "MicroAggregator",
    "PrivacyLeakWarning",
    "PrivacyViolationError",
    "Release",
    "SchemaError",
    "__version__",
    "anonymize",
    "load_dataset",
    "partition",
]
