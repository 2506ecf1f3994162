"""Missing-value codes and value labels through a release: SPSS user-missing values and
Stata extended missing values keep their codes, suppressed labelled cells are missing with
their labels kept (:mod:`microagg.io._missing_codes`, :mod:`microagg.io._labelled`)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from microagg.cli import EXIT_NOT_PROTECTED
from microagg.exceptions import LabelsDroppedWarning
from microagg.io.tables import read_table, table_metadata, write_table
from microagg.schema.schema_file import load_schema

pyreadstat = pytest.importorskip("pyreadstat")

MICROAGG = pathlib.Path(sys.executable).parent / "microagg"
N = 60
INCOME_CODES = {0: -9.0, 1: -9.0, 2: -8.0, 3: -9.0, 4: -8.0}


def _microagg(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MICROAGG), *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


def _survey() -> pd.DataFrame:
    """Numeric age, labelled sex and region (region 5 rare: it is suppressed), income."""
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"age": rng.integers(20, 70, N).astype(float),
                       "sex": rng.choice([1.0, 2.0], N),
                       "region": rng.choice([1.0, 2.0, 3.0, 4.0], N),
                       "income": np.repeat([100.0, 200.0, 300.0], N // 3)})
    df.loc[N - 1, "region"] = 5.0
    return df


SEX = {1: "male", 2: "female"}
REGION = {1: "north", 2: "south", 3: "east", 4: "west", 5: "islands"}


def _spss(folder: pathlib.Path) -> pathlib.Path:
    df = _survey()
    for row, code in INCOME_CODES.items():
        df.loc[row, "income"] = code
    path = folder / "survey.sav"
    pyreadstat.write_sav(df, str(path), variable_value_labels={
        "sex": SEX, "region": REGION, "income": {-9: "refused", -8: "don't know"}},
        missing_ranges={"income": [-9, -8]},
        variable_measure={"age": "scale", "sex": "nominal", "region": "ordinal",
                          "income": "scale"})
    return path


def _stata(folder: pathlib.Path) -> pathlib.Path:
    df = _survey().astype(object)
    for row, code in INCOME_CODES.items():
        df.loc[row, "income"] = "a" if code == -9 else "b"
    path = folder / "survey.dta"
    pyreadstat.write_dta(df, str(path), missing_user_values={"income": ["a", "b"]},
                         variable_value_labels={"sex": SEX, "region": REGION,
                                                "income": {"a": "refused"}})
    return path


def _anonymize(source: pathlib.Path, output: pathlib.Path) -> None:
    result = _microagg("anonymize", source, "-o", output, "-q", "age,sex,region", "-k", "3",
                       "--keep", "income")
    # income published unchanged may break k with the quasi-identifiers: exit 4, written
    assert result.returncode in (0, EXIT_NOT_PROTECTED), result.stderr
    assert output.exists()


def test_coded_cells_are_missing_for_the_computation(tmp_path: pathlib.Path) -> None:
    df = read_table(_spss(tmp_path))
    assert df["income"].isna().sum() == len(INCOME_CODES)
    assert df["income"].dtype.kind == "f"
    meta = table_metadata(df)
    assert meta is not None and meta.missing_codes == {"income": (-9.0, -8.0)}
    assert meta.coded_cells["income"] == INCOME_CODES
    assert meta.measures["region"] == "ordinal"


def test_spss_user_missing_codes_and_labels_survive_a_release(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.sav"
    _anonymize(_spss(tmp_path), out)
    back, meta = pyreadstat.read_sav(str(out), user_missing=True)
    assert {row: back.loc[row, "income"] for row in INCOME_CODES} == INCOME_CODES
    assert back["income"].notna().all()
    assert meta.missing_ranges["income"] == [{"lo": -9.0, "hi": -9.0}, {"lo": -8.0, "hi": -8.0}]
    # the rare region is suppressed: system-missing, the column numeric with its labels
    assert back["region"].dtype.kind == "f"
    assert np.isnan(back.loc[N - 1, "region"])
    assert meta.variable_value_labels["region"] == {float(k): v for k, v in REGION.items()}
    assert meta.variable_value_labels["sex"] == {float(k): v for k, v in SEX.items()}
    assert meta.variable_measure["region"] == "ordinal"
    system, _ = pyreadstat.read_sav(str(out))
    assert system["income"].isna().sum() == len(INCOME_CODES)


def test_stata_extended_missing_and_labels_survive_a_release(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.dta"
    _anonymize(_stata(tmp_path), out)
    back, meta = pyreadstat.read_dta(str(out), user_missing=True)
    expected = {row: "a" if code == -9 else "b" for row, code in INCOME_CODES.items()}
    assert {row: back.loc[row, "income"] for row in INCOME_CODES} == expected
    assert sorted(meta.missing_user_values["income"]) == ["a", "b"]
    assert meta.variable_value_labels["income"] == {"a": "refused"}
    assert pd.isna(back.loc[N - 1, "region"])
    assert meta.variable_value_labels["region"] == REGION


def test_masked_columns_get_no_code_back(tmp_path: pathlib.Path) -> None:
    df = read_table(_spss(tmp_path))
    meta = table_metadata(df)
    assert meta is not None
    with pytest.warns(LabelsDroppedWarning, match="'income'"):
        released = meta.released(df, masked=["income"])
    assert released.coded_cells == {} and released.missing_codes == meta.missing_codes
    write_table(df, tmp_path / "masked.sav", metadata=released)
    back, _ = pyreadstat.read_sav(str(tmp_path / "masked.sav"), user_missing=True)
    assert back["income"].isna().sum() == len(INCOME_CODES)


def _csv(folder: pathlib.Path) -> pathlib.Path:
    """age and region to mask; bmi with ``.`` for missing, income with -9 (each value of
    the pass-through columns repeated at least 3 times)."""
    rng = np.random.default_rng(3)
    bmi = np.repeat(["21.5", "24.0", ".", "30.5"], N // 4)
    income = np.repeat(["-9", "1200", "2500", "4000"], N // 4)
    path = folder / "survey.csv"
    pd.DataFrame({"age": rng.integers(20, 70, N), "region": rng.integers(1, 5, N),
                  "bmi": bmi, "income": income}).to_csv(path, index=False)
    return path


def _schema(folder: pathlib.Path) -> pathlib.Path:
    path = folder / "schema.toml"
    path.write_text('[columns.age]\nrole = "quasi-identifier"\n'
                    '[columns.region]\nrole = "quasi-identifier"\n'
                    '[columns.bmi]\nrole = "other"\nmissing = ["."]\n'
                    '[columns.income]\nrole = "other"\nmissing = [-9]\n')
    return path


def test_a_dot_coded_csv_column_is_numeric(tmp_path: pathlib.Path) -> None:
    df = read_table(_csv(tmp_path), missing={"bmi": ["."], "income": [-9]})
    assert df["bmi"].dtype.kind == "f" and df["bmi"].isna().sum() == N // 4
    assert df["income"].isna().sum() == N // 4
    meta = table_metadata(df)
    assert meta is not None and meta.coded_cells["income"][0] == -9
    with pytest.raises(ValueError, match=r"'weight'.*does not have"):
        read_table(_csv(tmp_path), missing={"weight": [-9]})


@pytest.mark.parametrize("how", ["schema", "option"])
def test_declared_codes_go_back_to_spss_and_csv(tmp_path: pathlib.Path, how: str) -> None:
    source, out, csv_out = _csv(tmp_path), tmp_path / "out.sav", tmp_path / "out.csv"
    roles = (["--schema", _schema(tmp_path)] if how == "schema" else
             ["-q", "age,region", "--keep", "bmi,income", "--missing-codes", "bmi=.",
              "--missing-codes", "income=-9"])
    for output in (out, csv_out):
        result = _microagg("anonymize", source, "-o", output, "-k", "3", *roles)
        assert result.returncode in (0, EXIT_NOT_PROTECTED), result.stderr
    back, meta = pyreadstat.read_sav(str(out), user_missing=True)
    assert back["bmi"].dtype.kind == "f" and back["bmi"].isna().sum() == N // 4
    assert (back["income"].iloc[: N // 4] == -9).all()
    assert meta.missing_ranges["income"] == [{"lo": -9.0, "hi": -9.0}]
    written = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    assert written["bmi"].tolist() == pd.read_csv(source, dtype=str)["bmi"].tolist()


def test_malformed_codes_are_refused(tmp_path: pathlib.Path) -> None:
    result = _microagg("anonymize", _csv(tmp_path), "-o", tmp_path / "o.sav", "-q",
                       "age,region", "--keep", "bmi,income", "--missing-codes", "income")
    assert result.returncode == 2 and "COLUMN=CODE" in result.stderr
    schema = _schema(tmp_path)
    schema.write_text(schema.read_text().replace('missing = [-9]', 'missing = "-9"'))
    refused = _microagg("anonymize", _csv(tmp_path), "-o", tmp_path / "o.sav", "--schema",
                        schema)
    assert refused.returncode == 2 and "missing must be a list of codes" in refused.stderr
    assert not (tmp_path / "o.sav").exists()


def test_init_schema_proposes_codes_and_ordinal_levels(tmp_path: pathlib.Path) -> None:
    csv_schema, sav_schema = tmp_path / "csv.toml", tmp_path / "sav.toml"
    assert _microagg("init-schema", _csv(tmp_path), "-o", csv_schema).returncode == 0
    assert _microagg("init-schema", _spss(tmp_path), "-o", sav_schema).returncode == 0
    proposed = load_schema(csv_schema)
    assert proposed.missing == {"bmi": (".",), "income": (-9.0,)}
    assert proposed.columns["bmi"].type == "numeric"
    spss = load_schema(sav_schema)
    assert spss.columns["region"].type == "ordinal"
    assert spss.columns["region"].order == tuple(REGION.values())


def _text_survey(folder: pathlib.Path, suffix: str) -> pathlib.Path:
    """Text keys (no value labels), one region rare (suppressed by the release), postcodes
    with leading zeros; written by pyreadstat, the formats' own library."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(20, 70, N).astype(float),
                       "sex": rng.choice(["male", "female"], N),
                       "region": rng.choice(["north", "south"], N),
                       "postcode": rng.choice(["01234", "02345"], N)})
    df.loc[N - 1, "region"] = "islands"
    path = folder / f"text.{suffix}"
    (pyreadstat.write_sav if suffix == "sav" else pyreadstat.write_dta)(df, str(path))
    return path


@pytest.mark.parametrize("suffix", ["sav", "dta"])
def test_a_suppressed_text_cell_is_missing_in_spss_and_stata(tmp_path: pathlib.Path,
                                                             suffix: str) -> None:
    out = tmp_path / f"out.{suffix}"
    result = _microagg("anonymize", _text_survey(tmp_path, suffix), "-o", out,
                       "--step", "suppress keys=sex,region k=3", "--keep", "age,postcode")
    assert result.returncode in (0, EXIT_NOT_PROTECTED), result.stderr
    if suffix == "sav":  # SPSS: blank, and the blank declared user-missing in its column
        raw, meta = pyreadstat.read_sav(str(out), user_missing=True)
        assert raw.loc[N - 1, "region"] == ""
        assert meta.missing_ranges["region"] == [{"lo": "", "hi": ""}]
        system, _ = pyreadstat.read_sav(str(out))
        assert pd.isna(system.loc[N - 1, "region"])  # SPSS's own reading: missing
    else:  # Stata: the blank is its missing string
        raw, _ = pyreadstat.read_dta(str(out))
        assert raw.loc[N - 1, "region"] == ""
    back = read_table(out)
    assert pd.isna(back.loc[N - 1, "region"])
    assert back["region"].isna().sum() == (raw["region"] == "").sum() >= 1
    # the other text stays text: leading zeros kept, not made numbers
    assert back["postcode"].tolist() == raw["postcode"].tolist()
    assert set(back["postcode"]) == {"01234", "02345"}


def test_a_blank_spss_text_not_declared_missing_is_a_value(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "blank.sav"
    pyreadstat.write_sav(pd.DataFrame({"note": ["a", "", "b"], "x": [1.0, 2.0, 3.0]}),
                         str(path))
    assert read_table(path)["note"].tolist() == ["a", "", "b"]
    stata = tmp_path / "blank.dta"
    pyreadstat.write_dta(pd.DataFrame({"note": ["a", "", "b"], "x": [1.0, 2.0, 3.0]}),
                         str(stata))
    note = read_table(stata)["note"]
    assert note.iloc[[0, 2]].tolist() == ["a", "b"] and pd.isna(note.iloc[1])
