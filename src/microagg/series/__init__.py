"""Time-series microaggregation (Nin & Torra 2006, 2009): records whose attribute is a series.

:func:`series_mdav` (the partitioner, registered as ``"series-mdav"``), :func:`dtw_distance`,
:func:`series_representatives` (mean or DTW barycentre) and :func:`anonymize_series` (the
release). Names load on first access (PEP 562), so that the partition registry, which imports
:mod:`microagg.series.mdav`, loads no pandas.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["anonymize_series", "dtw_distance", "series_mdav", "series_representatives"]

_LAZY = {
    "anonymize_series": ".release",
    "dtw_distance": ".distance",
    "series_mdav": ".mdav",
    "series_representatives": ".representative",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first access and keep it in the module's globals."""
    try:
        module = importlib.import_module(_LAZY[name], __name__)
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the public ones not loaded yet included."""
    return sorted(set(globals()) | set(__all__))
