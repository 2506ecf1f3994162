"""The household step as a step of a plan (:data:`microagg.steps.STEPS`' ``household``):
the household-level columns made consistent within every household and the weight treated
once per household (:func:`~._apply.apply_household`), with the request's household,
weight and strata roles; its verifier on the published table (the household id, dropped
from the release, is put back by row position: rows in = rows out); its checker, which
refuses a request without a household role before any step runs.

Reference: sdcMicro's household workflow (Templ, Kowarik & Meindl 2015, J. Stat. Softw.
67(4), section 4.2: ``selectHouseholdData`` / ``mergeHouseholdData``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from .._state import PlanState, StepRoles
from ._apply import _roles, apply_household, verify_household
from .options import Household

__all__ = ["apply_household_step", "check_household_step", "household_level_of",
           "verify_household_step"]


def apply_household_step(state: PlanState, options: Household, rng: np.random.Generator
                         ) -> PlanState:
    """The household step on the working table (its details: the household-level columns,
    the weight's treatment and loss, re-linking before and after)."""
    roles = state.roles or StepRoles.of(state.request)
    table, details = apply_household(state.table, options, rng,
                                     **roles.keywords(options.name))
    return state.after_step(options, table, details=details)


def verify_household_step(options: Household, original: pd.DataFrame,
                          published: pd.DataFrame, roles: StepRoles) -> Mapping[str, Any]:
    """:func:`~._apply.verify_household` on the published table, with the original
    household id of each published row (the release drops the id itself)."""
    household = roles.household
    if household is None:  # refused by the checker before any step ran
        raise SchemaError("The household step needs the household id column (the "
                          "'households' role).")
    before = original.reset_index(drop=True)
    after = published.reset_index(drop=True)
    if household not in after.columns and len(after) == len(before):
        after = after.assign(**{household: before[household].to_numpy()})
    return verify_household(options, before, after, **roles.keywords(options.name))


def check_household_step(options: Household, table: pd.DataFrame, position: int, plan: Any,
                         *, roles: StepRoles) -> None:
    """Before any step runs: the household role given, and the roles and household-level
    columns the step treats checked (:func:`~._apply._roles`: a declared column that
    varies within a household is refused, naming it)."""
    where = f"Step {position} of the plan (household)"
    if roles.household is None:
        raise SchemaError(f"{where} treats one row per household: give the household id "
                          "column (--household COL, households= in Python, role = "
                          "\"household\" in a schema).")
    missing = [c for c in options.household_columns if c not in table.columns]
    if missing:
        raise SchemaError(f"{where}: the 'household_columns' option names {missing}, which "
                          f"are not columns of the table; the columns are "
                          f"{list(table.columns)}.")
    keywords = roles.keywords(options.name)
    _roles(table, options, roles.household, roles.weight, keywords["strata"])


def household_level_of(options: Household, table: pd.DataFrame, roles: StepRoles
                       ) -> tuple[str, ...]:
    """The columns the step makes the same for every member of a household, as its verifier
    finds them (:func:`~._apply._roles`: the weight, the strata, then the declared
    household-level columns or, without any, those constant within every household of
    ``table``)."""
    keywords = roles.keywords(options.name)
    return _roles(table, options, roles.household, roles.weight, keywords["strata"])[1]
