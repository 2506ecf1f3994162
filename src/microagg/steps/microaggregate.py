"""The ``microaggregate`` step: groups of at least k records on the step's quasi-identifiers,
each value replaced by its group's representative (:data:`microagg.steps.STEPS`' target), and
its verifier: the step's k on its quasi-identifiers, counted on the published table.

A plan runs its steps on a :class:`~._state.PlanState` (:mod:`._state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._state import PlanState, StepRoles, cells_changed, figures, step_record

if TYPE_CHECKING:  # pragma: no cover
    from .._pipeline.request import Request
    from ._plan import Microaggregate

__all__ = ["PlanState", "apply", "cells_changed", "figures", "step_record", "verify"]


def apply(state: PlanState, options: Microaggregate, rng: np.random.Generator) -> PlanState:
    """Microaggregate ``options.quasi_identifiers`` of the working table: the step's
    partition (its method, k and scaling), its representatives in place of the values, and
    the step's record."""
    from .._pipeline.grouping import grouping_stage
    from .._pipeline.numeric import quasi_identifier_matrix

    if options.within or options.per_household:
        from ._grouped import apply_grouped

        return apply_grouped(state, options, rng)
    request = step_request(state.request, state.table, options)
    values = quasi_identifier_matrix(state.table, options.quasi_identifiers)
    outcome = grouping_stage(request, values, rng, state.timings)
    table = state.table.copy()
    for j, col in enumerate(options.quasi_identifiers):
        table[col] = outcome.masked[:, j]
    return state.after_step(options, table, partitions=[outcome.labels], outcome=outcome)


def verify(options: Microaggregate, original: pd.DataFrame, published: pd.DataFrame,
           roles: StepRoles) -> Mapping[str, Any]:
    """The step's k on its quasi-identifiers, counted on the published table (raises
    :class:`~microagg.exceptions.PrivacyViolationError` below it: a partition of groups of
    at least k cannot publish fewer, so that is a bug)."""
    from .._pipeline.verify import k_check, published_classes

    if options.within or options.per_household:
        from ._grouped import verify_grouped

        return verify_grouped(options, original, published, roles)
    classes = published_classes(published, options.quasi_identifiers)
    check = k_check(options.k, int(np.bincount(classes).min()))
    return MappingProxyType({**check, "holds": True, "model": "k-anonymity of the step's quasi-identifiers "
                                              "on the published table"})


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
