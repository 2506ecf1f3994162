"""Targeted record swapping as a step of a plan (:data:`microagg.steps.STEPS`'
``swap_households``): its apply runs :func:`~.core.apply_record_swap` on the working table
with the request's household role; its verifier runs :func:`~.verify.verify_record_swap` on
the published table (the household id, dropped from the release, put back by row position:
rows in = rows out); its checker refuses, before any step runs, a request without a
household role and every input the core would refuse (a household whose geography varies,
a geography that does not nest, targeted households without a donor).

Reference: sdcMicro ``recordSwap`` (Gussenbauer; Templ, Kowarik & Meindl 2015, J. Stat.
Softw. 67(4)).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .._state import PlanState, StepRoles
from ._prepare import prepare
from .core import apply_record_swap, check_donors
from .options import SwapHouseholds
from .verify import verify_record_swap

__all__ = [
    "apply_swap_households_step",
    "check_swap_households_step",
    "donor_notes",
    "household_level_of",
    "verify_swap_households_step",
]


def apply_swap_households_step(state: PlanState, options: SwapHouseholds,
                               rng: np.random.Generator) -> PlanState:
    """The swap on the working table, its figures (swap rate per level, risk before and
    after) in the record's details."""
    roles = state.roles or StepRoles.of(state.request)
    table, details = apply_record_swap(state.table, options, rng, households=roles.household)
    return state.after_step(options, table, details=details,
                            notes=donor_notes(options, details))


def donor_notes(options: SwapHouseholds, details: Mapping[str, Any]) -> tuple[str, ...]:
    """The warning owed when targeted households found no donor left (none otherwise)."""
    if not details["targeted_without_donor"]:
        return ()
    return (f"Step {options.name!r}: {details['targeted_without_donor']} households at "
            "risk found no donor left (every household of their profile elsewhere was "
            "swapped already) and were not swapped.",)


def _published_with_households(original: pd.DataFrame, published: pd.DataFrame,
                               household: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    before = original.reset_index(drop=True)
    after = published.reset_index(drop=True)
    if household not in after.columns and len(after) == len(before):
        after = after.assign(**{household: before[household].to_numpy()})
    return before, after


def verify_swap_households_step(options: SwapHouseholds, original: pd.DataFrame,
                                published: pd.DataFrame, roles: StepRoles, *,
                                details: Mapping[str, Any] | None = None
                                ) -> Mapping[str, Any]:
    """:func:`~.verify.verify_record_swap` on the published table, with each row's
    original household id."""
    if roles.household is None:  # refused by the checker before any step ran
        raise SchemaError(f"Step {options.name!r} needs the household id column (the "
                          "'households' role).")
    before, after = _published_with_households(original, published, roles.household)
    return verify_record_swap(options, before, after, households=roles.household,
                              details=details)


def check_swap_households_step(options: SwapHouseholds, table: pd.DataFrame, position: int,
                               plan: Any, *, roles: StepRoles) -> None:
    """Before any step runs: every input check of the swap (see the module), as a
    :class:`~microagg.exceptions.SchemaError` naming the step's position."""
    where = f"Step {position} of the plan ({options.name})"
    if roles.household is None:
        raise SchemaError(f"{where} swaps whole households: give the household id column "
                          "(--household COL, households= in Python, role = \"household\" "
                          "in a schema).")
    try:
        hh = prepare(table, options, roles.household)
        check_donors(table, options, hh, roles.household)
    except ValueError as error:
        raise SchemaError(f"{where}: {error}") from None


def household_level_of(options: SwapHouseholds, table: pd.DataFrame, roles: StepRoles
                       ) -> tuple[str, ...]:
    """The columns that move with whole households (the geography, the carried-along
    columns) and those a donor must match (the similarity profile): the same for every
    member of a household, as the verifier checks."""
    del table, roles  # the step's own options
    return tuple(dict.fromkeys((*options.hierarchy, *options.carry_along, *options.similar)))
