"""The engines that run a :class:`~microagg._pipeline.request.Request`, by name.

An engine executes a Request and hands back the one
:class:`~microagg._pipeline.result.Release` (``Release.engine`` says which ran it):

* ``memory`` (``--engine local``): the whole table in this process, optionally block by
  block (:mod:`.blocked`);
* ``file`` (``--engine file``): a CSV or Parquet file larger than memory, in chunks
  (:mod:`.file`);
* ``dask`` (``--engine dask``): a Dask cluster (:mod:`.dask`, :mod:`.dask.file`);
* ``stream``: records as they arrive, under a delay bound (:mod:`.stream`, :mod:`.stream.csv_files`;
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

from .._base.constraints import unknown_option

__all__ = ["ASKS_NOTHING", "ENGINES", "NUMERIC_BLOCKED", "PARAMS", "REFUSABLE", "Engine",
           "engines_running", "get_engine", "release_params"]

REFUSABLE = ("sensitive", "identifiers", "keep", "method_params", "aggregation",
             "aggregation_params", "scaling", "epsilon", "bounds", "hierarchies", "l",
             "diversity", "diversity_c", "t", "t_distance", "intruder_knows",
             "attribute_groups", "n_attribute_groups", "categorical_aggregation",
             "clustering_il", "refine", "blocking", "block_size", "n_jobs", "missing", "dates",
             "rounding", "certify", "weights", "households", "strata", "plan", "schema",
             "control")
"""Every Request option an engine may not run, in the order a refusal lists them: every
keyword of :func:`microagg.anonymize` but the three every engine runs (``quasi_identifiers``,
``k``, ``random_state``) and ``method`` (a method an engine cannot run is refused on its own,
:meth:`Request.build <microagg._pipeline.request.Request.build>`). An option counts as given
when it asks for something: not ``None``, not empty, not its default (:data:`ASKS_NOTHING`).
``weights``, ``households`` and ``strata``: the survey roles, given as options or by a
schema, for the survey disclosure risk; ``plan``: a plan of more than one step (a plan of one
step is the same request as its step's options); ``control``: the records the attacks
compare with (only the in-memory engine attacks a release; ``attacks``, which asks for
them, is refused by nobody: a release read from files is not attacked, and has no
``metrics["attacks"]``); ``schema``: a schema with hierarchies,
ordinal columns, categorical or date quasi-identifiers, or round digits. ``rounding`` counts
only when columns are named: the engines that read files themselves publish unrounded means
(no integer rounding by default), so ``rounding=False`` asks nothing of them."""

ASKS_NOTHING: Mapping[str, tuple[Any, ...]] = MappingProxyType({
    "aggregation": (None, "mean"), "diversity": (None, "distinct"), "diversity_c": (None, 2.0),
    "t_distance": (None, "auto"), "categorical_aggregation": (None, "generalize"),
    "certify": (None, False), "missing": (None, "pattern", "refuse"),
})
"""The values of an option that ask nothing of an engine (its defaults). ``missing``:
``"pattern"`` and ``"refuse"`` both publish complete data unchanged, and an engine that reads
its input itself refuses a missing quasi-identifier value, naming its row."""

NUMERIC_BLOCKED = frozenset({"sensitive", "identifiers", "keep", "method_params", "blocking",
                             "block_size", "n_jobs", "refine"})
"""What the file engine runs besides numeric microaggregation by group means, block by
block: the roles (sensitive columns published unchanged, identifiers dropped, columns kept on
purpose), the method's parameters, the blocking, worker processes (``n_jobs``) and the
quality mode (``refine``: mdav-scale block by block)."""

PARAMS = ("method", "k", "quasi_identifiers", "numeric_quasi_identifiers",
          "ordinal_quasi_identifiers", "categorical_quasi_identifiers",
          "categorical_aggregation", "hierarchies", "sensitive", "identifiers", "aggregation",
          "aggregation_params", "scaling", "method_params", "epsilon", "intruder_knows", "l",
          "diversity", "t", "t_distance", "attribute_groups", "blocking", "group_methods",
          "time_budget", "certify", "microagg_version", "missing", "dates", "rounding", "plan",
          "keep", "weight", "household", "strata")
"""The keys of ``Release.params``, the same for every engine and every table's release
(:meth:`~microagg._pipeline.result.Release.of` lays them out through :func:`release_params`):
a value that does not apply to an engine is ``None``. The quasi-identifiers by kind, the
categorical aggregation and the hierarchies (by their source) are those of a release with a
categorical or ordinal quasi-identifier (``None`` for a numeric one). What only one engine
takes is recorded under the key it belongs to: ``blocking`` holds the block size (and, for
the engines that fit their block tree on a sample, ``sample_size``; for the stream, its
window of arrivals: ``delay`` and ``flush_age``); ``plan`` the steps as records
(:meth:`microagg.steps.Plan.to_records`: one ``microaggregate`` step where the engine runs
no plan of more). Where a release ran (``Release.engine``, a Dask scheduler, worker
processes) is no parameter of it: the same request and seed publish the same table on every
engine."""


def release_params(**values: Any) -> Mapping[str, Any]:
    """``Release.params`` in the one layout (:data:`PARAMS`): ``values`` in its order, every
    key not given ``None``; a key outside the layout is a bug.

    Parameters
    ----------
    **values
        The parameters of the release, by their keys in :data:`PARAMS`.

    Examples
    --------
    >>> params = release_params(method="mdav", k=3)
    >>> list(params) == list(PARAMS), params["k"], params["epsilon"]
    (True, 3, None)
    """
    unknown = sorted(set(values) - set(PARAMS))
    if unknown:
        raise KeyError(f"Release.params has no key(s) {', '.join(map(repr, unknown))}; its "
                       f"keys are {', '.join(PARAMS)}. This is a bug in microagg.")
    return MappingProxyType({key: values.get(key) for key in PARAMS})


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
    see :mod:`microagg._runtime.progress`); ``run(request, source, target, *, sep=None,
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
        if schema is not None:  # the survey roles (and a plan) a schema gives
            given.update(name for name, column in (("weights", schema.weight),
                                                   ("households", schema.household),
                                                   ("strata", schema.strata))
                         if column is not None)
            if _given("plan", getattr(schema, "plan", None)):
                given.add("plan")
        return [name for name in REFUSABLE if name in given and name not in self.runs]


def _given(name: str, value: Any) -> bool:
    """Whether ``value`` of option ``name`` asks something of an engine."""
    if name in ASKS_NOTHING:
        return value not in ASKS_NOTHING[name]
    if name == "rounding":  # None / True: the default, False: none; both unrounded here
        return isinstance(value, Mapping) and bool(value)
    if name == "plan":  # one microaggregate step: the same request as its step's options
        from .._pipeline.plan_request import runs_as_plan

        return value is not None and runs_as_plan(value)
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
                   "microagg.engines.file.engine:run_file", reads_files=True, runs=NUMERIC_BLOCKED,
                   blocks=True, stages=_STAGES),
    "dask": Engine("dask", "dask", "A Dask cluster (a scheduler address, or a local cluster of "
                   "one worker per CPU).", "microagg.engines.dask.file:run_dask_file",
                   reads_files=True, runs=NUMERIC_BLOCKED - {"n_jobs"}, blocks=True,
                   stages=_STAGES),
    "stream": Engine("stream", "stream", "Records as they arrive: each published within a "
                     "delay bound, in a group of at least k that never changes.",
                     "microagg.engines.stream.csv_files:stream_csv", reads_files=True,
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
