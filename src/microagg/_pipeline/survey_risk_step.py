"""The disclosure risk before and after, as statistical offices measure it: measured with
the release's metrics when the request names a sampling weight, a household or strata.

The key variables are the quasi-identifiers; the original table gives the risk *before*
(every value as it was), the published table the risk *after*, by the same measures
(:func:`microagg.metrics.survey_risk.survey_risk`): sample and population frequencies, the
individual risk, the global risk, the household risk, the records violating k = 2, 3, 5.
With a sampling weight each side also carries ``"population"``: k-map and the prosecutor,
journalist and marketer risks (:func:`microagg.metrics.population_risk.population_summary`
without the fitted population-uniques models, which load scipy and would slow every
release) and ``"loglinear"``, the main-effects log-linear risk of the sample uniques
(:func:`microagg.metrics.loglinear_risk.loglinear_risk`; numpy only, skipped on key tables
over :data:`LOGLINEAR_MAX_CELLS` cells).
Numeric quasi-identifiers are taken as they are: before masking most of their values are
unique, which is what microaggregation removes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .request import Request

__all__ = ["RiskRoles", "survey_risk_between", "survey_risk_figures"]


@dataclass(frozen=True)
class RiskRoles:
    """What the survey risk of a release is measured with: the key variables (the
    quasi-identifiers), the release's k (``None``: only 2, 3 and 5 are counted), the survey
    roles (column names or ``None``) and whether every record gets noisy values of its own
    (:attr:`microagg._pipeline.request.Request.noisy`)."""

    keys: tuple[str, ...]
    k: int | None = None
    weight: str | None = None
    household: str | None = None
    strata: str | None = None
    noisy: bool = False


def _summary(table: pd.DataFrame, roles: RiskRoles, households: str | None
             ) -> dict[str, Any]:
    """The survey risk of ``table`` and, for up to :data:`~microagg.metrics.suda.MAX_KEYS`
    key variables, its SUDA2 summary (``"suda"``)."""
    from ..metrics.population_risk import population_summary
    from ..metrics.suda import MAX_KEYS, suda2
    from ..metrics.survey_risk import survey_risk

    keys = list(roles.keys)
    ks = (2, 3, 5) if roles.k is None else (2, 3, 5, roles.k)
    with warnings.catch_warnings():  # continuous keys before masking: said in the docstring
        warnings.simplefilter("ignore")
        out = survey_risk(table, keys, weights=roles.weight, households=households,
                          ks=ks, strata=roles.strata).summary()
        if len(keys) <= MAX_KEYS:
            out["suda"] = suda2(table, keys).summary()
        if roles.weight is not None:
            out["population"] = population_summary(table, keys, weights=roles.weight,
                                                   strata=roles.strata, ks=ks,
                                                   uniqueness=False)
            out["population"]["loglinear"] = _loglinear(table, keys, roles.weight)
    return out


#: The largest key table whose log-linear model a release fits (a fit of a few tenths of a
#: second); larger tables (numeric keys before masking) are skipped, and say so.
LOGLINEAR_MAX_CELLS = 20_000


def _loglinear(table: pd.DataFrame, keys: list[str], weight: str) -> dict[str, Any]:
    """The main-effects log-linear risk of the table's sample uniques
    (:meth:`~microagg.metrics.loglinear_risk.LoglinearRisk.summary`), or ``{"skipped":
    reason}`` when the key table has fewer than 2 or more than
    :data:`LOGLINEAR_MAX_CELLS` cells."""
    from ..metrics.loglinear_risk import loglinear_risk

    cells = 1
    for key in keys:
        cells *= max(int(table[key].nunique(dropna=True)), 1)
    if not 2 <= cells <= LOGLINEAR_MAX_CELLS:
        return {"skipped": f"the key table has {cells:,} cells; the log-linear model is "
                           f"fitted to 2 to {LOGLINEAR_MAX_CELLS:,} (microagg risk "
                           "--loglinear fits larger ones)"}
    if float(table[weight].min()) < 1.0:
        return {"skipped": f"weights below 1 in {weight!r}: a record stands for at least "
                           "itself"}
    return loglinear_risk(table, keys, weights=weight).summary()


def survey_risk_figures(published: pd.DataFrame, request: Request
                        ) -> Mapping[str, Any] | None:
    """``metrics["survey_risk"]`` = ``{"before": ..., "after": ...}`` (the summaries of
    :class:`~microagg.metrics.survey_risk.SurveyRisk`) when the request has a weight, a
    household or strata (the frequencies then counted within each stratum, which is
    published unchanged); ``None`` otherwise. With a weight, each side's ``"population"`` is
    :func:`~microagg.metrics.population_risk.population_summary` (``uniqueness=False``) of
    that table: ``population_size``, ``weighted``, ``k_map`` (k-map, the prosecutor,
    journalist and marketer risks, the records with ``Fk < k``) and ``loglinear``
    (``tau1``, ``tau2`` of the main-effects model, or ``{"skipped": reason}``).

    The household risk after masking needs each published record's household: the household
    column when it is published (kept), else the original's, row for row, unless the release
    gives each record noisy values of its own: then it is left out.
    """
    return survey_risk_between(request.data, published, RiskRoles(
        keys=tuple(request.quasi_identifiers), k=request.k, weight=request.weight,
        household=request.household, strata=request.strata, noisy=request.noisy))


def survey_risk_between(original: pd.DataFrame, published: pd.DataFrame, roles: RiskRoles
                        ) -> Mapping[str, Any] | None:
    """The survey risk of ``original`` (``"before"``) and ``published`` (``"after"``) by
    the same measures, as :func:`survey_risk_figures` describes them; ``None`` without a
    weight, a household or strata. The one implementation of a release's
    ``metrics["survey_risk"]`` and of the review of two files
    (:func:`microagg.audit.assess.assess_release`): the roles are checked by the caller.
    """
    if roles.weight is None and roles.household is None and roles.strata is None:
        return None
    household = roles.household
    after_households = None
    if household is not None:
        if household in published.columns:
            after_households = household
        elif not roles.noisy and len(published) == len(original):
            published = published.assign(**{household: original[household].to_numpy()})
            after_households = household
    return MappingProxyType({"before": _summary(original, roles, household),
                             "after": _summary(published, roles, after_households)})
