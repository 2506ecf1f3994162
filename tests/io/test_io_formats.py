"""Excel, Stata and SPSS tables through :mod:`microagg.io` (issue 18, item 6): round trips
with variable and value labels, the labels an anonymized file keeps, refusals."""

from __future__ import annotations

import builtins
import pathlib
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.exceptions import LabelsDroppedWarning
from microagg.io.tables import (
    METADATA_KEY,
    SUPPORTED_EXTENSIONS,
    TableMetadata,
    check_output_path,
    check_table_output,
    read_table,
    table_metadata,
    write_table,
)

pyreadstat = pytest.importorskip("pyreadstat")
pytest.importorskip("openpyxl")

VARIABLE_LABELS = {"age": "Age in years", "income": "Monthly income", "sex": "Sex",
                   "region": "Region"}
VALUE_LABELS: dict[str, dict[Any, str]] = {
    "age": {99: "refused"}, "sex": {1: "male", 2: "female"},
    "region": {1: "north", 2: "centre", 3: "south"}}
WRITERS = {".sav": "write_sav", ".dta": "write_dta"}
READERS = {".sav": "read_sav", ".dta": "read_dta"}


def _frame(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 70, n).astype(float),
                       "income": rng.normal(3000, 500, n).round(),
                       "sex": rng.integers(1, 3, n).astype(float),
                       "region": rng.integers(1, 4, n).astype(float)})
    df.loc[0, "age"] = 99.0  # a labelled special code among unlabelled ages
    return df


def _fixture(folder: pathlib.Path, suffix: str) -> pathlib.Path:
    """A Stata or SPSS file written by pyreadstat itself, with both kinds of labels."""
    path = folder / f"people{suffix}"
    getattr(pyreadstat, WRITERS[suffix])(_frame(), str(path), column_labels=VARIABLE_LABELS,
                                         variable_value_labels=VALUE_LABELS)
    return path


def _read_back(path: pathlib.Path) -> tuple[pd.DataFrame, Any]:
    return getattr(pyreadstat, READERS[path.suffix])(str(path))


def _labels(meta: Any) -> dict[str, dict[float, str]]:
    return {c: {float(k): v for k, v in m.items()} for c, m in meta.variable_value_labels.items()}


def _as_floats(labels: dict[str, dict[Any, str]]) -> dict[str, dict[float, str]]:
    return {c: {float(k): v for k, v in m.items()} for c, m in labels.items()}


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_labelled_file_read_with_metadata(tmp_path: pathlib.Path, suffix: str) -> None:
    df = read_table(_fixture(tmp_path, suffix))
    metadata = table_metadata(df)
    assert isinstance(metadata, TableMetadata) and metadata is df.attrs[METADATA_KEY]
    assert metadata.variable_labels == VARIABLE_LABELS
    assert _as_floats(metadata.value_labels) == _as_floats(VALUE_LABELS)
    assert metadata.source_format == suffix[1:]
    codes = _frame()
    # every value labelled: read as the labels (text); some unlabelled: numbers kept
    assert df["sex"].tolist() == codes["sex"].map({1.0: "male", 2.0: "female"}).tolist()
    assert df["region"].dtype == "str"
    assert df["age"].tolist() == codes["age"].tolist()
    raw = read_table(tmp_path / f"people{suffix}", value_labels="codes")
    assert raw["sex"].tolist() == codes["sex"].tolist()
    assert table_metadata(raw) == metadata


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
@pytest.mark.parametrize("out_suffix", [".sav", ".dta"])
def test_labelled_round_trip_keeps_labels_and_codes(tmp_path: pathlib.Path, suffix: str,
                                                    out_suffix: str) -> None:
    df = read_table(_fixture(tmp_path, suffix))
    out = tmp_path / f"copy{out_suffix}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_table(df, out)
    data, meta = _read_back(out)
    assert meta.column_names_to_labels == VARIABLE_LABELS
    assert _labels(meta) == _as_floats(VALUE_LABELS)
    pd.testing.assert_frame_equal(data.astype("float64"), _frame(), check_dtype=False)
    again = read_table(out)
    pd.testing.assert_frame_equal(again, df)


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_generalized_labelled_column_is_written_as_text_with_a_warning(
        tmp_path: pathlib.Path, suffix: str) -> None:
    df = read_table(_fixture(tmp_path, suffix))
    df["sex"] = "male|female"
    with pytest.warns(LabelsDroppedWarning, match=r"'sex'.*'male\|female'.*2 labelled codes"):
        write_table(df, tmp_path / f"out{suffix}")
    data, meta = _read_back(tmp_path / f"out{suffix}")
    assert set(data["sex"]) == {"male|female"}
    assert "sex" not in meta.variable_value_labels
    assert meta.column_names_to_labels["sex"] == "Sex"


def test_released_metadata_drops_value_labels_of_averaged_codes() -> None:
    metadata = TableMetadata(variable_labels={"age": "Age", "sex": "Sex"},
                             value_labels={"age": {99: "refused"}, "sex": {1: "m", 2: "f"},
                                           "gone": {1: "x"}},
                             source_format="sav")
    published = pd.DataFrame({"age": [40.5, 40.5], "sex": [1.0, 2.0]})
    with pytest.warns(LabelsDroppedWarning, match=r"'age'.*40\.5.*1 labelled codes"):
        kept = metadata.released(published, masked=["age", "sex"])
    assert kept.value_labels == {"sex": {1: "m", 2: "f"}}  # codes still codes: kept
    assert kept.variable_labels == {"age": "Age", "sex": "Sex"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pass-through column keeps its labels
        assert metadata.released(published, masked=[]).value_labels["age"] == {99: "refused"}


def test_stata_refuses_non_integer_value_labels(tmp_path: pathlib.Path) -> None:
    df = pd.DataFrame({"x": [1.5, 2.0]})
    metadata = TableMetadata(value_labels={"x": {1.5: "one and a half"}}, source_format="sav")
    with pytest.warns(LabelsDroppedWarning, match="'x'.*integer codes only"):
        write_table(df, tmp_path / "out.dta", metadata=metadata)
    assert _read_back(tmp_path / "out.dta")[1].variable_value_labels == {}


def test_excel_round_trip_and_sheets(tmp_path: pathlib.Path) -> None:
    df = pd.DataFrame({"zip": ["01234", "00100"], "age": [31, 45], "income": [1.5, 2.25]})
    path = tmp_path / "t.xlsx"
    write_table(df, path, sheet="people")
    pd.testing.assert_frame_equal(read_table(path), df)
    pd.testing.assert_frame_equal(read_table(path, sheet="people"), df)
    pd.testing.assert_frame_equal(read_table(path, sheet=0), df)
    with pd.ExcelWriter(tmp_path / "two.xlsx") as book:
        df.to_excel(book, sheet_name="first", index=False)
        df.iloc[:1].to_excel(book, sheet_name="second", index=False)
    assert read_table(tmp_path / "two.xlsx").shape == (2, 3)
    assert read_table(tmp_path / "two.xlsx", sheet="second").shape == (1, 3)


def test_excel_refusals(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.xlsx"
    write_table(pd.DataFrame({"a": [1]}), path)
    with pytest.raises(ValueError, match=r"'sheet' parameter.*'nope'.*Worksheets: 'Sheet1'"):
        read_table(path, sheet="nope")
    with pytest.raises(ValueError, match=r"index, 0 to 0\). Got 3"):
        read_table(path, sheet=3)
    with pytest.raises(ValueError, match=r"'sheet' parameter of write_table.*31 characters"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "u.xlsx", sheet="a/b")
    (tmp_path / "fake.xlsx").write_text("not a workbook")
    with pytest.raises(ValueError, match=r"Could not read .*fake.xlsx.* as an Excel workbook"):
        read_table(tmp_path / "fake.xlsx")
    with pd.ExcelWriter(tmp_path / "dup.xlsx") as book:
        pd.DataFrame([["age", "age"], [1, 2]]).to_excel(book, index=False, header=False)
    with pytest.raises(ValueError, match="age"):
        read_table(tmp_path / "dup.xlsx")
    with pd.ExcelWriter(tmp_path / "header.xlsx") as book:
        pd.DataFrame({"a": [], "b": []}).to_excel(book, index=False)
    with pytest.raises(ValueError, match="has no rows"):
        read_table(tmp_path / "header.xlsx")


def test_labelled_refusals(tmp_path: pathlib.Path) -> None:
    (tmp_path / "fake.sav").write_text("not spss")
    with pytest.raises(ValueError, match=r"Could not read .*fake.sav.* as SPSS"):
        read_table(tmp_path / "fake.sav")
    with pytest.raises(ValueError, match=r"'value_labels' parameter.*'labels' or 'codes'"):
        read_table(_fixture(tmp_path, ".dta"), value_labels="text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'x{33}'.*Stata \(32 characters at most\)"):
        write_table(pd.DataFrame({"x" * 33: [1.0]}), tmp_path / "long.dta")
    with pytest.raises(ValueError, match=r"Could not write .*bad.sav.* as SPSS: .*space"):
        write_table(pd.DataFrame({"bad name": [1.0]}), tmp_path / "bad.sav")
    assert not list(tmp_path.glob("*bad.sav*")) and not list(tmp_path.glob(".*tmp"))
    with pytest.raises(TypeError, match="'metadata' parameter of write_table"):
        write_table(pd.DataFrame({"a": [1.0]}), tmp_path / "a.sav",
                    metadata={"a": "A"})  # type: ignore[arg-type]


@pytest.mark.parametrize(("module", "suffix", "kind"), [
    ("pyreadstat", ".sav", "Stata and SPSS"), ("pyreadstat", ".dta", "Stata and SPSS"),
    ("openpyxl", ".xlsx", "Excel")])
def test_missing_extra_names_it(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                module: str, suffix: str, kind: str) -> None:
    path = tmp_path / f"t{suffix}"
    path.write_bytes(b"x")
    real_import = builtins.__import__

    def refuse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == module:
            raise ImportError(f"No module named {module!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(builtins, "__import__", refuse)
    message = rf"{kind} file .* needs the optional dependency {module}.*microagg\[formats\]"
    with pytest.raises(ImportError, match=message):
        read_table(path)
    with pytest.raises(ImportError, match=message):
        write_table(pd.DataFrame({"a": [1.0]}), tmp_path / f"out{suffix}")


@pytest.mark.parametrize("suffix", [".xlsx", ".dta", ".sav"])
def test_output_checks_take_the_new_formats(tmp_path: pathlib.Path, suffix: str) -> None:
    assert suffix in SUPPORTED_EXTENSIONS
    source = tmp_path / f"in{suffix}"
    source.write_bytes(b"x")
    assert check_table_output(tmp_path / f"out{suffix}", inputs=[source]) \
        == (tmp_path / f"out{suffix}").resolve()
    with pytest.raises(ValueError, match="never overwrites its input"):
        check_table_output(source, inputs=[source], parameter="--output")
    with pytest.raises(ValueError, match=r"unsupported extension '\.xls'.*\.xlsx, \.dta, \.sav"):
        check_table_output(tmp_path / "out.xls", parameter="--output")


def test_path_errors_never_say_the_path_path(tmp_path: pathlib.Path) -> None:
    for call in (lambda: read_table(tmp_path / "t.xls"),
                 lambda: write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.ods"),
                 lambda: check_output_path(tmp_path / "o.ods", parameter="path"),
                 lambda: check_output_path(tmp_path / "none" / "o.csv", parameter="path")):
        with pytest.raises(ValueError) as caught:
            call()
        assert "'path' path" not in str(caught.value)
        assert str(caught.value).startswith(("The path ", "The directory of the path "))
    with pytest.raises(ValueError, match=r"^The '--output' path .* unsupported extension"):
        check_output_path(tmp_path / "o.ods", parameter="--output")


def _k_achieved(df: pd.DataFrame, columns: list[str]) -> int:
    return int(df.groupby(columns, dropna=False).size().min())


def test_cli_anonymizes_spss_file_keeping_labels(tmp_path: pathlib.Path) -> None:
    """The installed command, in a process of its own: a .sav in, a .sav out."""
    source = _fixture(tmp_path, ".sav")
    out = tmp_path / "out.sav"
    done = subprocess.run(
        [sys.executable, "-c", "from microagg.cli import main; main()", "anonymize",
         str(source), "-q", "age,income", "-k", "3", "-o", str(out), "--random-state", "0"],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == EXIT_NOT_PROTECTED, done.stderr + done.stdout
    assert "value labels of column 'age' were dropped" in " ".join(done.stdout.split())
    data, meta = _read_back(out)
    original = _frame()
    assert meta.column_names_to_labels == VARIABLE_LABELS
    assert _labels(meta) == _as_floats({c: VALUE_LABELS[c] for c in ("sex", "region")})
    assert _k_achieved(data, ["age", "income"]) >= 3
    assert not data["income"].equals(original["income"])
    assert data["sex"].tolist() == original["sex"].tolist()  # codes, as read
    assert data["region"].tolist() == original["region"].tolist()


@pytest.mark.parametrize(("source_suffix", "out_suffix"), [(".dta", ".dta"), (".sav", ".xlsx"),
                                                           (".xlsx", ".sav")])
def test_cli_anonymize_between_formats(tmp_path: pathlib.Path, source_suffix: str,
                                       out_suffix: str) -> None:
    if source_suffix == ".xlsx":
        source = tmp_path / "people.xlsx"
        write_table(_frame(), source)
    else:
        source = _fixture(tmp_path, source_suffix)
    out = tmp_path / f"out{out_suffix}"
    result = CliRunner().invoke(app, ["anonymize", str(source), "-q", "age,income", "-k", "3",
                                      "-o", str(out), "--random-state", "0"])
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    published = read_table(out)
    assert _k_achieved(published, ["age", "income"]) >= 3
    assert len(published) == 30
    metadata = table_metadata(published)
    if out_suffix == ".xlsx" or source_suffix == ".xlsx":
        assert metadata is None or metadata.variable_labels == {}
    else:
        assert metadata is not None and metadata.variable_labels == VARIABLE_LABELS
        assert set(metadata.value_labels) == {"sex", "region"}
    if source_suffix != ".xlsx":
        assert published["sex"].isin(["male", "female"]).all()


def test_cli_refuses_output_over_input_and_out_of_core_engines(tmp_path: pathlib.Path) -> None:
    source = _fixture(tmp_path, ".sav")
    before = source.read_bytes()
    result = CliRunner().invoke(app, ["anonymize", str(source), "-q", "age", "-o", str(source)])
    assert result.exit_code == EXIT_USER_ERROR
    assert "never overwrites its input" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["anonymize", str(source), "-q", "age", "--engine", "file",
                                      "-o", str(tmp_path / "o.csv")])
    assert result.exit_code == EXIT_USER_ERROR
    assert "Excel, Stata or SPSS file use --engine local" in " ".join(result.output.split())
    assert source.read_bytes() == before


def test_out_of_core_engines_name_the_local_engine() -> None:
    from microagg.io._formats import format_of

    with pytest.raises(ValueError, match=r"^The 'input' path 'x\.sav' is an SPSS file.*local"):
        format_of(pathlib.Path("x.sav"), parameter="input")
    with pytest.raises(ValueError, match=r"unsupported extension '\.ods'.*\.pq\.$"):
        format_of(pathlib.Path("x.ods"), parameter="input")


def test_excel_text_columns_keep_codes_as_typed(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "codes.xlsx"
    write_table(pd.DataFrame({"code": [1, 20], "zip": ["01234", None]}), path)
    df = read_table(path, text_columns=["code"])
    assert df["code"].tolist() == ["1", "20"]
    assert df["zip"].iloc[0] == "01234" and pd.isna(df["zip"].iloc[1])
