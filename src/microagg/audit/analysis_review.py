"""The analyses of a review (``microagg report --estimate COLS --by D --model F --target T``):
:func:`microagg.metrics.analysis_utility.utility_by_analysis` on the original and the
published table, put in the review's metrics as ``metrics["analysis_utility"]`` (the same
key and layout as a release's own default figures).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .._pipeline.result import Release
    from ..metrics.analysis_utility import Analyses

__all__ = ["with_analyses"]


def with_analyses(release: Release, original: pd.DataFrame, analyses: Analyses, *,
                  weights: str | None = None, households: str | None = None,
                  strata: str | None = None, random_state: int | None = None) -> Release:
    """``release`` with ``metrics["analysis_utility"]``: the ``analyses`` repeated on
    ``original`` (the records the release was made from, row for row) and the published
    table (``release.data``), weighted by ``weights`` when given.

    Parameters
    ----------
    release : Release
        An assessed release (:func:`~microagg.audit.assess.assess_release`).
    original : pandas.DataFrame
    analyses : Analyses
    weights, households, strata : str, default=None
        The survey roles (:func:`~microagg.metrics.analysis_utility.utility_by_analysis`).
    random_state : int >= 0, default=None
        ``None``: drawn; recorded in ``metrics["analysis_utility"]["random_state"]``.

    Returns
    -------
    Release

    References
    ----------
    Karr et al. (2006), "A framework for evaluating the utility of data altered to protect
    confidentiality", The American Statistician 60(3).
    """
    from ..metrics.analysis_utility import utility_by_analysis

    result = utility_by_analysis(original, release.data, analyses, weights=weights,
                                 households=households, strata=strata,
                                 random_state=random_state)
    result["by"] = analyses.by
    metrics: dict[str, Any] = {**release.metrics, "analysis_utility": result}
    return dataclasses.replace(release, metrics=metrics)
