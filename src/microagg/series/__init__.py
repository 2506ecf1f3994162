"""Time-series microaggregation (Nin & Torra 2006, 2009): records whose attribute is a series.

:func:`series_mdav` (the partitioner, registered as ``"series-mdav"``), :func:`dtw_distance`,
:func:`series_representatives` (mean or DTW barycentre) and :func:`anonymize_series` (the
release). Names load on first access (PEP 562), so that the partition registry, which imports
:mod:`microagg.series.mdav`, loads no pandas.
"""

from __future__ import annotations

from .._runtime.lazy import lazy_names

__all__ = ["anonymize_series", "dtw_distance", "series_mdav", "series_representatives"]

_LAZY = {
    "anonymize_series": ".release",
    "dtw_distance": ".distance",
    "series_mdav": ".mdav",
    "series_representatives": ".representative",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
