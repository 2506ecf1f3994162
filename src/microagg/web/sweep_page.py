"""The Sweep page: a grid of methods x k (x l, t) run on the session's table and schema with
:func:`microagg.sweep.sweep`, drawn as the risk-utility map (inline SVG, no script) whose
points open the Protect page pre-filled with their k and method.

Routes (stable): ``GET /sweep`` (the form, and the map of the last sweep of the session);
``POST /sweep`` with fields ``csrf_token``, ``k`` (whole numbers >= 2 separated by spaces or
commas), ``method-NAME`` (one checkbox per method, value ``on``), ``l`` and ``t`` (optional
values separated by spaces: each adds a privacy model to the grid), ``random_state`` (the
seed of every run; blank: 0). The grid runs as a job in a worker process, with its
progress (runs done) and Cancel (:mod:`microagg.web.job_pages`).
"""

from __future__ import annotations

import math
import pathlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pandas as pd
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from . import job_pages, protect
from .eta import GridClock
from .jobs import Job, RunnerBusy
from .map_labels import Box, place_labels
from .pages import _ensure_schema, render
from .protect import PROTECT_ERRORS
from .security import check_csrf, session_of
from .sessions import plain_dtypes
from .uploads import read_form

__all__ = ["MAX_RUNS", "SweepResult", "get_sweep", "parse_sweep_form", "post_sweep",
           "run_sweep", "sweep_job", "sweep_map"]

MAX_RUNS = 60
"""Largest grid (methods x values of k x models) one sweep may run."""
_SPLIT = re.compile(r"[\s,;]+")
_WIDTH, _HEIGHT = 640, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 72, 16, 16, 56
_SERIES = 8
"""Colours of the map (``series-0`` ... in workbench.css), reused beyond."""


@dataclass
class SweepResult:
    """The last sweep of a session: its table (one row per run) and the choices."""

    table: pd.DataFrame
    options: dict[str, Any]
    seconds: float
    schema: dict[str, dict[str, Any]]
    original: Any = field(default=None, repr=False, compare=False)
    """The table it was run on (a new table hides it)."""
    made_at: str = field(default_factory=lambda: time.strftime("%H:%M:%S"))


def sweep_methods(schema: Mapping[str, Mapping[str, Any]] | None = None,
                  dtypes: Mapping[str, Any] | None = None
                  ) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The methods a sweep may run on these roles and types, and the registry's others
    with why not (:func:`~microagg.web.protect.method_offer`; ``insensitive`` needs an
    epsilon, which the sweep form does not ask for). Without a schema: every method."""
    refused: dict[str, str] = {}
    if schema is None:
        offered = protect.methods()
    else:
        offered, refused = protect.method_offer(schema, dtypes or {})
    refused.pop(protect.INSENSITIVE, None)
    return [m for m in offered if m["name"] != protect.INSENSITIVE], refused


def _values(form: Mapping[str, str], name: str) -> list[str]:
    return [v for v in _SPLIT.split(form.get(name, "").strip()) if v]


def _ks(form: Mapping[str, str]) -> list[int]:
    texts = _values(form, "k")
    if not texts:
        raise ValueError("k is required: one or more whole numbers >= 2 separated by spaces, "
                         "e.g. 3 5 10.")
    ks: list[int] = []
    for text in texts:
        if not (text.isascii() and text.isdigit()) or int(text) < 2:
            raise ValueError(f"k must be whole numbers >= 2 separated by spaces; got {text!r} "
                             f"in {form.get('k', '')!r}.")
        if int(text) not in ks:
            ks.append(int(text))
    return ks


def _models(form: Mapping[str, str]) -> list[tuple[str, dict[str, float]]]:
    """``k`` alone, then one model per value of l (>= 1) and of t (in [0, 1])."""
    models: list[tuple[str, dict[str, float]]] = [("k", {})]
    for name, low, high, allowed in (("l", 1.0, math.inf, ">= 1"), ("t", 0.0, 1.0, "in [0, 1]")):
        for text in _values(form, name):
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not low <= value <= high:
                raise ValueError(f"{name} must be numbers {allowed} separated by spaces (blank: "
                                 f"none); got {text!r}.")
            label = f"{name}={value:g}"
            if label not in (m[0] for m in models):
                models.append((label, {name: value}))
    return models


def parse_sweep_form(form: Mapping[str, str], refused: Mapping[str, str] | None = None
                     ) -> dict[str, Any]:
    """The Sweep form as the grid: ``ks``, ``methods``, ``models`` and ``random_state``.

    Parameters
    ----------
    form : mapping of str -> str
        The posted fields (see the module docstring).
    refused : mapping of str -> str, default=None
        The methods that do not apply to the session's roles and types, with why
        (:func:`sweep_methods`): one posted is refused with its reason.

    Returns
    -------
    dict
        ``{"ks": [int], "methods": [str], "models": [(label, params)], "random_state": int}``.

    Raises
    ------
    ValueError
        Naming the field, the value and the allowed range: k not whole numbers >= 2, no
        method, l or t out of range, a grid of more than :data:`MAX_RUNS` runs.
    """
    problems: list[str] = []
    try:
        ks = _ks(form)
    except ValueError as error:
        problems.append(str(error))
    try:
        models = _models(form)
    except ValueError as error:
        problems.append(str(error))
    refused = dict(refused or {})
    known = [m["name"] for m in sweep_methods()[0] if m["name"] not in refused]
    methods = [name for name in known if form.get(f"method-{name}")]
    problems += [f"method {name!r} does not apply to these roles and types: {why}."
                 for name, why in refused.items() if form.get(f"method-{name}")]
    if not methods and not any(form.get(f"method-{name}") for name in refused):
        problems.append(f"Choose at least one method (allowed: {', '.join(known)}).")
    seed_text = form.get("random_state", "").strip() or "0"
    if not (seed_text.isascii() and seed_text.isdigit()) or int(seed_text) >= 2**32:
        problems.append(f"random_state must be a whole number in [0, 2**32 - 1]; got "
                        f"{seed_text!r}.")
    if problems:
        raise protect.FormErrors(problems)
    runs = len(methods) * len(ks) * len(models)
    if runs > MAX_RUNS:
        raise ValueError(f"The grid has {runs} runs ({len(methods)} method(s) x {len(ks)} "
                         f"value(s) of k x {len(models)} model(s)); at most {MAX_RUNS} are "
                         "allowed: choose fewer methods, values of k, l or t.")
    return {"ks": ks, "methods": methods, "models": models, "random_state": int(seed_text)}


def run_sweep(df: pd.DataFrame, schema: Mapping[str, Mapping[str, Any]],
              folder: pathlib.Path, options: Mapping[str, Any],
              on_step: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """The sweep of ``df`` under the session's ``schema`` over the grid ``options``.

    Every run takes the schema whole (roles, types, hierarchies, weights, dates, rounding),
    as ``microagg sweep --schema`` does. Pure: no session, no request; safe in a worker
    thread or a background job.

    Parameters
    ----------
    df : pandas.DataFrame
        The original table.
    schema : mapping of column -> entry
        The session's schema (as the Roles page keeps it).
    folder : pathlib.Path
        The session's folder (where the schema's hierarchy files are, and where its TOML is
        written for a moment).
    options : mapping
        The grid of :func:`parse_sweep_form`.
    on_step : callable, default=None
        :func:`microagg.sweep.sweep`'s progress callback, ``on_step(done, total, label)``.

    Returns
    -------
    pandas.DataFrame
        One row per run (see :func:`microagg.sweep.sweep`); refused runs have ``error``.

    Raises
    ------
    SchemaError
        If the schema is not valid (each refused run is a row, not an exception).
    """
    from microagg.sweep import sweep

    built = protect.build_schema(schema, folder)
    return sweep(df, quasi_identifiers=built.quasi_identifiers, sensitive=built.sensitive,
                 identifiers=built.identifiers, ks=list(options["ks"]),
                 methods=list(options["methods"]), models=list(options["models"]),
                 options={"schema": built}, random_state=int(options["random_state"]),
                 on_step=on_step)


# ----------------------------------------------------------------------------- the map

def _nice_step(span: float) -> float:
    """A tick step of 1, 2, 2.5 or 5 times a power of ten, about a fifth of ``span``."""
    raw = max(span, 1e-9) / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _axis(values: Sequence[float]) -> tuple[float, list[float]]:
    """The axis' upper end (its lower end is 0 %) and its ticks."""
    top = max([0.0, *values])
    step = _nice_step(top if top > 0 else 1.0)
    end = step * max(1, math.ceil(top / step - 1e-9))
    if end <= top:
        end += step
    return end, [step * i for i in range(round(end / step) + 1)]


def _tick(value: float) -> str:
    return f"{value:.6g}"


def protect_link(method: str, k: int, model: Mapping[str, float]) -> str:
    """The Protect page pre-filled with this run's choices."""
    query = {"k": str(int(k)), "method": method, **{n: f"{v:g}" for n, v in model.items()}}
    return "/protect?" + urlencode(query)


def _done(table: pd.DataFrame) -> pd.Series:
    errors = table["error"].astype(object).where(table["error"].notna(), "").astype(str)
    return errors == ""


def _rows(result: SweepResult, risk: str) -> list[dict[str, Any]]:
    """Every run as text (the table below the map, and the points)."""
    models = {label: dict(params) for label, params in result.options["models"]}
    rows = []
    for ok, (_, row) in zip(_done(result.table), result.table.iterrows(), strict=True):
        model = str(row.get("model", "k"))
        rows.append({
            "ok": bool(ok), "method": str(row["method"]), "k": int(row["k"]), "model": model,
            "loss": float(row["information_loss"]) if ok else math.nan,
            "risk": float(row[risk]) if ok else math.nan,
            "loss_text": f"{row['information_loss']:.3f}" if ok else "",
            "risk_text": f"{row[risk]:.4g}" if ok else "",
            "achieved": str(int(row["achieved_k"])) if ok else "",
            "seconds": f"{row['seconds']:.2f}", "error": "" if ok else plain_dtypes(str(row["error"])),
            "pareto": bool(ok and str(row["pareto"]).lower() in ("true", "1")),
            "href": protect_link(str(row["method"]), int(row["k"]), models.get(model, {})),
        })
    return rows


def _measures(table: pd.DataFrame) -> str:
    found = sorted({str(m) for m in table.get("loss_measure", ()) if str(m) not in ("", "nan")})
    return " / ".join(found) or "SSE/SST"


def sweep_map(result: SweepResult) -> dict[str, Any]:
    """The risk-utility map's geometry for the template: the runs (``rows``), and, when a run
    succeeded, the plotted ``points``, the ``front``, the ``ticks`` and the axis labels.

    Parameters
    ----------
    result : SweepResult
        The sweep to draw.

    Returns
    -------
    dict
        Keys ``rows``, ``width``, ``height``, ``plot`` (left, top, right, bottom), ``points``,
        ``front`` (SVG polyline points), ``xticks`` and ``yticks`` (position, label),
        ``xlabel``, ``ylabel``, ``legend`` (label, series), ``risk_name`` and
        ``quasi_identifiers``.
    """
    from microagg.sweep import RISK_LABELS, risk_column

    risk = risk_column(result.table)
    rows = _rows(result, risk)
    done = [r for r in rows if r["ok"]]
    right, bottom = _WIDTH - _RIGHT, _HEIGHT - _BOTTOM
    x_end, x_ticks = _axis([r["loss"] for r in done])
    y_end, y_ticks = _axis([r["risk"] for r in done])

    def x(value: float) -> float:
        return round(_LEFT + (right - _LEFT) * value / x_end, 1)

    def y(value: float) -> float:
        return round(bottom - (bottom - _TOP) * value / y_end, 1)

    series: dict[tuple[str, str], int] = {}
    points = []
    for r in done:
        key = (r["method"], r["model"])
        number = series.setdefault(key, len(series))
        points.append({**r, "x": x(r["loss"]), "y": y(r["risk"]), "series": number % _SERIES,
                       "title": f"{r['method']}, k={r['k']}"
                                + ("" if r["model"] == "k" else f", {r['model']}")
                                + f": loss {r['loss_text']} %, risk {r['risk_text']} %"
                                + (" (on the Pareto front)" if r["pareto"] else "")})
    labels = place_labels([(p["x"], p["y"], 7.0 if p["pareto"] else 5.0) for p in points],
                          [f"k={p['k']}" for p in points],
                          Box(_LEFT + 2, _TOP - 12, _WIDTH - 2, bottom - 2))
    for point, label in zip(points, labels, strict=True):
        point["label"] = label
    front = sorted((p for p in points if p["pareto"]), key=lambda p: (p["loss"], -p["risk"]))
    return {
        "rows": rows, "width": _WIDTH, "height": _HEIGHT,
        "plot": {"left": _LEFT, "top": _TOP, "right": right, "bottom": bottom},
        "points": points, "front": " ".join(f"{p['x']},{p['y']}" for p in front),
        "xticks": [(x(v), _tick(v)) for v in x_ticks],
        "yticks": [(y(v), _tick(v)) for v in y_ticks],
        "xlabel": f"information loss, {_measures(result.table)} (%)",
        "ylabel": RISK_LABELS[risk][1], "risk_name": RISK_LABELS[risk][0],
        "quasi_identifiers": [name for name, entry in result.schema.items()
                              if entry.get("role") == "quasi-identifier"],
        "legend": [(m + ("" if model == "k" else f", {model}"), n % _SERIES)
                   for (m, model), n in series.items()],
    }


# ----------------------------------------------------------------------------- handlers

def _dtypes(table: pd.DataFrame | None) -> dict[str, Any]:
    return {} if table is None else {str(c): t for c, t in table.dtypes.items()}


def _last_values(result: SweepResult) -> dict[str, Any]:
    """The form's fields as the last sweep had them."""
    models = [params for _, params in result.options["models"]]
    return {"k": " ".join(map(str, result.options["ks"])),
            "l": " ".join(f"{m['l']:g}" for m in models if "l" in m),
            "t": " ".join(f"{m['t']:g}" for m in models if "t" in m),
            "random_state": str(result.options["random_state"]),
            "methods": list(result.options["methods"])}


def sweep_page(request: Request, *, errors: list[str] | None = None, status: int = 200,
               values: dict[str, Any] | None = None, message: str | None = None,
               ) -> HTMLResponse:
    """The Sweep page: the grid's form, then the map and the runs of the last sweep."""
    session = session_of(request)
    problems = _ensure_schema(session) + list(errors or [])
    dtypes = _dtypes(session.table)
    recommended = protect.recommended_method(session.schema, dtypes)
    offered, refused = sweep_methods(session.schema, dtypes)
    result = session.sweep if isinstance(session.sweep, SweepResult) \
        and session.sweep.original is session.table else None
    shown = {"k": "3 5 10", "l": "", "t": "", "random_state": "0", "methods": [recommended],
             **(_last_values(result) if result is not None else {}), **(values or {})}
    drawn = sweep_map(result) if result is not None else None
    return render(request, "sweep.html", status=status, title="Sweep", page_name="sweep",
                  errors=problems, message=message,
                  ready=session.table is not None and bool(session.schema),
                  methods=offered, methods_refused=refused, recommended=recommended,
                  values=shown,
                  result=result, drawn=drawn, max_runs=MAX_RUNS,
                  schema_changed=result is not None and result.schema != session.schema)


async def get_sweep(request: Request) -> Response:
    """The Sweep page with the recommended method and k = 3 5 10."""
    return sweep_page(request)


def sweep_job(df: pd.DataFrame, schema: Mapping[str, Mapping[str, Any]],
              folder: pathlib.Path, options: Mapping[str, Any], *,
              progress: Callable[..., None] | None = None) -> pd.DataFrame:
    """:func:`run_sweep` as a job of a worker process (:mod:`microagg.web.jobs`):
    ``progress(runs done, runs, "runs done", seconds left)`` before each run and at the end;
    the seconds left priced from the runs of each method measured so far
    (:class:`~microagg.web.eta.GridClock`; the grid runs method by method)."""
    per_method = len(options["ks"]) * len(options["models"])
    clock = GridClock([m for m in options["methods"] for _ in range(per_method)])

    def step(done: int, total: int, label: str) -> None:
        left = clock.starting(done) if total == len(clock.kinds) else math.nan
        if progress is not None:
            progress(done, total, "runs done", left)

    table = run_sweep(df, schema, folder, options, on_step=step)
    if progress is not None:
        progress(len(table), len(table), "runs done", 0.0)
    return table


async def post_sweep(request: Request) -> Response:
    """Start the grid in a worker process (:mod:`microagg.web.jobs`) and keep its table in
    the session when it ends; the form's problem (400) if the grid is not valid."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    if session.table is None or _ensure_schema(session):
        return RedirectResponse("/sweep", status_code=303)
    running = job_pages.running_job(request, "sweep")
    if running is not None:
        return RedirectResponse(f"/jobs/{running.id}", status_code=303)
    offered, refused = sweep_methods(session.schema, _dtypes(session.table))
    values = {"k": form.get("k", ""), "l": form.get("l", ""), "t": form.get("t", ""),
              "random_state": form.get("random_state", ""),
              "methods": [m["name"] for m in offered if form.get(f"method-{m['name']}")]}
    try:
        options = parse_sweep_form(form, refused)
    except PROTECT_ERRORS as error:
        return sweep_page(request, errors=getattr(error, "problems", [str(error)]),
                          status=400, values=values)
    table, schema = session.table, {name: dict(e) for name, e in session.schema.items()}

    def keep(job: Job) -> None:
        if session.table is table:  # not if another table was opened meanwhile
            session.sweep = SweepResult(job.result, options, job.seconds, schema,
                                        original=table)

    runs = len(options["ks"]) * len(options["methods"]) * len(options["models"])
    try:
        job = job_pages.start_job(
            request, sweep_job, (table, schema, session.folder, options), kind="sweep",
            label=f"sweep of {runs} run{'s' if runs != 1 else ''}",
            then=job_pages.Then("/sweep", sweep_page, values), on_done=keep)
    except RunnerBusy as error:
        return sweep_page(request, errors=[str(error)], status=503, values=values)
    return await job_pages.job_response(request, job)
