"""The ``microaggregate`` step: groups of at least k records on the step's quasi-identifiers,
each value replaced by its group's representative (:data:`microagg.steps.STEPS`' target).

A plan runs its steps on a :class:`PlanState`: the working table, the roles and the history
of :class:`~microagg._pipeline.result.StepRecord` (what each step changed, and the risk and
utility before and after it, :func:`figures`). Publication (dates, rounding), verification
and measurement come once, after the last step (:mod:`microagg._pipeline.plan_stage`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._pipeline.result import StepFigures, StepRecord
from .._pipeline.verify import published_classes

if TYPE_CHECKING:  # pragma: no cover
    from .._pipeline.numeric import Outcome
    from .._pipeline.request import Request
    from ._plan import Microaggregate

__all__ = ["PlanState", "apply", "cells_changed", "figures", "step_record"]


@dataclass(frozen=True)
class PlanState:
    """What the steps of a plan hand on: the working table (the original's columns, the
    masked ones replaced), the request's roles and checked options, the original keys (for
    the figures) and the history of step records, with each step's partition."""

    table: pd.DataFrame
    request: Request
    original: pd.DataFrame
    """The plan's keys (every step's quasi-identifiers) as they were, as floats."""
    history: tuple[StepRecord, ...] = ()
    outcomes: tuple[Outcome, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def keys(self) -> tuple[str, ...]:
        """The plan's keys: every step's quasi-identifiers, in order."""
        return tuple(str(c) for c in self.original.columns)


def figures(original: pd.DataFrame, current: pd.DataFrame, *,
            loss: float | None = None) -> StepFigures:
    """Risk and utility of ``current`` on the keys (the columns of ``original``): the
    smallest class of identical key values, the share of records unique on them, and
    ``loss`` or, without it, the SSE/SST in percent of the numeric keys standard-scaled by
    the original's spread (missing cells left out; constant columns add nothing)."""
    classes, sizes = _classes(current.loc[:, list(original.columns)])
    unique = float(np.mean(sizes[classes] == 1)) if classes.size else 0.0
    return StepFigures(k_anonymity=int(sizes.min()) if sizes.size else 0,
                       unique_share=unique,
                       information_loss=_loss(original, current) if loss is None else loss)


def _classes(table: pd.DataFrame) -> tuple[NDArray[np.intp], NDArray[np.int64]]:
    """The class of identical rows of each row, and the size of each class: for numbers,
    one sort of the rows' bytes (-0.0 and 0.0 one value); else the verifier's classes."""
    if table.shape[1] and all(pd.api.types.is_float_dtype(t) for t in table.dtypes):
        values = np.ascontiguousarray(table.to_numpy(dtype=np.float64) + 0.0)
        rows = values.view(np.dtype((np.void, 8 * values.shape[1]))).ravel()
        _, inverse, sizes = np.unique(rows, return_inverse=True, return_counts=True)
        return inverse.ravel().astype(np.intp), sizes.astype(np.int64)
    classes = published_classes(table, list(table.columns))
    return classes, np.bincount(classes).astype(np.int64)


def _loss(original: pd.DataFrame, current: pd.DataFrame) -> float:
    numeric = [c for c in original.columns
               if pd.api.types.is_numeric_dtype(original[c].dtype)
               and pd.api.types.is_numeric_dtype(current[c].dtype)
               and not pd.api.types.is_bool_dtype(original[c].dtype)]
    if not numeric:
        return 0.0
    a = original.loc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    b = current.loc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    if not (np.isnan(a).any() or np.isnan(b).any()):  # complete: one pass of sums
        peak = _magnitude(a)
        a, b = a / peak, b / peak
        variance = a.var(axis=0)
        varying = variance > 0  # a constant column: no loss, no total
        if not varying.any():
            return 0.0
        lost = float((((a - b)[:, varying] ** 2).sum(axis=0) / variance[varying]).sum())
        return 100.0 * lost / (a.shape[0] * int(varying.sum()))
    observed = ~np.isnan(a).all(axis=0)
    peak = _magnitude(a[:, observed])
    a, b = a[:, observed] / peak, b[:, observed] / peak
    spread = np.nanstd(a, axis=0) if a.shape[0] else np.zeros(a.shape[1])
    spread[~(spread > 0)] = np.inf  # a constant column: no loss, no total
    za = (a - np.nanmean(a, axis=0)) / spread
    zb = (b - np.nanmean(a, axis=0)) / spread
    both = ~np.isnan(za) & ~np.isnan(zb)
    total = float(np.sum(np.where(both, za, 0.0) ** 2))
    lost = float(np.sum(np.where(both, za - zb, 0.0) ** 2))
    return 100.0 * lost / total if total > 0 else 0.0


def _magnitude(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column's largest magnitude (1 for a column of zeros): z-scores ignore a
    column's scale, so dividing by it first keeps the sums finite near 1e308."""
    peak = np.nanmax(np.abs(values), axis=0) if values.size else np.ones(values.shape[1])
    peak[~(peak > 0)] = 1.0
    return peak


def cells_changed(before: pd.DataFrame, after: pd.DataFrame) -> int:
    """Cells whose value differs between two tables of the same columns (two missing cells
    are the same value)."""
    a = before.reset_index(drop=True)
    b = after.reset_index(drop=True).loc[:, list(a.columns)]
    if all(pd.api.types.is_float_dtype(t) for t in (*a.dtypes, *b.dtypes)):
        x, y = a.to_numpy(), b.to_numpy()
        return int(np.sum(~((x == y) | (np.isnan(x) & np.isnan(y)))))
    same = (a.astype(object) == b.astype(object)) | (a.isna() & b.isna())
    return int((~same.to_numpy()).sum())


def step_record(options: Any, original: pd.DataFrame, before: pd.DataFrame,
                after: pd.DataFrame, partitions: Sequence[NDArray[np.intp]], *,
                loss: float | None = None) -> StepRecord:
    """The record of one step: ``before`` and ``after`` are the working table's keys (the
    columns of ``original``) before and after it, ``partitions`` its groups' labels."""
    sizes = [np.bincount(p) for p in partitions if p.size]
    return StepRecord(step=options.name, options=MappingProxyType(options.to_record()),
                      cells_changed=cells_changed(before, after),
                      groups=int(sum(s.size for s in sizes)),
                      smallest_group=int(min(s.min() for s in sizes)) if sizes else 0,
                      before=figures(original, before) if before is not original
                      else figures(original, original, loss=0.0),
                      after=figures(original, after, loss=loss))


def apply(state: PlanState, options: Microaggregate, rng: np.random.Generator) -> PlanState:
    """Microaggregate ``options.quasi_identifiers`` of the working table: the step's
    partition (its method, k and scaling), its representatives in place of the values, and
    the step's record."""
    from .._pipeline.grouping import grouping_stage
    from .._pipeline.numeric import quasi_identifier_matrix

    request = step_request(state.request, state.table, options)
    values = quasi_identifier_matrix(state.table, options.quasi_identifiers)
    outcome = grouping_stage(request, values, rng, state.timings)
    table = state.table.copy()
    for j, col in enumerate(options.quasi_identifiers):
        table[col] = outcome.masked[:, j]
    keys = list(state.keys)
    record = step_record(options, state.original, state.table.loc[:, keys]
                         if state.history else state.original, table.loc[:, keys],
                         [outcome.labels])
    return replace(state, table=table, history=(*state.history, record),
                   outcomes=(*state.outcomes, outcome))


def step_request(request: Request, table: pd.DataFrame, options: Microaggregate) -> Request:
    """The request one step runs: the working table, the step's columns, k and options
    (checked by :func:`~microagg._pipeline.plan_request.check_plan_steps`)."""
    from ..aggregate.aggregators import aggregation_params
    from ..partition import get_partitioner

    aggregation = options.aggregation or "mean"
    partitioner = get_partitioner(options.method or "mdav")
    method_params: Mapping[str, Any] = partitioner.params_for_scaling(
        dict(options.method_params), options.scaling)
    return replace(request, data=table, quasi_identifiers=options.quasi_identifiers,
                   k=options.k, method=options.method, scaling=options.scaling,
                   method_params=MappingProxyType(dict(method_params)),
                   aggregation=aggregation,
                   aggregation_params=MappingProxyType(dict(
                       aggregation_params(aggregation, options.aggregation_params))),
                   kind="numeric")
