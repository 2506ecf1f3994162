"""The pages of a running job: its progress, and the Cancel button.

Routes (stable, also used by the tests): ``GET /jobs/{job_id}`` (the progress; it refreshes
itself every second, without JavaScript, and sends the browser on to the job's page when the
job ends) and ``POST /jobs/{job_id}/cancel`` (field ``csrf_token``). A job id is known only
to the session that started it: another session gets 404.

A page that starts a job calls :func:`start_job` and answers with :func:`job_response`,
which waits a moment (``Settings.progress_after``) so that a short job goes straight to its
result without a progress page.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from microagg._runtime.sizing import format_duration, remaining_seconds

from .jobs import Job, JobRunner
from .pages import render
from .security import check_csrf, session_of
from .uploads import read_form

__all__ = ["FormPage", "Then", "cancel_job", "get_job", "job_response", "progress_text",
           "start_job"]

FormPage = Callable[..., Response]
"""``form_page(request, errors=[...], status=..., values={...}, message=...)``: the page
whose form started the job, shown again when it fails or is cancelled."""


@dataclass(frozen=True)
class Then:
    """Where a job leads: ``next_url`` when it succeeds, else ``form_page`` again with the
    ``values`` that were typed."""

    next_url: str
    form_page: FormPage
    values: dict[str, Any]


def runner_of(request: Request) -> JobRunner:
    """The app's job runner."""
    runner: JobRunner = request.app.state.runner
    return runner


def start_job(request: Request, function: Callable[..., Any], args: tuple[Any, ...], *,
              kind: str, label: str, then: Then, on_done: Callable[[Job], None]) -> Job:
    """Submit ``function(*args, progress=...)`` for the request's session (see
    :meth:`JobRunner.submit`; :class:`~microagg.web.jobs.RunnerBusy` propagates)."""
    session = session_of(request)
    job = runner_of(request).submit(function, args, kind=kind, label=label, on_done=on_done,
                                    context={"then": then})
    session.jobs[job.id] = job
    return job


def running_job(request: Request, kind: str) -> Job | None:
    """The session's running job of this kind, if any."""
    return next((job for job in session_of(request).jobs.values()
                 if job.kind == kind and job.running), None)


async def job_response(request: Request, job: Job) -> Response:
    """Wait up to ``Settings.progress_after`` seconds, then :func:`follow` the job."""
    await run_in_threadpool(job.wait, request.app.state.settings.progress_after)
    return follow(request, job)


def follow(request: Request, job: Job) -> Response:
    """Where a job sends the browser: its progress while it runs, the next page when it
    succeeds, its form with the message when it fails or was cancelled."""
    if job.running:
        return RedirectResponse(f"/jobs/{job.id}", status_code=303)
    then: Then = job.context["then"]
    if job.state == "done":
        return RedirectResponse(then.next_url, status_code=303)
    form_page, values = then.form_page, then.values
    if job.state == "cancelled":
        return form_page(request, values=values, message=(
            f"Cancelled after {job.seconds:.1f} s ({job.label}): nothing was kept."))
    if job.expected_error:
        return form_page(request, errors=[job.error], status=400, values=values)
    return form_page(request, status=500, values=values, errors=[
        f"{job.label} failed with an internal error ({job.error_class}: {job.error}); the "
        f"server printed the details. Please report it."])


def progress_text(job: Job) -> dict[str, Any]:
    """What the progress page says: done of total, the share, the time so far and left."""
    elapsed = job.seconds
    figures: dict[str, Any] = {"elapsed": f"{elapsed:.0f} s", "left": None, "percent": None,
                               "note": None}
    if job.total:
        figures["percent"] = round(100 * job.done / job.total)
        left: float | None
        if job.left is not None:  # the job prices what is left from its own measured runs
            left = None if math.isnan(job.left) else job.left - (time.monotonic()
                                                                 - job.left_at)
            if left is None:
                figures["note"] = ("the time left is shown once each method of the grid "
                                   "has finished a run")
            elif left <= 0:
                left, figures["note"] = None, "longer than the runs measured so far took"
        elif job.unit == "records grouped":  # exact MDAV: each step costs the records left
            left = remaining_seconds(elapsed, job.done, job.total)
        else:
            left = elapsed * (job.total - job.done) / job.done if job.done else None
        figures["left"] = format_duration(left) if left is not None else None
    return figures


def _job_of(request: Request) -> Job | None:
    found: Job | None = session_of(request).jobs.get(request.path_params["job_id"])
    return found


_NO_JOB = "No such job in this session (it may belong to another session, or have ended)."


async def get_job(request: Request) -> Response:
    """The progress page (refreshing itself) while the job runs; then where it leads."""
    job = _job_of(request)
    if job is None:
        return HTMLResponse(_NO_JOB, status_code=404)
    if not job.running:
        return follow(request, job)
    return render(request, "job.html", title="Working", page_name=job.kind, errors=[],
                  message=None, job=job, figures=progress_text(job), refresh=True)


async def cancel_job(request: Request) -> Response:
    """Stop the job now (its worker process is killed) and show its form again."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    job = _job_of(request)
    if job is None:
        return HTMLResponse(_NO_JOB, status_code=404)
    await run_in_threadpool(runner_of(request).cancel, job)
    return follow(request, job)
