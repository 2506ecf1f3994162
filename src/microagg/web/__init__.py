"""The local web workbench (``microagg serve``): a face that builds Requests.

Server-rendered pages (Starlette, Jinja2 with autoescaping), every request checked against
the access token, every form against the session's CSRF token, uploads streamed with a size
limit into a private temporary folder removed at exit. Needs the ``web`` extra
(``pip install 'microagg[web]'``); ``import microagg`` never imports it.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .settings import Settings

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from .jobs import JobRunner

__all__ = ["Settings", "create_app"]

_HERE = pathlib.Path(__file__).parent


def create_app(settings: Settings, *, runner: JobRunner | None = None) -> Starlette:
    """The workbench as a Starlette app (its work folder removed at shutdown and at exit).

    Parameters
    ----------
    settings : Settings
        The token, limits and folders.
    runner : JobRunner, default=None
        The worker processes that run releases and sweeps; ``None``: the app's own (up to
        ``settings.max_jobs``, one started and warmed up at start-up, all stopped at
        shutdown). A runner given here is started and stopped by its owner.

    Returns
    -------
    starlette.applications.Starlette
        With ``app.state.settings``, ``app.state.store`` (the sessions),
        ``app.state.runner`` (the jobs) and ``app.state.templates`` (the Jinja2
        environment).
    """
    import jinja2
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response

    from .jobs import JobRunner
    from .security import AccessMiddleware, CsrfError
    from .sessions import SessionStore
    from .uploads import BadForm, TooLarge

    store = SessionStore(settings.work_dir, idle_seconds=settings.session_idle_hours * 3600)
    own_runner = runner is None
    jobs = JobRunner(settings.max_jobs) if runner is None else runner

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if own_runner:
            jobs.start()
        try:
            yield
        finally:
            if own_runner:
                jobs.close()
            store.close()

    async def forbidden(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=403)

    async def bad_form(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=400)

    async def too_large(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc), status_code=413)

    app = Starlette(routes=_routes(), lifespan=lifespan,
                    middleware=[Middleware(AccessMiddleware, token=settings.token, store=store,
                                           port=settings.port)],
                    exception_handlers={CsrfError: forbidden, TooLarge: too_large,
                                        BadForm: bad_form})
    app.state.settings, app.state.store, app.state.runner = settings, store, jobs
    app.state.templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=jinja2.select_autoescape(["html"], default=True),
        undefined=jinja2.StrictUndefined)
    return app


def _routes() -> list[Any]:
    """Every page, form and download of the workbench (the paths are stable: the tests and
    the browser flow use them)."""
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from . import (
        hierarchies,
        hierarchy_builder,
        job_pages,
        pages,
        plan_pages,
        release_pages,
        risk_page,
        sweep_page,
    )

    return [
        Route("/", pages.home), Route("/data", pages.get_data),
        Route("/data/upload", pages.post_upload, methods=["POST"]),
        Route("/data/dataset", pages.post_dataset, methods=["POST"]),
        Route("/data/sqlite", pages.post_sqlite, methods=["POST"]),
        Route("/roles", pages.get_roles), Route("/roles", pages.post_roles, methods=["POST"]),
        Route("/roles/upload", pages.post_schema_upload, methods=["POST"]),
        Route("/roles/schema.toml", pages.get_schema_file),
        Route("/risk", risk_page.get_risk),
        Route("/risk", risk_page.post_risk, methods=["POST"]),
        Route("/protect", release_pages.get_protect),
        Route("/protect", release_pages.post_protect, methods=["POST"]),
        Route("/result", release_pages.get_result),
        Route("/result/current", release_pages.post_current, methods=["POST"]),
        Route("/result/undo", plan_pages.post_undo, methods=["POST"]),
        Route("/result/report.html", release_pages.get_report),
        Route("/export", release_pages.get_export),
        Route("/export/download", release_pages.post_download, methods=["POST"]),
        Route("/export/{name}", release_pages.export_file),
        Route("/jobs/{job_id}", job_pages.get_job),
        Route("/jobs/{job_id}/cancel", job_pages.cancel_job, methods=["POST"]),
        Route("/sweep", sweep_page.get_sweep),
        Route("/sweep", sweep_page.post_sweep, methods=["POST"]),
        Route("/roles/hierarchy", hierarchies.post_hierarchy, methods=["POST"]),
        Route("/roles/hierarchy/remove", hierarchies.post_remove_hierarchy, methods=["POST"]),
        Route("/export/hierarchies/{name}", hierarchies.export_hierarchy),
        Route("/hierarchies", hierarchy_builder.get_builder),
        Route("/hierarchies", hierarchy_builder.post_builder, methods=["POST"]),
        Route("/hierarchies/download/{name}", hierarchy_builder.download_built),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
    ]


async def favicon(request: Any) -> Any:
    """The workbench's icon (an SVG, served where browsers look for it)."""
    from starlette.responses import FileResponse

    return FileResponse(_HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                        headers={"cache-control": "max-age=86400"})
