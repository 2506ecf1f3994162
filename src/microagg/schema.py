"""Schema files: every column's role and type in one TOML file (issue 10, item 3).

::

    # microagg schema
    [columns.name]
    role = "identifier"            # dropped from the release

    [columns.age]
    role = "quasi-identifier"
    type = "numeric"
    bounds = [0, 120]              # public bounds, for --epsilon

    [columns.education]
    role = "quasi-identifier"
    type = "ordinal"
    order = ["none", "primary", "secondary", "degree"]

    [columns.occupation]
    role = "sensitive"
    type = "categorical"
    hierarchy = "hierarchies/occupation.csv"   # relative to this file

Roles: ``identifier``, ``quasi-identifier``, ``sensitive``, ``other`` (published unchanged).
Types: ``numeric``, ``ordinal`` (with ``order``), ``categorical``. :func:`load_schema` reports
every problem of a file at once; :meth:`Schema.check` every problem of a table against it.
:func:`propose_schema` writes a first draft from a table for the user to edit.
"""

from __future__ import annotations

import os
import pathlib
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .exceptions import SchemaError
from .hierarchy import as_labels

__all__ = ["ROLES", "TYPES", "ColumnSpec", "Schema", "check_unique_columns", "load_schema",
           "propose_schema"]

ROLES = ("identifier", "quasi-identifier", "sensitive", "other")
TYPES = ("numeric", "ordinal", "categorical")
_KEYS = {"role", "type", "order", "hierarchy", "bounds"}
_IDENTIFIER_NAMES = re.compile(r"(^|_)(id|ids|name|names|ssn|email|e-mail|phone|passport|"
                               r"address|uuid|key)($|_)", re.IGNORECASE)


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a schema."""

    role: str
    type: str | None = None
    order: tuple[str, ...] = ()
    hierarchy: pathlib.Path | None = None
    bounds: tuple[float, float] | None = None


@dataclass(frozen=True)
class Schema:
    """Column roles and types (see the module docstring)."""

    columns: Mapping[str, ColumnSpec]
    source: str = "<schema>"
    notes: tuple[str, ...] = field(default=())

    def names(self, role: str) -> list[str]:
        """The columns with ``role``, in the file's order."""
        return [c for c, spec in self.columns.items() if spec.role == role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.names("quasi-identifier")

    @property
    def sensitive(self) -> list[str]:
        return self.names("sensitive")

    @property
    def identifiers(self) -> list[str]:
        return self.names("identifier")

    @property
    def hierarchies(self) -> dict[str, str]:
        return {c: str(s.hierarchy) for c, s in self.columns.items() if s.hierarchy}

    @property
    def bounds(self) -> dict[str, tuple[float, float]] | None:
        found = {c: s.bounds for c, s in self.columns.items() if s.bounds is not None}
        return found or None

    def check(self, df: pd.DataFrame) -> None:
        """Raise one :class:`SchemaError` listing every way ``df`` contradicts the schema."""
        check_unique_columns(df.columns, source="the table")
        problems = []
        for col, spec in self.columns.items():
            if col not in df.columns:
                problems.append(f"column {col!r} ({spec.role}) is not in the table")
                continue
            series = df[col]
            if spec.type == "numeric" and (not pd.api.types.is_numeric_dtype(series)
                                           or pd.api.types.is_bool_dtype(series)):
                problems.append(f"column {col!r} is declared numeric but has dtype "
                                f"{series.dtype}")
            if spec.type == "ordinal":
                outside = sorted({str(v) for v in series.dropna().unique()} - set(spec.order))
                if outside:
                    problems.append(f"column {col!r} has values outside its order: "
                                    f"{', '.join(map(repr, outside[:5]))}"
                                    + (f" and {len(outside) - 5} more" if len(outside) > 5
                                       else ""))
        extra = [str(c) for c in df.columns if c not in self.columns]
        if extra:
            problems.append(f"column(s) {', '.join(map(repr, extra))} are in the table but not "
                            "in the schema (give them a role, 'other' to publish them as is)")
        if problems:
            raise SchemaError(f"The table does not match the schema {self.source} "
                              f"({len(problems)} problem(s)): " + "; ".join(problems) + ".")

    @property
    def text_columns(self) -> list[str]:
        """Columns whose values are labels, not quantities: to be read as text from a CSV
        file (so that codes such as ``01`` keep their leading zeros).

        They are the ``categorical`` and ``ordinal`` columns and those with a hierarchy.
        """
        return [c for c, s in self.columns.items()
                if s.type in ("categorical", "ordinal") or s.hierarchy is not None]

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """``df`` checked, with the declared types made effective.

        Ordinal columns become ordered categoricals (their order). Numeric codes declared
        ``categorical`` for a quasi-identifier or a sensitive column become text labels
        (``1.0`` as ``"1"``, missing values kept), so that they are grouped and generalized
        as categories, never averaged, and compared with equal distances by t-closeness.
        """
        self.check(df)
        out = df.copy()
        for col, spec in self.columns.items():
            if spec.type == "ordinal":
                out[col] = pd.Categorical(out[col].astype(str).where(out[col].notna()),
                                          categories=list(spec.order), ordered=True)
            elif (spec.type == "categorical" and spec.role in ("quasi-identifier", "sensitive")
                  and pd.api.types.is_numeric_dtype(out[col])):
                labels = pd.Series(as_labels(out[col].to_numpy()), index=out.index, dtype=str)
                out[col] = labels.where(out[col].notna())
        return out


def check_unique_columns(columns: Iterable[object], *, source: str) -> None:
    """Raise a :class:`SchemaError` naming every column name that occurs more than once.

    A repeated name makes a role ambiguous (pandas even renames a CSV's second ``age`` to
    ``age.1``, which would then be published unmasked).

    Parameters
    ----------
    columns : iterable
        The column names, as written in the table.
    source : str
        The table, for the message (``"the DataFrame"``, ``"input file 'x.csv'"``).

    Examples
    --------
    >>> check_unique_columns(["age", "zip", "age"], source="the table")
    Traceback (most recent call last):
    ...
    microagg.exceptions.SchemaError: Column names must be unique, but the table has 'age' 2 \
times. Rename or drop the repeated columns.
    """
    counts = Counter(columns)
    repeated = [f"{name!r} {n} times" for name, n in counts.items() if n > 1]
    if repeated:
        raise SchemaError(f"Column names must be unique, but {source} has "
                          f"{', '.join(repeated)}. Rename or drop the repeated columns.")


def load_schema(path: str | os.PathLike[str]) -> Schema:
    """Read and validate a schema file; one :class:`SchemaError` lists every problem.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = file.write_text('[columns.age]\\nrole = "quasi-identifier"\\ntype = "numeric"\\n')
    >>> load_schema(file).quasi_identifiers
    ['age']
    """
    file = pathlib.Path(path).expanduser()
    raw = _read_toml(file)
    problems: list[str] = []
    columns = raw.get("columns")
    unknown_top = sorted(set(raw) - {"columns"})
    if unknown_top:
        problems.append(f"unknown top-level key(s) {unknown_top} (only [columns.NAME] tables)")
    if not isinstance(columns, dict) or not columns:
        problems.append("no [columns.NAME] tables")
        columns = {}
    specs: dict[str, ColumnSpec] = {}
    for name, entry in columns.items():
        spec = _column_spec(f"[columns.{name}]", entry, file.parent, problems)
        if spec is not None:
            specs[str(name)] = spec
    if columns and not any(s.role == "quasi-identifier" for s in specs.values()):
        problems.append("no column has role = \"quasi-identifier\"")
    if problems:
        raise SchemaError(f"Schema file {str(file)!r} has {len(problems)} problem(s): "
                          + "; ".join(problems) + ".")
    return Schema(columns=specs, source=str(file))


def _read_toml(file: pathlib.Path) -> dict[str, Any]:
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"Schema file {str(file)!r} does not exist.") from None
    except tomllib.TOMLDecodeError as error:
        raise SchemaError(f"Schema file {str(file)!r} is not valid TOML: {error}.") from None


def _column_spec(where: str, entry: Any, folder: pathlib.Path, problems: list[str]
                 ) -> ColumnSpec | None:
    """The table ``where`` of a schema file as a column spec (``None`` without a valid role);
    its problems are added to ``problems``."""
    if not isinstance(entry, dict):
        problems.append(f"{where} must be a table")
        return None
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        problems.append(f"{where}: unknown key(s) {unknown}; allowed: {sorted(_KEYS)}")
    role = entry.get("role")
    if role not in ROLES:
        problems.append(f"{where}: role must be one of {', '.join(ROLES)}; got {role!r}")
    kind = entry.get("type")
    if kind is not None and kind not in TYPES:
        problems.append(f"{where}: type must be one of {', '.join(TYPES)}; got {kind!r}")
    order = entry.get("order", ())
    problems += _order_problems(where, kind, order)
    hierarchy_path = _hierarchy_path(where, entry.get("hierarchy"), folder, problems)
    bounds_pair = _bounds(where, entry.get("bounds"), kind, problems)
    if isinstance(role, str) and role in ROLES:
        return ColumnSpec(role=role, type=kind, order=tuple(map(str, order or ())),
                          hierarchy=hierarchy_path, bounds=bounds_pair)
    return None


def _order_problems(where: str, kind: Any, order: Any) -> list[str]:
    found = []
    if kind == "ordinal" and (not isinstance(order, list) or len(order) < 2
                              or len(set(map(str, order))) != len(order)):
        found.append(f"{where}: an ordinal column needs order = [two or more distinct "
                     f"values, lowest first]; got {order!r}")
    if order and kind != "ordinal":
        found.append(f"{where}: order applies to type = \"ordinal\" only")
    return found


def _hierarchy_path(where: str, hierarchy: Any, folder: pathlib.Path, problems: list[str]
                    ) -> pathlib.Path | None:
    """The hierarchy file, relative to the schema file's folder."""
    if hierarchy is None:
        return None
    path = (folder / str(hierarchy)).resolve()
    if not path.is_file():
        problems.append(f"{where}: hierarchy file {str(path)!r} does not exist")
    return path


def _bounds(where: str, bounds: Any, kind: Any, problems: list[str]
            ) -> tuple[float, float] | None:
    if bounds is None:
        return None
    pair = None
    if (not isinstance(bounds, list) or len(bounds) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool)
                       for b in bounds) or not bounds[0] < bounds[1]):
        problems.append(f"{where}: bounds must be [lower, upper] numbers with lower < "
                        f"upper; got {bounds!r}")
    else:
        pair = (float(bounds[0]), float(bounds[1]))
    if kind not in (None, "numeric"):
        problems.append(f"{where}: bounds apply to numeric columns only")
    return pair


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def propose_schema(df: pd.DataFrame, *, max_categories: int = 50) -> str:
    """A first schema for ``df`` as TOML text, with the reasons as comments.

    Guesses: a column named like an identifier (id, name, email, phone, ssn, ...), a text
    column unique on every row or a record number (consecutive integers) is an
    ``identifier``; a constant column is ``other``; numeric columns, even unique on every row
    (measurements), are numeric quasi-identifiers; text columns with at most
    ``max_categories`` values are categorical quasi-identifiers, others ``other``. Nothing is
    guessed ``sensitive``: only the data steward knows.

    Examples
    --------
    >>> print(propose_schema(pd.DataFrame({"id": [1, 2], "age": [30, 40]})).splitlines()[3])
    [columns.id]  # its name looks like an identifier
    """
    lines = ["# microagg schema: proposed from the data; check every role before use.",
             "# roles: identifier, quasi-identifier, sensitive, other",
             ""]
    for col in df.columns:
        series = df[col]
        name = str(col)
        role, kind, reason = _propose_role(series, name, max_categories)
        reasons = [reason]
        missing = int(series.isna().sum())
        if missing:
            reasons.append(f"{missing} missing")
        lines.append(f"[columns.{_toml_key(name)}]  # {'; '.join(reasons)}")
        lines.append(f"role = {_toml_string(role)}")
        if kind is not None:
            lines.append(f"type = {_toml_string(kind)}")
        lines.append("")
    return "\n".join(lines)


def _propose_role(series: pd.Series, name: str, max_categories: int
                  ) -> tuple[str, str | None, str]:
    """The guessed role and type of one column, and the reason (a comment in the draft).

    A constant column is ``other``: it tells no records apart and is no quasi-identifier. A
    numeric column unique on every row is a measurement (expenditure, income), proposed as a
    quasi-identifier, unless it counts the rows (consecutive integers): then it is a record
    number, an ``identifier``, as is a text column unique on every row.
    """
    n = len(series)
    distinct = int(series.nunique(dropna=True))
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if _IDENTIFIER_NAMES.search(name):
        return "identifier", None, "its name looks like an identifier"
    if n > 1 and distinct <= 1:
        return "other", None, ("constant: it tells no records apart, so it is neither a "
                               "quasi-identifier nor sensitive")
    if n > 1 and distinct == n and numeric:
        if pd.api.types.is_integer_dtype(series) and int(series.max()) - int(series.min()) == n - 1:
            return "identifier", None, "consecutive integers, one per row: a record number"
        return "quasi-identifier", "numeric", (
            f"numeric, unique on each of the {n} rows: a measurement, a quasi-identifier "
            "(or sensitive, if confidential)")
    if n > 1 and distinct == n:
        return "identifier", None, f"unique on each of the {n} rows"
    if numeric:
        return "quasi-identifier", "numeric", f"numeric, {distinct} distinct values"
    if distinct <= max_categories:
        return "quasi-identifier", "categorical", f"{distinct} categories"
    return "other", "categorical", f"{distinct} distinct text values: free text?"


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _toml_string(name)


def roles_from(schema: Schema | None, qi: Sequence[str] | None, sens: Sequence[str] | None,
               ids: Sequence[str] | None) -> tuple[list[str], list[str], list[str]]:
    """Quasi-identifiers, sensitive and identifiers from a schema or from explicit lists."""
    if schema is None:
        return list(qi or []), list(sens or []), list(ids or [])
    given = [name for name, value in (("quasi-identifiers", qi), ("sensitive", sens),
                                      ("identifiers", ids)) if value]
    if given:
        raise SchemaError(f"Give roles either in the schema or as options, not both "
                          f"({', '.join(given)} given with a schema).")
    return schema.quasi_identifiers, schema.sensitive, schema.identifiers
