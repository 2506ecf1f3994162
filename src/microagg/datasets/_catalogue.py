"""The catalogue of bundled data sets: file, shape, roles, description, source and licence of
each (see ``PROVENANCE.md``). Loaded by :func:`microagg.datasets.load_dataset`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SPECS", "Spec"]

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


@dataclass(frozen=True)
class Spec:
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
    weight: str | None = None
    household: str | None = None
    kept: tuple[str, ...] = ()
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


SPECS: tuple[Spec, ...] = (
    Spec(
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
    Spec(
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
    Spec(
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
    Spec(
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
    Spec(
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
    Spec(
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
    Spec(
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
    Spec(
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
        sensitive=("Num1", "Num2", "Num3"),
        weight="w",
    ),
    Spec(
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
    Spec(
        name="survey",
        filename="survey.csv",
        rows=5000,
        columns=14,
        summary="Synthetic household survey: 5000 persons, ids, names, dates, 8 % missing income.",
        description=(
            "A synthetic household survey made for microagg (no real person): string person "
            "and household ids, a name, age, sex, region, postcode, household size, a skewed "
            "yearly income with 8 % item non-response, date of birth (ISO dates), ordinal "
            "education, occupation, a diagnosis (the confidential column) and a sampling "
            "weight shared within each household.  The file of the tutorial.  Its default "
            "release drops the ids, the name, the postcode and the exact date of birth "
            "(region and age are their coarse keys); the household id is the household "
            "role (dropped after the household risk), the weight the weight role, published "
            "unchanged on purpose (kept): every household has its own weight, so it re-links "
            "households (the household step treats it: docs/households.md)."
        ),
        source="Generated by microagg.datasets._survey.make_survey(5000, random_state=18).",
        licence="Apache-2.0 (part of microagg; synthetic, no real person).",
        quasi_identifiers=("age", "sex", "region", "income"),
        sensitive=("diagnosis",),
        identifiers=("person_id", "name", "postcode", "date_of_birth"),
        weight="weight",
        household="household_id",
        kept=("weight",),
        read_kwargs={"dtype": {"postcode": str}},
    ),
    Spec(
        name="eusilc",
        filename="eusilc.csv.gz",
        rows=14827,
        columns=28,
        summary="Synthetic EU-SILC (laeken): 14827 persons in 6000 households with sampling weights.",
        description=(
            "Synthetic EU-SILC sample (R package laeken, generated from the Austrian EU-SILC "
            "2006; no real person): 14827 persons in 6000 households (db030 household id, "
            "hsize household size), db040 region (9 Austrian states), rb030 personal id, "
            "age, rb090 gender, pl030 economic status (codes '1'-'7', read as text), pb220a "
            "citizenship (AT / EU / Other), personal (py*) and household (hy*) incomes, "
            "eqSS, eqIncome, db090 household weight and rb050 personal sampling weight.  "
            "The key variables of sdcMicro's risk examples (db040, hsize, rb090, pb220a, "
            "pl030) are the quasi-identifiers; rb030 is a direct identifier.  Missing "
            "values: pl030, pb220a and the personal incomes py010n..py140n are missing for "
            "the 2720 children (kept as missing).  Its default release takes the incomes "
            "and eqSS as sensitive, rb050 as the weight, db030 as the household, and "
            "publishes age and rb050 unchanged on purpose (kept: 7 of the 6000 households "
            "have a weight of their own, so rb050 re-links them)."
        ),
        source=(
            "R package laeken 0.5.2 (Alfons & Templ; Debian r-cran-laeken 0.5.2-1), data set "
            "eusilc, written with write.csv(eusilc, row.names = FALSE, na = ''); "
            "gzip-compressed here."
        ),
        licence=(
            "GPL (>= 2) (licence of the laeken R package; no separate licence for the data). "
            "Not covered by microagg's Apache-2.0 licence."
        ),
        quasi_identifiers=("db040", "hsize", "rb090", "pb220a", "pl030"),
        identifiers=("rb030",),
        sensitive=("py010n", "py050n", "py090n", "py100n", "py110n", "py120n", "py130n",
                   "py140n", "hy040n", "hy050n", "hy070n", "hy080n", "hy090n", "hy110n",
                   "hy130n", "hy145n", "eqSS", "eqIncome"),
        weight="rb050",
        household="db030",
        kept=("age", "rb050"),
        read_kwargs={"dtype": {"pl030": "str", "db040": "str", "rb090": "str", "pb220a": "str"}},
    ),
)
