"""File formats of tables: extensions, compression, the CSV separator, the pyarrow check.
Shared by :mod:`microagg.io` (which makes the extension constants public), the engines and
the graph files."""

from __future__ import annotations

import csv
import gzip
import importlib
import pathlib
from typing import Literal

__all__ = [
    "CSV_EXTENSIONS",
    "PARQUET_EXTENSIONS",
    "SUPPORTED_EXTENSIONS",
    "Compression",
    "Format",
    "format_of",
    "format_suffix",
    "require_pyarrow",
    "sniff_separator",
]

CSV_EXTENSIONS: tuple[str, ...] = (".csv", ".txt", ".tsv", ".csv.gz", ".txt.gz", ".tsv.gz")
"""Delimited-text extensions (``.gz`` ones are gzip-compressed)."""
PARQUET_EXTENSIONS: tuple[str, ...] = (".parquet", ".pq")
"""Parquet extensions (need the optional dependency pyarrow)."""
SUPPORTED_EXTENSIONS: tuple[str, ...] = CSV_EXTENSIONS + PARQUET_EXTENSIONS
"""Every extension :func:`~microagg.io.read_table` and :func:`~microagg.io.write_table`
understand."""

_SNIFF_DELIMITERS = ",;\t|"
_SNIFF_BYTES = 64 * 1024

Format = Literal["csv", "parquet"]
Compression = Literal["gzip"] | None


def format_suffix(path: pathlib.Path) -> str:
    """The lower-case extension that decides the format: ``.csv.gz`` counts as one."""
    suffixes = [s.lower() for s in path.suffixes]
    if len(suffixes) >= 2 and suffixes[-1] == ".gz":
        return "".join(suffixes[-2:])
    return suffixes[-1] if suffixes else ""


def format_of(path: pathlib.Path, *, parameter: str) -> tuple[Format, Compression]:
    """``("csv", compression)`` or ``("parquet", None)``; an unknown extension lists the valid."""
    suffix = format_suffix(path)
    if suffix in PARQUET_EXTENSIONS:
        return "parquet", None
    if suffix in CSV_EXTENSIONS:
        return "csv", "gzip" if suffix.endswith(".gz") else None
    raise ValueError(
        f"The {parameter!r} path {str(path)!r} has an unsupported extension "
        f"{suffix or '(none)'!r}. Supported extensions: {', '.join(SUPPORTED_EXTENSIONS)}."
    )


def require_pyarrow(path: pathlib.Path) -> None:
    """Import pyarrow lazily; its absence is an ImportError that says what to install."""
    try:
        importlib.import_module("pyarrow")
    except ImportError:
        raise ImportError(
            f"Parquet file {str(path)!r} needs the optional dependency pyarrow. "
            "Install it with: pip install 'microagg[parquet]'"
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
