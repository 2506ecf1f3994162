"""Which stage runs a request, by its :attr:`~microagg._pipeline.request.Request.kind`."""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from .dp import dp_stage
from .grouping import attribute_group_stage, grouping_stage
from .request import Request
from .result import Release

__all__ = ["STAGES", "run"]

STAGES: MappingProxyType[str, Callable[..., Any]] = MappingProxyType({
    "numeric": grouping_stage,
    "attribute-groups": attribute_group_stage,
    "dp": dp_stage,
})
"""The numeric stages: each turns (request, values, rng, timings) into an Outcome that
:func:`~microagg._pipeline.numeric.run_numeric` verifies and measures."""


def run(request: Request) -> Release:
    """Run ``request`` in memory and return its verified Release."""
    if request.kind == "mixed":
        from .mixed import run_mixed

        return run_mixed(request)
    from .numeric import run_numeric

    return run_numeric(request)
