"""The one place an in-memory :class:`~microagg._pipeline.result.Release` is built.

Every in-memory release runs ``stage -> publish -> verify -> measure -> Release``, each once:
a stage masks the table (:mod:`.numeric`, :mod:`.mixed`, :mod:`.plan_stage`),
:func:`~.publish.publish` restores dates and rounds, the stage's verifier derives its checks
from the published table and its measures compare the original with it. :func:`assemble`
adds what every release checks and measures the same way, on the published table (the
columns published unchanged that break k, the survey risk, the utility by analysis, the
homogeneity warning), with the warnings accumulated in one list, and builds the Release with
:meth:`Release.of` (the one constructor of every engine and domain), its params in the one
layout of every engine (:data:`microagg.engines.PARAMS`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .analysis_step import analysis_utility_figures
from .attack_step import release_attacks
from .homogeneous import warn_homogeneity
from .household_relink import household_relinking_check, warn_relinking
from .publish import published_params
from .result import Release, StepRecord
from .survey_risk_step import survey_risk_figures
from .unmasked import unchanged_columns_check, warn_broken_k

if TYPE_CHECKING:  # pragma: no cover
    from .request import Request

__all__ = ["Findings", "assemble"]


@dataclass
class Findings:
    """What a stage derived from the published table, completed by :func:`assemble`."""

    checks: dict[str, Any]
    metrics: dict[str, Any]
    warnings: list[str]
    """Every warning of the release, privacy-relevant ones first (one list, appended to)."""
    timings: dict[str, float]
    attacked: pd.DataFrame | None = None
    """The published table row for row with the original, when ``data`` is not (a release
    that shuffles its rows): the attacks' (:mod:`.attack_step`)."""


def assemble(request: Request, *, data: pd.DataFrame, labels: NDArray[np.intp], seed: int,
             params: Mapping[str, Any], findings: Findings,
             partitions: Mapping[str, NDArray[np.intp]] | None = None,
             steps: tuple[StepRecord, ...] = ()) -> Release:
    """The Release of ``request``: ``data`` is the published table (dates back, rounded,
    rows in their published order), ``findings`` what the stage derived from it; the
    published-columns check, the survey risk and the homogeneity warning are added here,
    and ``params`` completed with how the table was published and the survey roles. The
    attacks (:mod:`.attack_step`) are tried on ``findings.attacked`` (default ``data``): the
    published table row for row with the original, before a release shuffles its rows.
    """
    checks, metrics, warnings = findings.checks, findings.metrics, findings.warnings
    timings = findings.timings
    required = checks.get("k_anonymity", {}).get("required")
    broken = unchanged_columns_check(data, request, required)
    if broken is not None:
        warn_broken_k(broken, warnings)
        checks["published_columns"] = broken
    relinked = household_relinking_check(data, _household_ids(request, data),
                                         _unchanged(data, request))
    if relinked is not None:
        warn_relinking(relinked, warnings)
        checks["household_relinking"] = relinked
    started = time.perf_counter()
    risk = survey_risk_figures(data, request)
    if risk is not None:
        metrics["survey_risk"] = risk
        timings["survey_risk"] = time.perf_counter() - started
    started = time.perf_counter()
    analysis = analysis_utility_figures(data, request, seed)
    if analysis is not None:
        metrics["analysis_utility"] = analysis
        timings["analysis_utility"] = time.perf_counter() - started
    warn_homogeneity(metrics, warnings)
    t = time.perf_counter()
    attacked = data if findings.attacked is None else findings.attacked
    attacks = release_attacks(request, attacked, seed)
    if attacks is not None:
        metrics["attacks"] = attacks
        timings["attacks"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - request.started
    return Release.of(
        data=data, labels=labels, seed=seed,
        params={**params, **published_params(request),
                "plan": request.plan.to_records() if request.plan else None,
                "keep": request.keep, "weight": request.weight,
                "household": request.household, "strata": request.strata},
        checks=checks, metrics=metrics, warnings=warnings, timings=timings,
        attribute_partitions=partitions, steps=steps, replay=request.replay)


def _household_ids(request: Request, data: pd.DataFrame) -> pd.Series | None:
    """The household id of each published row (rows in = rows out, same order), or ``None``
    without a household role or when the request holds only the table's first rows."""
    household = request.household
    if household is None or household not in request.data.columns \
            or len(request.data) != len(data):
        return None
    return request.data[household]


def _unchanged(data: pd.DataFrame, request: Request) -> list[str]:
    """The published columns without a masking role (published unchanged), the household id
    itself aside."""
    roles = {*request.quasi_identifiers, *request.sensitive, *request.identifiers,
             request.household}
    return [str(c) for c in data.columns if c not in roles]
