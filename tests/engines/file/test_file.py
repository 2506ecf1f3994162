"""The out-of-core engine (issue 9): chunked input, block routing, output in input order,
verification of the written file, and bad input that leaves nothing behind."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.engines.file.engine import anonymize_file, iter_chunks
from microagg.exceptions import SchemaError

QI = ["a", "b", "c"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "id": np.arange(3000),
        "a": rng.normal(size=3000),
        "b": rng.integers(0, 50, size=3000),
        "c": rng.normal(size=3000) * 100,
        "note": rng.choice(["x", "y"], size=3000),
    })


def _leftovers(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(("source", "target"), [("in.csv", "out.csv"),
                                                ("in.parquet", "out.parquet"),
                                                ("in.csv", "out.tsv.gz")])
def test_file_release_keeps_order_and_verifies(tmp_path, frame, source, target):
    path = tmp_path / source
    (frame.to_csv(path, index=False) if source.endswith(".csv") else frame.to_parquet(path))
    release = anonymize_file(path, tmp_path / target, quasi_identifiers=QI, k=5,
                             identifiers=["id"], block_size=400, chunk_rows=700,
                             sample_size=1000, n_jobs=1, random_state=0)
    out = (pd.read_parquet(tmp_path / target) if target.endswith(".parquet")
           else pd.read_csv(tmp_path / target, sep=None, engine="python"))
    assert list(out.columns) == ["a", "b", "c", "note"]
    assert out["note"].tolist() == frame["note"].tolist()  # the input's row order
    assert out.groupby(QI).size().min() >= 5
    assert release.k >= 5 and release.rows == 3000
    assert release.metrics["n_blocks"] >= 4
    # the same model in memory loses about as much
    memory = anonymize(frame, quasi_identifiers=QI, identifiers="id", k=5, blocking="kd",
                       block_size=400, random_state=0)
    assert release.metrics["information_loss"] == pytest.approx(
        memory.metrics["information_loss"], rel=0.15)
    assert _leftovers(tmp_path) == []


def test_chunking_does_not_change_the_result(tmp_path, frame):
    frame.to_parquet(tmp_path / "in.parquet")
    kwargs = {"quasi_identifiers": QI, "identifiers": ["id"], "k": 4, "block_size": 300,
              "sample_size": 3000, "n_jobs": 1, "random_state": 7}
    anonymize_file(tmp_path / "in.parquet", tmp_path / "one.parquet", chunk_rows=5000, **kwargs)
    anonymize_file(tmp_path / "in.parquet", tmp_path / "many.parquet", chunk_rows=333, **kwargs)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "one.parquet"),
                                  pd.read_parquet(tmp_path / "many.parquet"))


def test_worker_processes_give_the_same_file(tmp_path, frame):
    frame.to_parquet(tmp_path / "in.parquet")
    kwargs = {"quasi_identifiers": QI, "identifiers": ["id"], "k": 4, "block_size": 300,
              "random_state": 1}
    anonymize_file(tmp_path / "in.parquet", tmp_path / "serial.parquet", n_jobs=1, **kwargs)
    anonymize_file(tmp_path / "in.parquet", tmp_path / "pool.parquet", n_jobs=2, **kwargs)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "serial.parquet"),
                                  pd.read_parquet(tmp_path / "pool.parquet"))


def test_malformed_csv_row_names_its_line_and_writes_nothing(tmp_path):
    path = tmp_path / "in.csv"
    lines = ["a,b,c"] + [f"{i},{i % 7},{i * 2}" for i in range(40)]
    lines[23] = "5,6,7,8"  # line 24 has a field too many
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception, match="line 24"):
        anonymize_file(path, tmp_path / "out.csv", quasi_identifiers=QI, k=3, block_size=10,
                       chunk_rows=10, n_jobs=1)
    assert not (tmp_path / "out.csv").exists() and _leftovers(tmp_path) == []


def test_bad_values_name_column_and_line(tmp_path):
    path = tmp_path / "in.csv"
    lines = ["a,b,c"] + [f"{i},{i % 7},{i * 2}" for i in range(40)]
    lines[31] = "1,x,3"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SchemaError, match=r"'b'.*line 32"):
        anonymize_file(path, tmp_path / "out.csv", quasi_identifiers=QI, k=3, block_size=10,
                       chunk_rows=10, n_jobs=1)
    lines[31] = "1,,3"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SchemaError, match=r"'b' has a missing or infinite value at line 32"):
        anonymize_file(path, tmp_path / "out.csv", quasi_identifiers=QI, k=3, block_size=10,
                       chunk_rows=10, n_jobs=1)
    assert not (tmp_path / "out.csv").exists() and _leftovers(tmp_path) == []


def test_empty_missing_columns_k_too_large_and_self_overwrite(tmp_path, frame):
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b,c\n")
    with pytest.raises(SchemaError, match="no rows"):
        anonymize_file(empty, tmp_path / "o.csv", quasi_identifiers=QI, k=3, n_jobs=1)
    path = tmp_path / "in.csv"
    frame.head(20).drop(columns="id").to_csv(path, index=False)
    with pytest.raises(SchemaError, match="'zz'"):
        anonymize_file(path, tmp_path / "o.csv", quasi_identifiers=["a", "zz"], k=3,
                       n_jobs=1)
    with pytest.raises(ValueError, match="k"):
        anonymize_file(path, tmp_path / "o.csv", quasi_identifiers=QI, k=30, block_size=60,
                       n_jobs=1)
    with pytest.raises(ValueError, match="overwrites its input"):
        anonymize_file(path, path, quasi_identifiers=QI, k=3, n_jobs=1)
    with pytest.raises(ValueError, match="block_size"):
        anonymize_file(path, tmp_path / "o.csv", quasi_identifiers=QI, k=3, block_size=5)
    assert not (tmp_path / "o.csv").exists() and _leftovers(tmp_path) == []


def test_a_failing_block_leaves_no_output(tmp_path, frame, monkeypatch):
    # the second block's partitioner fails after the first block was written to its part
    # file: the run stops, and neither an output nor a work file is left
    import microagg.engines.file._blocks as file_blocks

    real = file_blocks.get_partitioner
    calls: list[int] = []

    def failing_on_the_second_block(name):
        partition = real(name)

        def run(X, k, **params):
            calls.append(len(X))
            if len(calls) == 2:
                raise RuntimeError("block 2 failed")
            return partition(X, k, **params)
        return run

    monkeypatch.setattr(file_blocks, "get_partitioner", failing_on_the_second_block)
    frame.to_parquet(tmp_path / "in.parquet")
    (tmp_path / "work").mkdir()
    with pytest.raises(RuntimeError, match="block 2 failed"):
        anonymize_file(tmp_path / "in.parquet", tmp_path / "out.parquet", quasi_identifiers=QI,
                       identifiers=["id"], k=4, block_size=300, n_jobs=1, random_state=0,
                       workdir=tmp_path / "work")
    assert len(calls) == 2  # a block ran before the one that failed
    assert not (tmp_path / "out.parquet").exists() and _leftovers(tmp_path) == []
    assert list((tmp_path / "work").iterdir()) == []  # the private work folder is gone


def test_iter_chunks_reads_in_order(tmp_path, frame):
    frame.to_parquet(tmp_path / "in.parquet")
    chunks = list(iter_chunks(tmp_path / "in.parquet", chunk_rows=1000))
    assert [len(c) for c in chunks] == [1000, 1000, 1000]
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), frame)


def test_cli_file_engine(tmp_path, frame):
    frame.to_csv(tmp_path / "in.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "a,b,c",
                                 "--drop", "id", "-k", "5", "--engine", "file",
                                 "--block-size", "500", "--jobs", "1", "-o",
                                 str(tmp_path / "out.parquet"), "--summary-json",
                                 str(tmp_path / "s.json"), "--random-state", "0"])
    # 'note' (x or y, published unchanged) splits the groups: not protected, as in memory
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["checks"]["published_columns"]["columns"] == {"note": 1}
    assert summary["engine"] == "file"  # Release.engine, not a parameter
    assert summary["checks"]["k_anonymity"]["achieved"] >= 5
    assert "achieved k (written file)" in result.stdout
    result = runner.invoke(app, ["anonymize", str(tmp_path / "in.csv"), "-q", "a,b,c",
                                 "--engine", "file", "-l", "2", "-o", str(tmp_path / "x.csv")])
    assert result.exit_code == EXIT_USER_ERROR and "drop -l" in result.output


@pytest.mark.parametrize("source", ["in.csv", "in.parquet"])
def test_a_record_number_column_is_refused_by_both_engines_alike(tmp_path, frame, source):
    df = frame.drop(columns="id").assign(record=np.arange(101, 3101))
    path = tmp_path / source
    (df.to_csv(path, index=False) if source.endswith(".csv") else df.to_parquet(path))
    with pytest.raises(SchemaError) as in_memory:
        anonymize(df, quasi_identifiers=QI, k=5)
    with pytest.raises(SchemaError) as from_file:
        anonymize_file(path, tmp_path / "out.csv", quasi_identifiers=QI, k=5, n_jobs=1)
    refusal = ("1 column(s) without a role look like direct identifiers and would be "
               "published unchanged next to the masked quasi-identifiers: 'record' "
               "(consecutive whole numbers, one per row: a record number)")
    assert refusal in str(in_memory.value) and refusal in str(from_file.value)
    assert "first 1000 rows" in str(from_file.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source]  # nothing written
    release = anonymize_file(path, tmp_path / "out.csv", quasi_identifiers=QI, k=5, n_jobs=1,
                             identifiers=["record"], random_state=0)
    assert "record" not in pd.read_csv(tmp_path / "out.csv").columns and release.k >= 5


def test_csv_chunks_with_changing_types_go_to_parquet(tmp_path):
    lines = ["a,b,c,count"] + [f"{i},{i % 7},{i * 2},{i}" for i in range(40)]
    lines[35] = "34,6,68,"  # a missing count in the last chunk: float there, int before
    (tmp_path / "in.csv").write_text("\n".join(lines) + "\n")
    release = anonymize_file(tmp_path / "in.csv", tmp_path / "out.parquet",
                             quasi_identifiers=QI, k=3, block_size=10, chunk_rows=10,
                             n_jobs=1, random_state=0)
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert release.k >= 3 and out["count"].isna().sum() == 1 and len(out) == 40


def test_parquet_chunks_do_not_keep_what_they_read(tmp_path):
    """pyarrow's default pre-buffering kept every column chunk read: 8.6 GB after one pass
    over a 10^8 x 10 file. The reader must free each chunk's buffers."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from microagg.engines._chunks import iter_chunks

    path = tmp_path / "big.parquet"
    rng = np.random.default_rng(0)
    with pq.ParquetWriter(path, pa.schema([(f"x{j}", pa.float64()) for j in range(8)])) as w:
        for _ in range(16):  # 16 row groups of 100,000 x 8 doubles: 102 MB in all
            w.write_table(pa.table({f"x{j}": rng.normal(size=100_000) for j in range(8)}))
    before = pa.total_allocated_bytes()
    rows, most = 0, 0
    for chunk in iter_chunks(path, chunk_rows=50_000):  # the reader lives through the pass
        rows += len(chunk)
        most = max(most, pa.total_allocated_bytes() - before)
    assert rows == 1_600_000
    assert most < 48 * 2**20  # flat (28 MB); it grew with the file read (170 MB at the end)


def test_the_face_takes_sensitive_keep_and_a_plan_of_one_step(tmp_path, frame):
    from microagg._pipeline.rules import EngineRefusal
    from microagg.steps import Microaggregate, Plan

    path = tmp_path / "in.csv"
    frame.head(600).assign(person_id=[f"P{i:05d}" for i in range(600)]).to_csv(path,
                                                                            index=False)
    common = {"identifiers": ["id"], "block_size": 300, "n_jobs": 1, "random_state": 0}
    by_keywords = anonymize_file(path, tmp_path / "kw.csv", quasi_identifiers=QI, k=4,
                                 method="mdav", sensitive="note", keep=["person_id"], **common)
    assert by_keywords.params["sensitive"] == ("note",)
    assert by_keywords.params["keep"] == ("person_id",)
    # the kept id breaks k (published on purpose, counted); the sensitive column is not counted
    assert set(by_keywords.checks["published_columns"]["columns"]) == {"person_id"}
    by_plan = anonymize_file(path, tmp_path / "plan.csv", plan=Plan([Microaggregate(QI, k=4)]),
                             sensitive="note", keep=["person_id"], **common)
    assert (tmp_path / "plan.csv").read_bytes() == (tmp_path / "kw.csv").read_bytes()
    assert dict(by_plan.params) == dict(by_keywords.params)
    with pytest.raises(ValueError, match="give quasi_identifiers, k either in the plan's step "
                                         "or as keywords, not both"):
        anonymize_file(path, tmp_path / "o.csv", quasi_identifiers=QI, k=4,
                       plan=Plan([Microaggregate(QI, k=4)]))
    two = Plan([Microaggregate(["a"], k=4), Microaggregate(["b", "c"], k=4)])
    with pytest.raises(EngineRefusal, match=r"drop plan \(or use the memory engine, which runs "
                                            r"it\)"):
        anonymize_file(path, tmp_path / "o.csv", plan=two)
    with pytest.raises(TypeError, match="anonymize_file needs k"):
        anonymize_file(path, tmp_path / "o.csv", quasi_identifiers=QI)
    assert not (tmp_path / "o.csv").exists()
