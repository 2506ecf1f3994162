"""The blocked engine: a Request's method run block by block, in memory (seed 001, 2.6).

The block tree and the runs of a method inside each block live in
:mod:`microagg.partition.blocking`; this module is the engine's glue: the registry entry of
the Request's method, wrapped to run block by block with the Request's blocking options
(checked by :meth:`Request.build <microagg._pipeline.request.Request.build>`). Its releases
are in-memory releases (``Release.engine == "memory"``, ``params["blocking"]`` set).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from ..partition import Partitioner, get_partitioner

if TYPE_CHECKING:  # pragma: no cover
    from .._pipeline.request import Request

__all__ = ["blocked", "request_partitioner"]


def blocked(partitioner: Partitioner, request: Request) -> Partitioner:
    """The same partitioner run block by block (its name and parameters unchanged).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from microagg._pipeline.request import Request
    >>> df = pd.DataFrame({"a": np.arange(40.0)})
    >>> request = Request.build(df, quasi_identifiers="a", k=3, blocking="kd", block_size=10)
    >>> labels = blocked(get_partitioner("mdav"), request)(df.to_numpy(), 3)
    >>> int(np.bincount(labels).min()) >= 3
    True
    """
    from ..partition.blocking import blocked_partition

    return replace(partitioner, function=partial(
        blocked_partition, method=partitioner.name, blocking=str(request.blocking),
        block_size=int(request.block_size), n_jobs=request.n_jobs))


def request_partitioner(request: Request, name: str | None = None) -> Partitioner:
    """The registry entry of ``name`` (default: the request's method, else mdav), blocked
    when the request asks for blocking."""
    entry = get_partitioner(name or request.method or "mdav")
    return blocked(entry, request) if request.blocking is not None else entry
