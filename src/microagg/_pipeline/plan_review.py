"""A published file judged by the plan of steps it was made with (a schema's ``[[steps]]``):
``microagg check --schema`` and ``microagg report --schema``.

The review reads the plan as the release did (:mod:`.plan_request`):

* a plan of one ``microaggregate`` step is the one-step shorthand: its columns are the
  quasi-identifiers and its k is required of them (:func:`plan_k`);
* any other plan: the quasi-identifiers are its keys (every step's columns, in order), k
  over them is measured and reported, not required, and each step is checked on the
  published table (:func:`review_steps`, ``checks["steps"]``); a step that does not hold
  makes the verdict "not protected", naming the step, as the release's own verifier does.

A step that promises a k is checked from the published table alone (the smallest class of
identical published values of its columns); a step without one (noise, PRAM, ...) needs the
original, and is left unchecked by ``microagg check``, which has only the published file.

A plan given another way (``microagg anonymize --step``, ``plan=`` in Python) is recorded in
the release's summary (``params["plan"]``, each step's options as a record): without a
schema plan, ``microagg report --summary-json`` rebuilds it through the steps' own options
(:meth:`~microagg.steps.Plan.from_records`) and judges it as the release did, with the same
functions (:func:`summary_plan_checks`: :func:`~.plan_stage.judge_steps` and
:func:`~.plan_table.release_k`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import PrivacyViolationError
from .verify import published_classes

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema
    from ..steps import Plan, StepOptions
    from ..steps._state import StepRoles

__all__ = ["STEP_K_MODEL", "plan_checks", "plan_k", "review_steps", "step_roles",
           "summary_plan", "summary_plan_checks"]

STEP_K_MODEL = ("k-anonymity of the step's quasi-identifiers on the published table "
                "(re-derived from the file)")
"""The model of a step's k re-derived from a published file."""


def plan_k(plan: Plan) -> tuple[list[str], int | None]:
    """The quasi-identifiers of a release made by ``plan`` and the k it requires of them:
    a one-step shorthand plan's columns and k; any other plan's keys and ``None`` (k over
    the keys is reported, each step promises its own).

    Examples
    --------
    >>> from microagg.steps import Microaggregate, Plan
    >>> plan_k(Plan([Microaggregate(["age", "income"], k=5)]))
    (['age', 'income'], 5)
    >>> plan_k(Plan([Microaggregate(["age"], k=5), Microaggregate(["zip"], k=3)]))
    (['age', 'zip'], None)
    """
    from .plan_request import runs_as_plan

    keys = list(dict.fromkeys(c for step in plan.steps for c in step.columns))
    return keys, (None if runs_as_plan(plan) else plan.steps[0].required_k)


def step_roles(schema: Schema, keys: list[str]) -> StepRoles:
    """The roles a plan's steps and verifiers saw, from the ``schema`` the release was
    made with (``keys``: the plan's, as :func:`plan_k` gives them)."""
    from ..steps._state import StepRoles

    strata = schema.strata
    return StepRoles(quasi_identifiers=tuple(keys), sensitive=tuple(schema.sensitive),
                     identifiers=tuple(schema.identifiers), weight=schema.weight,
                     household=schema.household,
                     strata=() if strata is None else (strata,))


def review_steps(plan: Plan, published: pd.DataFrame, roles: StepRoles,
                 original: pd.DataFrame | None = None
                 ) -> tuple[tuple[Mapping[str, Any], ...], tuple[str, ...]]:
    """``checks["steps"]`` of a published file made by ``plan``, and the steps left
    unchecked ("step 2 of the plan (noise)").

    Parameters
    ----------
    plan : Plan
        The release's plan; a one-step shorthand plan has no step checks (its k is the
        release's, :func:`plan_k`).
    published : pandas.DataFrame
        The published table, read as the release published it.
    roles : StepRoles
        The release's roles (:func:`step_roles`).
    original : pandas.DataFrame, optional
        The table before masking (the same rows in the same order): each step's verifier
        (:attr:`microagg.steps.Step.verifier`) is run on it and the published table. Without
        it, a step that promises a k is checked on the published table, the others are
        returned as unchecked.

    Returns
    -------
    steps : tuple of mapping
        One entry per checked step, in the release's format: ``step`` (its position),
        ``name``, ``quasi_identifiers``, ``holds``, its figures and ``model``.
    unchecked : tuple of str
        The steps that need the original to be checked.
    """
    from ..steps import STEPS
    from .plan_request import runs_as_plan

    if not runs_as_plan(plan):
        return (), ()
    found, unchecked = [], []
    keys = list(roles.quasi_identifiers)
    for position, step in enumerate(plan.steps, start=1):
        head = {"step": position, "name": step.name, "quasi_identifiers": step.columns}
        result: Mapping[str, Any] | None = None
        if original is not None:
            try:
                result = STEPS[step.name].load_verifier()(step, original.loc[:, keys],
                                                          published, roles)
            except PrivacyViolationError as error:  # the file breaks what the step promised
                result = _step_k(step, published) or {
                    "holds": False, "reason": str(error),
                    "model": f"the verifier of the {step.name} step"}
        else:
            result = _step_k(step, published)
        if result is None:
            unchecked.append(f"step {position} of the plan ({step.name})")
            continue
        found.append(MappingProxyType({**head, **{k: v for k, v in result.items()
                                                  if k != "model"},
                                       "model": result["model"]}))
    return tuple(found), tuple(unchecked)


def _step_k(step: StepOptions, published: pd.DataFrame) -> Mapping[str, Any] | None:
    """A step's k on its columns, counted on the published table; ``None`` for a step that
    promises no k."""
    required = step.required_k
    if required is None:
        return None
    sizes = np.bincount(published_classes(published, list(step.columns)))
    achieved = int(sizes[sizes > 0].min()) if sizes.size else 0
    return {"required": required, "achieved": achieved, "holds": achieved >= required,
            "model": STEP_K_MODEL}


def plan_checks(schema: Schema | None, published: pd.DataFrame, keys: list[str],
                original: pd.DataFrame | None = None
                ) -> tuple[int | None, tuple[Mapping[str, Any], ...], tuple[str, ...]]:
    """What the plan of ``schema`` (its ``[[steps]]``) asks of a published file: the k it
    requires of ``keys`` (:func:`plan_k`), its step checks and the steps left unchecked
    (:func:`review_steps`); ``(None, (), ())`` without a plan."""
    if schema is None or schema.plan is None:
        return None, (), ()
    steps, unchecked = review_steps(schema.plan, published, step_roles(schema, keys),
                                    original)
    return plan_k(schema.plan)[1], steps, unchecked


def summary_plan(params: Mapping[str, Any]) -> Plan | None:
    """The plan of steps a release recorded (``params["plan"]`` of its summary), rebuilt by
    the steps' own options (:meth:`~microagg.steps.Plan.from_records`); ``None`` when it
    recorded none, or the one-step shorthand (judged by its k alone, :func:`plan_k`)."""
    from ..steps import Plan
    from .plan_request import runs_as_plan

    records = params.get("plan")
    if not records:
        return None
    plan = Plan.from_records([dict(r) for r in records])
    return plan if runs_as_plan(plan) else None


def summary_plan_checks(plan: Plan, summary: Mapping[str, Any], original: pd.DataFrame,
                        published: pd.DataFrame, roles: StepRoles
                        ) -> tuple[Mapping[str, Any], tuple[Mapping[str, Any], ...]]:
    """``(checks["k_anonymity"], checks["steps"])`` of a published file made by ``plan`` (a
    plan of steps, :func:`summary_plan`), as the release made them: each step's verifier on
    the two tables with what the summary recorded of each step (its details, the columns it
    changed; :func:`~.plan_stage.judge_steps`), then k as the release counts it
    (:func:`~.plan_table.release_k`).

    A step whose check reads a column as another step left it (a PRAM after a suppression
    of the same column) cannot be re-derived from the two files: its check is the one the
    summary recorded, marked ``"re_derived": False``.
    """
    from .plan_stage import judge_steps
    from .plan_table import release_k

    records = list(summary.get("steps") or ())
    if len(records) != len(plan.steps):
        records = []
    recorded = tuple((summary.get("checks") or {}).get("steps") or ())
    steps = judge_steps(plan, roles, original, published,
                        details=[r.get("details") for r in records],
                        changed=[tuple(r.get("columns_changed") or ()) for r in records],
                        recorded=recorded)
    keys = list(roles.quasi_identifiers)
    sizes = np.bincount(published_classes(published, keys))
    achieved = int(sizes[sizes > 0].min()) if sizes.size else 0
    return release_k(plan, published, steps, achieved), steps
