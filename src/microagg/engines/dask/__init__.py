"""The Dask engine: microaggregate a data frame that is spread over a cluster.

The names are defined in :mod:`.engine` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .engine import (
        anonymize_dask,
        by_row_position,
        check_reserved,
        connect,
        dask_release_fields,
        dask_request,
        local_client,
        require_dask,
        run_dask,
    )

__all__ = [
    "anonymize_dask",
    "by_row_position",
    "check_reserved",
    "connect",
    "dask_release_fields",
    "dask_request",
    "local_client",
    "require_dask",
    "run_dask",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".engine"), __all__,
                                   globals())
