"""Reading and writing SQL tables: SQLite built in, any SQLAlchemy URL with the ``sql`` extra.

A table is named by a URL whose query string says which table (or, for reading, which
query)::

    sqlite:///relative/file.db?table=people        (three slashes: a relative path)
    sqlite:////abs/path/file.db?table=people       (four: an absolute path)
    postgresql://user@host/db?table=people          (needs SQLAlchemy and a driver)
    sqlite:///file.db?query=SELECT age, income FROM people WHERE year = 2024

SQLite URLs use Python's built-in :mod:`sqlite3`; ``sqlite+driver://`` and every other scheme
go through SQLAlchemy (``pip install microagg[sql]`` plus the database's driver). Writes
create a NEW table inside one transaction: an existing table of that name (the source table
included) is never replaced, and a failed write leaves no table behind.
"""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import re
import sqlite3
import urllib.parse
from typing import Any

import pandas as pd

__all__ = ["SqlLocation", "check_sql_output", "is_sql_url", "parse_sql_url", "read_sql",
           "write_sql"]

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<rest>.*)$", re.DOTALL)
_NOT_DATABASES = frozenset({"file", "http", "https", "ftp", "s3", "gs", "hdfs"})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclasses.dataclass(frozen=True)
class SqlLocation:
    """A parsed table URL.

    Attributes
    ----------
    url : str
        The database URL without microagg's ``table`` / ``query`` parameters (other query
        parameters, e.g. ``sslmode``, are kept for the driver).
    table : str or None
        The table to read or create.
    query : str or None
        A SELECT to read instead of a whole table (reading only).
    sqlite_path : pathlib.Path or None
        The database file when the built-in :mod:`sqlite3` serves the URL (plain
        ``sqlite://``); ``None`` when SQLAlchemy does.
    """

    url: str
    table: str | None
    query: str | None
    sqlite_path: pathlib.Path | None

    @property
    def display(self) -> str:
        """The URL for messages, without a password."""
        return re.sub(r"//([^:/@]+):[^@/]*@", r"//\1:***@", self.url) + (
            f"?table={self.table}" if self.table else "")


def _subject(parameter: str, text: str) -> str:
    """How an error names a URL: ``"'--output' URL 'sqlite:///x.db'"``, or ``"database URL
    'sqlite:///x.db'"`` for a function's own parameter (``path``, ``url``); without a
    password.

    Examples
    --------
    >>> _subject("path", "postgresql://me:secret@host/db")
    "database URL 'postgresql://me:***@host/db'"
    """
    shown = re.sub(r"//([^:/@]+):[^@/]*@", r"//\1:***@", text.strip())
    return (f"database URL {shown!r}" if parameter in ("path", "url")
            else f"{parameter!r} URL {shown!r}")


def is_sql_url(text: object) -> bool:
    """Whether `text` is a database URL (``scheme://...`` other than file or web schemes).

    Examples
    --------
    >>> is_sql_url("sqlite:///data.db?table=people"), is_sql_url("data.csv")
    (True, False)
    """
    if not isinstance(text, str):
        return False
    match = _URL.match(text.strip())
    if match is None:
        return False
    scheme = match.group("scheme").lower()
    # one letter is a Windows drive (C://data.csv), not a scheme
    return len(scheme) > 1 and scheme not in _NOT_DATABASES


def parse_sql_url(text: str, *, parameter: str = "url", for_writing: bool = False
                  ) -> SqlLocation:
    """Split a table URL into the database URL and the table (or query).

    Parameters
    ----------
    text : str
        ``scheme://...?table=NAME`` (or ``?query=SELECT ...`` when reading).
    parameter : str, default="url"
        The name used for `text` in error messages (e.g. ``"--output"``).
    for_writing : bool, default=False
        A written URL needs ``table=`` and refuses ``query=``.

    Returns
    -------
    SqlLocation

    Raises
    ------
    ValueError
        If `text` is not a database URL, names neither or both of table and query, or the
        table name is not a plain SQL identifier (letters, digits, underscores).

    Examples
    --------
    >>> location = parse_sql_url("sqlite:///out/data.db?table=people")
    >>> location.table, str(location.sqlite_path)
    ('people', 'out/data.db')
    """
    if not is_sql_url(text):
        raise ValueError(f"The {_subject(parameter, text)} is not a database URL "
                         "(e.g. sqlite:///file.db?table=people).")
    match = _URL.match(text.strip())
    assert match is not None
    scheme = match.group("scheme")
    base, _, query_string = match.group("rest").partition("?")
    params = urllib.parse.parse_qsl(query_string, keep_blank_values=True)
    ours = {name: value for name, value in params if name in ("table", "query")}
    repeated = [name for name in ("table", "query")
                if sum(1 for n, _ in params if n == name) > 1]
    if repeated:
        raise ValueError(f"The {_subject(parameter, text)} gives {repeated[0]!r} more than "
                         "once.")
    rest = [(name, value) for name, value in params if name not in ("table", "query")]
    table, query = ours.get("table") or None, ours.get("query") or None
    example = f"{scheme}://{base}?table=people"
    if for_writing:
        if query is not None:
            raise ValueError(f"The {_subject(parameter, text)} gives query=; a written "
                             "table needs "
                             f"table=NAME instead, e.g. {example!r}.")
        if table is None:
            raise ValueError(f"The {_subject(parameter, text)} names no table; add "
                             "?table=NAME, e.g. "
                             f"{example!r}.")
    elif (table is None) == (query is None):
        raise ValueError(f"The {_subject(parameter, text)} must give exactly one of table= "
                         "and query= "
                         f"(got {'both' if table else 'neither'}), e.g. {example!r}.")
    if table is not None and not _IDENTIFIER.match(table):
        raise ValueError(f"The table name {table!r} in the {_subject(parameter, text)} must "
                         "be a plain SQL "
                         "identifier: letters, digits and underscores, not starting with a "
                         "digit.")
    url = f"{scheme}://{base}" + (f"?{urllib.parse.urlencode(rest)}" if rest else "")
    sqlite_path = None
    if scheme.lower() == "sqlite":
        if not base.startswith("/") or base in ("/", "/:memory:"):
            raise ValueError(f"The {_subject(parameter, text)} names no database file; write "
                             "sqlite:///relative.db or sqlite:////absolute/path.db.")
        sqlite_path = pathlib.Path(urllib.parse.unquote(base[1:])).expanduser()
    return SqlLocation(url=url, table=table, query=query, sqlite_path=sqlite_path)


def _sqlalchemy() -> Any:
    try:
        return importlib.import_module("sqlalchemy")
    except ImportError:
        raise ImportError("Database URLs other than sqlite:/// need SQLAlchemy: pip install "
                          "'microagg[sql]' (and the database's driver, e.g. psycopg).") from None


def _engine(sa: Any, url: str) -> Any:
    """A SQLAlchemy engine; for SQLite drivers, with real transactions around DDL.

    Python's sqlite3 commits before a CREATE TABLE on its own, so a failed insert would leave
    an empty table behind; SQLAlchemy's documented remedy is to turn that off and emit BEGIN
    ourselves ("Serializable isolation / Savepoints / Transactional DDL", pysqlite dialect).
    """
    engine = sa.create_engine(url)
    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _no_implicit_commit(dbapi_connection: Any, record: Any) -> None:
            dbapi_connection.isolation_level = None

        @sa.event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN")

    return engine


def _sqlite_tables(connection: sqlite3.Connection) -> list[str]:
    return [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_sql(url: str, *, parameter: str = "INPUT") -> pd.DataFrame:
    """Read a table (or the result of a query) from a database URL.

    Parameters
    ----------
    url : str
        See the module docstring: ``sqlite:///file.db?table=NAME``, ``...?query=SELECT ...``,
        or any SQLAlchemy URL with the ``sql`` extra.
    parameter : str, default="INPUT"
        The name used for `url` in error messages.

    Returns
    -------
    pandas.DataFrame
        The rows, at least one.

    Raises
    ------
    FileNotFoundError
        If a SQLite file does not exist (it is opened read-only: never created).
    ValueError
        If the table does not exist (the existing tables are listed), the query fails, or
        there are no rows.
    ImportError
        If the URL needs SQLAlchemy and it is not installed.
    """
    location = parse_sql_url(url, parameter=parameter)
    statement = (location.query if location.query is not None
                 else f"SELECT * FROM {_quote(str(location.table))}")
    if location.sqlite_path is not None:
        path = location.sqlite_path
        if not path.is_file():
            raise FileNotFoundError(f"SQLite database {str(path)!r} does not exist.")
        uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
        try:
            connection = sqlite3.connect(uri, uri=True)
            try:
                tables = _sqlite_tables(connection)
                if location.table is not None and location.table not in tables:
                    raise ValueError(f"Table {location.table!r} does not exist in "
                                     f"{str(path)!r}. Tables: {', '.join(tables) or 'none'}.")
                df = pd.read_sql_query(statement, connection)
            finally:
                connection.close()
        except (sqlite3.Error, pd.errors.DatabaseError) as exc:
            raise ValueError(f"Could not read {location.display!r}: {exc}") from exc
    else:
        sa = _sqlalchemy()
        engine = _engine(sa, location.url)
        try:
            with engine.connect() as connection:
                if location.table is not None and not sa.inspect(connection).has_table(
                        location.table):
                    names = sa.inspect(connection).get_table_names()
                    raise ValueError(f"Table {location.table!r} does not exist in "
                                     f"{location.display!r}. Tables: "
                                     f"{', '.join(names) or 'none'}.")
                df = pd.read_sql_query(sa.text(statement), connection)
        except sa.exc.SQLAlchemyError as exc:
            raise ValueError(f"Could not read {location.display!r}: {exc}") from exc
        finally:
            engine.dispose()
    if df.shape[0] == 0:
        raise ValueError(f"{location.display if location.table else location.query!r} has no "
                         f"rows (only {df.shape[1]} column(s)).")
    return df


def _python_rows(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Rows as plain Python values: sqlite3 adapts neither numpy scalars nor NaN as NULL.

    Column by column and vectorized: an object array of a numeric column already holds
    Python ints / floats / bools; missing values (NaN, None, pd.NA, NaT) become None.
    """
    columns = []
    for name in df.columns:
        series = df[name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        values = series.to_numpy(dtype=object, copy=True)
        missing = pd.isna(values)
        if missing.any():
            values[missing] = None
        columns.append(values)
    return list(zip(*columns, strict=True)) if columns else []


def _sqlite_type(series: pd.Series) -> str:
    kind = series.dtype.kind
    if kind in "biu":
        return "INTEGER"
    if kind == "f":
        return "REAL"
    return "TEXT"


def check_sql_output(url: str, *, parameter: str = "--output") -> str:
    """Check, before any work, that `url` names a table that can be created.

    Parameters
    ----------
    url : str
        The table URL to be written.
    parameter : str, default="--output"
        The name used for `url` in error messages.

    Returns
    -------
    str
        `url`, unchanged.

    Raises
    ------
    ValueError
        If the URL names no table, the SQLite file's directory does not exist, or the table
        exists already.
    ImportError
        If the URL needs SQLAlchemy and it is not installed.
    """
    location = parse_sql_url(url, parameter=parameter, for_writing=True)
    table = str(location.table)
    message = (f"Table {table!r} already exists in {location.display.rpartition('?')[0]!r}; "
               "microagg never replaces a table. Choose another name.")
    if location.sqlite_path is not None:
        path = location.sqlite_path
        if not path.parent.resolve().is_dir():
            raise ValueError(f"The directory of the {parameter!r} database {str(path)!r} does "
                             "not exist.")
        if path.is_file():
            uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
            try:
                connection = sqlite3.connect(uri, uri=True)
                try:
                    if table in _sqlite_tables(connection):
                        raise ValueError(message)
                finally:
                    connection.close()
            except sqlite3.DatabaseError as exc:
                raise ValueError(f"{str(path)!r} ({parameter}) is not a SQLite database: "
                                 f"{exc}") from exc
        return url
    sa = _sqlalchemy()
    engine = _engine(sa, location.url)
    try:
        with engine.connect() as connection:
            if sa.inspect(connection).has_table(table):
                raise ValueError(message)
    except sa.exc.SQLAlchemyError as exc:
        raise ValueError(f"Could not open {location.display!r}: {exc}") from exc
    finally:
        engine.dispose()
    return url


def write_sql(df: pd.DataFrame, url: str, *, parameter: str = "--output") -> None:
    """Write `df` to a NEW table, in one transaction.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (its index is not written).
    url : str
        ``sqlite:///file.db?table=NAME`` (the file is created if absent) or any SQLAlchemy
        URL with ``?table=NAME``.
    parameter : str, default="--output"
        The name used for `url` in error messages.

    Raises
    ------
    ValueError
        If the table already exists (it is never replaced; choose another name) or the
        write fails (then nothing is left behind: the transaction is rolled back).
    ImportError
        If the URL needs SQLAlchemy and it is not installed.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"write_sql expects a pandas DataFrame. Got {type(df).__name__} instead.")
    location = parse_sql_url(url, parameter=parameter, for_writing=True)
    table = str(location.table)
    if location.sqlite_path is not None:
        path = location.sqlite_path
        if not path.parent.resolve().is_dir():
            raise ValueError(f"The directory of the {parameter!r} database {str(path)!r} does "
                             "not exist.")
        connection = sqlite3.connect(path, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                exists = connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
                if exists:
                    raise ValueError(f"Table {table!r} already exists in {str(path)!r}; "
                                     "microagg never replaces a table. Choose another name.")
                if df.shape[1] == 0:
                    raise ValueError("write_sql: the table has no columns.")
                columns = ", ".join(f"{_quote(str(c))} {_sqlite_type(df[c])}"
                                    for c in df.columns)
                connection.execute(f"CREATE TABLE {_quote(table)} ({columns})")
                marks = ", ".join("?" for _ in df.columns)
                connection.executemany(f"INSERT INTO {_quote(table)} VALUES ({marks})",
                                       _python_rows(df))
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise ValueError(f"Could not write {location.display!r}: {exc}") from exc
        finally:
            connection.close()
        return
    sa = _sqlalchemy()
    engine = _engine(sa, location.url)
    try:
        with engine.begin() as connection:  # one transaction: commit at the end or roll back
            if sa.inspect(connection).has_table(table):
                raise ValueError(f"Table {table!r} already exists in {location.display!r}; "
                                 "microagg never replaces a table. Choose another name.")
            df.to_sql(table, connection, if_exists="fail", index=False)
    except (sa.exc.SQLAlchemyError, pd.errors.DatabaseError) as exc:
        raise ValueError(f"Could not write {location.display!r}: {exc}") from exc
    finally:
        engine.dispose()
