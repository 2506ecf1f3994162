"""The survey risk of a review of two files, measured as the release measured it.

A release with a sampling weight, a household or strata carries ``metrics["survey_risk"]``
(:func:`microagg._pipeline.survey_risk_step.survey_risk_figures`): the individual, global and
household risk, the records violating k, SUDA2 and, with a weight, k-map, the journalist and
marketer risks and the log-linear ``tau1`` / ``tau2``, of the original and of the published
table. The review (:func:`microagg.audit.assess.assess_release`, ``microagg report``) measures
the same figures through the same function
(:func:`~microagg._pipeline.survey_risk_step.survey_risk_between`), with the roles given, or
else the summary's (``params["weight" | "household" | "strata"]``, as :func:`microagg.anonymize`
records them), or else the schema's (``role = "weight" | "household" | "strata"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._pipeline.survey_risk_step import RiskRoles, survey_risk_between
from ..exceptions import SchemaError
from ..metrics._survey_checks import check_households, check_strata, check_weights

if TYPE_CHECKING:  # pragma: no cover
    from ..schema.schema_file import Schema

__all__ = ["SurveyRoles", "review_survey_risk", "survey_roles_of"]


@dataclass(frozen=True)
class SurveyRoles:
    """The survey roles a review measures with (column names, or ``None``)."""

    weight: str | None = None
    household: str | None = None
    strata: str | None = None


_OPTIONS = {"weight": "--weight / weight=", "household": "--household / household=",
            "strata": "--strata / strata="}


def survey_roles_of(given: SurveyRoles, params: Mapping[str, Any],
                    schema: Schema | None) -> SurveyRoles:
    """Each role: the one ``given``, else the summary's ``params``, else the ``schema``'s."""
    found = {}
    for role in ("weight", "household", "strata"):
        value = getattr(given, role)
        if value is None:
            value = params.get(role)
        if value is None and schema is not None:
            value = getattr(schema, role)
        found[role] = None if value is None else str(value)
    return SurveyRoles(**found)


def review_survey_risk(original: pd.DataFrame, published: pd.DataFrame, *,
                       keys: Sequence[str], roles: SurveyRoles, params: Mapping[str, Any],
                       k: int | None) -> Mapping[str, Any] | None:
    """``metrics["survey_risk"]`` of a review, or ``None`` without a survey role.

    Parameters
    ----------
    original, published : pandas.DataFrame
        The two tables as the release measured them (dates as days), row for row.
    keys : sequence of str
        The quasi-identifiers (the release's key variables).
    roles : SurveyRoles
        The weight, household and strata columns (:func:`survey_roles_of`).
    params : mapping
        The release's params (the summary's): its aggregation says whether every record got
        noisy values of its own, and then the household risk after masking is left out
        when the household column is not published, as the release leaves it out.
    k : int or None
        The release's k, counted beside k = 2, 3 and 5.

    Raises
    ------
    SchemaError
        If a role names a column the original lacks (the column, the option and the
        original's columns named), or its values are not allowed (a weight that is not a
        finite number > 0, a missing household id or stratum, a stratum that is also a key:
        the column, the count of rows and the allowed range named).
    """
    if roles.weight is None and roles.household is None and roles.strata is None:
        return None
    _check_roles(original, published, list(keys), roles)
    # the weight and the strata are published unchanged: a file that left them out is
    # measured with the original's, row for row (the household: survey_risk_between)
    borrowed = {c: original[c].to_numpy() for c in (roles.weight, roles.strata)
                if c is not None and c not in published.columns}
    if borrowed:
        published = published.assign(**borrowed)
    return survey_risk_between(original, published, RiskRoles(
        keys=tuple(keys), k=k, weight=roles.weight, household=roles.household,
        strata=roles.strata, noisy=noisy_release(params)))


def _check_roles(original: pd.DataFrame, published: pd.DataFrame, keys: list[str],
                 roles: SurveyRoles) -> None:
    """Every role a column of the original, distinct, with allowed values in both tables."""
    named = {role: getattr(roles, role) for role in ("weight", "household", "strata")}
    for role, column in named.items():
        if column is not None and column not in original.columns:
            raise SchemaError(f"Unknown {role} column {column!r} ({_OPTIONS[role]}): not in "
                              "the original table; its columns: "
                              f"{', '.join(map(repr, map(str, original.columns)))}.")
    columns = [c for c in named.values() if c is not None]
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise SchemaError(f"Column {twice[0]!r} is named for two survey roles (weight, "
                          "household, strata): name each role's own column.")
    for table, name in ((original, "report"), (published, "report (published table)")):
        if roles.weight is not None and roles.weight in table.columns:
            check_weights(table, roles.weight, caller=name)
        if roles.household is not None and roles.household in table.columns:
            check_households(table, roles.household, caller=name)
        if roles.strata is not None and roles.strata in table.columns:
            check_strata(table, roles.strata, keys, caller=name)


def noisy_release(params: Mapping[str, Any]) -> bool:
    """Whether the release of ``params`` gave every record noisy values of its own
    (:attr:`microagg._pipeline.request.Request.noisy`: a noisy aggregation of a release
    that does not generalize); ``False`` when the params do not say (no summary)."""
    from ..aggregate.aggregators import is_noisy
    from ..partition import PARTITIONERS

    aggregation, method = params.get("aggregation"), params.get("method")
    if not isinstance(aggregation, str) or params.get("hierarchies"):
        return False
    entry = PARTITIONERS.get(method) if isinstance(method, str) else None
    if entry is not None and entry.generalizes:
        return False
    return is_noisy(aggregation, dict(params.get("aggregation_params") or {}))
