"""The Protect form's plan: a list of steps of any registered kind, each one's options typed
as text, checked on the server (after sdcMicro's one ``sdcMicroObj`` per plan of methods and
its ``undolast``, Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).

Form fields (stable names, also used by the tests): ``plan-N-step`` (the N-th step's name, a
key of :data:`microagg.steps.STEPS`, N from 1) and ``plan-N-OPTION`` (the text of one of its
options, a field of its options dataclass; blank: the option's default); ``add_step`` (the
kind of step the button ``action=add`` appends); ``action`` (``add``, ``remove-N``, ``up-N``:
edit the plan and show the form again; anything else: protect). Without any step the form is
the one-step form (``k``, ``method``, ``params``: :func:`~microagg.web.protect.parse_form`).
Nothing the browser sends is trusted: an unknown step, option or column, a value its options
class refuses, more than :data:`MAX_STEPS` steps are refused with every message at once
(400), each naming the step and the option.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_STEPS", "PlanErrors", "column_type", "edited", "not_offered", "plan_fields",
           "plan_options", "posted_steps",
           "records_as_fields", "step_kinds", "step_text", "steps_as_fields",
           "value_text"]

MAX_STEPS = 20
"""The most steps one plan of the form may have."""
_FIELD = re.compile(r"plan-([0-9]{1,3})-([A-Za-z_][A-Za-z0-9_]{0,63})")


class PlanErrors(ValueError):
    """Every problem of a posted plan (:attr:`problems`), shown at once."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = list(problems)


def step_kinds() -> list[dict[str, Any]]:
    """Every registered step as the form offers it: its name, summary, reference and
    options (``name``, ``help`` from :func:`~microagg.steps._options.option_docs`,
    ``default`` as text, ``required``)."""
    from microagg.steps import STEPS
    from microagg.steps._options import option_docs

    kinds = []
    for name, entry in STEPS.items():
        docs = option_docs(entry.options)
        options = []
        for f in dataclasses.fields(entry.options):  # type: ignore[arg-type]
            required = (f.default is dataclasses.MISSING
                        and f.default_factory is dataclasses.MISSING)
            default = (None if required else f.default_factory()
                       if f.default_factory is not dataclasses.MISSING else f.default)
            options.append({"name": f.name, "help": docs.get(f.name, ""),
                            "required": required,
                            "default": "" if required else value_text(default)})
        kinds.append({"name": name, "summary": entry.summary, "reference": entry.reference,
                      "options": options})
    return kinds


def column_type(entry: Mapping[str, Any], dtype: Any) -> str:
    """A column's schema type: the one the schema declares, else the one its values hold
    (dates, numbers; anything else: categories).

    Examples
    --------
    >>> import numpy as np
    >>> column_type({"type": "ordinal"}, np.dtype("int64")), column_type({}, np.dtype("f8"))
    ('ordinal', 'numeric')
    """
    import pandas as pd

    declared = entry.get("type")
    if declared:
        return str(declared)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return "numeric"
    return "categorical"


def not_offered(schema: Mapping[str, Mapping[str, Any]], dtypes: Mapping[str, Any],
                steps: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The registered steps that cannot apply to the session's table, each with why: a
    step changes quasi-identifiers only, so it is offered where some quasi-identifier has
    a type its options take (:attr:`StepOptions.column_types
    <microagg.steps.StepOptions.column_types>`, or the type an earlier step of the plan
    ``steps`` leaves: ``makes_type``), and where the schema gives every role it needs
    (``needs_roles``).

    Parameters
    ----------
    schema : mapping of column -> entry
        The session's schema (``{"role": ..., "type": ...}`` by column).
    dtypes : mapping of column -> dtype
        The table's dtypes (a type the schema does not declare is read from them).
    steps : sequence of mapping
        The plan's steps as posted (:func:`posted_steps`).
    """
    from microagg.steps import STEPS

    keys = [c for c, entry in schema.items() if entry.get("role") == "quasi-identifier"]
    types = {column_type(schema[c], dtypes[c]) for c in keys if c in dtypes}
    types |= {STEPS[step["step"]].options.makes_type for step in steps
              if step["step"] in STEPS} - {None}  # type: ignore[arg-type]
    roles = {str(entry.get("role")) for entry in schema.values()}
    refused = {}
    for name, entry in STEPS.items():
        needed = sorted(entry.options.needs_roles - roles)
        if needed:
            refused[name] = f"needs a column with role {' and '.join(needed)}"
        elif not entry.options.column_types & types:
            refused[name] = (f"changes {' or '.join(sorted(entry.options.column_types))} "
                             "quasi-identifiers, and the roles give none")
    return refused


def value_text(value: Any) -> str:
    """An option's value as the form (and ``--step``) writes it: names joined by commas,
    mappings and other lists as JSON, ``None`` blank.

    Examples
    --------
    >>> value_text(["age", "bmi"]), value_text({"gamma": 0.2}), value_text(None)
    ('age,bmi', '{"gamma": 0.2}', '')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return (",".join(value) if value and all(isinstance(v, str) for v in value)
                else json.dumps(list(value)))
    if isinstance(value, Mapping):
        return json.dumps(dict(value))
    return str(value)


def posted_steps(form: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The plan's steps as posted (``{"step": name, "values": {option: text}}``, in order)
    and the problems of the fields themselves: a number that skips one, more than
    :data:`MAX_STEPS` steps, an option field without its step."""
    found: dict[int, dict[str, str]] = {}
    for key, value in form.items():
        match = _FIELD.fullmatch(key)
        if match:
            found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    problems = []
    if len(found) > MAX_STEPS:
        problems.append(f"The plan has {len(found)} steps; the form takes at most "
                        f"{MAX_STEPS}.")
    if sorted(found) != list(range(1, len(found) + 1)):
        problems.append(f"The plan's steps must be numbered 1 to {len(found)} (plan-N-step); "
                        f"got {', '.join(map(str, sorted(found)))}.")
    steps = []
    for number in sorted(found)[:MAX_STEPS]:
        fields = found[number]
        if "step" not in fields:
            problems.append(f"plan-{number}-step is missing: say which step it is.")
            continue
        values = {k: v for k, v in fields.items() if k != "step"}
        steps.append({"step": fields["step"].strip(), "values": values})
    return steps, problems


def steps_as_fields(steps: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``steps`` (:func:`posted_steps`) as the form's fields, numbered from 1."""
    fields: dict[str, str] = {}
    for number, step in enumerate(steps, start=1):
        fields[f"plan-{number}-step"] = str(step["step"])
        fields.update({f"plan-{number}-{k}": str(v) for k, v in step["values"].items()})
    return fields


def plan_fields(form: Mapping[str, str]) -> dict[str, str]:
    """The plan's fields of ``form`` (kept in the form when it is shown again)."""
    return {key: value for key, value in form.items()
            if _FIELD.fullmatch(key) or key == "add_step"}


def records_as_fields(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A plan's records (``Release.params["plan"]``) as the form's fields."""
    return steps_as_fields([{"step": r["step"], "values": {
        k: value_text(v) for k, v in r.items() if k != "step"}} for r in records])


def edited(form: Mapping[str, str]) -> dict[str, str] | None:
    """The plan's fields after the edit that ``action`` asks for (``add`` the kind of
    ``add_step``, ``remove-N``, ``up-N``: move step N before N - 1), or ``None`` when the
    form asks to protect. A ValueError names a kind or a step that does not exist."""
    from microagg.steps import STEPS

    action = form.get("action", "").strip()
    match = re.fullmatch(r"(add|remove|up)(?:-([0-9]{1,3}))?", action)
    if match is None:
        return None
    steps, problems = posted_steps(form)
    if problems:
        raise ValueError(" ".join(problems))
    verb, number = match.group(1), int(match.group(2) or 0)
    if verb == "add":
        kind = form.get("add_step", "").strip()
        if kind not in STEPS:
            raise ValueError(f"add_step: unknown step {kind!r}; the steps are "
                             f"{', '.join(STEPS)}.")
        if len(steps) >= MAX_STEPS:
            raise ValueError(f"The plan has {len(steps)} steps already; the form takes at "
                             f"most {MAX_STEPS}.")
        steps.append({"step": kind, "values": {}})
    elif not 1 <= number <= len(steps) or (verb == "up" and number == 1):
        raise ValueError(f"action {action!r}: the plan has no step {number} to "
                         f"{'move up' if verb == 'up' else 'remove'}.")
    elif verb == "remove":
        del steps[number - 1]
    else:
        steps[number - 2], steps[number - 1] = steps[number - 1], steps[number - 2]
    return {**steps_as_fields(steps), "add_step": form.get("add_step", "")}


def _records(steps: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each posted step built by its options class (the text converted there), as a
    record; the problems of every step at once, each naming the step and the option."""
    from microagg.steps import STEPS
    from microagg.steps._plan import _step_from_record

    records, problems = [], []
    for number, step in enumerate(steps, start=1):
        if step["step"] not in STEPS:
            problems.append(f"plan-{number}-step: unknown step {step['step']!r}; the steps "
                            f"are {', '.join(STEPS)}.")
            continue
        record = {"step": step["step"],
                  **{k: v.strip() for k, v in step["values"].items() if v.strip()}}
        try:  # the message says "step N of the plan (name): the 'option' option ..."
            built = _step_from_record(record, number)
        except (TypeError, ValueError) as error:
            problems.append(str(error))
            continue
        records.append(built.to_record())
    return records, problems


def plan_options(form: Mapping[str, str], options: Mapping[str, Any],
                 schema: Mapping[str, Mapping[str, Any]], columns: Sequence[object],
                 n_rows: int) -> dict[str, Any]:
    """The :func:`microagg.anonymize` keywords of the form: ``options`` (the one-step form,
    :func:`~microagg.web.protect.parse_form`) unchanged without a plan step; with steps,
    ``options`` less its ``k``, ``method`` and ``method_params`` (each step has its own)
    plus ``plan``: the steps' records (plain, what a worker process can receive;
    :meth:`Plan.from_records <microagg.steps.Plan.from_records>`).

    Parameters
    ----------
    form : mapping of str -> str
        The posted fields.
    options : mapping
        The one-step keywords parsed from the form.
    schema : mapping of column -> entry
        The session's schema (``{"role": ..., "type": ...}`` by column).
    columns : sequence
        The columns of the upload.
    n_rows : int
        The rows of the upload (unused here: each step's checker bounds its own options
        against the table when the release is built).

    Raises
    ------
    ValueError
        Every problem at once: an unknown step or option, a value its options class
        refuses, a column that is not a quasi-identifier of the upload, a
        quasi-identifier in no step.
    """
    from microagg.schema._steps import plan_columns_problems
    from microagg.steps import Plan

    steps, problems = posted_steps(form)
    if not steps and not problems:
        return dict(options)
    records, found = _records(steps)
    problems += found
    if form.get("params", "").strip():
        problems.append("params are the one-step form's: with a plan, give each "
                        "microaggregate step its own method_params.")
    if not problems:
        roles = {str(c): str(schema.get(str(c), {}).get("role", "other")) for c in columns}
        problems += plan_columns_problems(Plan.from_records(records), roles)
    if problems:
        raise PlanErrors(problems)
    rest = {key: value for key, value in options.items()
            if key not in ("k", "method", "method_params")}
    return {**rest, "plan": records}


def step_text(record: Mapping[str, Any]) -> str:
    """A step record as the text of one ``--step`` option of ``microagg anonymize``.

    Examples
    --------
    >>> step_text({"step": "microaggregate", "quasi_identifiers": ["age", "bmi"], "k": 5,
    ...            "method_params": {"gamma": 0.2}})
    'microaggregate quasi-identifiers=age,bmi k=5 method-params=\\'{"gamma": 0.2}\\''
    """
    words = [str(record["step"])]
    for key, value in record.items():
        if key == "step":
            continue
        words.append(f"{key.replace('_', '-')}={shlex.quote(value_text(value))}")
    return " ".join(words)
