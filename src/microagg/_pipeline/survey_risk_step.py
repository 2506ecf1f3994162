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
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .request import Request

__all__ = ["survey_risk_figures"]


def _summary(table: pd.DataFrame, request: Request, households: str | None) -> dict[str, Any]:
    """The survey risk of ``table`` and, for up to :data:`~microagg.metrics.suda.MAX_KEYS`
    key variables, its SUDA2 summary (``"suda"``)."""
    from ..metrics.population_risk import population_summary
    from ..metrics.suda import MAX_KEYS, suda2
    from ..metrics.survey_risk import survey_risk

    keys = list(request.quasi_identifiers)
    ks = (2, 3, 5, request.k)
    with warnings.catch_warnings():  # continuous keys before masking: said in the docstring
        warnings.simplefilter("ignore")
        out = survey_risk(table, keys, weights=request.weight, households=households,
                          ks=ks, strata=request.strata).summary()
        if len(keys) <= MAX_KEYS:
            out["suda"] = suda2(table, keys).summary()
        if request.weight is not None:
            out["population"] = population_summary(table, keys, weights=request.weight,
                                                   strata=request.strata, ks=ks,
                                                   uniqueness=False)
            out["population"]["loglinear"] = _loglinear(table, keys, request.weight)
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
    if request.weight is None and request.household is None and request.strata is None:
        return None
    household = request.household
    after_households = None
    if household is not None:
        if household in published.columns:
            after_households = household
        elif not request.noisy and len(published) == len(request.data):
            published = published.assign(**{household: request.data[household].to_numpy()})
            after_households = household
    return MappingProxyType({"before": _summary(request.data, request, household),
                             "after": _summary(published, request, after_households)})
