"""The plan on the Protect and Result pages: the steps shown in the form, each step of a
release with what it changed and its risk and utility before and after it, and **Undo the
last step** (sdcMicro's ``undolast``, Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).

Routes (stable, also used by the tests): ``POST /result/undo`` (field ``csrf_token``): the
current attempt's plan run again without its last step, under the same seed, in a worker
process, kept as a new attempt that records the step it undid; ``GET /protect?attempt=N``
(``&add_back=1``) fills the Protect form with attempt N's plan (and the step it undid).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from . import job_pages, plan_form, protect
from .jobs import Job, RunnerBusy
from .security import check_csrf, session_of
from .sessions import SessionState
from .uploads import read_form

__all__ = ["attempt_values", "plan_rows", "post_undo", "roles_of", "shown_plan",
           "undo_schema"]


def shown_plan(values: Mapping[str, str], kinds: Sequence[Mapping[str, Any]]
               ) -> list[dict[str, Any]]:
    """The plan's steps of the form's ``values`` as the template shows them: number, kind
    (its summary and options, :func:`~.plan_form.step_kinds`) and each option's text; a
    step of an unknown kind is shown by name (the server refuses it on Protect)."""
    by_name = {kind["name"]: kind for kind in kinds}
    steps, _ = plan_form.posted_steps(values)
    shown = []
    for number, step in enumerate(steps, start=1):
        kind = by_name.get(step["step"], {"name": step["step"], "summary": "unknown step",
                                          "reference": "", "options": []})
        options = [{**option, "field": f"plan-{number}-{option['name']}",
                    "value": step["values"].get(option["name"], "")}
                   for option in kind["options"]]
        shown.append({"number": number, "kind": kind, "options": options})
    return shown


def attempt_values(session: SessionState, query: Mapping[str, str]) -> dict[str, str]:
    """The Protect form's fields of the attempt named by ``?attempt=N``: its plan, release
    options and seed (with ``add_back=1``, the step it undid appended); no ``attempt``:
    nothing. A ValueError names an attempt that is not in the session."""
    text = query.get("attempt")
    if text is None:
        return {}
    numbers = [a.number for a in session.attempts]
    if not (text.isascii() and text.isdigit() and int(text) in numbers):
        raise ValueError(f"attempt: no attempt {text!r} in this session.")
    attempt = session.attempts[numbers.index(int(text))]
    o = attempt.options
    values = {"random_state": str(o["random_state"])}
    for name in ("l", "t", "epsilon"):
        if o.get(name) is not None:
            values[name] = plan_form.value_text(o[name])
    values["bounds"] = " ".join(f"{c}={plan_form.value_text(lo)}:{plan_form.value_text(hi)}"
                                for c, (lo, hi) in (o.get("bounds") or {}).items())
    if not o.get("plan"):
        values.update(k=str(o["k"]), method=o.get("method") or "",
                      params=" ".join(f"{n}={v}" for n, v in
                                      (o.get("method_params") or {}).items()))
        return values
    records = list(o["plan"])
    if query.get("add_back") == "1" and attempt.undone is not None:
        records.append(dict(attempt.undone))
    return {**values, **plan_form.records_as_fields(records)}


def _figures(figures: Any) -> dict[str, str]:
    return {"k": str(figures.k_anonymity), "unique": f"{100 * figures.unique_share:.2f} %",
            "loss": f"{figures.information_loss:.2f} %"}


def _details_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_details_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(_details_text, value))
    return str(value)


def plan_rows(attempt: protect.Attempt | None) -> list[dict[str, Any]]:
    """Each step of the attempt's release (``Release.steps``) as the Result page lists it:
    name, options, cells changed, groups, details, and the figures before and after it on
    the plan's keys (k, the share of unique records, the information loss)."""
    if attempt is None:
        return []
    rows = []
    for number, record in enumerate(attempt.release.steps, start=1):
        rows.append({"number": number, "step": record.step,
                     "options": plan_form.step_text(record.options).partition(" ")[2],
                     "cells": f"{record.cells_changed:,}",
                     "groups": (f"{record.groups:,} (smallest {record.smallest_group:,})"
                                if record.groups else "-"),
                     "details": "; ".join(f"{k}: {_details_text(v)}"
                                          for k, v in record.details.items()),
                     "before": _figures(record.before), "after": _figures(record.after)})
    return rows


def undo_schema(schema: Mapping[str, Mapping[str, Any]], kept: Sequence[Mapping[str, Any]],
                undone: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``schema`` for the plan of the ``kept`` records: each column that only the
    ``undone`` step changed is published as it was, on purpose (role ``other``)."""
    from microagg.steps import Plan

    masked = {c for step in Plan.from_records(kept).steps for c in step.columns}
    freed = set(Plan.from_records([undone]).steps[0].columns) - masked
    return {name: ({**entry, "role": "other"} if name in freed else dict(entry))
            for name, entry in schema.items()}


def roles_of(attempt: protect.Attempt, schema: Mapping[str, Mapping[str, Any]]
             ) -> dict[str, dict[str, Any]]:
    """The schema ``attempt`` would use with the session's ``schema`` (an undo's columns
    published as they were: :func:`undo_schema`), to tell whether the roles changed."""
    if attempt.undone is None:
        return {name: dict(entry) for name, entry in schema.items()}
    return undo_schema(schema, attempt.options["plan"], attempt.undone)


async def post_undo(request: Request) -> Response:
    """Run the current attempt's plan without its last step (same seed) as a new attempt."""
    from .release_pages import protect_page

    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    attempt = None if session.current is None else session.attempts[session.current]
    records = list((attempt.options.get("plan") or []) if attempt else [])
    if attempt is None or session.table is None or len(records) < 2:
        return HTMLResponse("Undo needs a current attempt whose plan has two steps or more.",
                            status_code=400)
    running = job_pages.running_job(request, "protect")
    if running is not None:
        return RedirectResponse(f"/jobs/{running.id}", status_code=303)
    kept, undone = records[:-1], records[-1]
    options = {**attempt.options, "plan": kept}
    schema = undo_schema(attempt.schema, kept, undone)
    table, as_read, metadata = session.table, attempt.as_read, attempt.metadata
    values = {"random_state": str(options["random_state"]),
              **plan_form.records_as_fields(kept)}

    def keep(job: Job) -> None:
        if session.table is table:
            number = session.attempts[-1].number + 1
            session.add_attempt(protect.make_attempt(
                number, options, job.result, job.seconds, schema, as_read, metadata,
                undone=undone))

    try:
        job = job_pages.start_job(
            request, protect.release_for, (table, schema, session.folder, options),
            kind="protect", label=f"the plan without step {len(records)} ({undone['step']})",
            then=job_pages.Then("/result", protect_page, values), on_done=keep)
    except RunnerBusy as error:
        return protect_page(request, errors=[str(error)], status=503, values=values)
    return await job_pages.job_response(request, job)
