"""Which stage runs a request, by its :attr:`~microagg._pipeline.request.Request.kind`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from .._runtime.progress import Progress, reporting
from .dp import dp_stage
from .grouping import attribute_group_stage, grouping_stage
from .plan_stage import plan_stage
from .request import Request
from .result import Release

__all__ = ["STAGES", "run"]

STAGES: MappingProxyType[str, Callable[..., Any]] = MappingProxyType({
    "numeric": grouping_stage,
    "attribute-groups": attribute_group_stage,
    "dp": dp_stage,
    "plan": plan_stage,
})
"""The numeric stages: each turns (request, values, rng, timings) into an Outcome that
:func:`~microagg._pipeline.numeric.run_numeric` verifies and measures."""


def run(request: Request, *, progress: Progress | None = None) -> Release:
    """Run ``request`` in memory and return its verified Release: its stage, then the
    published table (dates back, numbers rounded) verified and measured once
    (:mod:`.assemble`).

    ``progress(grouped, n_samples)``, when given, is called as a partitioner that measures
    its progress groups records (exact MDAV on large inputs; :mod:`microagg._runtime.progress`);
    ``None`` keeps the callback already listening (:func:`~microagg._runtime.progress.reporting`
    around :func:`microagg.anonymize`), if any."""
    with reporting(progress) if progress is not None else contextlib.nullcontext():
        if request.kind == "mixed":
            from .mixed import run_mixed

            return run_mixed(request)
        if request.kind == "plan-table":
            from .plan_table import run_plan_table

            return run_plan_table(request)
        from .numeric import run_numeric

        return run_numeric(request)
