"""The survey roles of a release request: the sampling weight and the household id (issue 19).

A sample survey's records stand for many persons each: the **weight** (``rb050`` in EU-SILC)
estimates how many, and the disclosure-risk measures need it to estimate population
frequencies (:mod:`microagg.metrics.survey_risk`). Records of one **household** (``db030``) are
re-identified together, so the household risk needs the household id. Neither is masked:
the weight is published unchanged, the household id is dropped like an identifier unless it
is kept on purpose (``keep``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..exceptions import SchemaError
from ..metrics._survey_checks import check_households, check_weights

__all__ = ["survey_roles"]


def survey_roles(df: pd.DataFrame, fields: Mapping[str, Any], options: Mapping[str, Any],
                 *, whole: bool = True) -> dict[str, Any]:
    """``weight`` and ``household`` checked, and the identifiers with the household id added
    (dropped from the release) unless it is kept on purpose (``keep``)."""
    weight, household = options.get("weights"), options.get("households")
    taken = {c: role for role in ("quasi_identifiers", "sensitive", "identifiers")
             for c in fields[role]}
    for option, column in (("weights", weight), ("households", household)):
        if column is None:
            continue
        if not isinstance(column, str):
            raise TypeError(f"{option} names one column (a string); got {column!r}.")
        if column not in df.columns:
            raise SchemaError(f"Unknown column {column!r} in {option}; available: "
                              f"{', '.join(map(repr, map(str, df.columns)))}.")
        if column in taken and not (option == "households" and taken[column] == "identifiers"):
            raise SchemaError(f"Column {column!r} is both the {option[:-1]} and in "
                              f"{taken[column]}.")
    if weight is not None and weight == household:
        raise SchemaError(f"Column {weight!r} cannot be both the weight and the household id.")
    if whole and weight is not None:  # the checks of the risk measures, one message
        check_weights(df, weight, caller="anonymize")
    if whole and household is not None:
        check_households(df, household, caller="anonymize")
    identifiers = tuple(fields["identifiers"])
    if household is not None and household not in identifiers \
            and household not in fields["keep"]:
        identifiers += (household,)
    return {"weight": weight, "household": household, "identifiers": identifiers}
