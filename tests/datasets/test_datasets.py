"""Tests for the bundled benchmark data sets (``microagg.datasets``)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import pathlib
import re
from importlib import resources

import pandas as pd
import pytest

from microagg.datasets import (
    DATASET_NAMES,
    Dataset,
    DatasetInfo,
    list_datasets,
    load_dataset,
)

# Shapes from shared/datasets/SOURCES.md and adult/SOURCE.md.
EXPECTED_SHAPES: dict[str, tuple[int, int]] = {
    "census": (1080, 13),
    "tarragona": (834, 13),
    "eia": (4092, 15),
    "breast_cancer": (699, 11),
    "pima": (768, 9),
    "adult": (30162, 9),
    "casc1": (13, 7),
    "francdat": (8, 8),
    "microdata": (13, 5),
    "survey": (5000, 14),  # microagg's own synthetic survey (datasets/_survey.py)
    "eusilc": (14827, 28),
}

# Bundled files that are microagg's own (generated, not copied from ../shared).
OUR_OWN = ("survey.csv",)

# Bundled file (under data/) -> the same file in the shared source folder.
BUNDLED_TO_SOURCE: dict[str, str] = {
    "CASCrefmicrodata.csv": "CASCrefmicrodata.csv",
    "Tarragona.csv": "Tarragona.csv",
    "EIA.csv.gz": "EIA.csv",
    "breast_cancer_wisconsin.csv": "breast_cancer_wisconsin.csv",
    "pima_diabetes.csv": "pima_diabetes.csv",
    "adult.csv.gz": "adult/adult.csv",
    "casc1.csv": "casc1.csv",
    "francdat.csv": "francdat.csv",
    "microData.csv": "microData.csv",
    "eusilc.csv.gz": "eusilc.csv",
    **{
        f"adult_hierarchies/adult_hierarchy_{c}.csv": f"adult/adult_hierarchy_{c}.csv"
        for c in (
            "age",
            "education",
            "marital-status",
            "native-country",
            "occupation",
            "race",
            "salary-class",
            "sex",
            "workclass",
        )
    },
}

ADULT_COLUMNS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]

DATA_DIR = pathlib.Path(str(resources.files("microagg.datasets").joinpath("data")))
PACKAGE_DIR = DATA_DIR.parent
_REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _shared_datasets_dir() -> pathlib.Path | None:
    """The read-only source folder, if this checkout can see one."""
    for candidate in (
        _REPO_ROOT / "shared" / "datasets",
        _REPO_ROOT.parent / "shared" / "datasets",
    ):
        if candidate.is_dir():
            return candidate
    return None


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _content(path: pathlib.Path) -> bytes:
    """File bytes, decompressed when the file is gzip-compressed."""
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


@pytest.fixture(scope="module")
def adult() -> Dataset:
    return load_dataset("adult")


# --------------------------------------------------------------------------- registry


def test_dataset_names_are_fixed() -> None:
    assert DATASET_NAMES == tuple(EXPECTED_SHAPES)


def test_list_datasets_matches_loaded_shapes() -> None:
    infos = list_datasets()
    assert all(isinstance(info, DatasetInfo) for info in infos)
    assert tuple(info.name for info in infos) == DATASET_NAMES
    for info in infos:
        assert (info.rows, info.columns) == EXPECTED_SHAPES[info.name]
        assert info.description
        assert "\n" not in info.description
        assert load_dataset(info.name).data.shape == (info.rows, info.columns)


def test_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown dataset 'nope'") as excinfo:
        load_dataset("nope")
    for name in DATASET_NAMES:
        assert name in str(excinfo.value)


def test_non_string_name_is_type_error() -> None:
    with pytest.raises(TypeError, match="must be a str"):
        load_dataset(3)  # type: ignore[arg-type]


def test_name_is_case_insensitive() -> None:
    assert load_dataset("Census").name == "census"


# --------------------------------------------------------------------------- shapes and roles


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_shape_and_roles(name: str) -> None:
    ds = load_dataset(name)
    assert isinstance(ds, Dataset)
    assert ds.name == name
    assert isinstance(ds.data, pd.DataFrame)
    assert ds.data.shape == EXPECTED_SHAPES[name]
    columns = set(ds.data.columns)
    roles = (ds.quasi_identifiers, ds.sensitive, ds.identifiers)
    for role in roles:
        assert isinstance(role, tuple)
        assert set(role) <= columns
        assert len(set(role)) == len(role)
    assert not set(ds.quasi_identifiers) & set(ds.sensitive)
    assert not set(ds.quasi_identifiers) & set(ds.identifiers)
    assert not set(ds.sensitive) & set(ds.identifiers)
    assert ds.quasi_identifiers
    assert ds.description and ds.source and ds.licence
    assert "Apache-2.0" in ds.licence  # every licence says it is not microagg's licence

    view = ds.benchmark_view()
    assert list(view.columns) == list(ds.quasi_identifiers)
    assert view.shape == (ds.data.shape[0], len(ds.quasi_identifiers))


@pytest.mark.parametrize("name", ["census", "tarragona", "casc1", "microdata"])
def test_all_numeric_sets_use_every_column(name: str) -> None:
    ds = load_dataset(name)
    assert ds.quasi_identifiers == tuple(ds.data.columns)
    assert all(pd.api.types.is_numeric_dtype(t) for t in ds.data.dtypes)
    assert not ds.data.isna().any().any()


def test_census_values() -> None:
    ds = load_dataset("census")
    assert len(ds.quasi_identifiers) == 13
    # First data line of CASCrefmicrodata.csv.
    assert ds.data.iloc[0].tolist() == [
        270914, 45554, 4173, 4621, 45527, 1428, 30809, 27, 27, 45500, 3480, 45500, 45500,
    ]  # fmt: skip


def test_tarragona_quasi_identifiers() -> None:
    ds = load_dataset("tarragona")
    assert len(ds.quasi_identifiers) == 13
    assert ds.quasi_identifiers[0] == "FIXED.ASSETS"
    assert ds.quasi_identifiers[-1] == "NET.PROFIT"


def test_eia_benchmark_view() -> None:
    ds = load_dataset("eia")
    assert ds.data.shape == (4092, 15)
    view = ds.benchmark_view()
    assert view.shape == (4092, 11)
    assert list(view.columns) == [
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
    ]
    assert all(pd.api.types.is_integer_dtype(t) for t in view.dtypes)
    assert set(ds.data["YEAR"]) == {96}
    assert ds.data["UTILNAME"].iloc[0] == "State Level Adjustment"


def test_benchmark_view_is_a_copy() -> None:
    ds = load_dataset("eia")
    view = ds.benchmark_view()
    view.iloc[:, :] = 0
    assert (ds.data["TOTSALES"] != 0).any()


def test_breast_cancer_missing_and_roles() -> None:
    ds = load_dataset("breast_cancer")
    assert ds.data.shape == (699, 11)
    assert ds.identifiers == ("id",)
    assert ds.sensitive == ("class",)
    assert len(ds.quasi_identifiers) == 9
    assert "id" not in ds.quasi_identifiers
    missing = ds.data.isna().sum()
    assert missing["bare_nuclei"] == 16
    assert missing.sum() == 16  # all of them in bare_nuclei
    assert "NaN" in ds.description
    # Counts from SOURCES.md: 645 distinct ids; class 2 benign (458), 4 malignant (241).
    assert ds.data["id"].nunique() == 645
    assert ds.data["class"].value_counts().to_dict() == {2: 458, 4: 241}


def test_pima_zeros_kept_as_missing_marker() -> None:
    ds = load_dataset("pima")
    assert ds.data.shape == (768, 9)
    assert ds.sensitive == ("outcome",)
    assert len(ds.quasi_identifiers) == 8
    assert not ds.data.isna().any().any()
    # Zero counts from SOURCES.md (zeros stand for missing values).
    zeros = (ds.data == 0).sum()
    assert zeros[["glucose", "blood_pressure", "skin_thickness", "insulin", "bmi"]].tolist() == [
        5,
        35,
        227,
        374,
        11,
    ]
    assert "zeros" in ds.description.lower()


def test_francdat_keys() -> None:
    ds = load_dataset("francdat")
    assert ds.quasi_identifiers == ("Key1", "Key2", "Key3", "Key4")


def test_adult_roles_and_values(adult: Dataset) -> None:
    assert adult.data.shape == (30162, 9)
    assert list(adult.data.columns) == ADULT_COLUMNS
    assert adult.quasi_identifiers == (
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
    )
    assert adult.sensitive == ("occupation",)
    assert adult.identifiers == ()
    assert pd.api.types.is_integer_dtype(adult.data["age"])
    assert adult.data["age"].min() == 17
    assert adult.data["age"].max() == 90
    assert adult.data["age"].nunique() == 72
    assert not adult.data.isna().any().any()
    # CRLF input must not leave a stray '\r' in the last column.
    assert set(adult.data["salary-class"]) == {"<=50K", ">50K"}


# --------------------------------------------------------------------------- hierarchies


def test_adult_hierarchies_cover_every_column(adult: Dataset) -> None:
    assert sorted(adult.hierarchies) == sorted(ADULT_COLUMNS)
    for column, path in adult.hierarchies.items():
        assert isinstance(path, pathlib.Path)
        assert path.is_file()
        assert path.name == f"adult_hierarchy_{column}.csv"


@pytest.mark.parametrize("column", ADULT_COLUMNS)
def test_every_adult_value_is_in_its_hierarchy(adult: Dataset, column: str) -> None:
    hierarchy = pd.read_csv(
        adult.hierarchies[column], sep=";", header=None, dtype=str, keep_default_na=False
    )
    assert hierarchy.shape[1] >= 2
    assert (hierarchy.iloc[:, -1] == "*").all()
    originals = set(hierarchy.iloc[:, 0])
    values = set(adult.data[column].astype(str))
    assert values <= originals, sorted(values - originals)


@pytest.mark.parametrize("name", [n for n in DATASET_NAMES if n != "adult"])
def test_other_sets_have_no_hierarchies(name: str) -> None:
    assert dict(load_dataset(name).hierarchies) == {}


def test_hierarchies_mapping_is_read_only(adult: Dataset) -> None:
    with pytest.raises(TypeError):
        adult.hierarchies["age"] = pathlib.Path("x")  # type: ignore[index]


# --------------------------------------------------------------------------- immutability


def test_dataset_is_frozen() -> None:
    ds = load_dataset("casc1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.data = pd.DataFrame()  # type: ignore[misc]
    info = list_datasets()[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.rows = 0  # type: ignore[misc]


def test_each_load_is_a_fresh_copy() -> None:
    first = load_dataset("microdata")
    first.data.iloc[:, :] = -1.0
    second = load_dataset("microdata")
    assert (second.data != -1.0).all().all()


# --------------------------------------------------------------------------- files as shipped


def test_bundled_files_are_exactly_the_expected_ones() -> None:
    shipped = {p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.rglob("*") if p.is_file()}
    assert shipped == set(BUNDLED_TO_SOURCE) | set(OUR_OWN)


@pytest.mark.parametrize("bundled", sorted(BUNDLED_TO_SOURCE))
def test_bundled_file_compression(bundled: str) -> None:
    raw = (DATA_DIR / bundled).read_bytes()
    is_gzip = raw[:2] == b"\x1f\x8b"
    assert is_gzip == bundled.endswith(".gz")
    # The big ones are compressed, the hierarchies stay plain.
    assert bundled.endswith(".gz") == (bundled in {"EIA.csv.gz", "adult.csv.gz", "eusilc.csv.gz"})


@pytest.mark.parametrize("bundled", sorted(BUNDLED_TO_SOURCE))
def test_bundled_content_equals_shared_source(bundled: str) -> None:
    shared = _shared_datasets_dir()
    if shared is None:
        pytest.skip("shared/datasets source folder not available")
    source = shared / BUNDLED_TO_SOURCE[bundled]
    if not source.is_file():
        pytest.skip(f"{source} not available")
    assert _md5(_content(DATA_DIR / bundled)) == _md5(source.read_bytes())


def test_provenance_records_every_md5() -> None:
    provenance = (PACKAGE_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "NOT covered by microagg's" in provenance
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(
            r"^\| `([^`]+)` \|[^|]*\|[^|]*\|[^|]*\| `([0-9a-f]{32})` \| (?:`([0-9a-f]{32})`|same) \|$",
            provenance,
            flags=re.MULTILINE,
        )
    }
    assert set(rows) == set(BUNDLED_TO_SOURCE) | set(OUR_OWN)
    for bundled, (shipped_md5, content_md5) in rows.items():
        path = DATA_DIR / bundled
        assert _md5(path.read_bytes()) == shipped_md5, bundled
        assert _md5(_content(path)) == (content_md5 or shipped_md5), bundled


def test_bundled_survey_is_rebuilt_byte_for_byte(tmp_path) -> None:
    """The synthetic survey is ours: its generator rebuilds the bundled file exactly."""
    from importlib import resources

    from microagg.datasets._survey import make_survey

    rebuilt = tmp_path / "survey.csv"
    make_survey().to_csv(rebuilt, index=False, lineterminator="\n")
    bundled = resources.files("microagg.datasets") / "data" / "survey.csv"
    assert rebuilt.read_bytes() == bundled.read_bytes()
    data = load_dataset("survey").data
    assert data["postcode"].str.len().eq(4).all()  # codes read as text
    assert 0.06 < data["income"].isna().mean() < 0.10  # the 8 % item non-response
    assert data.groupby("household_id")["weight"].nunique().max() == 1  # shared weight


def test_eusilc_keys_read_as_categories() -> None:
    """laeken's eusilc: pl030 codes are text with missing values for the 2720 children."""
    data = load_dataset("eusilc").data
    # SOURCES.md: 6,000 households, pl030 "1-7, empty for children".
    assert data["db030"].nunique() == 6000
    assert data["pl030"].isna().sum() == 2720
    assert set(data["pl030"].dropna()) == {str(code) for code in range(1, 8)}
    assert data["db040"].nunique() == 9
    assert (data["rb050"] > 0).all()


@pytest.mark.parametrize("name", ["survey", "eusilc", "francdat"])
def test_bundled_survey_sets_release_with_their_own_roles(name: str,
                                                          tmp_path: pathlib.Path) -> None:
    """Every column of a bundled set has a role in its default release: none is refused as
    a roleless column that breaks k; the weight and household roles are the set's."""
    from typer.testing import CliRunner

    from microagg.cli import app
    from microagg.cli._common import EXIT_NOT_PROTECTED

    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    result = CliRunner().invoke(app, ["anonymize", "--dataset", name, "-k", "3",
                                      "--random-state", "0", "-o", str(out),
                                      "--summary-json", str(summary)])
    assert result.exit_code in (0, EXIT_NOT_PROTECTED), result.output
    ds = load_dataset(name)
    params = json.loads(summary.read_text())["params"]
    assert (params["weight"], params["household"]) == (ds.weight, ds.household)
    assert sorted(params["keep"]) == sorted(ds.kept)
