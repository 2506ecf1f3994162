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
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..aggregate.aggregators import AGGREGATORS, is_noisy
from ..aggregate.aggregators import aggregation_params as checked_aggregation_params
from ..exceptions import SchemaError
from ..partition import get_partitioner
from ..steps import Microaggregate, Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..steps._state import StepRoles

__all__ = ["PLAN_REPLACES", "check_household_order", "check_microaggregate_step",
           "check_plan_steps",
           "check_publication", "promised_k", "runs_as_plan", "shorthand_of",
           "shorthand_plan"]

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
    """Whether ``plan`` runs as a plan of steps: anything but one plain microaggregate step
    (the one-step shorthand; one that partitions within classes or per household is a
    plan)."""
    step = plan.steps[0]
    return len(plan.steps) > 1 or not isinstance(step, Microaggregate) \
        or step.promised_over != step.columns or step.counts_households


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
    check_household_order(df, plan, roles)
    keys = df.loc[:, list(fields["quasi_identifiers"])]
    numeric = all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
                  for t in keys.dtypes)
    if numeric and not fields["hierarchies"] and not keys.isna().to_numpy().any() \
            and all(step.required_k is not None and step.promised_over == step.columns
                    and not step.counts_households for step in plan.steps):
        return "plan"
    return "plan-table"


def check_household_order(df: pd.DataFrame, plan: Plan, roles: StepRoles) -> None:
    """Refuse a step that changes, per person, a column an earlier step made the same for
    every member of a household (:attr:`microagg.steps.Step.household_level`), before any
    step runs: a household step, then a microaggregation of ``household_size`` per person.

    The earlier step promises, on the published table, that every member of a household
    publishes the same value of that column; the later step would publish different values
    within households, so the promise would not hold on the output (the release would
    report its own earlier step as "does not hold", the file re-linking nothing less). The
    promise is about the published file, so judging the earlier step on the column as it
    left it (the chained steps' snapshots, :func:`~.plan_stage.step_checks`) would call
    protected a file that is not: the plan is refused instead, naming both steps, the
    column and what to do. A later step that is itself per household on the column (its
    own :attr:`~microagg.steps.Step.household_level` holds it: a per-household
    microaggregation, a suppression's ``household_keys``) keeps the promise and runs; so
    does any step put before the household one.
    """
    from ..steps import STEPS

    earlier: list[tuple[int, str, tuple[str, ...]]] = []
    for position, step in enumerate(plan.steps, start=1):
        entry = STEPS[step.name]
        level = entry.load_household_level()
        own = tuple(level(step, df, roles)) if level is not None else ()
        changes = [c for c in dict.fromkeys((*step.columns, *own)) if c not in own]
        for first, name, columns in earlier:
            broken = [c for c in changes if c in columns]
            if broken:
                raise SchemaError(_order_refusal(step, position, (first, name), broken))
        if own:
            earlier.append((position, step.name, own))


def _order_refusal(step: Any, position: int, first: tuple[int, str], broken: list[str]
                   ) -> str:
    """The words of :func:`check_household_order`'s refusal."""
    at, name = first
    cols = ", ".join(map(repr, broken))
    option = step.household_option
    fix = (f"make step {position} per household on it "
           f"({option.format(column=','.join(broken))}), or put it" if option is not None
           else "put it")
    return (f"Step {position} of the plan ({step.name}) changes {cols} per person, which step "
            f"{at} ({name}) makes the same for every member of a household: the published "
            f"file would give members of one household different {cols} values and step "
            f"{at}'s promise would not hold. {fix[0].upper()}{fix[1:]} before step {at} "
            "(where it keeps the column the same within households, as a recoding does).")


def promised_k(plan: Plan) -> tuple[int, int, tuple[str, ...]] | None:
    """``(position, k, columns)`` of the k a plan's release promises over its keys, or
    ``None`` when it promises none (then k over the keys is reported only).

    A release promises k over columns only where one step's own promise covers them: the
    last step whose :attr:`~microagg.steps.StepOptions.promised_over` holds the columns of
    every step that promises a k (stratified microaggregation nested within the classes an
    earlier step made: household-level keys per household, then the person-level keys
    within them). Steps that promise no k (PRAM, noise) are not part of it: what they
    promise is their own check. Disjoint groups masked one after the other promise nothing
    together (an intruder can intersect them).

    Examples
    --------
    >>> from microagg.steps import Microaggregate
    >>> promised_k(Plan([Microaggregate("size", k=3, within="region"),
    ...                  Microaggregate("age,income", k=3, within="region,size")]))
    (2, 3, ('age', 'income', 'region', 'size'))
    >>> promised_k(Plan([Microaggregate("a", k=3), Microaggregate("b", k=3)])) is None
    True
    """
    promising = [(i, s) for i, s in enumerate(plan.steps, start=1) if s.required_k is not None]
    keys = {c for _, s in promising for c in s.columns}
    for position, step in reversed(promising):
        if keys <= set(step.promised_over) and step.required_k is not None:
            return position, step.required_k, step.promised_over
    return None


_PRECISION = {"day": 0, "month": 1, "year": 2}


def check_publication(plan: Plan, dates: Mapping[str, Any]) -> None:
    """Refuse a step that publishes a date finer than declared (a step's ``"month"`` of a
    column declared published by year): the declared precision would be silently broken.

    ``dates``: the request's date specs (each with its ``publish`` precision)."""
    for position, step in enumerate(plan.steps, start=1):
        for column, how in step.publication().items():
            declared = getattr(dates.get(column), "publish", "day")
            if how in _PRECISION and _PRECISION[declared] > _PRECISION[how]:
                raise SchemaError(f"Step {position} of the plan ({step.name}) publishes column "
                                  f"{column!r} by {how}, but the column is declared published "
                                  f"by {declared}: recode it to the {declared} instead, or "
                                  f"declare publish = \"{how}\".")


def check_microaggregate_step(step: Microaggregate, df: pd.DataFrame, position: int,
                              plan: Plan, *, roles: StepRoles | None = None) -> None:
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
    if (step.within or step.per_household) and roles is not None:
        from ..steps._grouped import check_grouped

        check_grouped(step, df, position, roles)


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

