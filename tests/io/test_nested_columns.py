"""Parquet list and struct columns: published unchanged, or refused naming the column and its
type, never a bare ``unhashable type`` message (microagg.io._nested)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.cli._common import EXIT_NOT_PROTECTED
from microagg.exceptions import PrivacyLeakWarning, SchemaError
from microagg.io._nested import distinct_codes, nested_columns, nunique
from microagg.io.tables import read_table, write_table

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

MICROAGG = pathlib.Path(sys.executable).parent / "microagg"
N = 30


def _nested_parquet(folder: pathlib.Path) -> pathlib.Path:
    """30 rows: two numeric quasi-identifiers, a list column and a struct column (an integer
    field, missing rows), written by pyarrow."""
    rng = np.random.default_rng(5)
    table = pa.table({
        "age": rng.integers(20, 60, N), "income": rng.integers(100, 900, N),
        "tags": pa.array([[i % 4, 2] if i % 5 else None for i in range(N)],
                         pa.list_(pa.int64())),
        "home": pa.array([{"city": "abc"[i % 3], "floor": i % 2} if i % 7 else None
                          for i in range(N)],
                         pa.struct([("city", pa.string()), ("floor", pa.int64())]))})
    path = folder / "nested.parquet"
    pq.write_table(table, path)
    return path


def _microagg(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MICROAGG), *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


def test_list_and_struct_columns_pass_through_unchanged(tmp_path):
    source = _nested_parquet(tmp_path)
    out = tmp_path / "out.parquet"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", "-o", out,
                    "--random-state", "0")
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr  # they split the classes: written
    assert "tags (k = 1 with it)" in " ".join(run.stdout.split())
    before, after = pq.read_table(source), pq.read_table(out)
    for col in ("tags", "home"):
        assert after.schema.field(col).type == before.schema.field(col).type, col
        assert after.column(col).equals(before.column(col)), col
    assert pd.read_parquet(out).groupby(["age", "income"]).size().min() >= 3


def test_the_file_engine_still_passes_them_through(tmp_path):
    source = _nested_parquet(tmp_path)
    out = tmp_path / "out.parquet"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", "-o", out,
                    "--engine", "file")
    assert run.returncode == EXIT_NOT_PROTECTED, run.stderr  # as in memory: they split classes
    before, after = pq.read_table(source), pq.read_table(out)
    assert after.column("tags").equals(before.column("tags"))
    assert after.column("home").to_pylist() == before.column("home").to_pylist()


def test_a_format_without_lists_is_refused_before_the_run(tmp_path):
    source = _nested_parquet(tmp_path)
    out = tmp_path / "out.csv"
    run = _microagg("anonymize", source, "-q", "age,income", "-k", "3", "-o", out)
    assert run.returncode == 2
    message = " ".join(run.stderr.split())
    assert "'tags' (list<element: int64>)" in message
    assert "'home' (struct<city: string, floor: int64>)" in message
    assert "--drop tags,home" in message and "unhashable" not in message
    assert not out.exists()
    dropped = _microagg("anonymize", source, "-q", "age,income", "-k", "3", "-o", out,
                        "--drop", "tags,home")
    assert dropped.returncode == 0, dropped.stderr
    assert list(pd.read_csv(out).columns) == ["age", "income"]


@pytest.mark.parametrize("role", ["-s", "-q"])
def test_a_list_column_with_a_role_is_refused_naming_it(tmp_path, role):
    source = _nested_parquet(tmp_path)
    args = ["-q", "age,income", "-s", "tags"] if role == "-s" else ["-q", "age,income,tags"]
    run = _microagg("anonymize", source, *args, "-k", "3", "-o", tmp_path / "out.parquet")
    assert run.returncode == 2
    message = " ".join(run.stderr.split())
    kind = "sensitive" if role == "-s" else "quasi-identifier"
    assert f"'tags' ({kind}, list<element: int64>)" in message
    assert "unhashable" not in message


def test_numpy_list_cells_from_python(tmp_path):
    """Lists as pandas reads them without microagg (numpy arrays and dicts in object
    columns): counted by content, published unchanged, refused in CSV."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(20, 60, N).astype(float),
                       "tags": [np.array([i % 3, 1]) for i in range(N)],
                       "home": [{"city": "ab"[i % 2]} for i in range(N)]})
    codes, distinct = distinct_codes(df["tags"])
    assert distinct == 3 and codes[:4].tolist() == [0, 1, 2, 0]
    assert nunique(df["home"]) == 2
    assert nested_columns(df) == {"tags": "list<int64>", "home": "struct<city>"}
    with pytest.warns(PrivacyLeakWarning, match=r"'tags' \(k = 1\)"):  # counted by content
        release = anonymize(df, quasi_identifiers=["age"], k=3, keep=["tags"], random_state=0)
    assert [a.tolist() for a in release.data["tags"]] == [a.tolist() for a in df["tags"]]
    assert release.checks["published_columns"]["columns"]["tags"] == 1
    with pytest.raises(ValueError, match=r"'tags' \(list<int64>\), 'home' \(struct<city>\)"):
        write_table(release.data, tmp_path / "out.xlsx")
    assert not (tmp_path / "out.xlsx").exists()
    with pytest.raises(SchemaError, match=r"'home' \(quasi-identifier, struct<city>\)"):
        anonymize(df, quasi_identifiers=["age", "home"], k=3)


def test_read_table_keeps_the_parquet_types(tmp_path):
    df = read_table(_nested_parquet(tmp_path))
    assert str(df["home"].dtype) == "struct<city: string, floor: int64>[pyarrow]"
    assert df["home"].iloc[1] == {"city": "b", "floor": 1}  # an integer, not 1.0


def test_the_output_reads_back_with_plain_pandas(tmp_path):
    out = tmp_path / "out.parquet"
    write_table(read_table(_nested_parquet(tmp_path)), out)
    back = pd.read_parquet(out)  # pandas alone: lists and dicts, as from any Parquet file
    assert back["tags"].iloc[1].tolist() == [1, 2] and back["home"].iloc[0] is None
    assert pq.read_table(out).equals(pq.read_table(tmp_path / "nested.parquet"))
