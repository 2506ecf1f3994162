"""``microagg serve``: the local web workbench (needs the ``web`` extra).

The listening socket is bound before the address with the access token is printed or
opened in a browser: while the port is taken by another program, nothing starts and the
token is never shown (a program that held the port could otherwise receive it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib
import pathlib
import socket
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from microagg.cli._common import UsageError, app, stderr, stdout, user_errors

if TYPE_CHECKING:
    from microagg.web.settings import Settings

WEB_MODULES = ("starlette", "jinja2", "python_multipart", "uvicorn")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
PORTS = (0, 65535)
"""The ports ``--port`` accepts (0: any free port, the one bound is printed)."""
UPLOAD_MB = (1, 100_000)
JOBS = (1, 64)


def require_web() -> None:
    """Raise an ImportError naming the extra if a module of the workbench is missing."""
    for name in WEB_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            raise ImportError(f"`microagg serve` needs the web extra ({name} is not "
                              "installed): pip install 'microagg[web]'") from None


def startup(*, host: str, port: int, data_dir: pathlib.Path | None, max_upload_mb: int,
            max_jobs: int = 2) -> tuple[Settings, list[str]]:
    """The server's settings (a new access token) and the warnings to print, options
    checked; no server is started."""
    require_web()
    from microagg.web.settings import Settings

    if not PORTS[0] <= port <= PORTS[1]:
        raise UsageError(f"--port must be in [{PORTS[0]}, {PORTS[1]}]; got {port}.")
    if not UPLOAD_MB[0] <= max_upload_mb <= UPLOAD_MB[1]:
        raise UsageError(f"--max-upload-mb must be in [{UPLOAD_MB[0]}, {UPLOAD_MB[1]}]; got "
                         f"{max_upload_mb}.")
    if not JOBS[0] <= max_jobs <= JOBS[1]:
        raise UsageError(f"--max-jobs must be in [{JOBS[0]}, {JOBS[1]}]; got {max_jobs}.")
    if data_dir is not None and not data_dir.expanduser().is_dir():
        raise UsageError(f"--data-dir {str(data_dir)!r} is not a folder.")
    warnings = []
    if host not in LOCAL_HOSTS:
        warnings.append(f"Warning: listening on {host}, not 127.0.0.1: other machines may "
                        "reach the workbench and its confidential data; only the access "
                        "token protects it, and the connection is not encrypted.")
    settings = Settings(host=host, port=port,
                        data_dir=data_dir.expanduser().resolve() if data_dir else None,
                        max_upload_bytes=max_upload_mb * 1024 * 1024, max_jobs=max_jobs)
    return settings, warnings


@app.command()
def serve(
    port: Annotated[int, typer.Option(
        "--port", help="Port to listen on (0: any free port); one in use is an error.")
    ] = 8765,
    host: Annotated[str, typer.Option(
        "--host", help="Address to listen on; another than 127.0.0.1 prints a warning.")
    ] = "127.0.0.1",
    data_dir: Annotated[pathlib.Path | None, typer.Option(
        "--data-dir", show_default=False,
        help="The only folder whose files the browser may name (SQLite databases).")
    ] = None,
    no_browser: Annotated[bool, typer.Option(
        "--no-browser", help="Do not open a web browser.")] = False,
    max_upload_mb: Annotated[int, typer.Option(
        "--max-upload-mb", help="Largest upload, in MB.")] = 200,
    max_jobs: Annotated[int, typer.Option(
        "--max-jobs", help="Releases and sweeps that may run at once (each in its own "
        "process).")] = 2,
) -> None:
    """Start the local web workbench (needs the web extra: pip install 'microagg\\[web]')."""
    with user_errors():
        settings, warnings = startup(host=host, port=port, data_dir=data_dir,
                                     max_upload_mb=max_upload_mb, max_jobs=max_jobs)
        listener = listen(settings.host, settings.port)
    with listener:
        settings = dataclasses.replace(settings, port=listener.getsockname()[1])
        for warning in warnings:
            stderr().print(Text(warning, style="bold yellow"), soft_wrap=True)
        stdout().print(Text(f"microagg workbench: open {settings.url}  (Ctrl-C stops it "
                            "and removes its work folder)"), soft_wrap=True)
        _run(settings, listener, open_browser=not no_browser)


def listen(host: str, port: int) -> socket.socket:
    """The workbench's listening socket on ``host``, ``port`` (0: any free port), bound
    and listening before anyone is told the address.

    No ``SO_REUSEPORT``: a port another program listens on, even with that option, is
    refused rather than shared.

    Raises
    ------
    UsageError
        If the port is in use (naming it and ``--port``) or the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise UsageError(
                f"Port {port} on {host} is already in use by another program; nothing was "
                "started and the access token was not shown. Choose another with --port "
                "(--port 0: any free port).") from None
        raise UsageError(f"Cannot listen on {host} port {port}: "
                         f"{error.strerror or error}; choose another --host or --port."
                         ) from None


def _run(settings: Settings, listener: socket.socket, *,
         open_browser: bool) -> None:  # pragma: no cover - serves
    """Serve the workbench on ``listener`` (already bound: connections made since then wait
    in its queue) until Ctrl-C, as ``uvicorn.run`` does; the browser opened first if
    asked."""
    import webbrowser

    import uvicorn
    from uvicorn.main import STARTUP_FAILURE

    from microagg.web import create_app

    server = uvicorn.Server(uvicorn.Config(create_app(settings), host=settings.host,
                                           port=settings.port, log_level="warning"))
    if open_browser:
        webbrowser.open(settings.url)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C, re-raised once it has stopped
        server.run(sockets=[listener])
    if not server.started:
        raise typer.Exit(code=STARTUP_FAILURE)
