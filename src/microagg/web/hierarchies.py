"""Hierarchy files of the Roles page: one hierarchy upload per column.

An ARX-style CSV hierarchy is uploaded per categorical or ordinal column, read with
:meth:`microagg.hierarchy.Hierarchy.from_csv` and checked against the column's values (each
must be a leaf), then kept in the session folder as ``hierarchies/N.csv`` (a name the server
chooses, never the browser's) and named by the column's schema entry, relative to the folder
where the schema's TOML is written (:func:`microagg.web.protect.build_schema`). An uploaded
schema may name only such files (:func:`stored_files`): no other path is ever opened.

Routes (stable): ``POST /roles/hierarchy`` (multipart: ``csrf_token``, ``column``, ``file``),
``POST /roles/hierarchy/remove`` (``csrf_token``, ``column``) and
``GET /export/hierarchies/N.csv`` (a hierarchy the current attempt's schema names).
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .pages import _extension, _received, roles_page
from .security import check_csrf, session_of
from .uploads import Upload, read_form

__all__ = ["FOLDER", "HIERARCHY_LIMIT", "STORED", "export_hierarchy", "hierarchy_problems",
           "levels", "plan_hierarchies", "plan_hierarchy_problems", "post_hierarchy",
           "post_remove_hierarchy", "read_hierarchy", "stored_files"]

FOLDER = "hierarchies"
"""The session folder's subfolder of the uploaded hierarchies."""
STORED = re.compile(r"hierarchies/([1-9][0-9]{0,5})\.csv")
"""The only hierarchy paths a schema of the workbench may name."""
HIERARCHY_LIMIT = 5 * 1024 * 1024
"""Largest hierarchy file (5 MB)."""
_SHOWN = 5
_KINDS = ("categorical", "ordinal")


def stored_files(folder: pathlib.Path) -> set[str]:
    """The hierarchy paths (``hierarchies/N.csv``, relative to ``folder``) uploaded in this
    session: the only ones an uploaded schema may name."""
    found = folder / FOLDER
    if not found.is_dir():
        return set()
    return {f"{FOLDER}/{p.name}" for p in found.iterdir()
            if p.is_file() and not p.is_symlink() and STORED.fullmatch(f"{FOLDER}/{p.name}")}


def plan_hierarchy_problems(records: Sequence[Mapping[str, Any]], folder: pathlib.Path
                            ) -> list[str]:
    """Every step of a posted plan whose ``hierarchy`` option is not a hierarchy of this
    session (``hierarchies/N.csv``, uploaded on the Roles page or built on the Hierarchies
    page): the workbench opens no other file."""
    stored = stored_files(folder)
    problems = []
    for number, record in enumerate(records, start=1):
        path = record.get("hierarchy")
        if path is not None and str(path) not in stored:
            shown = ", ".join(sorted(stored)) or "none yet"
            problems.append(f"Step {number} of the plan ({record.get('step')}): the "
                            f"'hierarchy' option {str(path)[:80]!r} is not a hierarchy of "
                            f"this session; give one of {shown} (build one on the "
                            "Hierarchies page, or upload one on the Roles page).")
    return problems


def plan_hierarchies(records: Sequence[Mapping[str, Any]], folder: pathlib.Path
                     ) -> list[dict[str, Any]]:
    """The plan's records with each ``hierarchy`` option (``hierarchies/N.csv``, checked by
    :func:`plan_hierarchy_problems`) read from ``folder``: a
    :class:`~microagg.hierarchy.Hierarchy` whose source is that relative name, so that the
    release records and shows ``hierarchies/N.csv``, never the server's folder."""
    from microagg.hierarchy import Hierarchy

    out = []
    for record in records:
        path = record.get("hierarchy")
        if isinstance(path, str) and STORED.fullmatch(path):
            column = str(record.get("column", ""))
            read = Hierarchy.from_csv(folder / path, column=column)
            record = {**record, "hierarchy": Hierarchy(read.paths, column=column, source=path)}
        out.append(dict(record))
    return out


def read_hierarchy(path: pathlib.Path, column: str, values: pd.Series, shown: str) -> Any:
    """The hierarchy in ``path`` for ``column``, every value of ``values`` a leaf of it.

    Parameters
    ----------
    path : pathlib.Path
        The CSV file (ARX: no header, ``;``, each row a value then its generalizations).
    column : str
        The column it generalizes (named by the messages).
    values : pandas.Series
        The column (missing values are not checked).
    shown : str
        The file's name in messages (the browser's name, never the server's path).

    Returns
    -------
    microagg.hierarchy.Hierarchy

    Raises
    ------
    ValueError
        If the file is not a hierarchy, or values of the column are not leaves of it (the
        first few named).
    """
    from microagg.hierarchy import Hierarchy, as_labels

    try:
        hierarchy = Hierarchy.from_csv(path, column=column)
    except (ValueError, OSError) as error:  # SchemaError, parser and decoding errors
        raise ValueError(f"{shown}: " + str(error).replace(str(path), shown)) from None
    labels = dict.fromkeys(as_labels(values.dropna().to_numpy()))
    missing = [v for v in labels if v not in hierarchy.paths]
    if missing:
        more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
        raise ValueError(f"{shown}: {len(missing)} value(s) of column {column!r} are not leaves "
                         f"of the hierarchy: {', '.join(map(repr, missing[:_SHOWN]))}{more}. "
                         "Every value of the column must be the first field of a row.")
    return hierarchy


def levels(hierarchy: Any) -> list[dict[str, Any]]:
    """Each level above the values: its number, how many labels, the first few."""
    out = []
    for level in range(1, hierarchy.height + 1):
        labels = list(dict.fromkeys(path[level] for path in hierarchy.paths.values()))
        out.append({"level": level, "count": len(labels),
                    "examples": ", ".join(labels[:_SHOWN]) + (", ..." if len(labels) > _SHOWN
                                                              else "")})
    return out


def hierarchy_problems(schema: Mapping[str, Mapping[str, Any]], folder: pathlib.Path,
                       table: pd.DataFrame) -> list[str]:
    """Every column whose hierarchy (a stored file) does not cover its values."""
    problems = []
    for column, entry in schema.items():
        path = entry.get("hierarchy")
        if path is None or column not in table.columns:
            continue
        try:
            read_hierarchy(folder / str(path), column, table[column], str(path))
        except ValueError as error:
            problems.append(str(error))
    return problems


def described(schema: Mapping[str, Mapping[str, Any]], folder: pathlib.Path
              ) -> list[dict[str, Any]]:
    """The Roles page's hierarchy rows: each categorical or ordinal column (or one with a
    hierarchy), its file and levels."""
    from microagg.hierarchy import Hierarchy

    rows = []
    for index, (column, entry) in enumerate(schema.items()):
        path = entry.get("hierarchy")
        if entry.get("type") not in _KINDS and path is None:
            continue
        row: dict[str, Any] = {"index": index, "name": column, "path": path, "levels": [],
                               "problem": None}
        if path is not None:
            try:
                row["levels"] = levels(Hierarchy.from_csv(folder / str(path), column=column))
            except (ValueError, OSError):
                row["problem"] = f"{path} cannot be read: upload it again"
        rows.append(row)
    return rows


def _target(folder: pathlib.Path) -> pathlib.Path:
    """A new ``hierarchies/N.csv`` in the session folder (N one more than the largest)."""
    (folder / FOLDER).mkdir(mode=0o700, exist_ok=True)
    numbers = [int(m.group(1)) for m in map(STORED.fullmatch, stored_files(folder)) if m]
    return folder / FOLDER / f"{max(numbers, default=0) + 1}.csv"


def _store(upload: Upload, folder: pathlib.Path, column: str, values: pd.Series) -> tuple[
        str, int]:
    """Check the uploaded file and keep it; its relative path and height."""
    assert upload.path is not None and upload.filename is not None
    try:
        _extension(upload.filename, (".csv", ".txt"))
        if upload.path.stat().st_size > HIERARCHY_LIMIT:
            raise ValueError(f"{upload.filename}: the hierarchy file is larger than "
                             f"{HIERARCHY_LIMIT:,} bytes.")
        hierarchy = read_hierarchy(upload.path, column, values, upload.filename)
        target = _target(folder)
        upload.path.rename(target)
        upload.path = None
    finally:
        upload.discard()
    return f"{FOLDER}/{target.name}", hierarchy.height


async def post_hierarchy(request: Request) -> Response:
    """Upload the hierarchy of one categorical or ordinal column (fields ``column``,
    ``file``); the schema entry then names the stored copy."""
    session = session_of(request)
    with await _received(request) as upload:
        column = upload.fields.get("column", "")
        entry = session.schema.get(column)
        problem = None
        if session.table is None or entry is None or column not in session.table.columns:
            problem = f"No column {column!r} in this table's roles: open a table first."
        elif entry.get("type") not in _KINDS:
            problem = (f"Column {column!r} has type {entry.get('type') or '(guess)'!r}: a "
                       f"hierarchy applies to the types {', '.join(_KINDS)} (save that type "
                       "first).")
        elif upload.path is None or not upload.filename:
            problem = f"Choose the hierarchy file of column {column!r}."
        if problem is not None:
            return roles_page(request, errors=[problem])
        assert session.table is not None and entry is not None
        try:
            path, height = await run_in_threadpool(_store, upload, session.folder, column,
                                                   session.table[column])
        except ValueError as error:
            return roles_page(request, errors=[str(error)])
    entry["hierarchy"] = path
    return roles_page(request, message=f"Hierarchy of column {column!r} saved as {path} "
                                       f"({height} level(s) above the values).")


async def post_remove_hierarchy(request: Request) -> Response:
    """Remove a column's hierarchy from the schema (field ``column``; the file is kept for
    the attempts that used it)."""
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    column = form.get("column", "")
    entry = session.schema.get(column)
    if entry is None or "hierarchy" not in entry:
        return roles_page(request, errors=[f"Column {column!r} has no hierarchy to remove."])
    del entry["hierarchy"]
    return roles_page(request, message=f"Hierarchy of column {column!r} removed.")


async def export_hierarchy(request: Request) -> Response:
    """A hierarchy file the current attempt's schema names (``hierarchies/N.csv``)."""
    session = session_of(request)
    relative = f"{FOLDER}/{request.path_params['name']}"
    if session.current is None:
        return RedirectResponse("/export", status_code=303)
    attempt = session.attempts[session.current]
    named = {str(e.get("hierarchy")) for e in attempt.schema.values() if e.get("hierarchy")}
    named |= {str(r["hierarchy"]) for r in attempt.options.get("plan") or ()
              if r.get("hierarchy")}
    if not STORED.fullmatch(relative) or relative not in named \
            or relative not in stored_files(session.folder):
        return HTMLResponse("Not a download of the workbench.", status_code=404)
    content = (session.folder / relative).read_bytes()
    return Response(content, media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="{request.path_params["name"]}"'})
