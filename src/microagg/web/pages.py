"""Route handlers of the workbench: the Data page (upload, bundled data set, SQLite table,
preview) and the Roles page (the proposal, the edited roles, the schema file out and in)."""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from microagg.exceptions import SchemaError
from microagg.io._formats import SUPPORTED_EXTENSIONS

from . import roles
from .security import check_csrf, session_of
from .sessions import SessionState, plain_dtypes
from .uploads import Upload, read_form, receive_upload

__all__ = ["PAGE_ROWS", "WORK_FILE", "data_page", "render", "roles_page", "session_relative",
           "sqlite_path", "without_paths"]

PAGE_ROWS = 50
"""Rows per page of the preview."""
READ_ERRORS = (SchemaError, ValueError, TypeError, ImportError, OSError)
"""What reading a table may raise for a bad file (shown on the page, as the CLI does)."""
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCHEMA_LIMIT = 1024 * 1024


WORK_FILE = "a file in the server's work folder"
"""What a message says instead of a path inside the server's work folder."""


def without_paths(text: str, folders: Sequence[pathlib.Path]) -> str:
    """``text`` with every path inside ``folders`` (as given and resolved) replaced by
    :data:`WORK_FILE`: no message shows where the server keeps its files.

    Examples
    --------
    >>> without_paths("cannot read '/tmp/w1/s/upload-3.parquet': bad", [pathlib.Path("/tmp/w1")])
    "cannot read 'a file in the server's work folder': bad"
    """
    roots = {str(f) for f in folders} | {str(f.resolve()) for f in folders}
    for root in sorted(roots, key=len, reverse=True):
        text = re.sub(re.escape(root) + r"[^\s'\"<>,;)]*", WORK_FILE, text)
    return text


def session_relative(text: str, folder: pathlib.Path, root: pathlib.Path) -> str:
    """``text`` (a report, a summary) with the paths inside the session's ``folder`` made
    relative to it (``hierarchies/1.csv``: the name the schema gives the file) and any
    other path of the work folder ``root`` hidden (:func:`without_paths`).

    Examples
    --------
    >>> session_relative('{"city": "/w/s1/hierarchies/1.csv"}', pathlib.Path("/w/s1"),
    ...                  pathlib.Path("/w"))
    '{"city": "hierarchies/1.csv"}'
    """
    for prefix in sorted({str(folder), str(folder.resolve())}, key=len, reverse=True):
        text = text.replace(prefix + "/", "")
    return without_paths(text, [root])


def render(request: Request, template: str, *, status: int = 200, **context: Any
           ) -> HTMLResponse:
    """A page of ``template`` with the session's CSRF token and table name; its errors and
    message without a path of the server's work folder (:func:`without_paths`) and with
    plain type names instead of pandas dtypes (:func:`~.sessions.plain_dtypes`)."""
    session = session_of(request)
    env = request.app.state.templates
    running = [job for job in session.jobs.values() if job.running]
    folders = [request.app.state.store.root]
    if context.get("errors"):
        context["errors"] = [plain_dtypes(without_paths(str(e), folders))
                             for e in context["errors"]]
    if context.get("message"):
        context["message"] = plain_dtypes(without_paths(str(context["message"]), folders))
    html = env.get_template(template).render(csrf_token=session.csrf_token,
                                             source=session.source, running_jobs=running,
                                             **context)
    return HTMLResponse(html, status_code=status)


def _see(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


# ------------------------------------------------------------------------------ data page

def _page_number(text: str | None, pages: int) -> int:
    if text is None:
        return 1
    if not text.isdigit() or not 1 <= int(text) <= pages:
        raise ValueError(f"page must be a whole number in [1, {pages}]; got {text!r}.")
    return int(text)


def _preview(session: SessionState, page: int) -> dict[str, Any]:
    """The rows of ``page`` as text (missing values blank), and where they are."""
    df = session.table
    assert df is not None
    start = (page - 1) * PAGE_ROWS
    rows = df.iloc[start:start + PAGE_ROWS]
    cells = [["" if pd.api.types.is_scalar(v) and pd.isna(v) else str(v) for v in row]
             for row in rows.itertuples(index=False, name=None)]  # a list cell (Parquet) too
    return {"preview": cells, "first": start + 1 if len(df) else 0,
            "last": start + len(rows), "rows": len(df)}


def data_page(request: Request, *, errors: list[str] | None = None, status: int = 200,
              message: str | None = None) -> HTMLResponse:
    """The Data page: the three ways to open a table, and the preview of the one open."""
    from microagg.datasets import list_datasets

    session, settings = session_of(request), request.app.state.settings
    context: dict[str, Any] = {"stats": session.stats}
    errors = list(errors or [])
    if session.table is not None:
        pages = max(1, math.ceil(len(session.table) / PAGE_ROWS))
        try:
            page = _page_number(request.query_params.get("page"), pages)
        except ValueError as error:
            errors.append(str(error))
            page, status = 1, 400
        context.update(_preview(session, page), page=page, pages=pages)
    return render(request, "data.html", status=status, title="Data", page_name="data",
                  errors=errors, message=message, datasets=list_datasets(),
                  sqlite=settings.data_dir is not None,
                  max_upload=f"{settings.max_upload_bytes / 1024**2:g} MB", **context)


async def get_data(request: Request) -> Response:
    return data_page(request)


def _extension(filename: str, allowed: tuple[str, ...]) -> str:
    """The file's extension if allowed (the name is used for nothing else)."""
    lower = filename.lower()
    for suffix in sorted(allowed, key=len, reverse=True):
        if lower.endswith(suffix):
            return suffix
    raise ValueError(f"The file {filename!r} has an unsupported extension; allowed: "
                     f"{', '.join(allowed)}.")


async def _received(request: Request) -> Upload:
    """The multipart form, its CSRF token checked (to be used as a context manager: its file
    is removed at the end unless moved)."""
    session = session_of(request)
    upload = await receive_upload(request, session.folder,
                                  request.app.state.settings.max_upload_bytes)
    try:
        check_csrf(session, upload.fields.get("csrf_token"))
    except Exception:
        upload.discard()
        raise
    return upload


def _read_upload(upload: Upload) -> tuple[pd.DataFrame, Any]:
    """The uploaded table, read by its extension (one not supported: a ValueError), and its
    cells as written (:func:`microagg.io._as_read.read_as_read`); the file is removed once read
    or refused."""
    from microagg.io._as_read import read_as_read
    from microagg.io.tables import read_table

    assert upload.path is not None and upload.filename is not None
    try:
        upload.path = upload.path.rename(upload.path.with_name(
            upload.path.name + _extension(upload.filename, SUPPORTED_EXTENSIONS)))
        return read_table(upload.path), read_as_read(upload.path)
    except READ_ERRORS as error:
        raise ValueError(str(error).replace(str(upload.path), upload.filename)) from None
    finally:
        upload.discard()


async def post_upload(request: Request) -> Response:
    with await _received(request) as upload:
        if upload.path is None or not upload.filename:
            return data_page(request, errors=["Choose a file to upload."], status=400)
        try:
            df, as_read = await run_in_threadpool(_read_upload, upload)
        except ValueError as error:
            return data_page(request, errors=[str(error)], status=400)
    session_of(request).set_table(df, upload.filename, as_read)
    return _see("/data")


async def post_dataset(request: Request) -> Response:
    from microagg.datasets import load_dataset

    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    try:
        dataset = load_dataset(form.get("dataset", ""))
    except (ValueError, TypeError) as error:
        return data_page(request, errors=[str(error)], status=400)
    session.set_table(dataset.data, f"bundled data set {dataset.name}")
    return _see("/data")


def sqlite_path(data_dir: pathlib.Path, name: str) -> pathlib.Path:
    """The database file ``name`` inside ``data_dir`` (symbolic links resolved), or the
    ValueError that says it is outside it or missing."""
    root = data_dir.resolve()
    path = (root / name).resolve()
    if not name.strip() or not path.is_relative_to(root):
        raise ValueError(f"The database {name!r} is outside the data folder; give a path "
                         "relative to --data-dir, inside it.")
    if not path.is_file() or any(c in str(path) for c in "?#"):
        raise ValueError(f"The database {name!r} is not a file in the data folder.")
    return path


def _read_sqlite(data_dir: pathlib.Path, database: str, table: str) -> pd.DataFrame:
    from microagg.io.sql import read_sql

    if not _TABLE_NAME.fullmatch(table):
        raise ValueError(f"The table name {table!r} must be letters, digits and _ (not "
                         "starting with a digit).")
    path = sqlite_path(data_dir, database)
    try:
        return read_sql(f"sqlite:///{path}?table={table}", parameter="table")
    except READ_ERRORS as error:
        raise ValueError(str(error).replace(str(path), database)) from None


async def post_sqlite(request: Request) -> Response:
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    data_dir = request.app.state.settings.data_dir
    if data_dir is None:
        return data_page(request, status=400, errors=[
            "SQLite tables need a data folder: start `microagg serve --data-dir DIR`."])
    database, table = form.get("database", ""), form.get("table", "")
    try:
        df = await run_in_threadpool(_read_sqlite, data_dir, database, table)
    except ValueError as error:
        return data_page(request, errors=[str(error)], status=400)
    session.set_table(df, f"{database} (table {table})")
    return _see("/data")


# ----------------------------------------------------------------------------- roles page

def _ensure_schema(session: SessionState) -> list[str]:
    """The proposal, made once per table; the problem if it cannot be made."""
    if session.table is not None and not session.schema:
        try:
            session.schema, session.reasons = roles.propose(session.table)
        except (ValueError, TypeError) as error:
            return [f"No schema could be proposed for this table: {error}"]
    return []


def roles_page(request: Request, *, errors: list[str] | None = None, status: int = 200,
               message: str | None = None) -> HTMLResponse:
    """The Roles page: every column's role and type, with the reason of the proposal."""
    from .hierarchies import described

    session = session_of(request)
    problems = _ensure_schema(session) + list(errors or [])
    columns = [{"name": name, "role": entry.get("role"), "type": entry.get("type"),
                "order": ", ".join(map(str, entry.get("order") or [])),
                "details": roles.details_text(entry),
                "reason": session.reasons.get(name, "")}
               for name, entry in session.schema.items()]
    return render(request, "roles.html", status=status if not problems else 400,
                  title="Roles", page_name="roles", errors=problems, message=message,
                  columns=columns, roles=roles.ROLES, types=roles.TYPES,
                  details=roles.DETAILS,
                  hierarchies=described(session.schema, session.folder))


async def get_roles(request: Request) -> Response:
    return roles_page(request)


async def post_roles(request: Request) -> Response:
    form = await read_form(request)
    session = session_of(request)
    check_csrf(session, form.get("csrf_token"))
    if session.table is None:
        return _see("/roles")
    try:
        session.schema = roles.from_form(form, session.schema)
    except ValueError as error:
        return roles_page(request, errors=[str(error)])
    problems = roles.validate(session.schema, session.folder, session.table)
    if problems:
        return roles_page(request, errors=problems)
    return roles_page(request, message="Roles saved: the schema is valid for this table.")


async def get_schema_file(request: Request) -> Response:
    session = session_of(request)
    if session.table is None:
        return _see("/roles")
    _ensure_schema(session)
    return Response(roles.to_toml(session.schema, session.reasons),
                    media_type="application/toml; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="schema.toml"'})


def _schema_text(upload: Upload) -> str:
    assert upload.path is not None and upload.filename is not None
    try:
        _extension(upload.filename, (".toml",))
        if upload.path.stat().st_size > _SCHEMA_LIMIT:
            raise ValueError(f"The schema file is larger than {_SCHEMA_LIMIT:,} bytes.")
        return upload.path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError("The schema file is not UTF-8 text.") from None
    finally:
        upload.discard()


async def post_schema_upload(request: Request) -> Response:
    from .hierarchies import hierarchy_problems, stored_files

    session = session_of(request)
    with await _received(request) as upload:
        if session.table is None or upload.path is None or not upload.filename:
            return roles_page(request, errors=["Open a table, then choose a schema file."])
        try:
            schema, problems = roles.from_toml(_schema_text(upload),
                                               stored=stored_files(session.folder))
        except ValueError as error:
            return roles_page(request, errors=[str(error)])
    if schema is not None:
        problems += roles.validate(schema, session.folder, session.table)
        problems += hierarchy_problems(schema, session.folder, session.table)
    if problems:
        return roles_page(request, errors=[f"{upload.filename}: {p}" for p in problems])
    assert schema is not None
    session.schema, session.reasons = schema, {}
    return roles_page(request, message=f"Schema {upload.filename} applied.")


async def home(request: Request) -> Response:
    return _see("/data")
