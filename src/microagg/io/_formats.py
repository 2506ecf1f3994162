"""File formats of tables: extensions, compression, the CSV separator, the checks for the
optional readers (pyarrow, openpyxl, pyreadstat), the wording of path errors. Shared by
:mod:`microagg.io` (which makes the extension constants public), the engines and the graph
files."""

from __future__ import annotations

import csv
import gzip
import importlib
import os
import pathlib
from types import ModuleType
from typing import Literal

__all__ = [
    "CSV_EXTENSIONS",
    "EXCEL_EXTENSIONS",
    "PARQUET_EXTENSIONS",
    "SPSS_EXTENSIONS",
    "STATA_EXTENSIONS",
    "STREAMED_EXTENSIONS",
    "SUPPORTED_EXTENSIONS",
    "Compression",
    "Format",
    "TableFormat",
    "format_of",
    "format_suffix",
    "path_subject",
    "require_formats",
    "require_pyarrow",
    "sniff_separator",
    "table_format_of",
    "unsupported_path",
]

CSV_EXTENSIONS: tuple[str, ...] = (".csv", ".txt", ".tsv", ".csv.gz", ".txt.gz", ".tsv.gz")
"""Delimited-text extensions (``.gz`` ones are gzip-compressed)."""
PARQUET_EXTENSIONS: tuple[str, ...] = (".parquet", ".pq")
"""Parquet extensions (need the optional dependency pyarrow)."""
EXCEL_EXTENSIONS: tuple[str, ...] = (".xlsx",)
"""Excel workbooks (need the optional extra ``formats``: openpyxl)."""
STATA_EXTENSIONS: tuple[str, ...] = (".dta",)
"""Stata data files, with variable and value labels (extra ``formats``: pyreadstat)."""
SPSS_EXTENSIONS: tuple[str, ...] = (".sav",)
"""SPSS data files, with variable and value labels (extra ``formats``: pyreadstat)."""
STREAMED_EXTENSIONS: tuple[str, ...] = CSV_EXTENSIONS + PARQUET_EXTENSIONS
"""The formats read in chunks by the out-of-core engines (``--engine file`` / ``dask``)."""
SUPPORTED_EXTENSIONS: tuple[str, ...] = (STREAMED_EXTENSIONS + EXCEL_EXTENSIONS
                                         + STATA_EXTENSIONS + SPSS_EXTENSIONS)
"""Every extension :func:`~microagg.io.read_table` and :func:`~microagg.io.write_table`
understand."""

_WHOLE_FILE_KINDS = {".xlsx": "an Excel", ".dta": "a Stata", ".sav": "an SPSS"}
_EXTRA_PACKAGES = {"openpyxl": "Excel", "pyreadstat": "Stata and SPSS"}

_SNIFF_DELIMITERS = ",;\t|"
_SNIFF_BYTES = 64 * 1024

Format = Literal["csv", "parquet"]
TableFormat = Literal["csv", "parquet", "xlsx", "dta", "sav"]
Compression = Literal["gzip"] | None


def path_subject(parameter: str, path: str | os.PathLike[str]) -> str:
    """How an error names a path: ``"'--output' path 'x.csv'"``, or ``"path 'x.csv'"`` when
    the parameter is itself called ``path`` (never "the 'path' path").

    Examples
    --------
    >>> "The " + path_subject("--output", "x.csv")
    "The '--output' path 'x.csv'"
    >>> "The " + path_subject("path", "x.csv")
    "The path 'x.csv'"
    """
    if parameter == "path":
        return f"path {str(path)!r}"
    return f"{parameter!r} path {str(path)!r}"


def unsupported_path(path: pathlib.Path, parameter: str, allowed: tuple[str, ...]) -> ValueError:
    """The refusal of a path that names no table file: standard input or output, a
    directory, or an unknown extension (the valid ones listed)."""
    if str(path) == "-":
        return ValueError(
            f"The {path_subject(parameter, path)} stands for standard input or output, which "
            "microagg does not use (it reads a table more than once and writes its files "
            f"atomically): give a file path instead, e.g. data{allowed[0]}.")
    if path.is_dir():
        return ValueError(
            f"The {path_subject(parameter, path)} is a directory; give a file in it, ending "
            f"in one of {', '.join(allowed)}.")
    suffix = format_suffix(path)
    return ValueError(
        f"The {path_subject(parameter, path)} has an unsupported extension "
        f"{suffix or '(none)'!r}. Supported extensions: {', '.join(allowed)}."
    )


def format_suffix(path: pathlib.Path) -> str:
    """The lower-case extension that decides the format: ``.csv.gz`` counts as one."""
    suffixes = [s.lower() for s in path.suffixes]
    if len(suffixes) >= 2 and suffixes[-1] == ".gz":
        return "".join(suffixes[-2:])
    return suffixes[-1] if suffixes else ""


def format_of(path: pathlib.Path, *, parameter: str) -> tuple[Format, Compression]:
    """The format of a file read in chunks: ``("csv", compression)`` or ``("parquet", None)``.

    An Excel, Stata or SPSS file is refused with the engine that reads it whole; an unknown
    extension lists the valid ones. :func:`table_format_of` takes every table format.
    """
    suffix = format_suffix(path)
    if suffix in PARQUET_EXTENSIONS:
        return "parquet", None
    if suffix in CSV_EXTENSIONS:
        return "csv", "gzip" if suffix.endswith(".gz") else None
    if suffix in _WHOLE_FILE_KINDS:
        raise ValueError(
            f"The {path_subject(parameter, path)} is {_WHOLE_FILE_KINDS[suffix]} file, which "
            "is read whole: the out-of-core engines (file, dask) stream CSV and Parquet only. "
            "Use the local engine."
        )
    raise unsupported_path(path, parameter, STREAMED_EXTENSIONS)


def table_format_of(path: pathlib.Path, *, parameter: str) -> tuple[TableFormat, Compression]:
    """The format of a table file by its extension, one of :data:`SUPPORTED_EXTENSIONS`.

    Returns ``("csv", compression)``, or ``(fmt, None)`` with `fmt` one of ``"parquet"``,
    ``"xlsx"``, ``"dta"``, ``"sav"``; an unknown extension lists the valid ones.
    """
    suffix = format_suffix(path)
    if suffix in _WHOLE_FILE_KINDS:
        fmt: TableFormat = "xlsx" if suffix in EXCEL_EXTENSIONS else (
            "dta" if suffix in STATA_EXTENSIONS else "sav")
        return fmt, None
    if suffix in STREAMED_EXTENSIONS:
        return format_of(path, parameter=parameter)
    raise unsupported_path(path, parameter, SUPPORTED_EXTENSIONS)


def require_pyarrow(path: pathlib.Path) -> None:
    """Import pyarrow lazily; its absence is an ImportError that says what to install."""
    try:
        importlib.import_module("pyarrow")
    except ImportError:
        raise ImportError(
            f"Parquet file {str(path)!r} needs the optional dependency pyarrow. "
            "Install it with: pip install 'microagg[parquet]'"
        ) from None


def require_formats(path: pathlib.Path, package: Literal["openpyxl", "pyreadstat"]
                    ) -> ModuleType:
    """Import openpyxl or pyreadstat lazily; their absence is an ImportError naming the
    extra that installs them (``microagg[formats]``)."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise ImportError(
            f"{_EXTRA_PACKAGES[package]} file {str(path)!r} needs the optional dependency "
            f"{package}. Install it with: pip install 'microagg[formats]'"
        ) from None


def sniff_separator(path: pathlib.Path, compression: Compression) -> str:
    """Guess the separator from the start of the file: one of ``, ; TAB |``, else ``,``."""
    if compression == "gzip":
        with gzip.open(path, "rb") as packed:
            raw = packed.read(_SNIFF_BYTES)
    else:
        with open(path, "rb") as plain:
            raw = plain.read(_SNIFF_BYTES)
    sample = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    if len(raw) == _SNIFF_BYTES:  # the last line is probably cut: sniff whole lines only
        cut = max(sample.rfind("\n"), sample.rfind("\r"))
        if cut > 0:
            sample = sample[:cut]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_SNIFF_DELIMITERS).delimiter
    except csv.Error:
        return ","
