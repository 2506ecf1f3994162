"""The Hierarchies page: a generalization hierarchy built for one column of the upload
(intervals, groups, masking, ordinal ranges: :mod:`.hierarchy_form`), previewed on the data
(records per value and per group at each level), saved in the session as
``hierarchies/N.csv`` (ARX CSV) for a ``recode`` step of the plan or the column's schema
entry, and downloaded (after ARX's hierarchy wizard; Prasser & Kohlmayer 2015).

Routes (stable, also used by the tests): ``GET /hierarchies`` (``?column=C&kind=K&levels=N``:
the builder of column C), ``POST /hierarchies`` (the builder's fields, ``csrf_token`` and
``action``: ``preview`` or ``save``; ``schema=yes`` with ``save`` also names the file in a
categorical or ordinal column's schema entry), ``GET /hierarchies/download/N.csv`` (a
hierarchy saved in this session).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from microagg.hierarchy import as_labels
from microagg.hierarchy_builders import HierarchyBuildError, hierarchy_preview

from . import hierarchy_form
from .hierarchies import FOLDER, STORED, _target, stored_files
from .pages import render
from .plan_form import column_type
from .security import check_csrf, session_of
from .sessions import SessionState, plain_type
from .uploads import read_form

__all__ = ["PREVIEW_ROWS", "builder_page", "download_built", "get_builder", "post_builder"]

PREVIEW_ROWS = 200
"""Rows of the preview shown (the download has them all)."""
_SCHEMA_TYPES = ("categorical", "ordinal")


def _columns(session: SessionState) -> list[dict[str, str]]:
    """The upload's columns as the chooser lists them (name, plain type, builder)."""
    assert session.table is not None
    out = []
    for name, dtype in session.table.dtypes.items():
        kind = column_type(session.schema.get(str(name), {}), dtype)
        out.append({"name": str(name), "type": plain_type(dtype), "schema_type": kind,
                    "kind": hierarchy_form.default_kind(kind)})
    return out


def _chosen(session: SessionState, query: Mapping[str, str]) -> tuple[str | None, str,
                                                                       list[str]]:
    """The column and builder the request names, and the problems of those names."""
    assert session.table is not None
    column = query.get("column")
    if column is None:
        return None, "", []
    names = [str(c) for c in session.table.columns]
    if column not in names:
        return None, "", [f"column: no column {column[:80]!r} in this table; its columns "
                          f"are {', '.join(names[:20])}" + (" ..." if len(names) > 20 else "")
                          + "."]
    kind = query.get("kind") or hierarchy_form.default_kind(
        column_type(session.schema.get(column, {}), session.table[column].dtype))
    if kind not in hierarchy_form.KINDS:
        return column, "", [f"kind: unknown builder {kind[:40]!r}; the builders are "
                            f"{', '.join(hierarchy_form.KINDS)}."]
    return column, kind, []


def builder_page(request: Request, *, fields: Mapping[str, str] | None = None,
                 errors: list[str] | None = None, status: int = 200,
                 message: str | None = None, preview: Any = None) -> HTMLResponse:
    """The Hierarchies page: the column chooser, the builder of the column ``fields``
    name (with those fields), the preview and the hierarchies saved in the session."""
    session = session_of(request)
    context: dict[str, Any] = {"columns": [], "column": None, "kind": "", "fields": {},
                               "levels": [], "values": [], "preview": preview,
                               "preview_rows": PREVIEW_ROWS, "kinds": hierarchy_form.KINDS,
                               "saved": saved_hierarchies(session), "schema_ok": False}
    problems = list(errors or [])
    if session.table is not None:
        context["columns"] = _columns(session)
        column, kind, found = _chosen(session, fields or {})
        problems += found
        if column is not None and kind:
            series = session.table[column]
            values = hierarchy_form.column_values(series, session.schema.get(column, {}))
            shown = dict(fields or {})
            if "levels" not in shown:
                shown.update(hierarchy_form.default_fields(kind, series, values))
            n, found = hierarchy_form.levels_of(shown)
            counts = Counter(as_labels(series.dropna().to_numpy()))
            context.update(column=column, kind=kind, fields=shown, levels=list(range(1, n + 1)),
                           values=[(v, int(counts.get(v, 0))) for v in
                                   values[:hierarchy_form.MAX_VALUES]],
                           n_values=len(values), missing=int(series.isna().sum()),
                           schema_ok=session.schema.get(column, {}).get("type")
                           in _SCHEMA_TYPES)
    return render(request, "hierarchies.html", status=status, title="Hierarchies",
                  page_name="hierarchies", errors=problems, message=message, **context)


async def get_builder(request: Request) -> Response:
    """The page; ``?column=C`` (``&kind=K&levels=N``) opens that column's builder."""
    query = dict(request.query_params)
    query.pop("csrf_token", None)
    response = builder_page(request, fields=query)
    if session_of(request).table is not None and _chosen(session_of(request), query)[2]:
        response.status_code = 400
    return response


def saved_hierarchies(session: SessionState) -> list[dict[str, str]]:
    """The hierarchies built and saved in this session that are still there: path,
    column and what they are."""
    stored = stored_files(session.folder)
    return [{"path": path, "name": path.rsplit("/", 1)[1], "what": what}
            for path, what in session.built.items() if path in stored]


def _save(session: SessionState, hierarchy: Any, column: str, in_schema: bool) -> str:
    """Keep ``hierarchy`` as a new ``hierarchies/N.csv``; its message."""
    target = _target(session.folder)
    hierarchy.to_csv(target)
    path = f"{FOLDER}/{target.name}"
    session.built[path] = f"column {column}: {hierarchy.source}"
    named = ""
    entry = session.schema.get(column)
    if in_schema and entry is not None and entry.get("type") in _SCHEMA_TYPES:
        entry["hierarchy"] = path
        named = f" The schema's entry of column {column!r} now names it."
    return (f"Hierarchy of column {column!r} saved as {path} ({hierarchy.height} level(s) "
            f"above the values).{named} In the plan on the Protect page, a recode step with "
            f"column {column}, hierarchy {path} and a level from 1 to {hierarchy.height} "
            "uses it.")


async def post_builder(request: Request) -> Response:
    """Preview or save the posted builder (``action``: ``preview`` or ``save``); every
    problem of the form at once (400)."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    fields = {k: v for k, v in form.items() if k not in ("csrf_token", "action", "schema")}
    if session.table is None:
        return builder_page(request, errors=["Open a table on the Data page first."],
                            status=400)
    column, kind, problems = _chosen(session, fields)
    if column is None or problems:
        return builder_page(request, fields=fields, status=400,
                            errors=problems or ["column: choose the column to build for."])
    series = session.table[column]
    values = hierarchy_form.column_values(series, session.schema.get(column, {}))
    try:
        hierarchy = await run_in_threadpool(hierarchy_form.build, kind, fields, series,
                                            values, column)
    except HierarchyBuildError as error:
        return builder_page(request, fields=fields, errors=error.problems, status=400)
    preview = {"rows": hierarchy_preview(hierarchy, series.to_numpy())[:PREVIEW_ROWS],
               "height": hierarchy.height, "total": len(hierarchy.paths)}
    message = None
    if form.get("action") == "save":
        message = _save(session, hierarchy, column, form.get("schema") == "yes")
    return builder_page(request, fields=fields, preview=preview, message=message)


async def download_built(request: Request) -> Response:
    """A hierarchy saved in this session (``hierarchies/N.csv``), as an ARX CSV file."""
    session = session_of(request)
    name = request.path_params["name"]
    relative = f"{FOLDER}/{name}"
    if not STORED.fullmatch(relative) or relative not in stored_files(session.folder):
        return HTMLResponse("Not a hierarchy of this session.", status_code=404)
    content = (session.folder / relative).read_bytes()
    return Response(content, media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="hierarchy-{name}"'})
