"""Schema files: every column's role and type in one TOML file.

The names are defined in :mod:`.schema_file` and load on first access (PEP 562):
importing one module of this package loads none of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime.lazy import lazy_names

if TYPE_CHECKING:
    from .schema_file import (
        ROLES,
        TYPES,
        ColumnSpec,
        Schema,
        check_unique_columns,
        load_schema,
        propose_schema,
    )

__all__ = [
    "ROLES",
    "TYPES",
    "ColumnSpec",
    "Schema",
    "check_unique_columns",
    "load_schema",
    "propose_schema",
]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".schema_file"), __all__,
                                   globals())
