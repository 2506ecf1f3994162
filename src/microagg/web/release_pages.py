"""Route handlers of the Protect, Result and Export pages (the workbench's steps 4 to 6; the
Risk page, step 3, is :mod:`microagg.web.risk_page`).

Routes (stable, also used by the browser tests): ``GET /protect``,
``POST /protect`` (the form of :mod:`microagg.web.protect`); ``GET /result``,
``POST /result/current`` (field ``attempt``: make that attempt current, "go back"),
``GET /result/report.html`` (the report, with its own CSP so that it may be framed by the
Result page); ``GET /export`` and its downloads ``/export/published.csv``,
``/export/published.parquet``, ``/export/published.xlsx`` (text cells never formulas),
``/export/published.sav`` and ``/export/published.dta`` (with the upload's labels, date
formats and missing codes), ``/export/published.sqlite`` (table ``published``),
``/export/report.html``, ``/export/summary.json``,
``POST /export/download`` (fields ``name``, ``confirm=yes``: a published table of a release
the verdict does not call protected; its ``GET`` answers the Export page, 409),
``/export/schema.toml``, ``/export/plan.toml`` (a plan's attempt: the schema with its
``[[steps]]``), ``/export/reproduce.txt``. The original table is never offered.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from . import job_pages, plan_form, plan_pages, protect, release_options, roles
from .hierarchies import plan_hierarchy_problems, stored_files
from .jobs import Job, JobRunner, RunnerBusy
from .pages import _ensure_schema, render, session_relative
from .protect import PROTECT_ERRORS, Attempt
from .security import check_csrf, session_of
from .sessions import SessionState
from .uploads import read_form

__all__ = ["REPORT_CSP", "export_file", "export_page", "get_export", "get_protect", "get_report",
           "get_result", "post_current", "post_download",
           "post_protect"]

REPORT_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
              "frame-ancestors 'self'; form-action 'none'; base-uri 'none'")
"""The report's own policy: nothing loaded from anywhere, no script; framed only by the
workbench itself (the pages keep ``frame-ancestors 'none'``)."""


def _see(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


def _current(session: SessionState) -> Attempt | None:
    if session.current is None:
        return None
    attempt: Attempt = session.attempts[session.current]
    return attempt


# --------------------------------------------------------------------------- protect page

def protect_page(request: Request, *, errors: list[str] | None = None, status: int = 200,
                 values: dict[str, str] | None = None, message: str | None = None,
                 ) -> HTMLResponse:
    """The Protect page: privacy model and method, with the recommended default, and the
    plan of steps (:mod:`.plan_form`) built step by step."""
    session = session_of(request)
    problems = _ensure_schema(session) + list(errors or [])
    dtypes = _dtypes(session)
    recommended = protect.recommended_method(session.schema, dtypes)
    shown = {"k": "5", "method": recommended, "l": "", "t": "", "epsilon": "", "bounds": "",
             "params": "", "random_state": "", "add_step": "", "missing": "",
             "aggregation": "", **(values or {})}
    kinds = plan_form.step_kinds()
    refused = {} if session.table is None else plan_form.not_offered(
        session.schema, dtypes, plan_form.posted_steps(shown)[0])
    offered, methods_refused = protect.method_offer(session.schema, dtypes)
    return render(request, "protect.html", status=status, title="Protect",
                  page_name="protect", errors=problems, message=message,
                  ready=session.table is not None and bool(session.schema),
                  methods=offered, methods_refused=methods_refused,
                  recommended=recommended, values=shown,
                  kinds=[kind for kind in kinds if kind["name"] not in refused],
                  refused=refused, plan=plan_pages.shown_plan(shown, kinds),
                  built_hierarchies=sorted(stored_files(session.folder)),
                  **_settings_context(session.schema, dtypes, offered, shown))


def _dtypes(session: SessionState) -> dict[str, Any]:
    """The session's table's dtypes by column name (none without a table)."""
    return {} if session.table is None else {
        str(c): t for c, t in session.table.dtypes.items()}


def _generalizing(offered: list[dict[str, str]]) -> bool:
    """Whether an offered method publishes ranges (the registry's ``generalizes``)."""
    from microagg.partition import PARTITIONERS

    return any(m["name"] in PARTITIONERS and PARTITIONERS[m["name"]].generalizes
               for m in offered)


def _settings_context(schema: Mapping[str, Mapping[str, Any]], dtypes: Mapping[str, Any],
                      offered: list[dict[str, str]], shown: Mapping[str, str]
                      ) -> dict[str, Any]:
    """The release settings the one-step form offers (:mod:`.release_options`): the
    missing-value strategies, the aggregations that apply, the quasi-identifiers an
    intruder may know (none offered when one is a category: the release generalizes)."""
    from microagg.partition._offer import categorical_keys

    categorical = categorical_keys(schema, dtypes)
    keys = [str(c) for c, e in schema.items() if e.get("role") == "quasi-identifier"]
    knows = {v for k, v in shown.items() if k.startswith(release_options.KNOWS_FIELD)}
    return {"missing_strategies": release_options.missing_strategies(),
            "aggregations": release_options.aggregations(categorical, _generalizing(offered)),
            "knowable": [] if categorical else [
                {"field": f"{release_options.KNOWS_FIELD}{i}", "name": c,
                 "checked": c in knows} for i, c in enumerate(keys)],
            "categorical_keys": categorical}


def prefilled(query: Mapping[str, str]) -> dict[str, str]:
    """The Protect form's fields given in the address (a point picked on the Sweep page):
    ``k`` (a whole number >= 2), ``method`` (a known one), ``l`` (>= 1) and ``t`` (in
    [0, 1]); each one that is not valid is ignored."""
    values: dict[str, str] = {}
    k = query.get("k", "")
    if k.isascii() and k.isdigit() and 2 <= int(k) <= 10**9:
        values["k"] = str(int(k))
    method = query.get("method", "")
    if method in {m["name"] for m in protect.methods()}:
        values["method"] = method
    for name, low, high in (("l", 1.0, 1e9), ("t", 0.0, 1.0)):
        try:
            number = float(query.get(name, ""))
        except ValueError:
            continue
        if low <= number <= high:
            values[name] = f"{number:g}"
    return values


async def get_protect(request: Request) -> Response:
    """The Protect page with the recommended defaults, or the choices given in the address
    (``?k=5&method=mdav``, from the Sweep page; ``?attempt=N``: the plan and seed of the
    session's attempt N, ``&add_back=1`` with the step it undid added again)."""
    values = prefilled(request.query_params)
    try:
        values.update(plan_pages.attempt_values(session_of(request), request.query_params))
    except ValueError as error:
        return protect_page(request, errors=[str(error)], status=400, values=values)
    return protect_page(request, values=values)


def _one_step_problems(options: Mapping[str, Any], schema: Mapping[str, Mapping[str, Any]],
                       dtypes: Mapping[str, Any]) -> list[str]:
    """A posted method, aggregation, strategy or intruder's knowledge the one-step form did
    not offer for these roles and types, with why (:func:`protect.method_offer`)."""
    from microagg.partition._offer import categorical_keys

    offered, refused = protect.method_offer(schema, dtypes)
    problem = protect.method_problem(options.get("method"), refused)
    keys = [str(c) for c, e in schema.items() if e.get("role") == "quasi-identifier"]
    return ([problem] if problem else []) + release_options.settings_problems(
        options, keys=keys, categorical=categorical_keys(schema, dtypes),
        generalizing=_generalizing(offered))


def _options(form: Mapping[str, str], schema: Mapping[str, Mapping[str, Any]],
             columns: list[Any], n_rows: int, folder: Any,
             dtypes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The release's keywords from the one-step fields and the plan; a
    :class:`~microagg.web.protect.FormErrors` with every problem of both at once (and of
    the hierarchy files the plan names, which must be this session's, in ``folder``)."""
    problems: list[str] = []
    try:
        one_step = protect.parse_form(form)
    except protect.FormErrors as error:
        problems, one_step = list(error.problems), {}
    if not plan_form.posted_steps(form)[0]:  # the one-step form: what it offered, only
        problems += _one_step_problems(one_step, schema, dtypes or {})
    try:
        options = plan_form.plan_options(form, one_step, schema, columns, n_rows)
        problems += plan_hierarchy_problems(options.get("plan") or [], folder)
    except PROTECT_ERRORS as error:
        problems += getattr(error, "problems", [str(error)])
    if problems:
        raise protect.FormErrors(problems)
    return options


async def post_protect(request: Request) -> Response:
    """Start the release in a worker process (:mod:`microagg.web.jobs`); a short one goes
    straight to the Result page, a long one shows its progress; the Request's message in
    the form if it fails."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    if session.table is None or _ensure_schema(session):
        return _see("/protect")
    running = job_pages.running_job(request, "protect")
    if running is not None:
        return _see(f"/jobs/{running.id}")
    values = {name: form.get(name, "") for name in ("k", "method", "l", "t", "epsilon",
                                                    "bounds", "params", "random_state",
                                                    "missing", "aggregation")}
    values.update({k: v for k, v in form.items() if k.startswith(release_options.KNOWS_FIELD)})
    values.update(plan_form.plan_fields(form))
    try:
        edit = plan_form.edited(form)
        if edit is not None:  # add, remove or move a step: the form again, nothing run
            kept = {k: v for k, v in values.items() if k not in plan_form.plan_fields(values)}
            return protect_page(request, values={**kept, **edit})
        options = _options(form, session.schema, list(session.table.columns),
                           len(session.table), session.folder, _dtypes(session))
    except PROTECT_ERRORS as error:
        return protect_page(request, errors=getattr(error, "problems", [str(error)]),
                            status=400, values=values)
    table, schema = session.table, {name: dict(e) for name, e in session.schema.items()}
    as_read, metadata = session.as_read, session.metadata

    def keep(job: Job) -> None:
        if session.table is table:  # not if another table was opened meanwhile
            number = session.attempts[-1].number + 1 if session.attempts else 1
            session.add_attempt(protect.make_attempt(number, options, job.result,
                                                     job.seconds, schema, as_read,
                                                     metadata))

    method = options.get("method") or protect.recommended_method(schema)
    label = (f"a plan of {len(options['plan'])} steps" if options.get("plan")
             else f"{method}, k = {options['k']}")
    try:
        job = job_pages.start_job(
            request, protect.release_for, (table, schema, session.folder, options),
            kind="protect", label=label,
            then=job_pages.Then("/result", protect_page, values), on_done=keep)
    except RunnerBusy as error:
        return protect_page(request, errors=[str(error)], status=503, values=values)
    return await job_pages.job_response(request, job)


# ---------------------------------------------------------------------------- result page

async def get_result(request: Request) -> Response:
    """The Result page: the checks and warnings, the embedded report, the attempts."""
    session = session_of(request)
    attempt = _current(session)
    checks = []
    if attempt is not None:
        for name, found in attempt.release.checks.items():
            # a check of each step of a plan is a sequence: one row per step
            each = [found] if isinstance(found, Mapping) else list(found)
            for position, check in enumerate(each, start=1):
                detail = {k: v for k, v in check.items()
                          if k != "model" and not isinstance(v, Mapping)}
                checks.append({"name": name if len(each) == 1 and isinstance(found, Mapping)
                               else f"{name} {position}", "model": check.get("model", ""),
                               "detail": ", ".join(f"{k} {v}" for k, v in detail.items())})
    return render(request, "result.html", title="Result", page_name="result", errors=[],
                  message=None, attempt=attempt, checks=checks, attempts=session.attempts,
                  plan=plan_pages.plan_rows(attempt), beside=_beside(session, attempt),
                  current=session.current, schema_changed=attempt is not None
                  and attempt.schema != plan_pages.roles_of(attempt, session.schema))


def _beside(session: SessionState, attempt: Attempt | None) -> dict[str, Any] | None:
    """A sample of the attempt's published rows beside the original ones
    (:func:`microagg.web.beside.beside`), or ``None`` without an attempt."""
    from .beside import beside

    if attempt is None or session.table is None:
        return None
    return beside(session.table, attempt.release.data,
                  shuffled=attempt.release.params.get("epsilon") is not None)


async def post_current(request: Request) -> Response:
    """Make an earlier attempt current (field ``attempt``: its number)."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    text = form.get("attempt", "")
    numbers = [attempt.number for attempt in session.attempts]
    if not text.isascii() or not text.isdigit() or int(text) not in numbers:
        return HTMLResponse(html.escape(f"No attempt {text!r} in this session."),
                            status_code=400)
    session.current = numbers.index(int(text))
    return _see("/result")


async def get_report(request: Request) -> Response:
    """The current attempt's HTML report, framed by the Result page."""
    session = session_of(request)
    attempt = _current(session)
    if attempt is None or session.table is None:
        return _see("/result")
    html = await run_in_threadpool(attempt.report, session.table, job_pages.runner_of(request))
    html = session_relative(html, session.folder, request.app.state.store.root)
    return HTMLResponse(html, headers={"content-security-policy": REPORT_CSP,
                                       "x-frame-options": "SAMEORIGIN"})


# ---------------------------------------------------------------------------- export page

def export_page(request: Request, *, errors: list[str] | None = None, status: int = 200
                ) -> HTMLResponse:
    """The Export page of the current attempt: its verdict first, then the downloads (a
    published table of a release the verdict does not call protected only through the
    confirmation form) and its reproduction."""
    session = session_of(request)
    attempt = _current(session)
    script = protect.reproduction(attempt, _input_name(session)) if attempt else None
    return render(request, "export.html", status=status, title="Export", page_name="export",
                  errors=list(errors or []), message=None, attempt=attempt, script=script,
                  tables=table_downloads(session.source))


async def get_export(request: Request) -> Response:
    """The Export page: the downloads of the current attempt and its reproduction."""
    return export_page(request)


TABLE_DOWNLOADS = (
    ("csv", "CSV"), ("parquet", "Parquet"), ("xlsx", "Excel .xlsx"),
    ("sav", "SPSS .sav, with the upload's labels"),
    ("dta", "Stata .dta, with the upload's labels"),
    ("sqlite", "SQLite database, table <code>published</code>"),
)
"""The published table's formats (extension, what the Export page calls it)."""


def table_downloads(source: str | None) -> list[tuple[str, str]]:
    """:data:`TABLE_DOWNLOADS`, the format of the uploaded file ``source`` first (its
    extension; a ``.tsv`` or ``.csv.gz`` upload: CSV)."""
    name = (source or "").lower()
    own = next((ext for ext, _ in TABLE_DOWNLOADS if name.endswith(f".{ext}")), None)
    if own is None and name.endswith((".tsv", ".txt", ".csv.gz", ".tsv.gz")):
        own = "csv"
    return sorted(TABLE_DOWNLOADS, key=lambda entry: entry[0] != own)


def _input_name(session: SessionState) -> str:
    source = session.source or ""
    return source if source.lower().endswith((".csv", ".tsv", ".parquet", ".xlsx", ".sav",
                                              ".dta")) \
        and "/" not in source and " " not in source else "INPUT.csv"


_DOWNLOADS = {
    "published.csv": "text/csv; charset=utf-8",
    "published.parquet": "application/vnd.apache.parquet",
    "published.xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "published.sqlite": "application/vnd.sqlite3",
    "published.sav": "application/x-spss-sav",
    "published.dta": "application/x-stata-dta",
    "report.html": "text/html; charset=utf-8",
    "summary.json": "application/json",
    "schema.toml": "application/toml; charset=utf-8",
    "plan.toml": "application/toml; charset=utf-8",
    "reproduce.txt": "text/plain; charset=utf-8",
}


def _content(session: SessionState, attempt: Attempt, name: str, runner: JobRunner
             ) -> bytes:
    if name.startswith("published."):
        return protect.published_bytes(attempt, "." + name.split(".", 1)[1])
    if name == "report.html":
        assert session.table is not None
        return attempt.report(session.table, runner).encode("utf-8")
    if name == "summary.json":
        return (attempt.release.to_json() + "\n").encode("utf-8")
    if name == "schema.toml":
        return roles.to_toml(attempt.schema).encode("utf-8")
    if name == "plan.toml":
        return protect.plan_toml(attempt).encode("utf-8")
    script = protect.reproduction(attempt, _input_name(session))
    also = (f"\n# the same release from plan.toml (the schema with the plan's [[steps]]):\n"
            f"{script['plan_command']}\n" if "plan_command" in script else "")
    return (f"# Internal: contains the seed; do not publish.\n{script['command']}\n{also}\n"
            f"{script['python']}").encode()


async def export_file(request: Request) -> Response:
    """One download of the current attempt (``name`` in the path; never the original)."""
    session = session_of(request)
    name = request.path_params["name"]
    attempt = _current(session)
    if name not in _DOWNLOADS:
        return HTMLResponse("Not a download of the workbench.", status_code=404)
    if attempt is None or (name == "plan.toml" and not attempt.options.get("plan")):
        return _see("/export")
    if name.startswith("published.") and not attempt.release.verdict.protected:
        return export_page(request, status=409, errors=[_UNSAFE])
    return await _download(request, session, attempt, name)


_UNSAFE = ("The verdict does not call this release protected: tick the confirmation box "
           "below the verdict to download its published table anyway.")


async def post_download(request: Request) -> Response:
    """A published table downloaded through the confirmation form (fields ``csrf_token``,
    ``name``: a ``published.*`` download, ``confirm``: ``yes``, the box ticked); needed
    when the verdict is not "protected", accepted in any case."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    attempt = _current(session)
    name = form.get("name", "")
    tables = [n for n in _DOWNLOADS if n.startswith("published.")]
    if name not in tables:
        return HTMLResponse(html.escape(f"name: {name!r} is not a published table of the "
                                        f"workbench; they are {', '.join(tables)}."),
                            status_code=400)
    if attempt is None:
        return _see("/export")
    if not attempt.release.verdict.protected and form.get("confirm") != "yes":
        return export_page(request, status=400, errors=[_UNSAFE])
    return await _download(request, session, attempt, name)


async def _download(request: Request, session: SessionState, attempt: Attempt, name: str
                    ) -> Response:
    """The download ``name`` of ``attempt`` as an attachment."""
    try:
        content = await run_in_threadpool(_content, session, attempt, name,
                                          job_pages.runner_of(request))
    except ValueError as error:  # a table the format cannot hold: list columns in CSV
        return export_page(request, errors=[str(error)], status=400)
    if name in ("report.html", "summary.json"):  # no path of the server's work folder
        content = session_relative(content.decode("utf-8"), session.folder,
                                   request.app.state.store.root).encode("utf-8")
    headers = {"content-disposition": f'attachment; filename="{name}"'}
    if name == "report.html":
        headers["content-security-policy"] = REPORT_CSP
    return Response(content, media_type=_DOWNLOADS[name], headers=headers)

