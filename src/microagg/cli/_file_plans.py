"""``microagg anonymize --engine file`` with a plan of several steps: the plans the file
engine runs in chunks (targeted record swapping then PRAM,
:mod:`microagg.engines.file.plan_census`), every other option refused by its flag."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Any

from microagg.cli._common import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from microagg._pipeline.result import Release
    from microagg.engines import Engine

__all__ = ["census_plan_on_file"]

ALLOWED = frozenset({"plan", "households", "identifiers"})
"""The options of a census plan on the file engine (with ``--random-state`` and ``--sep``)."""


def census_plan_on_file(runner: Engine, input_path: str, options: dict[str, Any],
                        schema: Any, sep: str | None, table: str, face: list[str],
                        flags: dict[str, str]) -> Release | None:
    """The release of a census plan run by the file engine, or ``None`` when the plan is not
    one (the engine's own refusal then applies)."""
    from microagg.engines import REFUSABLE, _given
    from microagg.steps.record_swap.options import SwapHouseholds

    plan = options.get("plan")
    if runner.name != "file" or plan is None \
            or not isinstance(plan.steps[0], SwapHouseholds):
        return None
    from microagg.engines.file.plan_census import run_census_file

    given = [flags.get(name, name) for name in REFUSABLE
             if name not in ALLOWED and _given(name, options.get(name))]
    given += face + (["--schema"] if schema is not None else [])
    if given:
        raise UsageError(f"--engine file runs a plan of swap_households then pram with "
                         f"--household, --drop and --random-state only; drop "
                         f"{', '.join(given)} (or use --engine local).")
    if options.get("households") is None:
        raise UsageError("Step 1 of the plan (swap_households) swaps whole households: give "
                         "the household id column (--household COL).")
    try:
        return run_census_file(input_path, pathlib.Path(table), plan.steps,
                               households=options["households"],
                               identifiers=options.get("identifiers") or (),
                               random_state=options.get("random_state"), sep=sep)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None
