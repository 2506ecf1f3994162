"""The local web workbench (``microagg serve``, issue 20): a face that builds Requests.

Server-rendered pages (Starlette, Jinja2 with autoescaping), every request checked against
the access token, every form against the session's CSRF token, uploads streamed with a size
limit into a private temporary folder removed at exit. Needs the ``web`` extra
(``pip install 'microagg[web]'``); ``import microagg`` never imports it.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["Settings", "create_app"]

_HERE = pathlib.Path(__file__).parent


def create_app(settings: Settings) -> Starlette:
    """The workbench as a Starlette app (its work folder removed at shutdown and at exit).

    Parameters
    ----------
    settings : Settings
        The token, limits and folders.

    Returns
    -------
    starlette.applications.Starlette
        With ``app.state.settings``, ``app.state.store`` (the sessions) and
        ``app.state.templates`` (the Jinja2 environment).
    """
    import jinja2
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from . import pages, release_pages
    from .security import AccessMiddleware, CsrfError
    from .sessions import SessionStore
    from .uploads import BadForm, TooLarge

    store = SessionStore(settings.work_dir)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            store.close()

    async def forbidden(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=403)

    async def bad_form(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=400)

    async def too_large(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=413)

    routes = [
        Route("/", pages.home), Route("/data", pages.get_data),
        Route("/data/upload", pages.post_upload, methods=["POST"]),
        Route("/data/dataset", pages.post_dataset, methods=["POST"]),
        Route("/data/sqlite", pages.post_sqlite, methods=["POST"]),
        Route("/roles", pages.get_roles), Route("/roles", pages.post_roles, methods=["POST"]),
        Route("/roles/upload", pages.post_schema_upload, methods=["POST"]),
        Route("/roles/schema.toml", pages.get_schema_file),
        Route("/risk", release_pages.get_risk), Route("/protect", release_pages.get_protect),
        Route("/protect", release_pages.post_protect, methods=["POST"]),
        Route("/result", release_pages.get_result),
        Route("/result/current", release_pages.post_current, methods=["POST"]),
        Route("/result/report.html", release_pages.get_report),
        Route("/export", release_pages.get_export),
        Route("/export/{name}", release_pages.export_file),
        Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(AccessMiddleware, token=settings.token, store=store,
                                           port=settings.port)],
                    exception_handlers={CsrfError: forbidden, TooLarge: too_large,
                                        BadForm: bad_form})
    app.state.settings, app.state.store = settings, store
    app.state.templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=jinja2.select_autoescape(["html"], default=True),
        undefined=jinja2.StrictUndefined)
    return app
