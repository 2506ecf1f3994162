"""A published sampling weight that re-links households, refused before any work; and the
release's check that no column published unchanged re-links households.

A household-level weight that is every household's own value (a calibrated weight: 1,870
distinct weights for 1,886 households) tells which rows are one household: published next
to the masked columns, it publishes the household id in effect, and a value suppressed or
masked for one member can be read from a housemate's row. The measure is
:func:`microagg.steps.household.relinking` (the share of households holding a value no other
household holds). :func:`check_relinking_weight` refuses such a weight when the Request is
built, with the treatments offered, unless it is kept on purpose (``keep``); the release then
records it in ``params["keep"]``, and :func:`household_relinking_check` puts the measure in
``checks["household_relinking"]``, which the verdict names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pandas as pd

from ..exceptions import PrivacyLeakWarning, SchemaError
from ..steps.household._level import Relinking, relinking
from .notes import warn_user

__all__ = ["check_relinking_weight", "household_relinking_check", "relinking_refusal"]

MODEL = ("households identified by one column published unchanged: rows sharing its value "
         "belong to one household only")
"""What ``checks["household_relinking"]`` counts, in words."""


def check_relinking_weight(df: pd.DataFrame, weight: str | None, household: str | None,
                           keep: Sequence[str]) -> tuple[str, ...]:
    """Refuse a published weight that identifies households (the whole table only).

    Returns
    -------
    tuple of str
        ``(weight,)`` when it identifies households and is kept on purpose (recorded in
        ``params["keep"]``); otherwise empty.

    Raises
    ------
    SchemaError
        Naming the weight, how many households it identifies, and the treatments: the
        household step's microaggregation within strata, rounding, or ``keep``.
    """
    if weight is None or household is None:
        return ()
    measure = relinking(df, household, weight)
    if measure.households_identified == 0:
        return ()
    if weight in keep:
        return (weight,)
    raise SchemaError(relinking_refusal(weight, measure))


def _figures(column: str, measure: Relinking) -> str:
    return (f"{column!r} identifies {measure.households_identified:,} of the "
            f"{measure.households:,} households ({measure.share:.1%}): rows that share its "
            f"value are one household ({measure.records_linked:,} records can be grouped with "
            "a housemate by it alone)")


def relinking_refusal(weight: str, measure: Relinking) -> str:
    """The refusal's message, in plain words, with the three ways out."""
    return (f"The sampling weight {_figures(weight, measure)}. Published unchanged it "
            "effectively publishes the household id, and a value masked for one member can be "
            "read from a housemate's row. Treat it once per household before release: "
            "microaggregate it within strata, k households per group (the household step, "
            "microagg.steps.household.Household(weight=\"microaggregate\", k=3), which keeps "
            "each stratum's weighted count of persons), or round it to a stated precision "
            "(Household(weight=\"round\", precision=10); the loss in weighted totals is "
            "reported); or publish it on purpose, recorded in the release as publishing the "
            f"household id (--keep {weight}; keep=[...] in Python, with a schema too: the "
            "weight keeps its role).")


def household_relinking_check(published: pd.DataFrame, household_ids: pd.Series | None,
                              columns: Sequence[str]) -> Mapping[str, Any] | None:
    """``checks["household_relinking"]``: the columns among ``columns`` (published unchanged)
    that identify households on the published table, each with its measure; ``None`` when
    there is no household id or no such column.

    ``household_ids`` holds the original household id of each published row (same order):
    the id itself is usually not published, the intruder groups the rows by the column.
    """
    if household_ids is None or not columns:
        return None
    frame = published[list(columns)].reset_index(drop=True)
    frame["_household"] = household_ids.to_numpy()
    found = {}
    for column in columns:
        measure = relinking(frame, "_household", column)
        if measure.households_identified:
            found[str(column)] = MappingProxyType(measure.to_dict())
    if not found:
        return None
    return MappingProxyType({"model": MODEL, "columns": MappingProxyType(found)})


def warn_relinking(check: Mapping[str, Any] | None, notes: list[str]) -> None:
    """The release's warning for :func:`household_relinking_check`, in plain words."""
    if not check:
        return
    listed = "; ".join(_figures(c, Relinking(**m)) for c, m in check["columns"].items())
    warn_user(notes, f"Published unchanged, {listed}. The household id is effectively "
                     "published: an intruder groups the rows of each household by this value "
                     "and reads a value masked for one member from a housemate's row.",
              PrivacyLeakWarning, first=True)
