"""The disclosure risk before and after, as statistical offices measure it: measured with
the release's metrics when the request names a sampling weight, a household or strata.

The key variables are the quasi-identifiers; the original table gives the risk *before*
(every value as it was), the published table the risk *after*, by the same measures
(:func:`microagg.metrics.survey_risk.survey_risk`): sample and population frequencies, the
individual risk, the global risk, the household risk, the records violating k = 2, 3, 5.
With a sampling weight each side also carries ``"population"``: k-map and the prosecutor,
journalist and marketer risks (:func:`microagg.metrics.population_risk.population_summary`
without the fitted population-uniques models, which load scipy and would slow every
release).
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
    return out


def survey_risk_figures(published: pd.DataFrame, request: Request
                        ) -> Mapping[str, Any] | None:
    """``metrics["survey_risk"]`` = ``{"before": ..., "after": ...}`` (the summaries of
    :class:`~microagg.metrics.survey_risk.SurveyRisk`) when the request has a weight, a
    household or strata (the frequencies then counted within each stratum, which is
    published unchanged); ``None`` otherwise. With a weight, each side's ``"population"`` is
    :func:`~microagg.metrics.population_risk.population_summary` (``uniqueness=False``) of
    that table: ``population_size``, ``weighted`` and ``k_map`` (k-map, the prosecutor,
    journalist and marketer risks, the records with ``Fk < k``).

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
