"""Reading and writing tables (CSV, Parquet, Excel, Stata, SPSS, database tables): separator
detection, variable and value labels, atomic writes, path checks."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import IO, Any

import pandas as pd

from .._base.column_names import match_columns
from ..schema.schema_file import check_unique_columns
from ._atomic import atomic_write, write_text_atomic
from ._dates import DateKind, as_datetimes, parquet_dates, written_kinds
from ._formats import (
    CSV_EXTENSIONS,
    EXCEL_EXTENSIONS,
    PARQUET_EXTENSIONS,
    SPSS_EXTENSIONS,
    STATA_EXTENSIONS,
    SUPPORTED_EXTENSIONS,
    Compression,
    format_of,
    format_suffix,
    path_subject,
    require_pyarrow,
    sniff_separator,
    table_format_of,
    unsupported_path,
)
from ._labelled import (
    METADATA_KEY,
    TableMetadata,
    ValueLabels,
    chosen_metadata,
    read_excel,
    read_labelled,
    table_metadata,
    write_excel,
    write_labelled,
)
from ._missing_codes import MissingCode, with_missing_codes
from ._nested import check_storable, exact_nested, write_parquet

__all__ = ["CSV_EXTENSIONS", "EXCEL_EXTENSIONS", "METADATA_KEY", "PARQUET_EXTENSIONS",
           "SPSS_EXTENSIONS", "STATA_EXTENSIONS", "SUPPORTED_EXTENSIONS", "VERBATIM_CSV",
           "TableMetadata", "check_csv_header", "check_output_path", "check_table_output",
           "is_csv", "read_table", "read_verbatim", "table_metadata", "write_table",
           "write_text_atomic"]

PathLike = str | os.PathLike[str]

VERBATIM_CSV: Mapping[str, Any] = MappingProxyType(
    {"dtype": str, "keep_default_na": False, "na_filter": False})
"""``pandas.read_csv`` options that keep every field as written: text, nothing read as
missing (``NA``, ``null``, empty fields stay strings), so that writing it back reproduces it."""


def is_csv(path: PathLike) -> bool:
    """Whether ``path`` names a delimited-text file (not Parquet, Excel, Stata, SPSS, SQL).

    Parameters
    ----------
    path : str or os.PathLike
    """
    from microagg.io.sql import is_sql_url

    return not is_sql_url(path) and format_suffix(pathlib.Path(path)) in CSV_EXTENSIONS


def check_csv_header(path: PathLike, *, sep: str | None = None) -> list[str]:
    """Refuse a CSV file whose header repeats a column name, naming the names and counts;
    return the header's (non-empty) names.

    pandas would read the second ``age`` as ``age.1``, a column no role names: it would be
    published unmasked. Empty header fields (pandas' ``Unnamed: i``) are not compared.

    Parameters
    ----------
    path : str or os.PathLike
    sep : str or None, default=None
        Its separator; ``None``: detected from the file.
    """
    file = pathlib.Path(path).expanduser()
    _, compression = format_of(file, parameter="path")
    separator = sep or sniff_separator(file, compression)
    try:
        head = pd.read_csv(file, sep=separator, header=None, nrows=1, compression=compression,
                           **VERBATIM_CSV)
    except pd.errors.EmptyDataError:
        return []
    names = [str(v) for v in head.iloc[0] if str(v)] if len(head) else []
    check_unique_columns(names, source=f"input file {str(file)!r}")
    return names


def read_verbatim(path: PathLike, *, sep: str | None = None,
                  columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Columns of a CSV file exactly as written: every field a string, none read as missing.

    Writing them back with :func:`write_table` reproduces each field (leading zeros, ``NA``,
    ``null``, empty fields, ``1.50``, ``1e3``), quoted where the separator needs it.

    Parameters
    ----------
    path : str or os.PathLike
    sep : str or None, default=None
        Its separator; ``None``: detected from the file.
    columns : sequence of str or None, default=None
        The columns to read; ``None``: every column.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.csv").write_text("zip,note\\n01234,NA\\n00100,\\n")
    >>> read_verbatim(folder / "t.csv").to_dict("list")
    {'zip': ['01234', '00100'], 'note': ['NA', '']}
    """
    file = pathlib.Path(path).expanduser()
    _, compression = format_of(file, parameter="path")
    separator = sep or sniff_separator(file, compression)
    return pd.read_csv(file, sep=separator, compression=compression,
                       usecols=list(columns) if columns is not None else None, **VERBATIM_CSV)


def _check_input_file(file: pathlib.Path) -> None:
    """An existing, regular, non-empty file, or the error that says which it is not."""
    if not file.exists():
        raise FileNotFoundError(f"Input file {str(file)!r} does not exist.")
    if not file.is_file():
        raise ValueError(f"Input path {str(file)!r} is not a regular file.")
    if file.stat().st_size == 0:
        raise ValueError(f"Input file {str(file)!r} is empty (0 bytes).")


def read_table(path: PathLike, *, sep: str | None = None,
               text_columns: Collection[str] = (), sheet: str | int | None = None,
               value_labels: ValueLabels = "labels",
               missing: Mapping[str, Sequence[MissingCode]] | None = None) -> pd.DataFrame:
    """Read a table (CSV, Parquet, Excel, Stata, SPSS or a database table).

    Parameters
    ----------
    path : str or path-like
        A file ending in one of :data:`SUPPORTED_EXTENSIONS`: ``.csv``, ``.txt``, ``.tsv``
        (optionally ``.gz``-compressed), ``.parquet`` / ``.pq`` (pyarrow), ``.xlsx``
        (openpyxl), ``.dta`` (Stata) or ``.sav`` (SPSS; both with pyreadstat); or a database
        table as a URL string, ``sqlite:///file.db?table=NAME`` (see :mod:`microagg.io.sql`).
    sep : str, optional
        CSV field separator. ``None`` detects it from a sample of the file (``,``, ``;``,
        tab or ``|``; ``,`` when undecided). Ignored for the other formats.
    text_columns : collection of str, default=()
        CSV and Excel columns read as strings, not numbers: categorical codes keep their
        leading zeros (``01``). Missing-value markers (empty, ``NA``) are still missing.
        Ignored for the formats that store their types.
    sheet : str or int, optional
        The worksheet of an ``.xlsx`` file, by name or 0-based index; default the first.
    value_labels : {"labels", "codes"}, default="labels"
        Stata and SPSS: ``"labels"`` reads a column whose every value has a value label
        (a coded categorical such as ``1 = male, 2 = female``) as its labels, as text, the
        way sdcMicro users name their categorical key variables; a column with unlabelled
        values (a number with labelled special codes) keeps its numbers. ``"codes"`` keeps
        every column's codes. Either way the labels are kept in the metadata.
    missing : mapping of str to sequence, optional
        Missing-value codes by column (``{"income": [-9, -8], "bmi": ["."]}``, a schema's
        ``missing``): read as missing, kept in the metadata and written back by
        :func:`write_table` (:mod:`microagg.io._missing_codes`). SPSS user-missing values and
        Stata extended missing values are such codes without being declared.

    Returns
    -------
    pandas.DataFrame
        The table, with at least one row and unique column names. A Stata or SPSS table
        carries its variable and value labels as a :class:`TableMetadata` in
        ``df.attrs["microagg_metadata"]`` (:func:`table_metadata`), which
        :func:`write_table` writes back. Date columns are ``datetime64`` in every format
        (a Parquet ``date32``, a Stata ``%td`` or an SPSS ``DATE11`` column too, which
        pyarrow and pyreadstat give as ``datetime.date`` objects); the metadata of a
        Stata, SPSS, Parquet or Excel table records whether each was a date or a datetime.

    Raises
    ------
    FileNotFoundError
        If `path` does not exist.
    ValueError
        If `path` is not a file, has an unsupported extension, is empty (0 bytes or no
        columns), has a header but no rows, repeats a column name (a
        :class:`~microagg.exceptions.SchemaError`), or cannot be parsed.
    ImportError
        If `path` is Parquet and pyarrow is not installed, or Excel, Stata or SPSS and the
        extra ``microagg[formats]`` (openpyxl, pyreadstat) is not.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.csv").write_text("a;b\\n1;2\\n3;4\\n")
    >>> read_table(folder / "t.csv").shape
    (2, 2)
    """
    from microagg.io.sql import is_sql_url, read_sql

    if is_sql_url(path):
        return with_missing_codes(read_sql(str(path), parameter="path"), missing,
                                  source="the database table")
    file = pathlib.Path(path).expanduser()
    fmt, compression = table_format_of(file, parameter="path")
    _check_input_file(file)
    if fmt == "xlsx":
        df = read_excel(file, sheet=sheet, text_columns=text_columns)
        _keep_date_kinds(df, fmt, written_kinds(df, {}))
    elif fmt in ("dta", "sav"):
        df = read_labelled(file, fmt, value_labels=value_labels)
    elif fmt == "parquet":
        df = _read_parquet(file)
    else:
        df = _read_csv(file, sep, compression, text_columns)
    if df.shape[0] == 0:
        raise ValueError(
            f"Input file {str(file)!r} has no rows (only a header with {df.shape[1]} "
            "column(s))."
        )
    return with_missing_codes(df, missing, source=f"input file {str(file)!r}")


def _read_parquet(file: pathlib.Path) -> pd.DataFrame:
    """:func:`read_table` of a Parquet file: ``date32`` columns (which pandas reads as
    ``datetime.date`` objects) as ``datetime64[s]``, their kinds in the metadata; list,
    struct and map columns with their Parquet types (:func:`exact_nested`)."""
    require_pyarrow(file)
    try:
        df = exact_nested(pd.read_parquet(file, engine="pyarrow"), file)
    except (OSError, ValueError) as exc:
        raise ValueError(f"Could not read {str(file)!r} as Parquet: {exc}") from exc
    check_unique_columns(df.columns, source=f"input file {str(file)!r}")
    df.attrs.pop(METADATA_KEY, None)
    _keep_date_kinds(df, "parquet", as_datetimes(df))
    return df


def _keep_date_kinds(df: pd.DataFrame, fmt: str, kinds: Mapping[Any, DateKind]) -> None:
    """Metadata with the kinds of the date columns of a Parquet or Excel table (in
    ``df.attrs``), if it has any: :func:`write_table` writes each back as it was read."""
    if kinds:
        df.attrs[METADATA_KEY] = TableMetadata(
            source_format=fmt, date_kinds={str(col): kind for col, kind in kinds.items()})


def _read_csv(file: pathlib.Path, sep: str | None, compression: Compression,
              text_columns: Collection[str]) -> pd.DataFrame:
    """:func:`read_table` of a CSV file; the path is checked."""
    if sep is not None and not sep:
        raise ValueError("The 'sep' parameter must be a non-empty string. Got '' instead.")
    try:
        if sep is None:
            sep = sniff_separator(file, compression)
        header = check_csv_header(file, sep=sep)
        text = match_columns(list(text_columns), header) or []  # as the header spells them
        return pd.read_csv(file, sep=sep, engine="c", compression=compression,
                           dtype=dict.fromkeys(text, str) or None)
    except pd.errors.EmptyDataError:
        raise ValueError(f"Input file {str(file)!r} is empty: no header and no rows.") from None
    except (UnicodeDecodeError, pd.errors.ParserError, EOFError, OSError) as exc:
        raise ValueError(f"Could not parse {str(file)!r} as CSV (sep={sep!r}): {exc}") from exc


def write_table(df: pd.DataFrame, path: PathLike, *, sep: str | None = None,
                sheet: str | None = None, metadata: TableMetadata | None = None) -> None:
    """Write a table as CSV, Parquet, Excel, Stata or SPSS (by extension), atomically.

    The table goes to a temporary file in the same directory, which is flushed, fsync'ed and
    renamed onto `path`; on any error (or KeyboardInterrupt) the temporary file is removed.
    A partial output therefore never exists.

    Parameters
    ----------
    df : pandas.DataFrame
        The table; its index is not written.
    path : str or path-like
        Output file ending in one of :data:`SUPPORTED_EXTENSIONS`; or a new database table
        as a URL string, ``sqlite:///file.db?table=NAME``, created in one transaction and
        never replacing an existing table (see :mod:`microagg.io.sql`).
    sep : str, optional
        CSV field separator; default ``","`` (a tab for ``.tsv``). Ignored for the others.
    sheet : str, optional
        The worksheet's name in a new ``.xlsx`` file; default ``"Sheet1"``.
    metadata : TableMetadata, optional
        Variable and value labels written to ``.dta`` and ``.sav`` (the other formats have
        none); default ``df.attrs["microagg_metadata"]``, set by :func:`read_table`. After
        masking, pass :meth:`TableMetadata.released` so that averaged codes lose their value
        labels. A text column read as labels is written as its codes with its labels while
        every value is one of them; otherwise as text, its value labels dropped with a
        :class:`~microagg.exceptions.LabelsDroppedWarning`. Its date kinds decide how each
        ``datetime64`` column is written: a date (Stata ``%td``, SPSS ``DATE11`` or the
        format read, Excel ``YYYY-MM-DD``, Parquet ``date32``) or a datetime (``%tc``,
        ``DATETIME20``, ``YYYY-MM-DD HH:MM:SS``, a timestamp). Without a recorded kind, a
        column with no time of day is a date in Stata, SPSS and Excel, and a Parquet
        timestamp stays one.

    Raises
    ------
    TypeError
        If `df` is not a pandas DataFrame, or `metadata` not a TableMetadata.
    ValueError
        If `path` has an unsupported extension, `sep` is empty, `sheet` is not a valid
        worksheet name, or the table does not fit the format (Excel's rows, Stata's and
        SPSS's column names; list and struct columns, which only Parquet stores).
    ImportError
        If `path` is Parquet and pyarrow is not installed, or Excel, Stata or SPSS and the
        extra ``microagg[formats]`` (openpyxl, pyreadstat) is not.
    OSError
        If the file cannot be written (the output is then absent or unchanged).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_table(pd.DataFrame({"a": [1, 2]}), folder / "out.csv")
    >>> (folder / "out.csv").read_text()
    'a\\n1\\n2\\n'
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"write_table expects a pandas DataFrame. Got {type(df).__name__} instead.")
    from microagg.io.sql import is_sql_url, write_sql

    if is_sql_url(path):
        check_storable(df, path)
        write_sql(df, str(path), parameter="path")
        return
    file = pathlib.Path(path).expanduser()
    fmt, compression = table_format_of(file, parameter="path")
    check_storable(df, file)
    labels = chosen_metadata(df, metadata)
    if fmt == "xlsx":
        write_excel(df, file, sheet=sheet, metadata=labels)
        return
    if fmt in ("dta", "sav"):
        write_labelled(df, file, fmt, labels)
        return
    if fmt == "parquet":
        _write_parquet(df, file, labels)
        return
    if sep is None:
        sep = "\t" if format_suffix(file).startswith(".tsv") else ","
    if not sep:
        raise ValueError("The 'sep' parameter must be a non-empty string. Got '' instead.")
    separator = sep

    def write(handle: IO[bytes]) -> None:
        df.to_csv(handle, sep=separator, index=False, compression=compression)

    atomic_write(file, write)


def _write_parquet(df: pd.DataFrame, file: pathlib.Path, labels: TableMetadata | None) -> None:
    """:func:`write_table` of a Parquet file: the columns read as dates as ``date32``; the
    metadata kept out of pandas' attrs, which pandas writes as JSON (it is no JSON value)."""
    require_pyarrow(file)
    table = parquet_dates(df, labels.date_kinds if labels is not None else {})
    if METADATA_KEY in table.attrs:
        table = table.copy()
        table.attrs.pop(METADATA_KEY)

    def write(handle: IO[bytes]) -> None:
        write_parquet(table, handle)  # list and struct columns with their Parquet types

    atomic_write(file, write)


def check_output_path(
    output: PathLike,
    *,
    inputs: Iterable[PathLike] = (),
    extensions: Sequence[str] | None = None,
    parameter: str = "output",
    outputs: Mapping[str, PathLike | None] | None = None,
) -> pathlib.Path:
    """Check, before any work, that `output` can be written and overwrites no input.

    Parameters
    ----------
    output : str or path-like
        The path to be written.
    inputs : iterable of str or path-like, default=()
        Paths that must not be overwritten (compared after resolving symbolic links, and with
        :func:`os.path.samefile` when both exist, which also catches hard links).
    extensions : sequence of str, optional
        Allowed extensions (lower case, with the dot); default :data:`SUPPORTED_EXTENSIONS`.
    parameter : str, default="output"
        Name used for `output` in error messages (e.g. ``"--summary-json"``).
    outputs : mapping of str to path-like, default=None
        The command's other outputs by their option names (``{"--output": path}``): `output`
        must be none of them (URLs and ``None`` are skipped).

    Returns
    -------
    pathlib.Path
        The resolved output path.

    Raises
    ------
    ValueError
        If `output` is one of `inputs` or `outputs`, has an unsupported extension, is an
        existing directory, or its parent directory does not exist, is not a directory or is
        not writable.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_path(folder / "out.csv", inputs=[folder / "in.csv"]).name
    'out.csv'
    """
    from microagg.io.sql import is_sql_url

    if is_sql_url(output):
        raise ValueError(f"The {parameter!r} value {str(output)!r} is a database URL; it "
                         "must be a file path.")
    target = pathlib.Path(output).expanduser()
    resolved = target.resolve()
    for option, other in (outputs or {}).items():
        if other is not None and not is_sql_url(other) \
                and pathlib.Path(other).expanduser().resolve() == resolved:
            raise ValueError(f"The {path_subject(parameter, target)} is also the {option!r} "
                             "path; give each output its own file.")
    for item in inputs:
        if is_sql_url(item):
            continue
        source = pathlib.Path(item).expanduser()
        same = source.resolve() == resolved
        if not same and source.exists() and resolved.exists():
            same = os.path.samefile(source, resolved)
        if same:
            raise ValueError(
                f"The {path_subject(parameter, target)} is the input file {str(source)!r}; "
                "microagg never overwrites its input. Choose another output path."
            )
    allowed = tuple(SUPPORTED_EXTENSIONS if extensions is None else extensions)
    suffix = format_suffix(target)
    if suffix not in allowed:
        raise unsupported_path(target, parameter, allowed)
    if resolved.is_dir():
        raise ValueError(f"The {path_subject(parameter, target)} is an existing directory.")
    _check_output_folder(target, resolved.parent, parameter)
    return resolved


def _check_output_folder(target: pathlib.Path, parent: pathlib.Path, parameter: str) -> None:
    """The folder of an output must exist, be a directory and be writable."""
    if not parent.exists():
        raise ValueError(
            f"The directory of the {path_subject(parameter, target)} does not exist: "
            f"{str(parent)!r}."
        )
    if not parent.is_dir():
        raise ValueError(
            f"The {path_subject(parameter, target)} lies under {str(parent)!r}, which is not "
            "a directory."
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"The directory of the {path_subject(parameter, target)} is not writable: "
            f"{str(parent)!r}."
        )


def check_table_output(output: PathLike, *, inputs: Iterable[PathLike] = (),
                       parameter: str = "output") -> pathlib.Path | str:
    """:func:`check_output_path` for a table output that may also be a database URL.

    Parameters
    ----------
    output : str or path-like
        A file path (CSV, Parquet, Excel, Stata, SPSS: :data:`SUPPORTED_EXTENSIONS`) or a
        table URL such as ``sqlite:///file.db?table=NAME``.
    inputs : iterable of str or path-like, default=()
        Inputs that must not be overwritten.
    parameter : str, default="output"
        Name used for `output` in error messages.

    Returns
    -------
    pathlib.Path or str
        The resolved path, or the URL (checked: its table does not exist yet).

    Raises
    ------
    ValueError
        As :func:`check_output_path`, or :func:`microagg.io.sql.check_sql_output` for a URL.
    """
    from microagg.io.sql import check_sql_output, is_sql_url

    if is_sql_url(output):
        return check_sql_output(str(output), parameter=parameter)
    return check_output_path(output, inputs=inputs, parameter=parameter)
