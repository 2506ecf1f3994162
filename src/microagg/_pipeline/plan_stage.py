"""The stage of a plan of several steps (:attr:`Request.kind` ``"plan"``): each step applied
in turn to the working table (:data:`microagg.steps.STEPS`' targets), then one
:class:`~.numeric.Outcome` for the one publication, verification and measurement.

The steps mask disjoint groups of quasi-identifiers, each with its own k, method, aggregation
and scaling: each step's partition is kept (``Release.attribute_partitions``, keyed by its
columns joined with ``+``) and its k verified on the published table (``checks["steps"]``);
over the union of the steps' columns k is reported, not promised, with the warning of
microaggregation by attribute groups (an intruder can intersect the groups).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..steps import STEPS
from ..steps._state import PlanState, StepRoles
from .numeric import Outcome, standard_scaling
from .request import Request
from .result import StepRecord

__all__ = ["plan_stage", "step_checks"]


def plan_stage(request: Request, values: NDArray[np.float64], rng: np.random.Generator,
               timings: dict[str, float]) -> Outcome:
    """Every step of ``request.plan`` in turn on the working table (``values``: the plan's
    keys, ``request.quasi_identifiers``, as floats), as one Outcome."""
    assert request.plan is not None  # kind "plan" is built from one
    qi = request.quasi_identifiers
    original = pd.DataFrame(values, columns=list(qi))
    state = run_steps(request, request.data, original, rng, timings)
    masked = state.table.loc[:, list(qi)].to_numpy(dtype=np.float64)
    scaler, scaled = standard_scaling(values, "standard")  # for the measurements only
    steps = request.plan.steps
    grouped = [(steps[i], o) for i, o in sorted(state.outcomes.items())]
    partitions = {"+".join(s.columns): o.labels for s, o in grouped}
    methods = {"+".join(s.columns): o.method for s, o in grouped}
    names = set(methods.values())
    outcome = Outcome(labels=np.zeros(values.shape[0], dtype=np.intp), masked=masked,
                      scaled=scaled, scaler=scaler,
                      method=names.pop() if len(names) == 1 else "per-group default",
                      method_params=MappingProxyType({}), scaling="per step",
                      partitions=partitions,
                      groups=tuple(s.columns for s, _ in grouped),
                      group_methods=methods, steps=state.history,
                      alternative=None)
    for _, o in grouped:
        outcome.notes.extend(o.notes)
        outcome.privacy_notes.extend(o.privacy_notes)
    outcome.notes.extend(state.notes)
    return outcome


def run_steps(request: Request, table: pd.DataFrame, original: pd.DataFrame,
              rng: np.random.Generator, timings: dict[str, float]) -> PlanState:
    """Every step of ``request.plan`` in turn on ``table`` (:data:`microagg.steps.STEPS`'
    ``apply`` targets), each given the state the one before it left."""
    assert request.plan is not None
    state = PlanState.start(request, table, original, timings)
    for options in request.plan.steps:
        state = STEPS[options.name].load()(state, options, rng)
    return state


def step_checks(request: Request, original: pd.DataFrame, published: pd.DataFrame, *,
                records: Sequence[StepRecord] = ()) -> tuple[Mapping[str, Any], ...]:
    """``checks["steps"]``: each step's verifier (:attr:`microagg.steps.Step.verifier`) on
    the published table, once: ``{"step": position, "quasi_identifiers": its columns,
    "holds": ..., "model": ..., its achieved figures}``. A check that does not hold makes
    the verdict "not protected", naming the step (:func:`~.verdict.decide`). A step that
    reads its record (:attr:`~microagg.steps.Step.reads_details`) is given
    ``details=records[i].details`` (``None`` when ``records`` is empty)."""
    assert request.plan is not None
    roles = StepRoles.of(request)
    out = []
    for position, step in enumerate(request.plan.steps, start=1):
        entry = STEPS[step.name]
        extra = ({"details": records[position - 1].details if records else None}
                 if entry.reads_details else {})
        result = entry.load_verifier()(step, original, published, roles, **extra)
        if "model" not in result or not isinstance(result.get("holds"), bool):
            raise TypeError(f"The verifier of step {step.name!r} must return a mapping with "
                            f"'model' (str) and 'holds' (bool); it returned {dict(result)!r}. "
                            "This is a bug in the step.")
        out.append(MappingProxyType({"step": position, "name": step.name,
                                     "quasi_identifiers": step.columns,
                                     **{k: v for k, v in result.items() if k != "model"},
                                     "model": result["model"]}))
    return tuple(out)
