"""Bundled benchmark microdata sets.

The tables shipped here are the reference data sets of the statistical
disclosure control (SDC) and microaggregation literature: the CASC
``census``, ``tarragona`` and ``eia`` sets (via the R package sdcMicro), two
UCI sets used in the random-ρ-aggregation experiments (``breast_cancer`` and
``pima``), the ARX variant of UCI ``adult`` together with its generalisation
hierarchies, and three toy tables (``casc1``, ``francdat``, ``microdata``).

The data keep their own terms; they are **not** covered by microagg's
Apache-2.0 licence.  See ``PROVENANCE.md`` next to this module for origin,
licence, conversion and checksums of every bundled file.

Examples
--------
>>> from microagg.datasets import load_dataset
>>> census = load_dataset("census")
>>> census.data.shape
(1080, 13)
>>> eia = load_dataset("eia")
>>> eia.benchmark_view().shape
(4092, 11)
"""

from __future__ import annotations

import atexit
import contextlib
import pathlib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

import pandas as pd

from ._catalogue import SPECS, Spec

__all__ = [
    "DATASET_NAMES",
    "Dataset",
    "DatasetInfo",
    "list_datasets",
    "load_dataset",
]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A bundled benchmark data set.

    Instances are immutable (frozen): the attributes cannot be rebound.  The
    ``data`` frame is a fresh copy on every :func:`load_dataset` call, so
    modifying it does not affect later loads.  Equality is identity (comparing
    whole data frames element-wise is rarely what is wanted).

    Attributes
    ----------
    name : str
        Registry name, as accepted by :func:`load_dataset`.
    data : pandas.DataFrame
        The full table as shipped, all columns, in the source's column order.
    quasi_identifiers : tuple of str
        Columns forming the benchmark view used in the literature (the
        attributes that are microaggregated / generalised).
    sensitive : tuple of str
        Confidential attributes (may be empty).
    identifiers : tuple of str
        Direct identifiers, to be removed before release (may be empty).
    weight, household : str or None
        The sampling weight and household id columns, where the data set has them (the
        survey roles of :func:`microagg.anonymize`).
    kept : tuple of str
        Columns its default release publishes unchanged on purpose (``keep``), although
        they break k by themselves (the release then says so).
    description : str
        What the data are, with any caveats (missing-value coding, ...).
    source : str
        Where the bundled copy comes from (repository, commit, path).
    licence : str
        Licence as stated by the source.  The data are not covered by
        microagg's own licence.
    hierarchies : Mapping[str, pathlib.Path]
        Column name -> generalisation hierarchy CSV (ARX format: ``;``
        separated, no header, column 0 is the original value, then the levels
        up to ``*``).  Only ``adult`` has hierarchies; empty otherwise.
    """

    name: str
    data: pd.DataFrame
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    identifiers: tuple[str, ...]
    description: str
    source: str
    licence: str
    hierarchies: Mapping[str, pathlib.Path] = field(
        default_factory=lambda: types.MappingProxyType({})
    )
    weight: str | None = None
    household: str | None = None
    kept: tuple[str, ...] = ()

    def benchmark_view(self) -> pd.DataFrame:
        """Return the quasi-identifier columns as a new frame.

        Returns
        -------
        pandas.DataFrame
            A copy of ``data[list(quasi_identifiers)]``; modifying it does not
            change :attr:`data`.
        """
        return self.data[list(self.quasi_identifiers)].copy()


@dataclass(frozen=True)
class DatasetInfo:
    """One row of :func:`list_datasets`.

    Attributes
    ----------
    name : str
        Registry name.
    rows : int
        Number of records in the full table.
    columns : int
        Number of columns in the full table.
    description : str
        One-line summary.
    """

    name: str
    rows: int
    columns: int
    description: str


_REGISTRY: Mapping[str, Spec] = types.MappingProxyType({s.name: s for s in SPECS})

#: Names accepted by :func:`load_dataset`, in a fixed order.
DATASET_NAMES: tuple[str, ...] = tuple(s.name for s in SPECS)

# Keeps files extracted by ``importlib.resources.as_file`` alive (only needed
# when the package is imported from a zip archive) until interpreter exit.
_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)


def _resource_path(*parts: str) -> pathlib.Path:
    """Return a real filesystem path for a file under ``data/``.

    Works from a source checkout, an installed wheel and (by extracting to a
    temporary file) a zip import.
    """
    traversable = resources.files(__name__).joinpath("data", *parts)
    if isinstance(traversable, pathlib.Path):
        return traversable
    return _EXTRACTED.enter_context(resources.as_file(traversable))


def _hierarchy_paths(spec: Spec) -> Mapping[str, pathlib.Path]:
    paths = {
        column: _resource_path("adult_hierarchies", f"adult_hierarchy_{column}.csv")
        for column in spec.hierarchy_columns
    }
    return types.MappingProxyType(paths)


def load_dataset(name: str) -> Dataset:
    """Load a bundled benchmark data set.

    Parameters
    ----------
    name : str
        One of :data:`DATASET_NAMES` (case-insensitive): ``census``,
        ``tarragona``, ``eia``, ``breast_cancer``, ``pima``, ``adult``,
        ``casc1``, ``francdat``, ``microdata``.

    Returns
    -------
    Dataset
        The full table (a fresh copy) with its benchmark metadata.

    Raises
    ------
    TypeError
        If `name` is not a string.
    ValueError
        If `name` is not a known data set; the message lists the valid names.

    Examples
    --------
    >>> ds = load_dataset("breast_cancer")
    >>> ds.data.shape, int(ds.data["bare_nuclei"].isna().sum())
    ((699, 11), 16)
    """
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    spec = _REGISTRY.get(name.strip().lower())
    if spec is None:
        raise ValueError(f"unknown dataset {name!r}; valid names are: {', '.join(DATASET_NAMES)}")
    data = pd.read_csv(_resource_path(spec.filename), **spec.read_kwargs)
    return Dataset(
        name=spec.name,
        data=data,
        quasi_identifiers=spec.quasi_identifiers,
        sensitive=spec.sensitive,
        identifiers=spec.identifiers,
        description=spec.description,
        source=spec.source,
        licence=spec.licence,
        hierarchies=_hierarchy_paths(spec),
        weight=spec.weight,
        household=spec.household,
        kept=spec.kept,
    )


def list_datasets() -> tuple[DatasetInfo, ...]:
    """List the bundled data sets without loading them.

    Returns
    -------
    tuple of DatasetInfo
        One entry per data set, in the order of :data:`DATASET_NAMES`, with
        its row and column counts and a one-line description.
    """
    return tuple(DatasetInfo(s.name, s.rows, s.columns, s.summary) for s in SPECS)
