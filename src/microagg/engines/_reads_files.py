"""What the engines that read files share: their paths checked, their options (a plan of one
step, :func:`plan_options`), their Request built from the input's first rows, their release's
parameters and constant-column warning."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import __version__
from .._pipeline.notes import warn_user
from .._pipeline.request import Request
from .._pipeline.rules import EngineRefusal
from ..exceptions import ConstantColumnWarning
from ..io._formats import format_of
from ..steps import Microaggregate, Plan
from . import engines_running, release_params
from ._chunks import first_rows

__all__ = ["constant_columns", "engine_params", "file_paths", "file_request", "plan_options"]


def file_paths(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str]
               ) -> tuple[pathlib.Path, pathlib.Path]:
    """The input (must exist) and the output (never the input), both of a known format."""
    source = pathlib.Path(input_path).expanduser()
    target = pathlib.Path(output_path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(f"Input file {str(source)!r} does not exist.")
    if target.exists() and target.resolve() == source.resolve():
        raise ValueError(f"The output {str(target)!r} is the input; microagg never "
                         "overwrites its input.")
    format_of(source, parameter="input")
    format_of(target, parameter="output")
    return source, target


def file_request(source: pathlib.Path, *, engine: str, sep: str | None = None,
                 **options: Any) -> Request:
    """The Request for an engine that reads ``source`` itself, built from its first rows
    (:meth:`Request.build` with ``engine``; the rows are counted as the engine reads)."""
    return Request.build(first_rows(source, sep=sep), engine=engine, **options)


def engine_params(request: Request, *, sample_size: int) -> Mapping[str, Any]:
    """``Release.params`` of a release by an engine that reads files, in the one layout
    (:func:`~microagg.engines.release_params`): the Request's options (group means on
    z-scores, block by block, its block tree fitted on ``sample_size`` rows), the columns
    published on purpose (``keep``) and the survey roles as the in-memory engine records
    them; what does not apply is ``None``, or empty where the in-memory engine says "none"
    so (no dates, no rounding, no attribute groups); ``plan`` the one step as it ran (the
    method these engines ran, whether the plan or the keywords named it)."""
    return release_params(
        method=request.partitioner.name, k=request.k,
        quasi_identifiers=request.quasi_identifiers, sensitive=request.sensitive,
        identifiers=request.identifiers, aggregation="mean",
        aggregation_params=MappingProxyType({}), scaling="standard",
        method_params=MappingProxyType(dict(request.method_params)),
        intruder_knows=request.intruder_knows, t_distance=MappingProxyType({}),
        blocking=MappingProxyType({"blocking": request.blocking,
                                   "block_size": int(request.block_size),
                                   "sample_size": int(sample_size)}),
        group_methods=MappingProxyType({}), microagg_version=__version__,
        dates=MappingProxyType({}), rounding=MappingProxyType({}),
        plan=Plan([Microaggregate(request.quasi_identifiers, request.k,
                                  method=request.partitioner.name,
                                  method_params=dict(request.method_params))]).to_records(),
        keep=request.keep,
        weight=request.weight, household=request.household, strata=request.strata)


_STEP_OPTIONS = ("quasi_identifiers", "k", "method", "method_params", "aggregation",
                 "aggregation_params", "scaling")
"""The options of a :class:`~microagg.steps.Microaggregate` step, as Request options."""


def plan_options(plan: Any, *, engine: str, caller: str, **options: Any) -> dict[str, Any]:
    """The Request options of a face of an engine that reads files: ``options`` as given
    without ``plan``; with a plan of one step, its step's options (the same request; an
    option given both ways refused by name); a plan of more steps refused before any work
    (:class:`~microagg._pipeline.rules.EngineRefusal`, naming the engines that run it)."""
    from ..steps import Plan

    if plan is None:
        missing = [name for name in ("quasi_identifiers", "k") if options.get(name) is None]
        if missing:
            raise TypeError(f"{caller} needs {' and '.join(missing)} (or plan=, a "
                            "microagg.steps.Plan of one step).")
        return options
    if not isinstance(plan, Plan):
        raise TypeError(f"The 'plan' parameter of {caller} must be a microagg.steps.Plan. Got "
                        f"{type(plan).__name__} instead.")
    if len(plan.steps) > 1:
        raise EngineRefusal(engine, ["plan"], engines_running(["plan"]))
    twice = [name for name in _STEP_OPTIONS if options.get(name) not in (None, {}, ())]
    if twice:
        raise ValueError(f"{caller}: give {', '.join(twice)} either in the plan's step or as "
                         "keywords, not both.")
    step = plan.steps[0]
    return {**options, **{name: getattr(step, name) for name in _STEP_OPTIONS}}


def constant_columns(request: Request, varying: NDArray[np.bool_], notes: list[str]) -> None:
    """Warn about constant quasi-identifiers (excluded from the distances and the loss) and
    keep the warning in ``notes``."""
    constant = [c for c, v in zip(request.quasi_identifiers, varying, strict=True) if not v]
    if constant:
        warn_user(notes, f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: "
                         "excluded from the distances and the information loss.",
                  ConstantColumnWarning)
