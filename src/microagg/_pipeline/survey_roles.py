"""The survey roles of a release request: the sampling weight, the household id and the
strata.

A sample survey's records stand for many persons each: the **weight** (``rb050`` in EU-SILC)
estimates how many, and the disclosure-risk measures need it to estimate population
frequencies (:mod:`microagg.metrics.survey_risk`). Records of one **household** (``db030``) are
re-identified together, so the household risk needs the household id. The **strata** column
(a region, the design stratum: sdcMicro's ``strataVar``) is a key the intruder may know: the
risk measures count the frequencies within each stratum, and the household-level steps treat
the weights within strata. None is masked: the weight and the strata are published unchanged
(so the published-columns check counts the strata as a key an intruder knows, adding it to
the quasi-identifiers), the household id is dropped like an identifier unless it is kept on
purpose (``keep``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..exceptions import SchemaError
from ..metrics._survey_checks import check_households, check_strata, check_weights

__all__ = ["survey_roles"]


def survey_roles(df: pd.DataFrame, fields: Mapping[str, Any], options: Mapping[str, Any],
                 *, whole: bool = True) -> dict[str, Any]:
    """``weight``, ``household`` and ``strata`` checked, and the identifiers with the
    household id added (dropped from the release) unless it is kept on purpose (``keep``)."""
    weight, household = options.get("weights"), options.get("households")
    strata = options.get("strata")
    taken = {c: role for role in ("quasi_identifiers", "sensitive", "identifiers")
             for c in fields[role]}
    for option, column in (("weights", weight), ("households", household),
                           ("strata", strata)):
        if column is None:
            continue
        if not isinstance(column, str):
            raise TypeError(f"{option} names one column (a string); got {column!r}.")
        if column not in df.columns:
            raise SchemaError(f"Unknown column {column!r} in {option}; available: "
                              f"{', '.join(map(repr, map(str, df.columns)))}.")
        treated = option == "weights" and taken.get(column) == "quasi_identifiers" \
            and options.get("plan") is not None  # a step of the plan treats the weight
        if column in taken and not treated \
                and not (option == "households" and taken[column] == "identifiers"):
            raise SchemaError(f"Column {column!r} is both the {_ROLE_NAMES[option]} and in "
                              f"{taken[column]}.")
    _check_distinct({"weight": weight, "household id": household, "strata": strata})
    if whole and weight is not None:  # the checks of the risk measures, one message
        check_weights(df, weight, caller="anonymize")
    if whole and household is not None:
        check_households(df, household, caller="anonymize")
    if whole and strata is not None:
        check_strata(df, strata, (), caller="anonymize")
    identifiers = tuple(fields["identifiers"])
    if household is not None and household not in identifiers \
            and household not in fields["keep"]:
        identifiers += (household,)
    return {"weight": weight, "household": household, "strata": strata,
            "identifiers": identifiers}


_ROLE_NAMES = {"weights": "weight", "households": "household", "strata": "strata"}


def _check_distinct(roles: Mapping[str, str | None]) -> None:
    """Refuse one column named for two survey roles."""
    named = [(role, column) for role, column in roles.items() if column is not None]
    for i, (role, column) in enumerate(named):
        for other, other_column in named[i + 1:]:
            if column == other_column:
                raise SchemaError(f"Column {column!r} cannot be both the {role} and the "
                                  f"{other}.")
