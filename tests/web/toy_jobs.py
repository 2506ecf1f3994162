"""The workbench's release job with the test-only step of :mod:`tests.steps.toy_step`
registered: the worker processes are spawned, so a step registered by a test in the server's
process is unknown there; the tests hand the workers this function instead of
:func:`microagg.web.protect.release_for`."""

from __future__ import annotations

from typing import Any

from microagg.release import Release
from microagg.web import protect
from tests.steps.toy_step import registered

RELEASE_FOR = protect.release_for
"""The workbench's own job (kept: the tests replace ``protect.release_for``)."""


def release_for(*args: Any, **keywords: Any) -> Release:
    """:func:`microagg.web.protect.release_for` with the toy step registered."""
    from microagg.steps import STEPS

    if "merge" in STEPS:  # the server's own process, inside the test's block
        return RELEASE_FOR(*args, **keywords)
    with registered():
        return RELEASE_FOR(*args, **keywords)
