"""The Protect form's plan: an optional second step after the first, checked on the server.

Form fields (stable names, also used by the tests): ``step2`` (the second step's name, one
of :data:`microagg.steps.STEPS`; blank: a release of one step, the form as before),
``step2_columns`` (its quasi-identifiers, separated by commas or spaces), ``step2_k`` and
``step2_method`` (blank: the default, mdav). The first step masks every other
quasi-identifier of the session's schema with the form's ``k``, ``method`` and ``params``.
Nothing the browser sends is trusted: an unknown step or method, a column that is not a
quasi-identifier of the upload, a k outside [2, rows] are refused with a message (400).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["STEP_FIELDS", "plan_options", "step_text"]

STEP_FIELDS = ("step2", "step2_columns", "step2_k", "step2_method")
"""The fields of the second step (kept in the form when it is shown again)."""


def plan_options(form: Mapping[str, str], options: Mapping[str, Any],
                 schema: Mapping[str, Mapping[str, Any]], columns: Sequence[object],
                 n_rows: int) -> dict[str, Any]:
    """The :func:`microagg.anonymize` keywords of the form: ``options`` (the one-step form,
    :func:`~microagg.web.protect.parse_form`) unchanged without a second step; with one,
    ``options`` with its ``k``, ``method`` and ``method_params`` moved into the records of a
    plan of two steps (``options["plan"]``, plain records that a worker process can
    receive; :meth:`Plan.from_records <microagg.steps.Plan.from_records>`).

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
        The rows of the upload (a step's k is at most that).

    Raises
    ------
    ValueError
        A field that names an unknown step or method, a column that is not a
        quasi-identifier of the upload, or a k outside [2, rows].
    """
    from microagg.steps import STEPS

    name = form.get("step2", "").strip()
    if not name:
        if any(form.get(field, "").strip() for field in STEP_FIELDS[1:]):
            raise ValueError("step2 is blank but its columns, k or method are given: choose "
                             f"the second step ({', '.join(STEPS)}) or clear its fields.")
        return dict(options)
    if name not in STEPS:
        raise ValueError(f"Unknown step {name!r} in step2; the steps are "
                         f"{', '.join(STEPS)}.")
    second = _second_columns(form, schema, columns)
    first = [c for c, entry in schema.items()
             if entry.get("role") == "quasi-identifier" and c not in second]
    if not first:
        raise ValueError("The first step has no quasi-identifier left: leave at least one "
                         "out of step2_columns.")
    records = [_record(name, first, options["k"], options.get("method"),
                       options.get("method_params")),
               _record(name, second, _k(form, n_rows), _method(form), None)]
    rest = {key: value for key, value in options.items()
            if key not in ("k", "method", "method_params")}
    return {**rest, "plan": records}


def _second_columns(form: Mapping[str, str], schema: Mapping[str, Mapping[str, Any]],
                    columns: Sequence[object]) -> list[str]:
    """``step2_columns``: quasi-identifiers of the upload, each once."""
    names = [n for n in re.split(r"[,\s]+", form.get("step2_columns", "").strip()) if n]
    if not names:
        raise ValueError("step2_columns is required for a second step: the "
                         "quasi-identifiers it masks, separated by commas.")
    outside = [n for n in names if n not in columns]
    if outside:
        raise ValueError(f"step2_columns: {', '.join(map(repr, outside))} not in the "
                         "upload.")
    other = [f"{n!r} has role {schema.get(n, {}).get('role')!r}" for n in names
             if schema.get(n, {}).get("role") != "quasi-identifier"]
    if other:
        raise ValueError(f"step2_columns: {', '.join(other)}; a step masks "
                         "quasi-identifiers only (set roles on the Roles page).")
    if len(set(names)) < len(names):
        raise ValueError(f"step2_columns names a column twice: {', '.join(names)}.")
    return names


def _k(form: Mapping[str, str], n_rows: int) -> int:
    text = form.get("step2_k", "").strip()
    if not (text.isascii() and text.isdigit() and 2 <= int(text) <= n_rows):
        raise ValueError(f"step2_k must be a whole number in [2, {n_rows}] (the rows of the "
                         f"upload); got {text!r}.")
    return int(text)


def _method(form: Mapping[str, str]) -> str | None:
    from microagg.partition import PARTITIONERS

    method = form.get("step2_method", "").strip()
    if method and method not in PARTITIONERS:
        raise ValueError(f"Unknown method {method!r} in step2_method; the methods are "
                         f"{', '.join(PARTITIONERS)}.")
    return method or None


def _record(name: str, columns: list[str], k: int, method: str | None,
            method_params: Mapping[str, Any] | None) -> dict[str, Any]:
    """One step as a plain record (:meth:`Microaggregate.to_record
    <microagg.steps.Microaggregate.to_record>`), checked by building it."""
    from microagg.steps import Plan

    record: dict[str, Any] = {"step": name, "quasi_identifiers": columns, "k": k}
    if method is not None:
        record["method"] = method
    if method_params:
        record["method_params"] = dict(method_params)
    return Plan.from_records([record]).to_records()[0]


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
        text = (",".join(value) if isinstance(value, (list, tuple))
                else json.dumps(dict(value)) if isinstance(value, Mapping) else str(value))
        words.append(f"{key.replace('_', '-')}={shlex.quote(text)}")
    return " ".join(words)
