"""Microaggregation within classes and per household: the ``microaggregate`` step with
``within`` (stratified microaggregation, sdcMicro's ``microaggregation(strata_variables=)``,
Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)) or ``per_household`` (household-level
variables protected once per household, then copied to every member, as the SDC practice
guide advises for hierarchical files: Benschop, Machingauta & Welch 2019, "Statistical
Disclosure Control: A Practice Guide", section on household structure).

The step partitions the records (or one row per household) of each class of the ``within``
columns separately, k per group, and replaces the values by each group's representative.
Each group lies in one class, so on the published table every class of the step's
quasi-identifiers together with the ``within`` columns holds at least k records (k
households when per household). The verifier recounts that on the published table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import SchemaError

if TYPE_CHECKING:  # pragma: no cover
    from ._plan import Microaggregate
    from ._state import PlanState, StepRoles

__all__ = ["apply_grouped", "check_grouped", "household_level_of", "verify_grouped"]


def check_grouped(step: Microaggregate, df: pd.DataFrame, position: int,
                  roles: StepRoles) -> None:
    """Refuse, before any work: ``within`` columns not in the table, ``per_household``
    without a household role, columns that vary within a household."""
    where = f"Step {position} of the plan (microaggregate)"
    absent = [c for c in step.within if c not in df.columns]
    if absent:
        raise SchemaError(f"{where}: within names {', '.join(map(repr, absent))}, not columns "
                          f"of the table ({len(df.columns)} columns).")
    if not step.per_household:
        return
    if roles.household is None:
        raise SchemaError(f"{where} runs per household: give the household id column "
                          "(households= in Python, --household on the command line, role "
                          "household in a schema).")
    from .household import household_level_columns

    try:
        household_level_columns(df, roles.household, [*step.quasi_identifiers, *step.within])
    except SchemaError as error:
        raise SchemaError(f"{where} runs per household: {error}") from None


def household_level_of(step: Microaggregate, table: pd.DataFrame, roles: StepRoles
                       ) -> tuple[str, ...]:
    """The columns a per-household step keeps the same within every household and its
    verifier checks so (its quasi-identifiers and ``within`` columns); ``()`` for a step
    that runs per person."""
    del table, roles  # the columns are the step's own
    return (*step.quasi_identifiers, *step.within) if step.per_household else ()


def _units(table: pd.DataFrame, options: Microaggregate, roles: StepRoles
           ) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows the step partitions (one per household when per household) and, for each
    row of ``table``, its unit's position."""
    if not options.per_household:
        return table, np.arange(len(table))
    assert roles.household is not None  # checked before any work
    codes, _ = pd.factorize(table[roles.household], use_na_sentinel=False)
    first = pd.Series(np.arange(len(table))).groupby(codes, sort=True).first().to_numpy()
    return table.iloc[first], codes


def _classes(units: pd.DataFrame, within: tuple[str, ...]) -> list[np.ndarray]:
    """The positions of the units of each class of the ``within`` columns (missing values
    a class of their own), in the classes' sorted order."""
    if not within:
        return [np.arange(len(units))]
    groups = units.reset_index(drop=True).groupby(list(within), dropna=False, sort=True)
    return [np.asarray(index) for index in groups.indices.values()]


def apply_grouped(state: PlanState, options: Microaggregate,
                  rng: np.random.Generator) -> PlanState:
    """Partition each class of ``options.within`` (of households, per household) into
    groups of at least k, replace the values by the group's representative and copy them to
    every member; the record's details say how many classes and units there were."""
    from .._pipeline.grouping import grouping_stage
    from .._pipeline.numeric import quasi_identifier_matrix
    from .microaggregate import step_request

    assert state.roles is not None
    units, unit_of_row = _units(state.table, options, state.roles)
    what = "households" if options.per_household else "records"
    masked = np.empty((len(units), len(options.quasi_identifiers)))
    labels = np.empty(len(units), dtype=np.intp)
    groups = 0
    for rows in _classes(units, options.within):
        part = units.iloc[rows]
        if len(part) < options.k:
            values = ", ".join(f"{c} = {part[c].iloc[0]!r}" for c in options.within)
            raise SchemaError(f"Step microaggregate (within {', '.join(options.within)}): the "
                              f"class {values} has {len(part)} {what}, fewer than k = "
                              f"{options.k}; coarsen {', '.join(options.within)} first or "
                              "lower k.")
        request = step_request(state.request, part, options)
        outcome = grouping_stage(request, quasi_identifier_matrix(
            part, options.quasi_identifiers), rng, state.timings)
        masked[rows] = outcome.masked
        labels[rows] = outcome.labels + groups
        groups += int(outcome.labels.max()) + 1
    table = state.table.copy()
    for j, col in enumerate(options.quasi_identifiers):
        table[col] = masked[unit_of_row, j]
    details = {"classes": len(_classes(units, options.within)), "units": what,
               "units_partitioned": len(units), "groups": groups}
    return state.after_step(options, table, partitions=[labels[unit_of_row]],
                            details=details)


def verify_grouped(options: Microaggregate, original: pd.DataFrame, published: pd.DataFrame,
                   roles: StepRoles) -> Mapping[str, Any]:
    """Every class of the step's quasi-identifiers with its ``within`` columns, on the
    published table, holds at least k records (k distinct households per household, whose
    members all publish the same values)."""
    from .._pipeline.verify import k_check, published_classes

    columns = [*options.quasi_identifiers, *options.within]
    classes = published_classes(published, columns)
    model = (f"k-anonymity of {', '.join(options.quasi_identifiers)}"
             + (f" within {', '.join(options.within)}" if options.within else "")
             + " on the published table")
    if not options.per_household:
        check = k_check(options.k, int(np.bincount(classes).min()))
        return MappingProxyType({**check, "holds": bool(check["achieved"] >= options.k),
                                 "model": model})
    assert roles.household is not None
    households = original[roles.household].to_numpy()
    pairs = pd.DataFrame({"cls": classes, "hh": households})
    per_class = pairs.drop_duplicates().groupby("cls").size()
    consistent = bool(published.loc[:, columns].assign(_hh=households)
                      .groupby("_hh", dropna=False).nunique(dropna=False).le(1).all().all())
    achieved = int(per_class.min())
    return MappingProxyType({"required": options.k, "achieved": achieved,
                             "households_consistent": consistent,
                             "holds": bool(achieved >= options.k and consistent),
                             "model": model.replace("k-anonymity", "k households per class")
                             + "; every member of a household publishes its values"})
