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

A step may need its columns published its own way
(:meth:`~microagg.steps.StepOptions.publication`): a date recoded to its month published
at that precision (an ISO partial date ``1989-03`` for a text column), a date made an age
published as whole numbers, a top code never rounded (:func:`as_published`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import __version__
from .._base.validation import resolve_seed
from ..steps._state import figures
from .assemble import Findings, assemble
from .plan_stage import run_steps, step_checks
from .publish import publish
from .request import Request

if TYPE_CHECKING:  # pragma: no cover
    from ..steps import Plan
from .result import Release
from .verify import k_check

__all__ = ["as_published", "release_k", "run_plan_table"]


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
    publishing, notes = as_published(request, state.table)
    final = publish(state.table.drop(columns=list(request.identifiers)), publishing, timings)
    t = time.perf_counter()
    classes = final.quasi_identifier_classes(request.quasi_identifiers)
    sizes = np.bincount(classes)
    steps = step_checks(request, request.data, final.data, records=state.history,
                        snapshots=state.snapshots)
    checks: dict[str, Any] = {"k_anonymity": release_k(request.plan, final.data, steps,
                                                       int(sizes.min())),
                              "steps": steps}
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
    return assemble(publishing, data=final.data, labels=classes.astype(np.intp), seed=seed,
                    params=_params(request), findings=Findings(checks, metrics,
                                                              [*state.notes, *notes],
                                                              timings),
                    partitions=partitions or None, steps=state.history)


def release_k(plan: Plan, published: Any, steps: Any, achieved: int) -> Mapping[str, Any]:
    """``checks["k_anonymity"]`` of a release made by ``plan`` (its step checks ``steps``,
    ``achieved``: k over the plan's keys counted on the published table): k over the
    columns one step's promise covers (:func:`~.plan_request.promised_k`), as that step's
    verifier counted it on the published table (under its own rule for missing values: a
    suppression's "missing matches any value"); else k over the plan's keys, reported. The
    review of two files counts it with the same function
    (:func:`microagg.audit.assess.assess_release`)."""
    from .plan_request import promised_k
    from .verify import published_classes

    promise = promised_k(plan)
    if promise is None:
        return k_check(None, achieved)
    position, k, columns = promise
    own = steps[position - 1]
    counted = int(own["achieved"]) if isinstance(own.get("achieved"), (int, np.integer)) \
        else int(np.bincount(published_classes(published, list(columns))).min())
    within = [c for c in columns if c not in plan.steps[position - 1].columns]
    return MappingProxyType({
        "required": k, "achieved": counted, "columns": columns,
        "model": f"k-anonymity of {', '.join(columns)} (promised by step {position} of the "
                 "plan" + (f", which partitions within the classes of {', '.join(within)}"
                           if within else "") + "), counted on the published data as "
                 "that step's check counts it; the other keys of the plan promise what their "
                 "own step's check says"})


def _params(request: Request) -> Mapping[str, Any]:
    """``Release.params`` of a plan (each step's options are in ``params["plan"]``)."""
    return MappingProxyType({
        "method": "plan", "k": request.k, "quasi_identifiers": request.quasi_identifiers,
        "sensitive": request.sensitive, "identifiers": request.identifiers,
        "scaling": "per step", "method_params": MappingProxyType({}),
        "microagg_version": __version__,
    })


def as_published(request: Request, table: pd.DataFrame) -> tuple[Request, list[str]]:
    """``request`` with the dates and rounding that publish each step's columns as the step
    needs (:meth:`~microagg.steps.StepOptions.publication`), and a note for each column
    whose rounding a step overrides (``table``: the working table after the steps).

    The last step that changes a column says how it is published. ``"month"``/``"year"``:
    a date column (held as days) published at that precision;
    ``"integer"``: no longer a date, rounded to integers; ``"as-is"``: never rounded.
    """
    assert request.plan is not None
    dates, rounding = dict(request.dates), dict(request.rounding)
    notes: list[str] = []
    steps = request.plan.steps
    for position, step in enumerate(steps, start=1):
        later = {c for after in steps[position:] for c in after.columns}
        for column, how in step.publication().items():
            if column in later:  # the last step that changes a column publishes it
                continue
            if how == "as-is":
                digits = rounding.pop(column, None)
                values = table[column].to_numpy(dtype=np.float64, na_value=np.nan)
                if digits is not None and not np.array_equal(np.round(values, digits), values,
                                                              equal_nan=True):
                    notes.append(f"Column {column!r} is published unrounded (not to {digits} "
                                 f"digits): step {position} of the plan ({step.name}) "
                                 "promises its values as it left them.")
            elif how == "integer":
                dates.pop(column, None)
                rounding[column] = 0
            elif how in ("month", "year"):
                if column in dates:
                    dates[column] = replace(dates[column], publish=how)
            else:
                raise ValueError(f"Step {step.name!r} asks for column {column!r} to be "
                                 f"published {how!r}; the ways are 'as-is', 'integer', "
                                 "'month' and 'year'. This is a bug in the step.")
    return replace(request, dates=MappingProxyType(dates),
                   rounding=MappingProxyType(rounding)), notes
