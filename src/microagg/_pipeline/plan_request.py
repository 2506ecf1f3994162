"""The rules of a request made with ``plan=`` (:class:`~microagg.steps.Plan`): what a plan
replaces, and what a plan of steps runs.

A plan of one :class:`~microagg.steps.Microaggregate` step is exactly the one-step shorthand
(``quasi_identifiers=``, ``k=``, ``method=`` ...): :func:`shorthand_of` gives its options and
the request runs as if they had been given. Any other plan (:func:`runs_as_plan`) runs its
steps one after the other (:mod:`.plan_stage`); each step's checker refuses what it cannot
run (:attr:`microagg.steps.Step.checker`), the options a plan cannot run yet are refused by
name (:func:`check_plan_steps`).

What a plan's release promises: its ``quasi_identifiers`` are the plan's keys, the union of
its steps' columns (:attr:`~microagg.steps.StepOptions.columns`), in order; its ``k`` is the
smallest k a step promises (:attr:`~microagg.steps.StepOptions.required_k`; 2 when none
does, the k the columns without a role are checked against). Over the keys, k is measured on
the published table and reported, not promised (``checks["k_anonymity"]["required"]`` is
``None``); each step promises what its verifier checks on the published table
(``checks["steps"]``), and one that does not hold makes the release "not protected".

A plan whose keys are all numeric and complete and whose every step promises a k runs as the
numeric stage does (kind ``"plan"``: the measures of numeric microaggregation); any other
(categorical or missing keys, a step without a k such as noise) runs on the table as it is
(kind ``"plan-table"``, :mod:`.plan_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..aggregate.aggregators import AGGREGATORS, is_noisy
from ..aggregate.aggregators import aggregation_params as checked_aggregation_params
from ..exceptions import SchemaError
from ..partition import get_partitioner
from ..steps import Microaggregate, Plan

__all__ = ["PLAN_REPLACES", "check_microaggregate_step", "check_plan_steps", "runs_as_plan",
           "shorthand_of", "shorthand_plan"]

PLAN_REPLACES = ("quasi_identifiers", "k", "method", "method_params", "aggregation",
                 "aggregation_params", "scaling", "refine")
"""The one-step shorthand's options, which a plan's steps give instead."""

_SEVERAL_STEPS_REFUSE = ("epsilon", "bounds", "attribute_groups", "n_attribute_groups", "l",
                         "t", "certify", "blocking", "block_size", "hierarchies",
                         "clustering_il")
"""Options a plan of several steps does not run yet."""


def shorthand_of(plan: Any, quasi_identifiers: Any, k: Any, options: Mapping[str, Any]
                 ) -> tuple[Any, Any, dict[str, Any]]:
    """``(quasi_identifiers, k, options)`` of a request: those given, or with ``plan`` its
    one step's (a plan of several steps: the union of their quasi-identifiers and the
    smallest k; :func:`check_plan_steps` checks each step). ``plan`` with any of
    :data:`PLAN_REPLACES` is refused, each named, and a plan of several steps with an option
    it does not run yet (the engines that do not run a plan of several steps refused it
    first, by name: :data:`microagg.engines.REFUSABLE`)."""
    if plan is None:
        if k is None:
            raise TypeError("anonymize needs k (the smallest group size, an int >= 2) or a "
                            "plan (plan=Plan([Microaggregate(..., k=5)])).")
        return quasi_identifiers, k, dict(options)
    if not isinstance(plan, Plan):
        raise TypeError(f"The 'plan' parameter must be a microagg.steps.Plan. Got "
                        f"{type(plan).__name__} instead.")
    given = {"quasi_identifiers": quasi_identifiers, "k": k, **options}
    clash = [name for name in PLAN_REPLACES if given.get(name) not in (None, {}, ())]
    if clash:
        raise ValueError(f"plan= gives each step's options: do not pass "
                         f"{', '.join(clash)} with it (put them in the plan's steps).")
    if runs_as_plan(plan):
        _refuse_options(plan, options)
        keys = tuple(dict.fromkeys(c for step in plan.steps for c in step.columns))
        promised = [step.required_k for step in plan.steps if step.required_k is not None]
        return keys, min(promised, default=2), dict(options)
    step = plan.steps[0]
    assert isinstance(step, Microaggregate)  # runs_as_plan
    return step.quasi_identifiers, step.k, {
        **options, "method": step.method, "method_params": dict(step.method_params) or None,
        "aggregation": step.aggregation,
        "aggregation_params": dict(step.aggregation_params) or None,
        "scaling": step.scaling}


def runs_as_plan(plan: Plan) -> bool:
    """Whether ``plan`` runs as a plan of steps: anything but one microaggregate step (the
    one-step shorthand)."""
    return len(plan.steps) > 1 or not isinstance(plan.steps[0], Microaggregate)


def shorthand_plan(fields: Mapping[str, Any], options: Mapping[str, Any]) -> Plan:
    """The one-step plan the shorthand's options make (``Release.params["plan"]``)."""
    return Plan([Microaggregate(fields["quasi_identifiers"], fields["k"],
                                method=options.get("method"),
                                method_params=options.get("method_params") or {},
                                aggregation=options.get("aggregation"),
                                aggregation_params=options.get("aggregation_params") or {},
                                scaling=options.get("scaling"))])


def _refuse_options(plan: Plan, options: Mapping[str, Any]) -> None:
    """The options of :data:`_SEVERAL_STEPS_REFUSE`."""
    where = f"A plan of {len(plan.steps)} steps"
    given = [name for name in _SEVERAL_STEPS_REFUSE
             if options.get(name) not in (None, False, {}, ())]
    if given:
        raise SchemaError(f"{where} does not run {', '.join(given)} yet: use a plan of one "
                          "step (or the shorthand quasi_identifiers=, k=) for them.")


def check_plan_steps(df: pd.DataFrame, plan: Plan, fields: Mapping[str, Any]) -> str:
    """Each step's checker (:attr:`microagg.steps.Step.checker`) on the request's table,
    before any step runs (the options a plan does not run were refused by
    :func:`shorthand_of`); the stage that runs the plan: ``"plan"`` (numeric, complete keys,
    every step promising a k) or ``"plan-table"``."""
    from ..steps import STEPS
    from ..steps._state import StepRoles

    strata = fields.get("strata")
    roles = StepRoles(quasi_identifiers=tuple(fields["quasi_identifiers"]),
                      sensitive=tuple(fields["sensitive"]),
                      identifiers=tuple(fields["identifiers"]), weight=fields.get("weight"),
                      household=fields.get("household"),
                      strata=() if strata is None else (strata,))
    for position, step in enumerate(plan.steps, start=1):
        entry = STEPS[step.name]
        checker = entry.load_checker()
        if checker is not None:
            extra = {"roles": roles} if entry.takes(checker, "roles") else {}
            checker(step, df, position, plan, **extra)
    keys = df.loc[:, list(fields["quasi_identifiers"])]
    numeric = all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
                  for t in keys.dtypes)
    if numeric and not fields["hierarchies"] and not keys.isna().to_numpy().any() \
            and all(step.required_k is not None for step in plan.steps):
        return "plan"
    return "plan-table"


def check_microaggregate_step(step: Microaggregate, df: pd.DataFrame, position: int,
                              plan: Plan) -> None:
    """What a microaggregate step of a plan runs: numeric, complete columns that no other
    step changes, a method that does not generalize, an aggregation that is not noisy (its
    k is promised on the published table), its options checked as the shorthand's."""
    where = f"Step {position} of the plan"
    for other, before in enumerate(plan.steps, start=1):
        twice = [c for c in step.columns if c in before.columns]
        if other != position and twice:
            first, then = sorted((position, other))
            raise SchemaError(f"Step {then} of the plan masks {', '.join(map(repr, twice))}, "
                              f"already masked by step {first}: a microaggregate step's "
                              "columns are its own (no other step of the plan changes them).")
    values = df.loc[:, list(step.quasi_identifiers)]
    categorical = [str(c) for c, t in values.dtypes.items()
                   if not pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)]
    if categorical:
        raise SchemaError(f"{where} (microaggregate) masks numeric quasi-identifiers only; "
                          f"{', '.join(map(repr, categorical))} are categorical.")
    holes = {str(c): int(n) for c, n in values.isna().sum().items() if n}
    if holes:
        raise SchemaError(f"{where} (microaggregate) does not run missing quasi-identifier "
                          "values yet (" + ", ".join(f"{c!r}: {n} of {len(df)} rows"
                                                     for c, n in holes.items())
                          + "); impute or drop them first, or use a plan of one step.")
    _check_step(step, position, n_rows=len(df))


def _check_step(step: Microaggregate, position: int, *, n_rows: int) -> None:
    """One microaggregate step's method, aggregation and scaling, as the shorthand's."""
    from .._base.scaling import SCALINGS
    from .._base.validation import check_k

    what = f"step {position} of the plan"
    check_k(step.k, n_samples=n_rows, caller=what)
    partitioner = get_partitioner(step.method or "mdav")
    if partitioner.generalizes:
        raise SchemaError(f"{what}: method {partitioner.name!r} generalizes; a plan of "
                          "several steps runs numeric microaggregation only.")
    if step.scaling is not None and step.scaling not in SCALINGS:
        raise ValueError(f"{what}: unknown scaling {step.scaling!r}. Valid scalings: "
                         f"{', '.join(SCALINGS)}.")
    aggregation = step.aggregation or "mean"
    if aggregation not in AGGREGATORS:
        raise ValueError(f"{what}: unknown aggregation {aggregation!r}. Valid aggregations: "
                         f"{', '.join(sorted(AGGREGATORS))}.")
    params = checked_aggregation_params(aggregation, step.aggregation_params)
    if is_noisy(aggregation, params):
        raise SchemaError(f"{what}: aggregation {aggregation!r} is noisy; a plan of several "
                          "steps promises each step's k on the published table, which a "
                          "noisy aggregation does not keep.")
    partitioner.check_params(partitioner.params_for_scaling(dict(step.method_params),
                                                            step.scaling))

