"""The plans of several steps the file engine runs in chunks, and which runner runs each:
a household swap first (then at most one PRAM: :mod:`.plan_census`), or recodings then one
suppression to k (:mod:`.plan_suppress`). Both faces (``microagg anonymize --engine file``
and :func:`~.engine.anonymize_file`) choose the runner here."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["ALLOWED", "plan_kind", "run_plan"]

ALLOWED: Mapping[str, frozenset[str]] = {
    "census": frozenset({"plan", "households", "identifiers"}),
    "suppress": frozenset({"plan", "identifiers", "sensitive"})}
"""The options of each plan the file engine runs (with the seed, the separator and the
chunk size)."""


def plan_kind(plan: Any) -> str | None:
    """Which chunked runner's plan ``plan`` is: its first step a household swap
    (``"census"``), or its last a suppression to k (``"suppress"``); else ``None``."""
    from ...steps.record_swap.options import SwapHouseholds
    from ...steps.suppress.options import SuppressToK

    if isinstance(plan.steps[0], SwapHouseholds):
        return "census"
    if isinstance(plan.steps[-1], SuppressToK):
        return "suppress"
    return None


def run_plan(kind: str, source: str | os.PathLike[str], target: str | os.PathLike[str],  # noqa: PLR0913 - one keyword per option
             steps: Sequence[Any], *, households: str | None = None,
             identifiers: Sequence[str] = (), sensitive: str | Sequence[str] = (),
             random_state: Any = None, chunk_rows: int = 500_000, sep: str | None = None,
             on_stage: Callable[[str], None] | None = None) -> Any:
    """The release of ``steps`` run by the runner of ``kind`` (:func:`plan_kind`)."""
    if kind == "census":
        from .plan_census import run_census_file

        if households is None:
            raise ValueError("Step 1 of the plan (swap_households) swaps whole households: "
                             "give the household id column (households=, --household COL).")
        return run_census_file(source, target, steps, households=households,
                               identifiers=identifiers, random_state=random_state,
                               chunk_rows=chunk_rows, sep=sep, on_stage=on_stage)
    from .plan_suppress import run_suppress_file

    return run_suppress_file(source, target, steps, identifiers=identifiers,
                             sensitive=(sensitive,) if isinstance(sensitive, str)
                             else tuple(sensitive), random_state=random_state,
                             chunk_rows=chunk_rows, sep=sep, on_stage=on_stage)


def chunked_plan(plan: Any, source: str | os.PathLike[str], target: str | os.PathLike[str],
                 others: Mapping[str, Any], **options: Any) -> Any:
    """:func:`~.engine.anonymize_file` with a plan run in chunks: the keywords in ``others``
    that ask for something (not ``None``, not empty) refused by name, as the command line
    refuses their flags, then :func:`run_plan`. ``options``: the keywords of
    :func:`run_plan`."""
    from .._reads_files import file_paths

    kind = plan_kind(plan)
    assert kind is not None
    named = {"households": options.get("households"),
             "sensitive": options.get("sensitive"), **others}
    given = [name for name, value in named.items()
             if name not in ALLOWED[kind] and value not in (None, (), [], "", {})]
    if given:
        runs = ", ".join(sorted(ALLOWED[kind] - {"plan"}))
        raise TypeError(f"anonymize_file runs this plan ({kind}: {[s.name for s in plan.steps]!r}) in chunks "
                        f"with {runs}, random_state, chunk_rows, sep and on_stage only; drop "
                        f"{', '.join(given)} (or use microagg.anonymize).")
    source, target = file_paths(source, target)
    return run_plan(kind, source, target, plan.steps, **options)
