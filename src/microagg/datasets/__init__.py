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
from typing import Any

import pandas as pd

__all__ = [
    "DATASET_NAMES",
    "Dataset",
    "DatasetInfo",
    "list_datasets",
    "load_dataset",
]

_SDCMICRO_COMMIT = "cf3251017482bb215f0a9abf4a930f502399fb72"
_ARX_COMMIT = "aacd487fb77b3af7970d5d6fa1b2f6cca1182b64"
_SDCMICRO_LICENCE = (
    "GPL-2 (licence of the sdcMicro R package; no separate licence for the data files). "
    "Not covered by microagg's Apache-2.0 licence."
)
_ADULT_HIERARCHY_COLUMNS: tuple[str, ...] = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)


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


@dataclass(frozen=True)
class _Spec:
    """Static description of one bundled data set (internal)."""

    name: str
    filename: str
    rows: int
    columns: int
    summary: str
    description: str
    source: str
    licence: str
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    read_kwargs: Mapping[str, Any] = field(default_factory=dict)
    hierarchy_columns: tuple[str, ...] = ()


_CENSUS_COLUMNS = (
    "AFNLWGT",
    "AGI",
    "EMCONTRB",
    "FEDTAX",
    "PTOTVAL",
    "STATETAX",
    "TAXINC",
    "POTHVAL",
    "INTVAL",
    "PEARNVAL",
    "FICA",
    "WSALVAL",
    "ERNVAL",
)
_TARRAGONA_COLUMNS = (
    "FIXED.ASSETS",
    "CURRENT.ASSETS",
    "TREASURY",
    "UNCOMMITTED.FUNDS",
    "PAID.UP.CAPITAL",
    "SHORT.TERM.DEBT",
    "SALES",
    "LABOR.COSTS",
    "DEPRECIATION",
    "OPERATING.PROFIT",
    "FINANCIAL.OUTCOME",
    "GROSS.PROFIT",
    "NET.PROFIT",
)
_EIA_QIS = (
    "UTILITYID",
    "RESREVENUE",
    "RESSALES",
    "COMREVENUE",
    "COMSALES",
    "INDREVENUE",
    "INDSALES",
    "OTHREVENUE",
    "OTHRSALES",
    "TOTREVENUE",
    "TOTSALES",
)
_BREAST_CANCER_QIS = (
    "clump_thickness",
    "uniformity_cell_size",
    "uniformity_cell_shape",
    "marginal_adhesion",
    "single_epithelial_cell_size",
    "bare_nuclei",
    "bland_chromatin",
    "normal_nucleoli",
    "mitoses",
)
_PIMA_QIS = (
    "pregnancies",
    "glucose",
    "blood_pressure",
    "skin_thickness",
    "insulin",
    "bmi",
    "diabetes_pedigree",
    "age",
)


def _sdcmicro_source(rda: str) -> str:
    return (
        f"R package sdcMicro 5.8.1, GitHub sdcTools/sdcMicro at commit {_SDCMICRO_COMMIT}, "
        f"data/{rda}, converted to CSV with pyreadr + pandas."
    )


_SPECS: tuple[_Spec, ...] = (
    _Spec(
        name="census",
        filename="CASCrefmicrodata.csv",
        rows=1080,
        columns=13,
        summary="CASC 'Census' reference set: 1080 US persons (1995), 13 numeric income/tax variables.",
        description=(
            "CASC 'Census' reference microdata (CASCrefmicrodata): 1080 records sampled from "
            "the 1995 US Census Bureau Data Extraction System, 13 integer income and tax "
            "variables.  All 13 columns are the quasi-identifiers of the 13-variable Census "
            "benchmark of the microaggregation literature.  No missing values."
        ),
        source=_sdcmicro_source("CASCrefmicrodata.rda") + "  Origin: CASC project public-use file.",
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=_CENSUS_COLUMNS,
    ),
    _Spec(
        name="tarragona",
        filename="Tarragona.csv",
        rows=834,
        columns=13,
        summary="CASC Tarragona reference set: 834 companies (1995), 13 numeric financial variables.",
        description=(
            "CASC Tarragona reference set: figures of 834 companies in the Tarragona area, "
            "1995, 13 integer financial variables.  All 13 columns are the quasi-identifiers "
            "of the 13-variable Tarragona benchmark.  No missing values."
        ),
        source=_sdcmicro_source("Tarragona.rda") + "  Origin: CASC project public-use file.",
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=_TARRAGONA_COLUMNS,
    ),
    _Spec(
        name="eia",
        filename="EIA.csv.gz",
        rows=4092,
        columns=15,
        summary="CASC EIA reference set: 4092 US electric-utility records (1996), 15 columns, 11-column benchmark view.",
        description=(
            "CASC EIA reference set: US Energy Information Administration data on electric "
            "utilities, 1996, 4092 records and 15 columns.  UTILNAME and STATE are strings, "
            "YEAR is constant (96).  The benchmark view of the microaggregation literature "
            "is the 11 columns UTILITYID and RESREVENUE..TOTSALES (these are the "
            "quasi-identifiers); UTILNAME (the utility's name) is a direct identifier.  "
            "No missing values."
        ),
        source=_sdcmicro_source("EIA.rda") + "  Origin: CASC project public-use file.",
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=_EIA_QIS,
        identifiers=("UTILNAME",),
    ),
    _Spec(
        name="breast_cancer",
        filename="breast_cancer_wisconsin.csv",
        rows=699,
        columns=11,
        summary="UCI Breast Cancer Wisconsin (Original): 699 x 11, 9 numeric attributes, 16 NaN in bare_nuclei.",
        description=(
            "UCI 'Breast Cancer Wisconsin (Original)' (Wolberg, 1992): 699 records, 11 "
            "columns.  `id` is a sample identifier (it repeats: 645 distinct values) and is "
            "not a quasi-identifier; the 9 integer cytology attributes (1-10) are the "
            "quasi-identifiers; `class` (2 benign, 4 malignant) is sensitive.  "
            "Missing values: bare_nuclei has 16 missing values (shown as '?' in the UCI "
            "file); they are kept as NaN, so bare_nuclei is a float column."
        ),
        source=(
            "UCI Machine Learning Repository, 'Breast Cancer Wisconsin (Original)', file "
            "breast-cancer-wisconsin.data, byte-identical copy from GitHub "
            "Arsh77/knn_on_breast_cancer_data (checked against three other copies); a header "
            "row was added and '?' became empty fields."
        ),
        licence="CC BY 4.0 (UCI Machine Learning Repository). Not covered by microagg's Apache-2.0 licence.",
        quasi_identifiers=_BREAST_CANCER_QIS,
        sensitive=("class",),
        identifiers=("id",),
    ),
    _Spec(
        name="pima",
        filename="pima_diabetes.csv",
        rows=768,
        columns=9,
        summary="UCI Pima Indians Diabetes: 768 x 9, 8 numeric attributes; zeros stand for missing values.",
        description=(
            "UCI 'Pima Indians Diabetes' (National Institute of Diabetes and Digestive and "
            "Kidney Diseases): 768 records, 8 numeric attributes (the quasi-identifiers) and "
            "the binary `outcome` (sensitive).  Missing values: as in the original, zeros "
            "stand for missing values in glucose (5), blood_pressure (35), skin_thickness "
            "(227), insulin (374) and bmi (11); they are kept as shipped (zeros), not "
            "converted to NaN."
        ),
        source=(
            "UCI 'Pima Indians Diabetes' (withdrawn from UCI), copy from GitHub "
            "majestyhao/ecs256_hw4 (checked against two other copies); a header row was added."
        ),
        licence=(
            "No formal licence recorded (UCI has withdrawn the data set). "
            "Not covered by microagg's Apache-2.0 licence."
        ),
        quasi_identifiers=_PIMA_QIS,
        sensitive=("outcome",),
    ),
    _Spec(
        name="adult",
        filename="adult.csv.gz",
        rows=30162,
        columns=9,
        summary="UCI Adult, ARX variant: 30162 x 9 categorical census records with ARX generalisation hierarchies.",
        description=(
            "UCI 'Adult' census extract in the variant shipped by ARX: the 32,561 training "
            "records without the rows that have missing values, 30,162 records, 9 columns "
            "(age is an integer 17-90, all other columns categorical strings).  Following "
            "the ARX examples, occupation is the sensitive attribute and sex, age, race, "
            "marital-status, education, native-country and workclass are the "
            "quasi-identifiers; salary-class is neither (an insensitive attribute that "
            "ARX sometimes uses as sensitive instead).  Every column has an ARX "
            "generalisation hierarchy (see `hierarchies`).  No missing values."
        ),
        source=(
            f"GitHub arx-deidentifier/arx at commit {_ARX_COMMIT}, data/adult.csv and "
            "data/adult_hierarchy_*.csv, copied byte-for-byte (adult.csv gzip-compressed "
            "here).  Origin UCI Adult is inferred; the ARX repository does not state it."
        ),
        licence=(
            "ARX repository is Apache-2.0; it gives no separate licence for its data files, "
            "and the UCI terms of the underlying Adult data were not checked. "
            "Not covered by microagg's Apache-2.0 licence."
        ),
        quasi_identifiers=(
            "sex",
            "age",
            "race",
            "marital-status",
            "education",
            "native-country",
            "workclass",
        ),
        sensitive=("occupation",),
        read_kwargs={"sep": ";"},
        hierarchy_columns=_ADULT_HIERARCHY_COLUMNS,
    ),
    _Spec(
        name="casc1",
        filename="casc1.csv",
        rows=13,
        columns=7,
        summary="Toy 13 x 7 integer matrix used by Mateo-Sanz et al. (sdcMicro casc1).",
        description=(
            "Small toy 13 x 7 integer matrix used by Mateo-Sanz et al.; the columns are "
            "named '1'..'7' and all of them are quasi-identifiers.  No missing values."
        ),
        source=_sdcmicro_source("casc1.rda"),
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=("1", "2", "3", "4", "5", "6", "7"),
    ),
    _Spec(
        name="francdat",
        filename="francdat.csv",
        rows=8,
        columns=8,
        summary="Toy 8 x 8 synthetic set (Capobianchi, Polettini, Lucarelli) with keys, numeric variables and a weight.",
        description=(
            "Small synthetic 8 x 8 set from Capobianchi, Polettini and Lucarelli (CASC "
            "deliverable), used for disclosure-risk checks.  Key1-Key4 are categorical key "
            "variables coded as numbers (the quasi-identifiers), Num1-Num3 are continuous "
            "variables and w is the sampling weight.  All columns are floats; no missing "
            "values."
        ),
        source=_sdcmicro_source("francdat.rda"),
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=("Key1", "Key2", "Key3", "Key4"),
    ),
    _Spec(
        name="microdata",
        filename="microData.csv",
        rows=13,
        columns=5,
        summary="Toy 13 x 5 numeric matrix (sdcMicro microData).",
        description=(
            "Small artificial 13 x 5 numeric matrix (sdcMicro's microData, used in its "
            "microaggregation examples); all 5 columns are quasi-identifiers.  The R "
            "rownames were dropped.  No missing values."
        ),
        source=_sdcmicro_source("microData.rda"),
        licence=_SDCMICRO_LICENCE,
        quasi_identifiers=("one", "two", "three", "four", "five"),
    ),
)

_REGISTRY: Mapping[str, _Spec] = types.MappingProxyType({s.name: s for s in _SPECS})

#: Names accepted by :func:`load_dataset`, in a fixed order.
DATASET_NAMES: tuple[str, ...] = tuple(s.name for s in _SPECS)

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


def _hierarchy_paths(spec: _Spec) -> Mapping[str, pathlib.Path]:
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
    )


def list_datasets() -> tuple[DatasetInfo, ...]:
    """List the bundled data sets without loading them.

    Returns
    -------
    tuple of DatasetInfo
        One entry per data set, in the order of :data:`DATASET_NAMES`, with
        its row and column counts and a one-line description.
    """
    return tuple(DatasetInfo(s.name, s.rows, s.columns, s.summary) for s in _SPECS)
