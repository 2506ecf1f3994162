"""The stage of a plan that runs on the table as it is (:attr:`Request.kind`
``"plan-table"``): categorical or missing keys, or a step without a k (noise, PRAM, ...).

Each step runs in turn on the working table, each column in its own dtype (categorical and
text columns as they came, with their categories and value labels; numbers as they came;
dates as days), and may set cells to missing (suppression): they stay missing as published,
in every format. Then, once: publication (:func:`~.publish.publish`: dates back, rounding),
the verification (each step's verifier on the published table, ``checks["steps"]``; k over
the plan's keys measured and reported, ``checks["k_anonymity"]["required"]`` ``None``) and
the measures (k, unique share and information loss of the numeric keys, on the published
table, :func:`microagg.steps._state.figures`). What a plan promises is said in
:mod:`.plan_request`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import __version__
from .._base.validation import resolve_seed
from ..steps._state import figures
from .assemble import Findings, assemble
from .plan_stage import run_steps, step_checks
from .publish import publish
from .request import Request
from .result import Release
from .verify import k_check

__all__ = ["run_plan_table"]


def run_plan_table(request: Request) -> Release:
    """Run a plan of steps on the table as it is: steps -> publish -> verify -> measure."""
    assert request.plan is not None  # kind "plan-table" is built from one
    timings: dict[str, float] = {}
    seed, rng = resolve_seed(request.random_state)
    keys = list(request.quasi_identifiers)
    original = request.data.loc[:, keys].copy()
    timings["validate"] = time.perf_counter() - request.started
    t = time.perf_counter()
    state = run_steps(request, request.data, original, rng, timings)
    timings["steps"] = time.perf_counter() - t
    final = publish(state.table.drop(columns=list(request.identifiers)), request, timings)
    t = time.perf_counter()
    classes = final.quasi_identifier_classes(request.quasi_identifiers)
    sizes = np.bincount(classes)
    checks: dict[str, Any] = {"k_anonymity": k_check(None, int(sizes.min())),
                              "steps": step_checks(request, request.data, final.data)}
    if final.rounding is not None:
        checks["rounding"] = final.rounding
    timings["verify"] = time.perf_counter() - t
    t = time.perf_counter()
    shown = figures(original, final.data.loc[:, keys])
    metrics: dict[str, Any] = {"information_loss": shown.information_loss,
                               "unique_share": shown.unique_share,
                               "records_unique": int(np.sum(sizes[classes] == 1))}
    timings["measure"] = time.perf_counter() - t
    partitions = {"+".join(s.columns): o.labels for i, o in sorted(state.outcomes.items())
                  for s in (request.plan.steps[i],)}
    return assemble(request, data=final.data, labels=classes.astype(np.intp), seed=seed,
                    params=_params(request), findings=Findings(checks, metrics,
                                                              list(state.notes), timings),
                    partitions=partitions or None, steps=state.history)


def _params(request: Request) -> Mapping[str, Any]:
    """``Release.params`` of a plan (each step's options are in ``params["plan"]``)."""
    return MappingProxyType({
        "method": "plan", "k": request.k, "quasi_identifiers": request.quasi_identifiers,
        "sensitive": request.sensitive, "identifiers": request.identifiers,
        "scaling": "per step", "method_params": MappingProxyType({}),
        "microagg_version": __version__,
    })
