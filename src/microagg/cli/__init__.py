"""Command-line interface: ``microagg anonymize | check | sweep | report | init-schema |
methods | datasets | doctor``.

One module per command; :mod:`microagg.cli._common` holds the app, the consoles, the error
handling (exit 2 for a user error, 3 for a broken guarantee) and the option parsers.
"""

from __future__ import annotations

import importlib

from microagg.cli._common import (
    EXIT_BUG,
    EXIT_USER_ERROR,
    PROGRESS_DELAY,
    UsageError,
    app,
)

# importing a command module registers it; this order is the order of `microagg --help`
for _command in ("anonymize", "check", "report", "sweep", "stream", "graph", "catalog",
                 "doctor"):
    importlib.import_module(f"microagg.cli.{_command}")

__all__ = ["EXIT_BUG", "EXIT_USER_ERROR", "PROGRESS_DELAY", "UsageError", "app", "main"]


def main() -> None:
    """Console-script entry point (``microagg = "microagg.cli:main"``).

    SIGTERM exits with status 143 after the usual clean-up (partial output and work folder
    removed), like Ctrl-C; only SIGKILL leaves them, for the next run to remove."""
    from microagg._leftovers import exit_on_sigterm

    with exit_on_sigterm():
        app(prog_name="microagg")
