"""The state a plan's steps hand on (:class:`PlanState`), and the before / after figures of
each step (:func:`figures`), recorded as a :class:`~microagg._pipeline.result.StepRecord`:
sdcMicro's risk and utility after each method (Templ, Kowarik & Meindl 2015, J. Stat. Softw.
67(4)).

A step's ``apply(state, options, rng)`` reads ``state.table`` (the working table, each column
in its own dtype: categorical and text columns as they came, numbers as floats, dates as
days, as the pipeline holds them), ``state.roles`` (the request's roles) and
``state.history``, and returns :meth:`PlanState.after_step` of its new table: the record of
what it changed (cells, the step's details) and the figures on the plan's keys before and
after it. Publication (dates, rounding, labels), verification and measurement come once,
after the last step (:mod:`microagg._pipeline.plan_stage`).
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
    from .._pipeline.request import Request
    from ._options import StepOptions

__all__ = ["PlanState", "StepRoles", "cells_changed", "figures", "step_record"]


@dataclass(frozen=True)
class StepRoles:
    """The request's roles, as a step and its verifier see them."""

    quasi_identifiers: tuple[str, ...]
    """The plan's keys: every step's columns, in order (the release's quasi-identifiers)."""
    sensitive: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    """Dropped from the published table (a verifier never sees them)."""
    weight: str | None = None
    """The survey weight column, if any."""
    household: str | None = None
    """The household identifier column, if any (steps marked ``per_household`` use it)."""
    strata: tuple[str, ...] = ()
    """The strata columns, if any."""
    dates: tuple[str, ...] = ()
    """The plan's keys that are dates: held as days since 1970-01-01 (floats) in the working
    table and in the verifier's original, published as dates."""

    def keywords(self, step: str) -> dict[str, str | None]:
        """The roles as the step families' cores take them: ``households``, ``weights`` and
        one ``strata`` column (a request with several is refused, naming ``step``)."""
        from ..exceptions import SchemaError

        if len(self.strata) > 1:
            raise SchemaError(f"Step {step!r} stratifies on one column; the request gives "
                              f"{len(self.strata)} strata columns {list(self.strata)}: "
                              "combine them into one column first.")
        return {"households": self.household, "weights": self.weight,
                "strata": self.strata[0] if self.strata else None}

    @classmethod
    def of(cls, request: Request) -> StepRoles:
        """The roles of ``request``."""
        strata = request.strata
        return cls(quasi_identifiers=tuple(request.quasi_identifiers),
                   sensitive=tuple(request.sensitive), identifiers=tuple(request.identifiers),
                   weight=request.weight, household=request.household,
                   strata=(() if strata is None else (strata,) if isinstance(strata, str)
                           else tuple(strata)),
                   dates=tuple(str(c) for c in request.dates))


@dataclass(frozen=True)
class PlanState:
    """What the steps of a plan hand on: the working table (the original's columns, the
    changed ones replaced), the request, its roles, the plan's keys as they were (for the
    figures) and the history of step records."""

    table: pd.DataFrame
    request: Request
    original: pd.DataFrame
    """The plan's keys (every step's columns) as they were, each in its dtype."""
    history: tuple[StepRecord, ...] = ()
    snapshots: tuple[pd.DataFrame, ...] = ()
    """The columns each step changed, as it left them (in the plan's order): what its
    verifier reads when a later step changes them too, and what the next step's verifier
    compares with."""
    outcomes: Mapping[int, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What a microaggregate step produced (its Outcome), by the step's position (0-based)."""
    timings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    """Warnings the steps owe the user, in order (the release's warnings)."""
    roles: StepRoles | None = None
    """The request's roles (:meth:`StepRoles.of`; filled in by :meth:`start`)."""

    @classmethod
    def start(cls, request: Request, table: pd.DataFrame, original: pd.DataFrame,
              timings: dict[str, float]) -> PlanState:
        """The state before the first step."""
        return cls(table=table, request=request, original=original, timings=timings,
                   roles=StepRoles.of(request))

    @property
    def keys(self) -> tuple[str, ...]:
        """The plan's keys: every step's columns, in order."""
        return tuple(str(c) for c in self.original.columns)

    def after_step(self, options: StepOptions, table: pd.DataFrame, *,
                   details: Mapping[str, Any] | None = None,
                   partitions: Sequence[NDArray[np.intp]] = (),
                   notes: Sequence[str] = (), outcome: Any = None,
                   loss: float | None = None) -> PlanState:
        """The state after the step of ``options`` made ``table`` (rows in the same order,
        the same columns): its record (cells changed, ``details``: plain values such as
        counts per column, ``partitions``: its groups' labels, if it groups records) and the
        figures on the plan's keys before and after it appended to the history."""
        if len(table) != len(self.table) or list(table.columns) != list(self.table.columns):
            raise ValueError(f"Step {options.name!r} must return the working table with its "
                             f"{len(self.table)} rows and columns in order; it returned "
                             f"{len(table)} rows and columns {list(table.columns)}.")
        keys = list(self.keys)
        before = self.table.loc[:, keys] if self.history else self.original
        record = step_record(options, self.original, before, table.loc[:, keys], partitions,
                             loss=loss, details=details,
                             columns_changed=columns_changed(self.table, table))
        outcomes = dict(self.outcomes)
        if outcome is not None:
            outcomes[len(self.history)] = outcome
        snapshot = table.loc[:, list(record.columns_changed)]
        return replace(self, table=table, history=(*self.history, record),
                       snapshots=(*self.snapshots, snapshot.reset_index(drop=True)),
                       outcomes=MappingProxyType(outcomes), notes=(*self.notes, *notes))


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


def columns_changed(before: pd.DataFrame, after: pd.DataFrame) -> tuple[str, ...]:
    """The columns of ``after`` whose values or type differ from ``before``'s (the same
    columns, rows in the same order; two missing cells are the same value)."""
    return tuple(str(c) for c in after.columns
                 if after[c] is not before[c]
                 and not after[c].reset_index(drop=True).equals(before[c].reset_index(drop=True)))


def step_record(options: Any, original: pd.DataFrame, before: pd.DataFrame,
                after: pd.DataFrame, partitions: Sequence[NDArray[np.intp]], *,
                loss: float | None = None, details: Mapping[str, Any] | None = None,
                columns_changed: Sequence[str] = ()) -> StepRecord:
    """The record of one step: ``before`` and ``after`` are the working table's keys (the
    columns of ``original``) before and after it, ``partitions`` its groups' labels."""
    sizes = [np.bincount(p) for p in partitions if p.size]
    return StepRecord(step=options.name, options=MappingProxyType(options.to_record()),
                      details=MappingProxyType(dict(details or {})),
                      columns_changed=tuple(columns_changed),
                      cells_changed=cells_changed(before, after),
                      groups=int(sum(s.size for s in sizes)),
                      smallest_group=int(min(s.min() for s in sizes)) if sizes else 0,
                      before=figures(original, before) if before is not original
                      else figures(original, original, loss=0.0),
                      after=figures(original, after, loss=loss))
