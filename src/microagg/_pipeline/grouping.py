"""The numeric grouping stages: one partition of all quasi-identifiers (block by block when
asked, with l-diversity and t-closeness enforced), or one per attribute group."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..engines.blocked import request_partitioner
from ..exceptions import PrivacyLeakWarning
from ..models import enforce_l_diversity, enforce_t_closeness
from ..partition import Partitioner
from ..partition.attribute_groups import resolve_attribute_groups
from .advice import time_budget
from .missing import repair_diversity
from .notes import warn_user
from .numeric import Outcome, aggregate_safely, standard_scaling
from .request import Request
from .verify import checked_partition

__all__ = ["attribute_group_stage", "enforce_models", "finish_stage", "grouping_stage",
           "request_aggregator"]


def enforce_models(request: Request, labels: NDArray[np.intp], timings: dict[str, float],
                   merge_cost: Callable[[NDArray[np.intp]], Mapping[str, Any]]
                   ) -> NDArray[np.intp]:
    """l-diversity, then t-closeness, by merging groups; ``merge_cost(labels)`` gives the
    enforcers' cost keyword (``{"X": scaled}``: SSE, or ``{"cost": ILOmegaCost(...)}``)."""
    df, sens = request.data, request.sensitive
    if request.l is not None:
        t = time.perf_counter()
        labels = enforce_l_diversity(labels, [df[c].to_numpy() for c in sens], l=request.l,
                                     diversity=request.diversity, c=request.diversity_c,
                                     k=request.k, names=sens, **merge_cost(labels))
        timings["l_diversity"] = time.perf_counter() - t
    if request.closeness:
        t = time.perf_counter()
        labels = enforce_t_closeness(labels, list(request.closeness.values()),
                                     t=float(request.t or 0.0), **merge_cost(labels))
        timings["t_closeness"] = time.perf_counter() - t
    return labels


def _noisy_warning(request: Request, sizes: NDArray[np.int64]) -> str | None:
    """The privacy warning a noisy aggregation owes (``None`` for a deterministic one)."""
    from ..aggregate.aggregators import AGGREGATORS

    if not request.noisy:
        return None
    return AGGREGATORS[request.aggregation or "mean"].warning(
        request.k, sizes=sizes, params=request.aggregation_params)


def finish_stage(request: Request, outcome: Outcome, partitioner: Partitioner, sizes: Any,
            seconds: float, n: int) -> Outcome:
    """The time budget, and the privacy warning of a noisy aggregation."""
    outcome.budget, note = time_budget(partitioner.name, outcome.method_params, seconds, n,
                                       given="time_limit" in request.method_params,
                                       phased=partitioner.phased_budget)
    if note:
        outcome.notes.append(note)
    warning = _noisy_warning(request, sizes)
    if warning:
        warn_user(outcome.privacy_notes, warning, PrivacyLeakWarning, first=True)
    return outcome


def grouping_stage(request: Request, values: NDArray[np.float64], rng: np.random.Generator,
                   timings: dict[str, float]) -> Outcome:
    """One partition of all quasi-identifiers, enforced, then aggregated."""
    partitioner = request_partitioner(request)
    params = partitioner.resolved_params(values.shape[0], request.method_params)
    scaling = request.scaling or "standard"
    scaler, scaled = standard_scaling(values, scaling)
    t = time.perf_counter()
    labels = checked_partition(partitioner, scaled, request.k, rng, params)
    timings["partition"] = time.perf_counter() - t
    labels = enforce_models(request, labels, timings, lambda _: {"X": scaled})
    labels = repair_diversity(request, labels, scaled)  # missing sensitive values
    t = time.perf_counter()
    masked = aggregate_safely(values, labels, method=request.aggregation or "mean",
                              random_state=rng, **request.aggregation_params)
    timings["aggregate"] = time.perf_counter() - t
    outcome = Outcome(labels=labels, masked=masked, scaled=scaled, scaler=scaler,
                      method=partitioner.name, scaling=scaling,
                      method_params=MappingProxyType({**partitioner.params, **params}),
                      alternative=None if partitioner.fixed_size else "mdav")
    finish_stage(request, outcome, partitioner, np.bincount(labels), timings["partition"],
            values.shape[0])
    if request.noisy:  # after the warning: a bug found here still leaves the user warned
        request_aggregator(request).verify(values, masked, labels, request.quasi_identifiers)
    return outcome


def request_aggregator(request: Request) -> Any:
    """The registry entry of the request's aggregation."""
    from ..aggregate.aggregators import AGGREGATORS

    return AGGREGATORS[request.aggregation or "mean"]


def attribute_group_stage(request: Request, values: NDArray[np.float64],
                          rng: np.random.Generator, timings: dict[str, float]) -> Outcome:
    """Each attribute group partitioned and aggregated on its own columns (seed 001, 2.3)."""
    partitioner = request_partitioner(request)
    params = partitioner.resolved_params(values.shape[0], request.method_params)
    scaling = request.scaling or "standard"
    scaler, scaled = standard_scaling(values, scaling)
    t = time.perf_counter()
    qi = request.quasi_identifiers
    groups = resolve_attribute_groups(request.attribute_groups or "individual", qi, scaled,
                                      n_groups=request.n_attribute_groups)
    position = {c: j for j, c in enumerate(qi)}
    masked = np.empty_like(values)
    partitions: dict[str, NDArray[np.intp]] = {}
    methods: dict[str, str] = {}
    for group in groups:
        cols = [position[c] for c in group]
        entry = request_partitioner(request, request.method
                                    or ("univariate-optimal" if len(cols) == 1 else "mdav"))
        labels = checked_partition(entry, np.ascontiguousarray(scaled[:, cols]), request.k,
                                   rng, params)
        masked[:, cols] = aggregate_safely(values[:, cols], labels,
                                           method=request.aggregation or "mean",
                                           random_state=rng, **request.aggregation_params)
        if request.noisy:
            request_aggregator(request).verify(values[:, cols], masked[:, cols], labels, group)
        partitions["+".join(group)] = labels
        methods["+".join(group)] = entry.name
    timings["partition_and_aggregate"] = time.perf_counter() - t
    outcome = Outcome(labels=np.zeros(values.shape[0], dtype=np.intp), masked=masked,
                      scaled=scaled, scaler=scaler, scaling=scaling,
                      method=partitioner.name if request.method is not None
                      else "per-group default",
                      method_params=MappingProxyType({**partitioner.params, **params}),
                      partitions=partitions, groups=tuple(groups), group_methods=methods,
                      alternative=None if partitioner.fixed_size else "mdav")
    sizes = np.concatenate([np.bincount(g) for g in partitions.values()])
    return finish_stage(request, outcome, partitioner, sizes, timings["partition_and_aggregate"],
                   values.shape[0])
