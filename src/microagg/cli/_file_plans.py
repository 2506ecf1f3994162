"""``microagg anonymize --engine file`` with a plan of several steps: the plans the file
engine runs in chunks, each by its own runner (targeted record swapping then PRAM,
:mod:`microagg.engines.file.plan_census`; recodings then local suppression,
:mod:`microagg.engines.file.plan_suppress`), every other option refused by its flag."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Any

from microagg.cli._common import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from microagg._pipeline.result import Release
    from microagg.engines import Engine

__all__ = ["plan_on_file"]

_WHAT = {"census": "a plan of swap_households then pram with --household, --drop and "
                   "--random-state only",
         "suppress": "a plan of recodings then suppress with --drop, --sensitive and "
                     "--random-state only"}


def plan_on_file(runner: Engine, input_path: str, options: dict[str, Any], schema: Any,
                 sep: str | None, table: str, face: list[str],
                 flags: dict[str, str]) -> Release | None:
    """The release of a plan the file engine runs in chunks
    (:func:`microagg.engines.file._plans.plan_kind`), or ``None`` when the plan is not one
    of them (the engine's own refusal then applies)."""
    from microagg.engines import REFUSABLE, _given
    from microagg.engines.file._plans import ALLOWED, plan_kind, run_plan

    plan = options.get("plan")
    if runner.name != "file" or plan is None:
        return None
    kind = plan_kind(plan)
    if kind is None:
        return None
    given = [flags.get(name, name) for name in REFUSABLE
             if name not in ALLOWED[kind] and _given(name, options.get(name))]
    given += face + (["--schema"] if schema is not None else [])
    if given:
        raise UsageError(f"--engine file runs {_WHAT[kind]}; drop {', '.join(given)} (or use "
                         "--engine local).")
    try:
        return run_plan(kind, input_path, pathlib.Path(table), plan.steps,
                        households=options.get("households"),
                        identifiers=options.get("identifiers") or (),
                        sensitive=options.get("sensitive") or (),
                        random_state=options.get("random_state"), sep=sep)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None
