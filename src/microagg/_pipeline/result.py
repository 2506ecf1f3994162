"""The one result type of every engine: :class:`Release`."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .verdict import Verdict, decide, kept_identifiers

__all__ = ["DOMAIN_PARAMS", "Release", "StepFigures", "StepRecord", "to_plain"]


def to_plain(value: Any) -> Any:
    """Mappings, tuples, numpy scalars and paths as JSON-ready Python values."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


class _ReadOnly(dict):
    """A read-only mapping while pickled (``MappingProxyType`` cannot be pickled)."""


def _thawed(value: Any) -> Any:
    """``value`` with every read-only mapping (at any depth) as a :class:`_ReadOnly`."""
    if isinstance(value, MappingProxyType):
        return _ReadOnly({k: _thawed(v) for k, v in value.items()})
    if isinstance(value, dict):
        return type(value)({k: _thawed(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_thawed(v) for v in value)
    return value


def _frozen(value: Any) -> Any:
    """The inverse of :func:`_thawed`."""
    if isinstance(value, _ReadOnly):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_frozen(v) for v in value)
    return value


def _read_only(value: Any) -> Any:
    """Mappings at any depth as read-only mappings, lists as tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _read_only(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_read_only(v) for v in value)
    return value


DOMAIN_PARAMS: Mapping[str, tuple[str, ...] | None] = MappingProxyType({
    "series": ("method", "k", "distance", "band", "representative", "series_columns",
               "identifiers", "microagg_version"),
    "semantic": ("method", "k", "quasi_identifiers", "semantic_columns",
                 "numeric_quasi_identifiers", "ontology", "distance", "identifiers", "synsets",
                 "aggregation", "microagg_version"),
    "documents": ("method", "k", "text_column", "max_features", "min_df", "max_df",
                  "stop_words", "ngram_range", "n_topics", "n_features", "microagg_version"),
    "assessed": None,
})
"""The ``Release.params`` layouts of the releases that are no microaggregation of a table
(:meth:`Release.of`'s ``layout``), each the keys of its domain in order: ``"series"``
(:mod:`microagg.series`: whole time series per record), ``"semantic"``
(:mod:`microagg.semantic`: nominal values by their meaning in an ontology), ``"documents"``
(:mod:`microagg.documents`: term vectors of free text), ``"assessed"`` (``None``: a release
re-derived from its files by :func:`microagg.audit.assess.assess_release`, whose params are those
of the summary it was given, whatever engine wrote it, completed with what was assessed).
A table's release has the one layout of every engine, :data:`microagg.engines.PARAMS`."""


def _laid_out(layout: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``params`` in ``layout`` (``"table"`` or a key of :data:`DOMAIN_PARAMS`), read-only."""
    if layout == "table":
        from ..engines import release_params

        return release_params(**params)
    if layout not in DOMAIN_PARAMS:
        raise KeyError(f"Release.params has no layout {layout!r}; its layouts are 'table', "
                       f"{', '.join(map(repr, DOMAIN_PARAMS))}. This is a bug in microagg.")
    keys = DOMAIN_PARAMS[layout]
    if keys is None:
        return MappingProxyType(dict(params))
    if set(params) != set(keys):
        raise KeyError(f"The {layout} Release.params have the keys {', '.join(params)}, not "
                       f"{', '.join(keys)}. This is a bug in microagg.")
    return MappingProxyType({key: params[key] for key in keys})


@dataclass(frozen=True)
class StepFigures:
    """Risk and utility of the working table at one point of a plan, on the plan's keys
    (the quasi-identifiers of all its steps).

    Attributes
    ----------
    k_anonymity : int
        The smallest number of records sharing one combination of the keys.
    unique_share : float
        The share of records whose combination of the keys is unique (0 to 1).
    information_loss : float
        SSE/SST in percent between the original keys and these, standard-scaled (0 on the
        original).
    """

    k_anonymity: int
    unique_share: float
    information_loss: float

    def summary(self) -> dict[str, Any]:
        """The figures as plain values."""
        return {"k_anonymity": self.k_anonymity, "unique_share": self.unique_share,
                "information_loss": self.information_loss}


@dataclass(frozen=True)
class StepRecord:
    """What one step of a plan did (``Release.steps``): sdcMicro's "before / after".

    Attributes
    ----------
    step : str
        The step's name (a key of :data:`microagg.steps.STEPS`).
    options : Mapping
        The step's options as a record (:meth:`microagg.steps.Microaggregate.to_record`).
    cells_changed : int
        Cells of the working table whose value the step changed.
    groups : int
        Groups of the step's partition.
    smallest_group : int
        Records in its smallest group (its group k).
    before, after : StepFigures
        The figures before the step (on the original for the first) and after it, on the
        working table before publication (rounding and dates come once, at the end).
    details : Mapping
        What the step says it did, as plain values (counts per column such as "values
        recoded" or "cells suppressed", a swap rate ...); empty when it says nothing more.
    columns_changed : tuple of str
        Every column of the working table the step changed, its own and any other (the
        household step's weight): what the faces publish as the release has it, never as
        the input had it.
    """

    step: str
    options: Mapping[str, Any]
    cells_changed: int
    groups: int
    smallest_group: int
    before: StepFigures
    after: StepFigures
    details: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    columns_changed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        object.__setattr__(self, "details", _read_only(self.details))
        object.__setattr__(self, "columns_changed", tuple(self.columns_changed))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Picklable (``MappingProxyType`` is not): the options and details as dicts."""
        return (StepRecord, (self.step, dict(self.options), self.cells_changed, self.groups,
                             self.smallest_group, self.before, self.after,
                             _thawed(self.details), self.columns_changed))

    def summary(self) -> dict[str, Any]:
        """The record as plain JSON-ready values (``details`` only when the step gave
        any)."""
        out = {"step": self.step, "options": to_plain(self.options),
               "cells_changed": self.cells_changed, "groups": self.groups,
               "smallest_group": self.smallest_group, "before": self.before.summary(),
               "after": self.after.summary()}
        if self.details:
            out["details"] = to_plain(self.details)
            out["columns_changed"] = list(self.columns_changed)
        return out


@dataclass(frozen=True, eq=False)
class Release:
    """A verified release: the only object users hold, whatever the engine. It never
    contains identifiers. Every engine and domain builds it with :meth:`of`, never field by
    field and never by :func:`dataclasses.replace`.

    Attributes
    ----------
    data : pandas.DataFrame, dask.dataframe.DataFrame or None
        The published table: the input's columns minus the identifiers, quasi-identifiers
        replaced by their group's representative, indexed by row position (0 .. n-1; never
        the input's index). In the input's row order in memory; a Dask DataFrame's rows are
        ordered by block (``sort_index()`` restores the input's order); ``None`` when the
        engine wrote the table to :attr:`output` (file, stream).
    labels : ndarray of shape (n_samples,) or None
        Group of each published row (``None`` when the data is not held in memory).
    params : Mapping
        Everything needed to reproduce the release (method, k, roles, aggregation, scaling,
        method parameters, microagg version).
    seed : int
        The random seed actually used (drawn and recorded when ``random_state=None``).
    checks : Mapping
        Privacy levels re-derived from the published data, e.g.
        ``checks["k_anonymity"] = {"required": 5, "achieved": 5, "model": ...}``.
    metrics : Mapping
        Information loss and disclosure risk (Python floats / ints).
    warnings : tuple of str
        Everything the user should know, privacy-relevant ones first.
    timings : Mapping
        Seconds spent in each stage.
    attribute_partitions : Mapping
        Only for releases microaggregated by attribute groups (``attribute_groups=``): the
        partition of each group, keyed by its columns joined with ``+``. ``labels`` then holds
        the classes of identical published quasi-identifiers.
    engine : {"memory", "file", "dask", "stream"}
        Where it was computed (:data:`microagg.engines.ENGINES`).
    output : pathlib.Path or None
        The file the engine wrote and verified (file and stream engines).
    rows : int or None
        Published rows; ``None``: the length of :attr:`data`.
    columns : tuple of str or None
        Published columns; ``None``: those of :attr:`data`.
    verdict : Verdict
        Whether the release is protected, and why (:func:`~microagg._pipeline.verdict.decide`
        of :attr:`checks` and the identifier-like columns kept, ``params["keep"]``): made
        once with the release, the words every output prints.
    steps : tuple of StepRecord
        What each step of the release's plan did, in order (one record for a one-step
        release; none for the engines that read files themselves).
    """

    data: Any
    labels: NDArray[np.intp] | None
    params: Mapping[str, Any]
    seed: int
    checks: Mapping[str, Any]
    metrics: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    attribute_partitions: Mapping[str, NDArray[np.intp]] = field(default_factory=dict)
    engine: str = "memory"
    output: pathlib.Path | None = None
    rows: int | None = None
    columns: tuple[str, ...] | None = None
    steps: tuple[StepRecord, ...] = ()
    replay: Callable[..., Release] | None = field(default=None, repr=False)
    """How to run the release's plan again on its original table (``replay(plan)``), for
    :meth:`without_last_step`; kept in this process only (never pickled or summarized)."""
    verdict: Verdict = field(init=False, repr=False)

    @classmethod
    def of(cls, *, data: Any, labels: NDArray[np.intp] | None,  # noqa: PLR0913 - a release's fields
           params: Mapping[str, Any], seed: int, checks: Mapping[str, Any],
           metrics: Mapping[str, Any], layout: str = "table", warnings: Iterable[str] = (),
           timings: Mapping[str, float] | None = None,
           attribute_partitions: Mapping[str, NDArray[np.intp]] | None = None,
           engine: str = "memory", output: pathlib.Path | None = None,
           rows: int | None = None, columns: Iterable[str] | None = None,
           steps: Iterable[StepRecord] = (),
           replay: Callable[..., Release] | None = None) -> Release:
        """The one constructor of a release, for every engine and domain: what every release
        shares is done here, once.

        Parameters
        ----------
        data, labels, seed, engine, output, rows, replay
            As the attributes of the same names.
        params : Mapping
            In ``layout``: ``"table"`` (the default, a microaggregation of a table by any
            engine) lays them out as :func:`microagg.engines.release_params` does, every key
            of :data:`microagg.engines.PARAMS` in its order and ``None`` where one does not
            apply; a key of :data:`DOMAIN_PARAMS` takes exactly that domain's keys.
        checks, metrics, timings, attribute_partitions : Mapping
            Copied into read-only mappings (``None``: empty).
        layout : str, default="table"
            The layout of ``params``.
        warnings : iterable of str
            Kept as a tuple, in order.
        columns : iterable of str, optional
            Kept as a tuple (``None``: those of ``data``).
        steps : iterable of StepRecord
            The records of the plan's steps (the one step of a one-step release); none for
            the engines that read files themselves and for the domains' releases.

        Raises
        ------
        KeyError
            If ``params`` do not fit ``layout`` (a bug in microagg, named).
        """
        return Release(
            data=data, labels=labels, params=_laid_out(layout, params), seed=seed,
            checks=MappingProxyType(dict(checks)), metrics=MappingProxyType(dict(metrics)),
            warnings=tuple(warnings), timings=MappingProxyType(dict(timings or {})),
            attribute_partitions=MappingProxyType(dict(attribute_partitions or {})),
            engine=engine, output=output, rows=rows,
            columns=tuple(columns) if columns is not None else None, steps=tuple(steps),
            replay=replay)

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", decide(self.checks, kept_identifiers(self.params)))

    @property
    def k(self) -> int:
        """The k-anonymity achieved by the published quasi-identifiers."""
        return int(self.checks["k_anonymity"]["achieved"])

    @property
    def n_rows(self) -> int:
        """Published rows (from :attr:`rows`, else :attr:`data`)."""
        return int(self.rows if self.rows is not None else self.data.shape[0])

    @property
    def column_names(self) -> list[str]:
        """Published columns (from :attr:`columns`, else :attr:`data`)."""
        return [str(c) for c in (self.columns if self.columns is not None
                                 else self.data.columns)]

    def without_last_step(self) -> Release:
        """The release of the same plan without its last step (sdcMicro's ``undolast``): the
        plan run again on the original table, under the recorded seed, so every step left
        gives the same result as in this release. A release made with a schema runs the
        shorter plan as that schema's own (its ``[[steps]]`` replaced, the plan given once).
        The columns only the last step changed are published as they were, on purpose
        (``params["keep"]``, so the verdict says so), as sdcMicro's ``undolast`` gives them
        back.

        Raises
        ------
        ValueError
            For a plan of one step (nothing would be left to release).
        RuntimeError
            When this release no longer holds its original table (an engine that reads
            files, or a release unpickled in another process): run ``anonymize`` again with
            ``Plan(...).without_last_step()``.
        """
        from ..steps import Plan

        records = self.params.get("plan")
        plan = Plan.from_records(records) if records else None
        if plan is None or self.replay is None:
            raise RuntimeError(
                "This release does not hold its original table (computed by the "
                f"{self.engine!r} engine, or unpickled): run anonymize(df, plan=Plan(...)"
                ".without_last_step(), random_state=release.seed) on the original instead.")
        shorter = plan.without_last_step()
        left = {c for step in shorter.steps for c in step.columns}
        undone = [c for c in plan.steps[-1].columns if c not in left]
        return self.replay(shorter, undone)

    def summary(self) -> dict[str, Any]:
        """Everything but the data and labels, as plain JSON-serializable values (with
        ``"steps"``, the step records, when a step recorded details)."""
        where = {} if self.engine == "memory" else {
            "engine": self.engine, **({"output": str(self.output)} if self.output else {})}
        steps = ({"steps": [s.summary() for s in self.steps]}
                 if any(s.details for s in self.steps) else {})
        return {
            "rows": self.n_rows,
            "columns": self.column_names,
            **where,
            "params": to_plain(self.params),
            "seed": self.seed,
            "verdict": self.verdict.summary(),
            "checks": to_plain(self.checks),
            "metrics": to_plain(self.metrics),
            "warnings": list(self.warnings),
            "timings": to_plain(self.timings),
            **steps,
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`summary` as a JSON string."""
        return json.dumps(self.summary(), indent=indent)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable state (to hand a release from a worker process to the workbench)."""
        return {name: _thawed(value) for name, value in self.__dict__.items()
                if name != "replay"}  # holds the original table: never leaves the process

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "replay", None)
        object.__setattr__(self, "steps", ())  # a state pickled before steps were recorded
        for name, value in state.items():
            object.__setattr__(self, name, _frozen(value))

    def __repr__(self) -> str:
        loss = ", ".join(f"{name}={self.metrics[name]:.4f}"
                         for name in ("information_loss", "ncp") if name in self.metrics)
        where = "" if self.engine == "memory" else f", engine={self.engine!r}"
        return (
            f"Release(rows={self.n_rows}, method={self.params['method']!r}, "
            f"k={self.params['k']}, achieved_k={self.k}{where}"
            + (f", {loss})" if loss else ")")
        )
