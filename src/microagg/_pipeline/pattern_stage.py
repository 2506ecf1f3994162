"""The numeric grouping stage under ``missing="pattern"``: each missingness pattern
partitioned on its observed quasi-identifiers (see :mod:`.missing` and :mod:`.patterns`)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engines.blocked import request_partitioner
from ..models import SensitiveDistribution
from .grouping import enforce_models, finish_stage, request_aggregator
from .missing import MissingRecord, observed_levels, repair_diversity
from .numeric import Outcome, aggregate_safely, standard_scaling
from .patterns import PatternPlan, plan_patterns
from .request import Request
from .verify import checked_partition

__all__ = ["pattern_acceptor", "pattern_stage", "restricted_request"]


def _restricted(dist: SensitiveDistribution, rows: NDArray[np.intp]) -> SensitiveDistribution:
    """The same distribution (the whole table's ``q``), over ``rows`` only."""
    out = copy.copy(dist)
    out.codes = dist.codes[rows]
    return out


def restricted_request(request: Request, rows: NDArray[np.intp],
                       quasi_identifiers: tuple[str, ...] | None = None) -> Request:
    """The request on ``rows`` (t-closeness still against the whole table)."""
    qi = request.quasi_identifiers if quasi_identifiers is None else quasi_identifiers
    return replace(request, data=request.data.iloc[rows].reset_index(drop=True),
                   quasi_identifiers=qi,
                   hierarchies=MappingProxyType({c: h for c, h in request.hierarchies.items()
                                                 if c in qi}),
                   closeness=MappingProxyType({c: _restricted(d, rows)
                                               for c, d in request.closeness.items()}))


def pattern_acceptor(request: Request) -> Callable[[NDArray[np.intp]], bool] | None:
    """Whether a pattern's rows as a whole reach l (on observed values) and t."""
    if request.l is None and not request.closeness:
        return None
    sens = [request.data[c].to_numpy(dtype=object) for c in request.sensitive]

    def accept(rows: NDArray[np.intp]) -> bool:
        whole = np.zeros(rows.size, dtype=np.intp)
        if request.l is not None and any(
                observed_levels(whole, s[rows], request.diversity, request.diversity_c)[0]
                < request.l - 1e-12 for s in sens):
            return False
        return all(_restricted(d, rows).emd(whole, 1)[0] <= float(request.t or 0) + 1e-12
                   for d in request.closeness.values())

    return accept


def _full_scaled(values: NDArray[np.float64], scaler: Any, scaled: NDArray[np.float64]
                 ) -> NDArray[np.float64]:
    """(n, p) scaled values: constant columns 0, missing cells NaN."""
    full = np.where(np.isnan(values), np.nan, 0.0)
    full[:, scaler[0]] = scaled
    return full


def _one_pattern(request: Request, rows: NDArray[np.intp], observed: NDArray[np.bool_],
                 full: NDArray[np.float64], rng: np.random.Generator,
                 timings: dict[str, float]) -> NDArray[np.intp]:
    """Groups of one pattern: the method on its ``observed`` (varying) columns, then l / t."""
    varying = np.flatnonzero(observed)
    X = np.ascontiguousarray(full[np.ix_(rows, varying)])
    if varying.size == 0:
        labels = np.zeros(rows.size, dtype=np.intp)
    else:
        partitioner = request_partitioner(request)
        params = partitioner.resolved_params(rows.size, request.method_params)
        labels = checked_partition(partitioner, X, request.k, rng, params)
    sub = restricted_request(request, rows)
    labels = enforce_models(sub, labels, timings, lambda _: {"X": X})
    return repair_diversity(sub, labels, X)


def _plan(request: Request, values: NDArray[np.float64], full: NDArray[np.float64]
          ) -> PatternPlan:
    return plan_patterns(np.isnan(values), request.k, full, names=request.quasi_identifiers,
                         accept=pattern_acceptor(request))


def pattern_stage(request: Request, values: NDArray[np.float64], rng: np.random.Generator,
                  timings: dict[str, float], record: MissingRecord) -> Outcome:
    """The numeric grouping stage per missingness pattern; the plan goes into ``record``."""
    partitioner = request_partitioner(request)
    scaling = request.scaling or "standard"
    scaler, scaled = standard_scaling(values, scaling)
    full = _full_scaled(values, scaler, scaled)
    t = time.perf_counter()
    plan = record.plan = _plan(request, values, full)
    labels = np.empty(values.shape[0], dtype=np.intp)
    masked = np.full_like(values, np.nan)
    offset = 0
    for j, missing in enumerate(plan.missing):
        rows = plan.rows(j)
        sub = _one_pattern(request, rows, ~missing & scaler[0], full, rng, timings)
        labels[rows] = sub + offset
        offset += int(sub.max()) + 1
        cols = np.flatnonzero(~missing)
        if cols.size:
            block = np.ascontiguousarray(values[np.ix_(rows, cols)])
            masked[np.ix_(rows, cols)] = aggregate_safely(
                block, sub, method=request.aggregation or "mean", random_state=rng,
                **request.aggregation_params)
            if request.noisy:
                request_aggregator(request).verify(
                    block, masked[np.ix_(rows, cols)], sub,
                    tuple(request.quasi_identifiers[c] for c in cols))
    timings["partition"] = time.perf_counter() - t
    params = partitioner.resolved_params(values.shape[0], request.method_params)
    outcome = Outcome(labels=labels, masked=masked, scaled=scaled, scaler=scaler,
                      method=partitioner.name, scaling=scaling,
                      method_params=MappingProxyType({**partitioner.params, **params}),
                      alternative=None if partitioner.fixed_size else "mdav")
    return finish_stage(request, outcome, partitioner, np.bincount(labels),
                        timings["partition"], values.shape[0])
