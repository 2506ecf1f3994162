"""microagg: safe release of microdata by microaggregation, with verified guarantees.

Public API
----------
=================  ==========================================================================
anonymize          DataFrame in, verified :class:`Release` out.
anonymize_series   Time series (one column per time point) in, verified :class:`Release` out.
Release            The published data with its parameters, seed, checks, metrics, warnings,
                   and the record of each step.
Plan               The steps of a release, in order (``anonymize(df, plan=Plan([...]))``).
Microaggregate     The options of one microaggregation step of a plan.
MicroAggregator    scikit-learn style clusterer (``fit_predict`` / ``labels_``).
partition          The partitioners: ``partition.PARTITIONERS`` (the registry by name) and
                   ``partition.partition(X, k, method=...)``.
load_dataset       Bundled benchmark data sets (Census, Tarragona, EIA, ...).
=================  ==========================================================================

The names load on first use (PEP 562): ``import microagg`` and ``import microagg.partition``
import neither pandas nor scikit-learn; ``microagg.anonymize`` (or ``from microagg import
anonymize``) imports the release pipeline and what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Where (and whether) numba may cache kernels is decided by microagg._runtime.jit, which every kernel
# module imports before defining a kernel: `import microagg` (and `microagg --version`) loads
# no numba.

if TYPE_CHECKING:  # what the names are, for type checkers and IDEs; loaded on access below
    from . import partition
    from .datasets import load_dataset
    from .estimator import MicroAggregator
    from .exceptions import (
        ConstantColumnWarning,
        HomogeneityWarning,
        InternalError,
        LowUtilityWarning,
        PrivacyLeakWarning,
        PrivacyViolationError,
        SchemaError,
    )
    from .hierarchy import Hierarchy
    from .partition import PARTITIONERS
    from .release import Release, anonymize
    from .series import anonymize_series
    from .steps import Microaggregate, Plan

__all__ = [
    "PARTITIONERS",
    "ConstantColumnWarning",
    "Hierarchy",
    "HomogeneityWarning",
    "InternalError",
    "LowUtilityWarning",
    "MicroAggregator",
    "Microaggregate",
    "Plan",
    "PrivacyLeakWarning",
    "PrivacyViolationError",
    "Release",
    "SchemaError",
    "__version__",
    "anonymize",
    "anonymize_series",
    "load_dataset",
    "partition",
]

_LAZY: dict[str, tuple[str, str | None]] = {
    "PARTITIONERS": (".partition", "PARTITIONERS"),
    "ConstantColumnWarning": (".exceptions", "ConstantColumnWarning"),
    "HomogeneityWarning": (".exceptions", "HomogeneityWarning"),
    "Hierarchy": (".hierarchy", "Hierarchy"),
    "InternalError": (".exceptions", "InternalError"),
    "LowUtilityWarning": (".exceptions", "LowUtilityWarning"),
    "MicroAggregator": (".estimator", "MicroAggregator"),
    "Microaggregate": (".steps", "Microaggregate"),
    "Plan": (".steps", "Plan"),
    "PrivacyLeakWarning": (".exceptions", "PrivacyLeakWarning"),
    "PrivacyViolationError": (".exceptions", "PrivacyViolationError"),
    "Release": (".release", "Release"),
    "SchemaError": (".exceptions", "SchemaError"),
    "anonymize": (".release", "anonymize"),
    "anonymize_series": (".series.release", "anonymize_series"),
    "load_dataset": (".datasets", "load_dataset"),
    "partition": (".partition", None),
}
"""Public name -> (module, attribute; ``None`` for the module itself), imported on access."""


def __getattr__(name: str) -> Any:
    """Import a public name on first access (PEP 562) and keep it in the module's globals."""
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = importlib.import_module(module_name, __name__)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the public ones not loaded yet included."""
    return sorted(set(globals()) | set(__all__))
