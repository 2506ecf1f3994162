"""The generalizing stage under ``missing="pattern"``: each missingness pattern of the
quasi-identifiers generalized on its observed columns (see :mod:`.missing`), the pieces
joined into one published table that the one verifier checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..metrics import group_size_summary, privacy_of_quasi_identifiers
from .missing import MISSING_LABEL, MissingRecord
from .pattern_stage import pattern_acceptor
from .patterns import PatternPlan, plan_patterns
from .request import Request

__all__ = ["Pieces", "missing_mask", "plan_mixed", "published_missing", "weighted_metrics"]


def missing_mask(request: Request) -> NDArray[np.bool_]:
    """(n, p): the missing cells of the quasi-identifiers."""
    return request.data.loc[:, list(request.quasi_identifiers)].isna().to_numpy()


def _distance_columns(request: Request, missing: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Numeric quasi-identifiers as observed z-scores (categorical ones 0), for the
    nearest records the planner moves."""
    out = np.zeros(missing.shape)
    for j, col in enumerate(request.quasi_identifiers):
        column = request.data[col]
        if col in request.hierarchies or not pd.api.types.is_numeric_dtype(column):
            continue
        x = column.to_numpy(dtype=np.float64, na_value=np.nan)
        spread = np.nanstd(x, ddof=1) if (~np.isnan(x)).sum() > 1 else 0.0
        out[:, j] = (x - np.nanmean(x)) / spread if spread > 0 else 0.0
    out[missing] = np.nan
    return out


def plan_mixed(request: Request, record: MissingRecord) -> PatternPlan:
    """The pattern plan (kept in ``record``)."""
    missing = missing_mask(request)
    plan = plan_patterns(missing, request.k, _distance_columns(request, missing),
                         names=request.quasi_identifiers, accept=pattern_acceptor(request))
    record.plan = plan
    return plan


@dataclass
class Pieces:
    """The published columns being assembled, and each pattern's metrics."""

    n: int
    columns: dict[str, NDArray[Any]]
    metrics: list[tuple[int, dict[str, Any]]]

    @classmethod
    def empty(cls, request: Request) -> Pieces:
        n = len(request.data)
        return cls(n, {c: np.full(n, np.nan, dtype=object) for c in request.quasi_identifiers},
                   [])

    def add(self, rows: NDArray[np.intp], published: pd.DataFrame,
            observed: tuple[str, ...]) -> None:
        for col in observed:
            self.columns[col][rows] = published[col].to_numpy(dtype=object)

    def into(self, base: pd.DataFrame, category: tuple[str, ...]) -> pd.DataFrame:
        """``base`` with the assembled quasi-identifiers (a missing category published as
        missing again)."""
        out = base.copy()
        for col, values in self.columns.items():
            column = pd.Series(values, index=base.index).infer_objects()
            if col in category:
                column = column.where(column != MISSING_LABEL)
            out[col] = column
        return out


def published_missing(published: pd.DataFrame, category: tuple[str, ...]) -> pd.DataFrame:
    """A missing category published as missing again (``missing="category"``)."""
    out = published
    for col in category:
        if out is published:
            out = published.copy()
        out[col] = published[col].where(published[col] != MISSING_LABEL)
    return out


def weighted_metrics(pieces: Pieces, labels: NDArray[np.intp], classes: NDArray[np.intp]
                     ) -> dict[str, Any]:
    """The loss measures of the patterns, each a record-weighted mean over the patterns that
    observe a column (cells missing or blanked count in none of them); the group and class
    measures over the whole release."""
    parts = pieces.metrics
    total = sum(n for n, _ in parts)
    shared = [key for key, value in parts[0][1].items()
              if isinstance(value, float) and all(isinstance(m.get(key), float) for _, m in parts)
              ] if parts else []
    out: dict[str, Any] = {key: sum(n * m[key] for n, m in parts) / total for key in shared}
    out.update(group_size_summary(labels))
    out["privacy_of_quasi_identifiers"] = privacy_of_quasi_identifiers(classes)
    out["loss_measured_on"] = ("each missingness pattern's observed quasi-identifiers, "
                               "weighted by its records")
    return out
