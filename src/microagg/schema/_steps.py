"""A schema file's plan: its ``[[steps]]`` tables read into a :class:`~microagg.steps.Plan`,
and the rules that tie a plan to the schema's columns.

::

    [[steps]]
    step = "microaggregate"
    quasi_identifiers = ["age", "income"]
    k = 5
    method = "mdav"

    [[steps]]
    step = "microaggregate"
    quasi_identifiers = ["height", "weight"]
    k = 3

Each table is one step, in the order they run (:meth:`Plan.from_records
<microagg.steps.Plan.from_records>`). Every column a step masks is a ``quasi-identifier``
of the schema, and every quasi-identifier of the schema is masked by some step (a
quasi-identifier in no step would be published unchanged).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import SchemaError
from ..steps import Plan
from ..steps._plan import _step_from_record

if TYPE_CHECKING:
    from .schema_file import Schema

__all__ = ["plan_columns_problems", "plan_keys", "read_steps", "renamed_plan", "roles_from",
           "schema_with_plan"]


def read_steps(steps: Any, roles: Mapping[str, str], problems: list[str]) -> Plan | None:
    """The plan of a schema's ``[[steps]]`` value (``None`` when there is none, or when it
    has a problem); its problems, naming each step's position and option, are added to
    ``problems``.

    Parameters
    ----------
    steps : object
        The file's ``steps`` value as parsed (a list of tables, or ``None``).
    roles : mapping of column -> role
        The schema's columns and their roles.
    problems : list of str
        Where the problems found are added.

    Examples
    --------
    >>> found: list[str] = []
    >>> read_steps([{"step": "microaggregate", "quasi_identifiers": ["age"], "k": 5}],
    ...            {"age": "quasi-identifier"}, found).steps[0].k
    5
    >>> read_steps([{"step": "recode"}], {"age": "quasi-identifier"}, found), found
    (None, ["[[steps]]: step 1 of the plan (recode) needs 'column'"])
    """
    if steps is None:
        return None
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        problems.append("steps must be an array of tables, one [[steps]] table per step "
                        f"(step = \"microaggregate\", quasi_identifiers = [...], k = 5); got "
                        f"{steps!r}")
        return None
    before = len(problems)
    parsed = []
    for position, record in enumerate(steps, start=1):
        try:
            parsed.append(_step_from_record(record, position))
        except (TypeError, ValueError) as error:  # it names the step and the option
            problems.append(f"[[steps]]: {str(error).rstrip('.')}")
    if len(problems) > before:
        return None
    plan = Plan(parsed)
    problems += [f"[[steps]]: {p}" for p in plan_columns_problems(plan, roles)]
    return plan if len(problems) == before else None


def plan_columns_problems(plan: Plan, roles: Mapping[str, str]) -> list[str]:
    """What ties ``plan`` badly to the columns of a schema (``roles``: column -> role): a
    step's column that is not in the schema or not a quasi-identifier, and a
    quasi-identifier that no step masks.

    Examples
    --------
    >>> from microagg.steps import Microaggregate
    >>> plan_columns_problems(Plan([Microaggregate(["age", "zip"], k=5)]),
    ...                       {"age": "quasi-identifier", "sex": "quasi-identifier"})
    ["step 1 of the plan (microaggregate): quasi_identifiers 'zip' are not columns of the \
schema", "quasi-identifier(s) 'sex' are in no step: they would be published unmasked; add \
them to a step's quasi_identifiers or give them another role"]
    """
    found = []
    for position, step in enumerate(plan.steps, start=1):
        where = f"step {position} of the plan ({step.name})"
        missing = [c for c in step.columns if c not in roles]
        if missing:
            found.append(f"{where}: quasi_identifiers {', '.join(map(repr, missing))} are "
                         "not columns of the schema")
        others = [f"{c!r} has role {roles[c]!r}" for c in step.columns
                  if c in roles and roles[c] != "quasi-identifier"]
        if others:
            found.append(f"{where}: {', '.join(others)}; a step masks the schema's "
                         "quasi-identifiers only (role = \"quasi-identifier\")")
    masked = {c for step in plan.steps for c in step.columns}
    unmasked = [c for c, role in roles.items() if role == "quasi-identifier"
                and c not in masked]
    if unmasked:
        found.append(f"quasi-identifier(s) {', '.join(map(repr, unmasked))} are in no step: "
                     "they would be published unmasked; add them to a step's "
                     "quasi_identifiers or give them another role")
    return found


def renamed_plan(plan: Plan | None, names: Sequence[str], spelled: Sequence[str]
                 ) -> Plan | None:
    """``plan`` with each column of ``names`` spelled as the same position of ``spelled``
    (:meth:`Schema.spelled_as <microagg.schema.schema_file.Schema.spelled_as>`).

    Examples
    --------
    >>> from microagg.steps import Microaggregate
    >>> renamed_plan(Plan([Microaggregate(["age"], k=5)]), ["age"], [" age "]
    ...              ).steps[0].quasi_identifiers
    (' age ',)
    """
    if plan is None:
        return None
    spelling = dict(zip(names, spelled, strict=True))
    return Plan(step.renamed(spelling) for step in plan.steps)


def plan_keys(plan: Plan) -> list[str]:
    """Every column the steps of ``plan`` mask, each once, in the order of the steps."""
    return list(dict.fromkeys(c for step in plan.steps for c in step.columns))


def schema_with_plan(schema: Schema, plan: Plan | None) -> Schema:
    """``schema`` running ``plan`` (``anonymize(df, schema=..., plan=...)``, ``microagg
    anonymize --schema ... --step ...``): the plan's columns checked against the schema's
    roles as a file's ``[[steps]]`` are; a plan given twice (``plan`` and the schema's own
    ``[[steps]]``) is refused. ``plan=None``: ``schema`` as it is.

    Examples
    --------
    >>> from microagg.schema import ColumnSpec, Schema
    >>> from microagg.steps import Microaggregate
    >>> schema = Schema({"age": ColumnSpec("quasi-identifier")})
    >>> schema_with_plan(schema, Plan([Microaggregate("age", k=3)])).plan.steps[0].k
    3
    """
    if plan is None:
        return schema
    if schema.plan is not None:
        raise SchemaError(f"The plan is given twice: by plan= (or --step) and by the "
                          f"[[steps]] of the schema {schema.source}; give it once.")
    problems = plan_columns_problems(plan, {c: s.role for c, s in schema.columns.items()})
    if problems:
        raise SchemaError(f"The plan does not fit the schema {schema.source}: "
                          + "; ".join(problems) + ".")
    return dataclasses.replace(schema, plan=plan)


def roles_from(schema: Schema | None, qi: Sequence[str] | None, sens: Sequence[str] | None,
               ids: Sequence[str] | None) -> tuple[list[str], list[str], list[str]]:
    """Quasi-identifiers, sensitive and identifiers from a schema or from explicit lists."""
    if schema is None:
        return list(qi or []), list(sens or []), list(ids or [])
    if schema.plan is not None and qi and list(qi) == plan_keys(schema.plan):
        return list(qi), schema.sensitive, schema.identifiers  # the plan's: the schema's own
    given = [name for name, value in (("quasi-identifiers", qi), ("sensitive", sens),
                                      ("identifiers", ids)) if value]
    if given:
        raise SchemaError(f"Give roles either in the schema or as options, not both "
                          f"({', '.join(given)} given with a schema).")
    return schema.quasi_identifiers, schema.sensitive, schema.identifiers
