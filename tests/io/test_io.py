"""Tests for microagg.io.tables: format detection, round trips, atomic writes, output-path checks."""

from __future__ import annotations

import gzip
import os
import pathlib
import sys
from typing import Any

import pandas as pd
import pytest

from microagg.io import tables as mio


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a", "b", "c", "d"],
        "age": [24, 31, 57, 49],
        "income": [21.5, 19.25, 43.0, 39.125],
    })


def _listing(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_csv_round_trip_detects_separator(tmp_path: pathlib.Path, frame: pd.DataFrame,
                                          sep: str) -> None:
    path = tmp_path / "t.csv"
    mio.write_table(frame, path, sep=sep)
    assert path.read_text().splitlines()[0] == sep.join(frame.columns)
    pd.testing.assert_frame_equal(mio.read_table(path), frame)


def test_semicolon_with_quoted_commas_is_detected(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('name;x;y\n"Doe, J.";1;2\n"Roe, R.";3;4\n"Poe, E.";5;6\n')
    df = mio.read_table(path)
    assert list(df.columns) == ["name", "x", "y"]
    assert df["name"].tolist() == ["Doe, J.", "Roe, R.", "Poe, E."]
    assert df["y"].tolist() == [2, 4, 6]


def test_explicit_sep_wins_over_detection(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("a;b\n1;2\n")
    assert list(mio.read_table(path, sep=",").columns) == ["a;b"]
    assert list(mio.read_table(path, sep=";").columns) == ["a", "b"]


def test_single_column_falls_back_to_comma(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("value\n1\n2\n3\n")
    assert mio.read_table(path)["value"].tolist() == [1, 2, 3]


def test_tsv_defaults_to_tab(tmp_path: pathlib.Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "t.tsv"
    mio.write_table(frame, path)
    assert path.read_text().splitlines()[0] == "id\tage\tincome"
    pd.testing.assert_frame_equal(mio.read_table(path), frame)


def test_gzip_csv_round_trip(tmp_path: pathlib.Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "t.csv.gz"
    mio.write_table(frame, path, sep=";")
    assert gzip.decompress(path.read_bytes()).decode().startswith("id;age;income\n")
    pd.testing.assert_frame_equal(mio.read_table(path), frame)


@pytest.mark.parametrize("name", ["t.parquet", "t.PQ"])
def test_parquet_round_trip(tmp_path: pathlib.Path, frame: pd.DataFrame, name: str) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / name
    mio.write_table(frame, path)
    pd.testing.assert_frame_equal(mio.read_table(path), frame)


def test_new_file_gets_umask_permissions(tmp_path: pathlib.Path, frame: pd.DataFrame) -> None:
    umask = os.umask(0o022)
    try:
        mio.write_table(frame, tmp_path / "t.csv")
    finally:
        os.umask(umask)
    assert (tmp_path / "t.csv").stat().st_mode & 0o777 == 0o644


# --- read errors -----------------------------------------------------------------------------


def test_missing_file_names_the_path(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
        mio.read_table(path)


def test_zero_byte_file_is_a_clear_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.csv.*empty \(0 bytes\)"):
        mio.read_table(path)


def test_header_only_file_has_no_rows(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "header.csv"
    path.write_text("a,b,c\n")
    with pytest.raises(ValueError, match=r"header\.csv.*has no rows"):
        mio.read_table(path)


def test_blank_lines_only_is_empty(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "blank.csv"
    path.write_text("\n\n")
    with pytest.raises(ValueError, match=r"blank\.csv.*empty"):
        mio.read_table(path)


def test_unknown_extension_lists_supported(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.ods"
    path.write_text("a\n1\n")
    with pytest.raises(ValueError, match=r"'\.ods'.*\.csv.*\.parquet.*\.xlsx, \.dta, \.sav"):
        mio.read_table(path)
    with pytest.raises(ValueError, match=r"'\.ods'"):
        mio.write_table(pd.DataFrame({"a": [1]}), path)


def test_parquet_without_pyarrow_says_what_to_install(
    tmp_path: pathlib.Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1 not really")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` fail
    with pytest.raises(ImportError, match=r"pip install 'microagg\[parquet\]'"):
        mio.read_table(path)
    with pytest.raises(ImportError, match=r"microagg\[parquet\]"):
        mio.write_table(frame, tmp_path / "out.parquet")
    assert _listing(tmp_path) == ["t.parquet"]


def test_corrupt_gzip_is_a_value_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "t.csv.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match=r"t\.csv\.gz"):
        mio.read_table(path)


# --- atomic writes ---------------------------------------------------------------------------


def _failing_to_csv(exc: BaseException) -> Any:
    def to_csv(self: pd.DataFrame, handle: Any, *args: Any, **kwargs: Any) -> None:
        handle.write(b"id,age,income\na,24,")  # a partial file...
        handle.flush()
        raise exc  # ...then the writer dies midway

    return to_csv


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_failed_write_leaves_no_file_and_no_temp(
    tmp_path: pathlib.Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch,
    exc: BaseException,
) -> None:
    monkeypatch.setattr(pd.DataFrame, "to_csv", _failing_to_csv(exc))
    with pytest.raises(type(exc)):
        mio.write_table(frame, tmp_path / "out.csv")
    assert _listing(tmp_path) == []


def test_failed_write_keeps_previous_file(
    tmp_path: pathlib.Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.csv"
    path.write_bytes(b"old,content\n1,2\n")
    monkeypatch.setattr(pd.DataFrame, "to_csv", _failing_to_csv(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        mio.write_table(frame, path)
    assert path.read_bytes() == b"old,content\n1,2\n"
    assert _listing(tmp_path) == ["out.csv"]


def test_temp_file_is_beside_the_output(
    tmp_path: pathlib.Path, frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def to_csv(self: pd.DataFrame, handle: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(handle.name)
        handle.write(b"x\n1\n")

    monkeypatch.setattr(pd.DataFrame, "to_csv", to_csv)
    mio.write_table(frame, tmp_path / "out.csv")
    temp = pathlib.Path(seen[0])
    assert temp.parent == tmp_path
    assert temp.name.startswith(".out.csv.") and temp.name.endswith(".tmp")
    assert _listing(tmp_path) == ["out.csv"]
    assert (tmp_path / "out.csv").read_text() == "x\n1\n"


def test_write_text_atomic(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.json"
    mio.write_text_atomic('{"k": 5}\n', path)
    mio.write_text_atomic('{"k": 6}\n', path)
    assert path.read_text() == '{"k": 6}\n'
    assert _listing(tmp_path) == ["s.json"]
    with pytest.raises(TypeError, match="str"):
        mio.write_text_atomic(b"bytes", path)  # type: ignore[arg-type]


# --- output path checks ----------------------------------------------------------------------


def test_output_equal_to_input_is_rejected(tmp_path: pathlib.Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    monkeypatch.chdir(tmp_path)
    for output in (src, "in.csv", tmp_path / "sub" / ".." / "in.csv"):
        with pytest.raises(ValueError, match="never overwrites its input"):
            mio.check_output_path(output, inputs=[src])


def test_output_linked_to_input_is_rejected(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    (tmp_path / "sym.csv").symlink_to(src)
    os.link(src, tmp_path / "hard.csv")
    for name in ("sym.csv", "hard.csv"):
        with pytest.raises(ValueError, match="input file"):
            mio.check_output_path(tmp_path / name, inputs=[src])


def test_valid_output_is_resolved(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert mio.check_output_path("out.parquet", inputs=["in.csv"]) == tmp_path / "out.parquet"


def test_missing_directory_is_rejected(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match=r"does not exist: .*missing"):
        mio.check_output_path(tmp_path / "missing" / "out.csv")


def test_unwritable_directory_is_rejected(tmp_path: pathlib.Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # os.access is patched because tests may run as root, for whom chmod changes nothing.
    monkeypatch.setattr(mio.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match="not writable"):
        mio.check_output_path(tmp_path / "out.csv")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root can write to read-only directories")
def test_read_only_directory_is_rejected(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="not writable"):
            mio.check_output_path(folder / "out.csv")
    finally:
        folder.chmod(0o700)


def test_existing_directory_and_bad_extension_are_rejected(tmp_path: pathlib.Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(ValueError, match="existing directory"):
        mio.check_output_path(tmp_path / "dir.csv")
    with pytest.raises(ValueError, match=r"'--output'.*'\.xls'.*Supported extensions: \.csv"):
        mio.check_output_path(tmp_path / "out.xls", parameter="--output")
    with pytest.raises(ValueError, match=r"Supported extensions: \.json\."):
        mio.check_output_path(tmp_path / "s.csv", extensions=(".json",))
    assert mio.check_output_path(tmp_path / "s.json", extensions=(".json",)).name == "s.json"
