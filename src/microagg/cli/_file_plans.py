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

__all__ = ["ALLOWED", "plan_on_file"]

ALLOWED = {"census": frozenset({"plan", "households", "identifiers"}),
           "suppress": frozenset({"plan", "identifiers", "sensitive"})}
"""The options of each plan the file engine runs (with ``--random-state`` and ``--sep``)."""

_WHAT = {"census": "a plan of swap_households then pram with --household, --drop and "
                   "--random-state only",
         "suppress": "a plan of recodings then suppress with --drop, --sensitive and "
                     "--random-state only"}


def _kind(plan: Any) -> str | None:
    """Which chunked runner's plan ``plan`` is: its first step a household swap (census),
    or its last a suppression to k (recodings then suppression); else ``None``."""
    from microagg.steps.record_swap.options import SwapHouseholds
    from microagg.steps.suppress.options import SuppressToK

    if isinstance(plan.steps[0], SwapHouseholds):
        return "census"
    if isinstance(plan.steps[-1], SuppressToK):
        return "suppress"
    return None


def plan_on_file(runner: Engine, input_path: str, options: dict[str, Any], schema: Any,
                 sep: str | None, table: str, face: list[str],
                 flags: dict[str, str]) -> Release | None:
    """The release of a plan the file engine runs in chunks, or ``None`` when the plan is
    not one of them (the engine's own refusal then applies)."""
    from microagg.engines import REFUSABLE, _given

    plan = options.get("plan")
    kind = None if runner.name != "file" or plan is None else _kind(plan)
    if kind is None:
        return None
    given = [flags.get(name, name) for name in REFUSABLE
             if name not in ALLOWED[kind] and _given(name, options.get(name))]
    given += face + (["--schema"] if schema is not None else [])
    if given:
        raise UsageError(f"--engine file runs {_WHAT[kind]}; drop {', '.join(given)} (or use "
                         "--engine local).")
    try:
        return _run(kind, input_path, table, plan, options, sep)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None


def _run(kind: str, input_path: str, table: str, plan: Any, options: dict[str, Any],
         sep: str | None) -> Release:
    identifiers = options.get("identifiers") or ()
    if kind == "census":
        from microagg.engines.file.plan_census import run_census_file

        if options.get("households") is None:
            raise UsageError("Step 1 of the plan (swap_households) swaps whole households: "
                             "give the household id column (--household COL).")
        return run_census_file(input_path, pathlib.Path(table), plan.steps,
                               households=options["households"], identifiers=identifiers,
                               random_state=options.get("random_state"), sep=sep)
    from microagg.engines.file.plan_suppress import run_suppress_file

    sensitive = options.get("sensitive") or ()
    return run_suppress_file(input_path, pathlib.Path(table), plan.steps,
                             identifiers=identifiers,
                             sensitive=(sensitive,) if isinstance(sensitive, str) else sensitive,
                             random_state=options.get("random_state"), sep=sep)
