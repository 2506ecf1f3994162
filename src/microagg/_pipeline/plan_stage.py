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

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..steps import STEPS
from ..steps.microaggregate import PlanState
from .numeric import Outcome, standard_scaling
from .request import Request
from .verify import k_check, published_classes

__all__ = ["plan_stage", "step_checks"]


def plan_stage(request: Request, values: NDArray[np.float64], rng: np.random.Generator,
               timings: dict[str, float]) -> Outcome:
    """Every step of ``request.plan`` in turn on the working table (``values``: the plan's
    keys, ``request.quasi_identifiers``, as floats), as one Outcome."""
    assert request.plan is not None  # kind "plan" is built from one
    qi = request.quasi_identifiers
    original = pd.DataFrame(values, columns=list(qi))
    state = PlanState(table=request.data, request=request, original=original,
                      timings=timings)
    for options in request.plan.steps:
        state = STEPS[options.name].load()(state, options, rng)
    masked = state.table.loc[:, list(qi)].to_numpy(dtype=np.float64)
    scaler, scaled = standard_scaling(values, "standard")  # for the measurements only
    steps = request.plan.steps
    partitions = {"+".join(s.quasi_identifiers): o.labels
                  for s, o in zip(steps, state.outcomes, strict=True)}
    methods = {"+".join(s.quasi_identifiers): o.method
               for s, o in zip(steps, state.outcomes, strict=True)}
    names = set(methods.values())
    outcome = Outcome(labels=np.zeros(values.shape[0], dtype=np.intp), masked=masked,
                      scaled=scaled, scaler=scaler,
                      method=names.pop() if len(names) == 1 else "per-group default",
                      method_params=MappingProxyType({}), scaling="per step",
                      partitions=partitions,
                      groups=tuple(s.quasi_identifiers for s in steps),
                      group_methods=methods, steps=state.history,
                      alternative=None)
    for o in state.outcomes:
        outcome.notes.extend(o.notes)
        outcome.privacy_notes.extend(o.privacy_notes)
    return outcome


def step_checks(request: Request, published: pd.DataFrame) -> tuple[Mapping[str, Any], ...]:
    """``checks["steps"]``: each step's k on its own quasi-identifiers, promised and derived
    from the published table (raises :class:`~microagg.exceptions.PrivacyViolationError`
    below it)."""
    assert request.plan is not None
    out = []
    for position, step in enumerate(request.plan.steps, start=1):
        classes = published_classes(published, step.quasi_identifiers)
        check = k_check(step.k, int(np.bincount(classes).min()))
        out.append(MappingProxyType({"step": position,
                                     "quasi_identifiers": step.quasi_identifiers,
                                     **check,
                                     "model": "k-anonymity of the step's quasi-identifiers "
                                              "on the published table"}))
    return tuple(out)
