"""Command-line interface: ``microagg anonymize | check | risk | sweep | report | series |
semantic | documents | init-schema | methods | datasets | doctor | serve``.

One module per command; :mod:`microagg.cli._common` holds the app, the consoles, the error
handling (exit 2 for a user error, 3 for a broken guarantee, 4 for a release, or a file
checked, that is not protected) and the option parsers.

Importing this package imports nothing else (PEP 562): ``app`` and the exit codes load the
app with every command on first access, and ``microagg --version`` answers before any of it,
so that it loads neither typer nor numba, pandas or scikit-learn.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = ["EXIT_BUG", "EXIT_NOT_PROTECTED", "EXIT_USER_ERROR", "PROGRESS_DELAY", "UsageError",
           "app", "main", "package_version"]

_LAZY = ("EXIT_BUG", "EXIT_NOT_PROTECTED", "EXIT_USER_ERROR", "PROGRESS_DELAY", "UsageError",
         "app")

# importing a command module registers it; this order is the order of `microagg --help`
_COMMAND_MODULES = ("anonymize", "check", "risk", "report", "sweep", "stream", "graph",
                    "series", "semantic", "documents", "catalog", "doctor", "serve")


def _load_app() -> Any:
    """The typer app with every command registered (idempotent)."""
    from microagg.cli import _common

    for command in _COMMAND_MODULES:
        importlib.import_module(f"microagg.cli.{command}")
    return _common.app


def __getattr__(name: str) -> Any:
    """``app`` (with its commands) and the names of :mod:`._common`, loaded on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from microagg.cli import _common

    value = _load_app() if name == "app" else getattr(_common, name)
    globals()[name] = value
    return value


def package_version() -> str:
    """The installed version of microagg (``"unknown"`` in a source tree not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("microagg")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def main() -> None:
    """Console-script entry point (``microagg = "microagg.cli:main"``).

    ``microagg --version`` alone is answered at once; everything else goes to the app.
    SIGTERM exits with status 143 after the usual clean-up (partial output and work folder
    removed), like Ctrl-C; only SIGKILL leaves them, for the next run to remove (the work
    folders in ``$TMPDIR``: as any command starts, :func:`~microagg.io._leftovers.remove_leftovers_at_start`)."""
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"microagg {package_version()}\n")
        return
    from microagg.io._leftovers import exit_on_sigterm, remove_leftovers_at_start

    remove_leftovers_at_start()  # a SIGKILLed run's originals in $TMPDIR, removed now
    app = _load_app()
    with exit_on_sigterm():
        app(prog_name="microagg")
