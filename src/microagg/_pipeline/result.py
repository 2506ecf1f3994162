"""The one result type of every engine: :class:`Release`."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .verdict import Verdict, decide, kept_identifiers

__all__ = ["Release", "to_plain"]


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


@dataclass(frozen=True, eq=False)
class Release:
    """A verified release: the only object users hold, whatever the engine. It never
    contains identifiers.

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
        once with the release (and again by :func:`dataclasses.replace`), the words every
        output prints.
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
    verdict: Verdict = field(init=False, repr=False)

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

    def summary(self) -> dict[str, Any]:
        """Everything but the data and labels, as plain JSON-serializable values."""
        where = {} if self.engine == "memory" else {
            "engine": self.engine, **({"output": str(self.output)} if self.output else {})}
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
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`summary` as a JSON string."""
        return json.dumps(self.summary(), indent=indent)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable state (to hand a release from a worker process to the workbench)."""
        return {name: _thawed(value) for name, value in self.__dict__.items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
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
