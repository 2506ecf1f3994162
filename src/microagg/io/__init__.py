"""Reading and writing tables (CSV, Parquet, Excel, Stata, SPSS, database tables): separator
detection, variable and value labels, atomic writes, path checks.

The names are defined in :mod:`.tables` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .tables import (
        CSV_EXTENSIONS,
        EXCEL_EXTENSIONS,
        METADATA_KEY,
        PARQUET_EXTENSIONS,
        SPSS_EXTENSIONS,
        STATA_EXTENSIONS,
        SUPPORTED_EXTENSIONS,
        VERBATIM_CSV,
        TableMetadata,
        check_csv_header,
        check_output_path,
        check_table_output,
        is_csv,
        read_table,
        read_verbatim,
        table_metadata,
        write_table,
        write_text_atomic,
    )

__all__ = [
    "CSV_EXTENSIONS",
    "EXCEL_EXTENSIONS",
    "METADATA_KEY",
    "PARQUET_EXTENSIONS",
    "SPSS_EXTENSIONS",
    "STATA_EXTENSIONS",
    "SUPPORTED_EXTENSIONS",
    "VERBATIM_CSV",
    "TableMetadata",
    "check_csv_header",
    "check_output_path",
    "check_table_output",
    "is_csv",
    "read_table",
    "read_verbatim",
    "table_metadata",
    "write_table",
    "write_text_atomic",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".tables"), __all__,
                                   globals())
