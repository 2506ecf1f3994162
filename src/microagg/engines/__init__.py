"""The engines that run a :class:`~microagg._pipeline.request.Request`, by name.

An engine executes a Request and hands back the one
:class:`~microagg._pipeline.result.Release` (``Release.engine`` says which ran it):

* ``memory`` (``--engine local``): the whole table in this process, optionally block by
  block (:mod:`.blocked`);
* ``file`` (``--engine file``): a CSV or Parquet file larger than memory, in chunks
  (:mod:`.file`);
* ``dask`` (``--engine dask``): a Dask cluster (:mod:`.dask`, :mod:`.dask_file`);
* ``stream``: records as they arrive, under a delay bound (:mod:`.stream`, :mod:`.stream_csv`;
  a command of its own, ``microagg stream``, not an ``--engine``).

:data:`ENGINES` carries what a face needs to choose one: its ``--engine`` name, whether it
reads the table from a file itself, and which Request options it runs (the others are refused
once, by :meth:`Request.build <microagg._pipeline.request.Request.build>`, with every refused
option named). Importing this package imports no engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._constraints import unknown_option

__all__ = ["ENGINES", "NUMERIC_BLOCKED", "REFUSABLE", "Engine", "engines_running", "get_engine"]

REFUSABLE = ("aggregation", "aggregation_params", "epsilon", "bounds", "hierarchies", "l", "t",
             "intruder_knows", "attribute_groups", "clustering_il", "refine", "scaling",
             "n_jobs", "dates", "rounding", "certify", "weights", "households", "schema")
"""Request options an engine may not run, in the order a refusal lists them (``weights`` and
``households``: the survey roles, given as options or by a schema, for the survey disclosure
risk; ``schema``: a schema with hierarchies, ordinal columns, categorical or date
quasi-identifiers, or round digits). ``rounding`` counts only when columns are named: the engines that read files
themselves publish unrounded means (no integer rounding by default), so ``rounding=False``
asks nothing of them."""

NUMERIC_BLOCKED = frozenset({"n_jobs", "refine"})
"""What the file engine runs besides numeric microaggregation by group means, block by
block: worker processes (``n_jobs``) and the quality mode (``refine``: mdav-scale block by
block)."""


@dataclass(frozen=True)
class Engine:
    """A registered engine: how to run it and what it runs."""

    name: str
    """``Release.engine`` of its releases."""
    option: str
    """Its ``--engine`` name."""
    summary: str
    """One line on what it does."""
    target: str
    """``"module:function"`` of its run function, imported on first use: ``run(request, *,
    progress=None) -> Release`` for an in-memory engine (``progress(grouped, n_samples)``:
    see :mod:`microagg._progress`); ``run(request, source, target, *, sep=None,
    on_stage=None, **options) -> Release`` for one that reads its input file itself."""
    reads_files: bool = False
    """Whether it reads the input file itself (in chunks or on a cluster), so that its Request
    is built from the file's first rows (:meth:`Request.build` with ``engine=``)."""
    runs: frozenset[str] | None = None
    """The options of :data:`REFUSABLE` it runs; ``None``: every option."""
    blocks: bool = False
    """Whether it always runs block by block (``blocking`` defaults to ``"kd"``)."""
    stages: tuple[str, ...] = ()
    """The stages it reports through ``on_stage`` (for progress displays)."""
    command: str = "anonymize"
    """The command that runs it (``microagg anonymize --engine OPTION``, or its own)."""

    @property
    def run(self) -> Callable[..., Any]:
        """The run function (imported now)."""
        module, function = self.target.split(":")
        return getattr(importlib.import_module(module), function)

    @property
    def numeric_only(self) -> bool:
        """Whether it runs numeric microaggregation only (no generalization, DP, groups)."""
        return self.runs is not None

    def refused(self, options: Mapping[str, Any], schema: Any = None) -> list[str]:
        """The options of :data:`REFUSABLE` given in ``options`` (and ``schema``) that this
        engine does not run, in :data:`REFUSABLE`'s order."""
        if self.runs is None:
            return []
        given = {name for name in REFUSABLE if _given(name, options.get(name))}
        if schema is not None and _schema_needs_memory(schema):
            given.add("schema")
        if schema is not None:  # the survey roles a schema gives
            given.update(name for name, column in (("weights", schema.weight),
                                                   ("households", schema.household))
                         if column is not None)
        return [name for name in REFUSABLE if name in given and name not in self.runs]


def _given(name: str, value: Any) -> bool:
    if name == "aggregation":
        return value not in (None, "mean")
    if name == "certify":  # False: not asked for
        return value not in (None, False)
    if name == "rounding":  # None / True: the default, False: none; both unrounded here
        return isinstance(value, Mapping) and bool(value)
    return value is not None and not (isinstance(value, (Mapping, list, tuple, str))
                                      and not value)


def _schema_needs_memory(schema: Any) -> bool:
    """Hierarchies, ordinal columns, categorical or date quasi-identifiers, round digits:
    what an engine that reads chunks cannot apply (codes would be averaged, dates refused,
    means published unrounded)."""
    return bool(schema.hierarchies) or any(
        c.type == "ordinal" or (c.type in ("categorical", "date")
                                and c.role == "quasi-identifier")
        or c.round not in (None, "none") for c in schema.columns.values())


_STAGES = ("statistics", "routing", "microaggregation", "writing")

ENGINES: Mapping[str, Engine] = MappingProxyType({
    "memory": Engine("memory", "local", "The whole table in memory (block by block with "
                     "blocking=...).", "microagg._pipeline.stages:run"),
    "file": Engine("file", "file", "Out of core: streams a CSV / Parquet file in chunks, blocks "
                   "it, writes in the input's order; memory bounded by the block size.",
                   "microagg.engines.file:run_file", reads_files=True, runs=NUMERIC_BLOCKED,
                   blocks=True, stages=_STAGES),
    "dask": Engine("dask", "dask", "A Dask cluster (a scheduler address, or a local cluster of "
                   "one worker per CPU).", "microagg.engines.dask_file:run_dask_file",
                   reads_files=True, runs=frozenset({"refine"}), blocks=True,
                   stages=_STAGES),
    "stream": Engine("stream", "stream", "Records as they arrive: each published within a "
                     "delay bound, in a group of at least k that never changes.",
                     "microagg.engines.stream_csv:stream_csv", reads_files=True,
                     runs=frozenset(), command="stream"),
})
"""Registered engines by ``Release.engine`` name (read-only)."""


def engines_running(options: Sequence[str]) -> tuple[str, ...]:
    """The engines of ``microagg anonymize`` (registry names) that run every one of
    ``options`` (names of :data:`REFUSABLE`), in registry order.

    Parameters
    ----------
    options : sequence of str
        Names of :data:`REFUSABLE`.

    Examples
    --------
    >>> engines_running(["weights"]), engines_running(["refine"])
    (('memory',), ('memory', 'file', 'dask'))
    """
    return tuple(engine.name for engine in ENGINES.values() if engine.command == "anonymize"
                 and (engine.runs is None or set(options) <= engine.runs))


def get_engine(name: str) -> Engine:
    """Look an engine up by name or ``--engine`` name; an unknown one lists the valid ones.

    Parameters
    ----------
    name : str
        A key of :data:`ENGINES` (``"memory"``) or an ``--engine`` name (``"local"``).

    Examples
    --------
    >>> get_engine("local").name
    'memory'
    """
    for engine in ENGINES.values():
        if name in (engine.name, engine.option):
            return engine
    raise unknown_option("engine", name,
                         [e.option for e in ENGINES.values() if e.command == "anonymize"])
