"""Can an analyst still get the answers? The default utility-by-analysis figures of a
release made with a sampling weight: measured with the release's metrics.

The smallest honest default (:func:`default_analyses`): the weighted totals and means of the
published numeric columns a step changed (at most :data:`MAX_COLUMNS`), overall and by the
first categorical quasi-identifier (the strata when no key is categorical), each with its
linearised standard error on the original (the households as primary sampling units when
the release names them), and the pMSE of the two tables on a sample of
:data:`PMSE_SAMPLE` rows (:func:`microagg.metrics.analysis_utility.utility_by_analysis`).
Without a weight nothing is added: the estimates a survey is published for are weighted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..metrics.analysis_utility import Analyses
    from .request import Request

__all__ = ["MAX_COLUMNS", "PMSE_SAMPLE", "analysis_utility_figures", "default_analyses"]

MAX_COLUMNS = 10
"""The most changed numeric columns whose totals and means a release measures by default."""

PMSE_SAMPLE = 5_000
"""The rows of each table the default pMSE reads (a random sample of larger files)."""


def _numeric(column: pd.Series) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column)
                and not pd.api.types.is_bool_dtype(column))


def _changed(original: pd.Series, published: pd.Series) -> bool:
    a = original.to_numpy(np.float64, na_value=np.nan)
    b = published.to_numpy(np.float64, na_value=np.nan)
    return not np.array_equal(a, b, equal_nan=True)


def default_analyses(original: pd.DataFrame, published: pd.DataFrame,
                     quasi_identifiers: tuple[str, ...], roles: set[str]) -> Analyses:
    """The default :class:`~microagg.metrics.analysis_utility.Analyses` of a release (the
    module docstring): ``roles`` are the survey-role and identifier columns left out."""
    from ..metrics.analysis_estimates import MAX_DOMAIN_LEVELS
    from ..metrics.analysis_utility import Analyses

    same_rows = len(original) == len(published)
    columns = [str(c) for c in original.columns
               if c in published.columns and c not in roles and _numeric(original[c])
               and _numeric(published[c]) and (not same_rows
                                              or _changed(original[c], published[c]))]
    by = next((str(c) for c in quasi_identifiers if c in published.columns
               and not _numeric(original[c])
               and 1 <= original[c].nunique(dropna=True) <= MAX_DOMAIN_LEVELS), None)
    return Analyses(columns=tuple(columns[:MAX_COLUMNS]), by=by, sample=PMSE_SAMPLE)


def analysis_utility_figures(published: pd.DataFrame, request: Request, seed: int
                             ) -> Mapping[str, Any] | None:
    """``metrics["analysis_utility"]`` of a release with a sampling weight (the module
    docstring), ``None`` without one; the pMSE sample drawn from ``seed``."""
    from ..metrics.analysis_estimates import MAX_DOMAIN_LEVELS
    from ..metrics.analysis_utility import utility_by_analysis

    if request.weight is None:
        return None
    original = request.data
    roles = {c for c in (request.weight, request.household, request.strata) if c} \
        | set(request.identifiers)
    analyses = default_analyses(original, published, request.quasi_identifiers, roles)
    if analyses.by is None and request.strata is not None \
            and original[request.strata].nunique() <= MAX_DOMAIN_LEVELS:
        from dataclasses import replace

        analyses = replace(analyses, by=request.strata)
    household = request.household if request.household in original.columns else None
    out = utility_by_analysis(original, published, analyses, weights=request.weight,
                              households=household, strata=request.strata,
                              random_state=seed)
    out["by"] = analyses.by
    return out
