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

from ..steps import STEPS, Plan
from ..steps._state import PlanState, StepRoles
from .numeric import Outcome, standard_scaling
from .request import Request
from .result import StepRecord

__all__ = ["judge_steps", "plan_stage", "step_checks"]


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
                records: Sequence[StepRecord] = (),
                snapshots: Sequence[pd.DataFrame] = ()) -> tuple[Mapping[str, Any], ...]:
    """``checks["steps"]``: each step's verifier (:attr:`microagg.steps.Step.verifier`) on
    the published table, once (:func:`judge_steps` with the request's plan and roles and
    what the run recorded: each step's details and columns changed, ``records``, and the
    columns as each step left them, ``snapshots``)."""
    assert request.plan is not None
    return judge_steps(request.plan, StepRoles.of(request), original, published,
                       details=[r.details for r in records],
                       changed=[r.columns_changed for r in records], snapshots=snapshots)


def judge_steps(plan: Plan, roles: StepRoles, original: pd.DataFrame, published: pd.DataFrame,
                *, details: Sequence[Mapping[str, Any] | None] = (),
                changed: Sequence[Sequence[str]] = (),
                snapshots: Sequence[pd.DataFrame] = (),
                recorded: Sequence[Mapping[str, Any]] = ()) -> tuple[Mapping[str, Any], ...]:
    """``checks["steps"]`` of a release made by ``plan``: ``{"step": position,
    "quasi_identifiers": its columns, "holds": ..., "model": ..., its achieved figures}``.
    A check that does not hold makes the verdict "not protected", naming the step
    (:func:`~.verdict.decide`). A step that reads its record
    (:attr:`~microagg.steps.Step.reads_details`) is given ``details[i]`` (``None`` when
    ``details`` is empty). The release calls it through :func:`step_checks`, the review of
    two files with what the release's summary recorded
    (:func:`~.plan_review.summary_step_checks`): one function, one verdict.

    Each verifier compares with the table as the step found it: the original, with the
    columns an earlier step changed (``changed[i]``) as that step left them. A step that
    promises no k whose columns a later step changes too (a recoding, then a
    suppression of the same column) is checked on the published table with its columns as
    it left them (``snapshots``, :attr:`~microagg.steps._state.PlanState.snapshots`), and
    says so (``"checked_on"``); a step that promises a k is always checked on the published
    table itself: what it promises must hold on the output. Where such a step needs a
    snapshot that was not kept (a review has the two files only), its check is the one the
    release recorded (``recorded[i]``, marked ``"re_derived": False`` with the reason), or,
    without one, it is left out and named in ``"unchecked"`` of the entry.
    """
    out = []
    for position, step in enumerate(plan.steps, start=1):
        entry = STEPS[step.name]
        needs = _needs_snapshots(step, position, changed)
        if needs and len(snapshots) < len(plan.steps):
            out.append(_recorded(step, position, needs, recorded))
            continue
        extra = ({"details": details[position - 1] if details else None}
                 if entry.reads_details else {})
        table, later = _as_left(step, position, published, changed, snapshots)
        before = _before(step, position, original, changed, snapshots)
        result = dict(entry.load_verifier()(step, before, table, roles, **extra))
        if later:
            result["checked_on"] = (f"the published table with {', '.join(later)} as this "
                                    "step left them (a later step of the plan changes them)")
        if "model" not in result or not isinstance(result.get("holds"), bool):
            raise TypeError(f"The verifier of step {step.name!r} must return a mapping with "
                            f"'model' (str) and 'holds' (bool); it returned {dict(result)!r}. "
                            "This is a bug in the step.")
        out.append(MappingProxyType({"step": position, "name": step.name,
                                     "quasi_identifiers": step.columns,
                                     **{k: v for k, v in result.items() if k != "model"},
                                     "model": result["model"]}))
    return tuple(out)


def _needs_snapshots(step: Any, position: int, changed: Sequence[Sequence[str]]) -> list[str]:
    """The step's columns its verifier reads as another step left them: changed by an
    earlier step, or (a step that promises no k) by a later one."""
    earlier = {c for columns in changed[:position - 1] for c in columns}
    later = {c for columns in changed[position:] for c in columns} \
        if step.required_k is None else set()
    return [c for c in step.columns if c in earlier | later]


def _recorded(step: Any, position: int, needs: list[str],
              recorded: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The release's own check of a step whose verifier needs a table neither file holds."""
    why = (f"its check reads {', '.join(needs)} as a step of the plan left them, which "
           "neither file holds")
    found = next((r for r in recorded if r.get("step") == position), None)
    if found is None:
        return MappingProxyType({"step": position, "name": step.name,
                                 "quasi_identifiers": step.columns, "unchecked": why})
    return MappingProxyType({**found, "re_derived": False,
                             "checked_on": f"as the release recorded it: {why}"})


def _before(step: Any, position: int, original: pd.DataFrame,
            changed: Sequence[Sequence[str]], snapshots: Sequence[pd.DataFrame]
            ) -> pd.DataFrame:
    """The table as the step at ``position`` found it: ``original`` with each of its
    columns an earlier step changed as the last such step left it."""
    found: dict[str, pd.Series] = {}
    for columns, snapshot in zip(changed[:position - 1], snapshots, strict=False):
        for column in columns:
            if column in step.columns and column in snapshot.columns:
                found[column] = snapshot[column]
    if not found:
        return original
    table = original.copy()
    for column, values in found.items():
        table[column] = values.to_numpy()
    return table


def _as_left(step: Any, position: int, published: pd.DataFrame,
             changed: Sequence[Sequence[str]], snapshots: Sequence[pd.DataFrame]
             ) -> tuple[pd.DataFrame, list[str]]:
    """The table a step's verifier reads: the published one, with the step's columns as
    the step left them where a later step changed them and the step promises no k."""
    if step.required_k is not None or len(snapshots) < position:
        return published, []
    changed_later = {c for columns in changed[position:] for c in columns}
    later = [c for c in step.columns if c in changed_later]
    if not later:
        return published, []
    table = published.copy()
    for column in later:
        table[column] = snapshots[position - 1][column].to_numpy()
    return table, later
