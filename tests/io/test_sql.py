"""SQL input and output: SQLite built in, SQLAlchemy URLs, PostgreSQL where a server is given.

PostgreSQL runs only when ``MICROAGG_TEST_POSTGRES_URL`` names a server we may create tables
in (e.g. ``postgresql+psycopg://postgres@localhost:5433/postgres``); the tests skip otherwise.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app
from microagg.datasets import load_dataset
from microagg.io.sql import check_sql_output, is_sql_url, parse_sql_url, read_sql, write_sql
from microagg.io.tables import check_table_output, read_table, write_table


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "id": np.arange(6, dtype=np.int64),
        "income": [1.5, 2.0, np.nan, 4.25, 5.0, 6.0],
        "city": ["a", "b", None, "a", "c", "b"],
        "grade": pd.Categorical(["x", "y", "x", "y", "x", "y"]),
        "flag": [True, False, True, True, False, False],
    })


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [r[0] for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


# -- URLs -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("sqlite:///data.db?table=t", True), ("postgresql://u@h/db?table=t", True),
    ("data.csv", False), ("C://data/file.csv", False), ("file:///x.csv", False),
    ("https://example.org/x.csv", False), (Path("data.csv"), False),
])
def test_is_sql_url(text: object, expected: bool) -> None:
    assert is_sql_url(text) is expected


def test_parse_relative_absolute_and_query() -> None:
    rel = parse_sql_url("sqlite:///sub/data.db?table=people")
    assert (rel.table, rel.query, str(rel.sqlite_path)) == ("people", None, "sub/data.db")
    absolute = parse_sql_url("sqlite:////tmp/x/data.db?table=t")
    assert str(absolute.sqlite_path) == "/tmp/x/data.db"
    query = parse_sql_url("sqlite:///d.db?query=SELECT a FROM t WHERE b > 2")
    assert query.query == "SELECT a FROM t WHERE b > 2" and query.table is None
    pg = parse_sql_url("postgresql://user:secret@host/db?sslmode=require&table=t")
    assert pg.sqlite_path is None and pg.url == "postgresql://user:secret@host/db?sslmode=require"
    assert "secret" not in pg.display


@pytest.mark.parametrize(("text", "for_writing", "message"), [
    ("sqlite:///d.db", False, "exactly one of table= and query="),
    ("sqlite:///d.db?table=a&query=SELECT 1", False, "got both"),
    ("sqlite:///d.db?table=a&table=b", False, "'table' more than once"),
    ("sqlite:///d.db?table=drop table x", False, "plain SQL identifier"),
    ("sqlite:///d.db?table=1abc", False, "plain SQL identifier"),
    ("sqlite://?table=t", False, "names no database file"),
    ("sqlite:///:memory:?table=t", False, "names no database file"),
    ("sqlite:///d.db", True, "names no table"),
    ("sqlite:///d.db?query=SELECT 1", True, "needs table=NAME"),
    ("data.csv", False, "is not a database URL"),
])
def test_parse_errors_name_the_problem(text: str, for_writing: bool, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_sql_url(text, for_writing=for_writing)


# -- SQLite, built in -------------------------------------------------------------------------

def test_sqlite_round_trip(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/data.db?table=people"
    df = _frame()
    write_sql(df, url)
    back = read_sql(url)
    assert list(back.columns) == list(df.columns)
    np.testing.assert_array_equal(back["id"], df["id"])
    np.testing.assert_allclose(back["income"], df["income"])  # NaN stays NaN (NULL)
    assert back["city"].isna().tolist() == df["city"].isna().tolist()  # NULL comes back missing
    assert back["city"].dropna().tolist() == ["a", "b", "a", "c", "b"]
    assert back["grade"].tolist() == df["grade"].astype(str).tolist()
    assert back["flag"].astype(bool).tolist() == df["flag"].tolist()
    with sqlite3.connect(tmp_path / "data.db") as connection:
        types = {r[1]: r[2] for r in connection.execute("PRAGMA table_info(people)")}
    assert types == {"id": "INTEGER", "income": "REAL", "city": "TEXT", "grade": "TEXT",
                     "flag": "INTEGER"}


def test_read_query(tmp_path: Path) -> None:
    write_sql(_frame(), f"sqlite:///{tmp_path}/d.db?table=t")
    got = read_sql(f"sqlite:///{tmp_path}/d.db?query=SELECT id, income FROM t WHERE id >= 3")
    assert got["id"].tolist() == [3, 4, 5]


def test_existing_table_is_never_replaced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/d.db?table=t"
    write_sql(_frame(), url)
    with pytest.raises(ValueError, match=r"'t' already exists.*never replaces"):
        write_sql(_frame().head(2), url)
    with pytest.raises(ValueError, match="'t' already exists"):
        check_sql_output(url)
    assert read_sql(url).shape[0] == 6  # untouched


def test_failed_write_leaves_no_table(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    write_sql(_frame(), f"sqlite:///{db}?table=keep")
    bad = pd.DataFrame({"a": [1, 2, 3], "b": [{"no": 1}, {"no": 2}, {"no": 3}]})
    with pytest.raises(ValueError, match="Could not write"):
        write_sql(bad, f"sqlite:///{db}?table=broken")
    assert _tables(db) == ["keep"]  # the CREATE TABLE was rolled back with the inserts


def test_read_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_sql(f"sqlite:///{missing}?table=t")
    assert not missing.exists()  # opened read-only: never created
    write_sql(_frame(), f"sqlite:///{tmp_path}/d.db?table=people")
    with pytest.raises(ValueError, match=r"'nobody' does not exist.*Tables: people"):
        read_sql(f"sqlite:///{tmp_path}/d.db?table=nobody")
    with pytest.raises(ValueError, match="has no rows"):
        read_sql(f"sqlite:///{tmp_path}/d.db?query=SELECT * FROM people WHERE id < 0")
    with pytest.raises(ValueError, match="Could not read"):
        read_sql(f"sqlite:///{tmp_path}/d.db?query=SELECT nonsense FROM people")
    (tmp_path / "text.db").write_text("not a database")
    with pytest.raises(ValueError, match="Could not read"):
        read_sql(f"sqlite:///{tmp_path}/text.db?table=t")


def test_output_checks(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        check_sql_output(f"sqlite:///{tmp_path}/nowhere/d.db?table=t")
    url = f"sqlite:///{tmp_path}/new.db?table=t"
    assert check_table_output(url) == url
    assert not (tmp_path / "new.db").exists()  # checking creates nothing


def test_read_table_and_write_table_dispatch(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/d.db?table=t"
    write_table(_frame(), url)
    assert read_table(url).shape == (6, 5)


# -- SQLAlchemy ---------------------------------------------------------------------------------

def test_sqlalchemy_url_round_trip_and_rollback(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    url = f"sqlite+pysqlite:///{tmp_path}/sa.db?table=people"
    assert parse_sql_url(url).sqlite_path is None  # served by SQLAlchemy, not sqlite3
    write_sql(_frame(), url)
    back = read_sql(url)
    np.testing.assert_allclose(back["income"], _frame()["income"])
    with pytest.raises(ValueError, match="already exists"):
        write_sql(_frame(), url)
    with pytest.raises(ValueError, match=r"'other' does not exist.*Tables: people"):
        read_sql(f"sqlite+pysqlite:///{tmp_path}/sa.db?table=other")
    bad = pd.DataFrame({"a": [1, 2], "b": [{"no": 1}, {"no": 2}]})
    with pytest.raises(ValueError, match="Could not write"):
        write_sql(bad, f"sqlite+pysqlite:///{tmp_path}/sa.db?table=broken")
    assert _tables(tmp_path / "sa.db") == ["people"]


POSTGRES = os.environ.get("MICROAGG_TEST_POSTGRES_URL")


@pytest.mark.skipif(not POSTGRES, reason="set MICROAGG_TEST_POSTGRES_URL to test PostgreSQL")
def test_postgresql_round_trip_never_replaces_and_rolls_back() -> None:
    sa = pytest.importorskip("sqlalchemy")
    assert POSTGRES is not None
    name = f"microagg_test_{uuid.uuid4().hex[:12]}"
    url = f"{POSTGRES}?table={name}"
    engine = sa.create_engine(POSTGRES)
    try:
        write_sql(_frame(), url)
        back = read_sql(url)
        np.testing.assert_allclose(back["income"], _frame()["income"])
        assert back["city"].dropna().tolist() == ["a", "b", "a", "c", "b"]
        assert back["city"].isna().sum() == 1
        with pytest.raises(ValueError, match="already exists"):
            write_sql(_frame(), url)
        bad = pd.DataFrame({"a": [1, 2], "b": [{"no": 1}, {"no": 2}]})
        with pytest.raises(ValueError, match="Could not write"):
            write_sql(bad, f"{POSTGRES}?table={name}_bad")
        assert not sa.inspect(engine).has_table(f"{name}_bad")  # rolled back
    finally:
        with engine.begin() as connection:
            connection.execute(sa.text(f'DROP TABLE IF EXISTS "{name}"'))
        engine.dispose()


# -- command line -------------------------------------------------------------------------------

def test_cli_anonymize_from_and_to_sqlite(tmp_path: Path) -> None:
    census = load_dataset("census").data.head(300).iloc[:, :6]
    db = tmp_path / "survey.db"
    source = f"sqlite:///{db}?table=census"
    write_sql(census, source)
    runner = CliRunner()
    target = f"sqlite:///{db}?table=census_k5"
    columns = ",".join(census.columns[:4])
    result = runner.invoke(app, ["anonymize", source, "-q", columns, "-k", "5",
                                 "-s", ",".join(census.columns[4:]),  # or refused: unique
                                 "--random-state", "0", "-o", target])
    assert result.exit_code == 0, result.output  # no column published as is breaks k
    assert _tables(db) == ["census", "census_k5"]
    released = read_sql(target)
    assert released.shape == census.shape
    counts = released.groupby(list(census.columns[:4])).size()
    assert counts.min() >= 5
    pd.testing.assert_frame_equal(read_sql(source), census, check_dtype=False)  # untouched
    # checking the released table straight from the database
    result = runner.invoke(app, ["check", target, "-q", columns])
    assert result.exit_code == 0, result.output
    assert "k-anonymity" in result.output
    # the output table exists now: refused before any work, nothing changed
    again = runner.invoke(app, ["anonymize", source, "-q", columns, "-o", target])
    assert again.exit_code == EXIT_USER_ERROR
    assert "already exists" in again.output
    assert read_sql(target).shape == census.shape
    # the streaming engines read files only
    other = runner.invoke(app, ["anonymize", source, "-q", columns, "--engine", "file",
                                "-o", str(tmp_path / "out.csv")])
    assert other.exit_code == EXIT_USER_ERROR
    assert "--engine local" in other.output
