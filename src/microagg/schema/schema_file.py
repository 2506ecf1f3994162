"""Schema files: every column's role and type in one TOML file.

::

    # microagg schema
    [columns.name]
    role = "identifier"            # dropped from the release

    [columns.age]
    role = "quasi-identifier"
    type = "numeric"
    bounds = [0, 120]              # public bounds, for --epsilon

    [columns.date_of_birth]
    role = "quasi-identifier"
    type = "date"
    format = "%Y-%m-%d"            # strftime format of text dates (default: ISO 8601)
    publish = "month"              # published precision: day (default), month or year

    [columns.income]
    role = "quasi-identifier"
    type = "numeric"
    round = -2                     # published to hundreds; "none": the exact means
    missing = [-9, -8]             # missing-value codes: read as missing, written back

    [columns.education]
    role = "quasi-identifier"
    type = "ordinal"
    order = ["none", "primary", "secondary", "degree"]

    [columns.occupation]
    role = "sensitive"
    type = "categorical"
    hierarchy = "hierarchies/occupation.csv"   # relative to this file

Roles: ``identifier``, ``quasi-identifier``, ``sensitive``, ``weight`` (the sampling weight, at
most one column: published unchanged, used by the disclosure-risk measures), ``household``
(the household id, at most one column: for the household risk, then dropped like an
identifier), ``strata`` (the stratum, e.g. a region, at most one column: published unchanged,
the risk measures count frequencies within each stratum, as sdcMicro's ``strataVar``),
``other`` (published unchanged).
Types: ``numeric``, ``ordinal`` (with ``order``), ``categorical``, ``date`` (text dates or
datetimes, microaggregated as days since 1970-01-01 and published as dates again).
Keys of a column: ``role`` (required), ``type``, ``order`` (ordinal), ``hierarchy`` (an ARX
CSV file), ``bounds`` (numeric, for epsilon), ``format`` and ``publish`` (date), ``round``
(a numeric quasi-identifier's published digits: 0 integers, -1 tens, 2 cents, ``"none"`` the
exact means; integer-valued columns are rounded to integers by default), ``missing`` (any
column's missing-value codes, numbers or texts such as ``"."``: read as missing, written back
to SPSS and Stata where the release left the cell unchanged, :mod:`..io._missing_codes`).
:func:`load_schema` reports every problem of a file at once; :meth:`Schema.check` every
problem of a table against it. :func:`propose_schema` (:mod:`._propose`) writes a
first draft from a table for the user to edit.

Optional ``[[steps]]`` tables make the release a plan of steps (:mod:`.._schema_steps`):
``step = "microaggregate"``, ``quasi_identifiers = [...]``, ``k = 5``, ``method = "mdav"``,
read into :attr:`Schema.plan` and run by :func:`microagg.anonymize`.
"""

from __future__ import annotations

import os
import pathlib
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from .._base.column_names import match_columns
from .._pipeline.dates import format_problem
from ..exceptions import SchemaError
from ..hierarchy import as_labels
from ..steps import Plan
from ._propose import propose_schema
from ._steps import read_steps, renamed_plan, schema_with_plan

__all__ = ["ROLES", "TYPES", "ColumnSpec", "Schema", "check_unique_columns", "load_schema",
           "propose_schema"]

ROLES = ("identifier", "quasi-identifier", "sensitive", "weight", "household", "strata",
         "other")
TYPES = ("numeric", "ordinal", "categorical", "date")
_KEYS = {"role", "type", "order", "hierarchy", "bounds", "format", "publish", "round",
         "missing"}
_PRECISIONS = ("day", "month", "year")  # microagg._pipeline.dates.PRECISIONS
_DIGITS = (-10, 15)  # microagg._pipeline.publish.DIGITS


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a schema."""

    role: str
    """One of :data:`ROLES`."""
    type: str | None = None
    """One of :data:`TYPES` (``None``: read from the data)."""
    order: tuple[str, ...] = ()
    """The values of an ``ordinal`` column, lowest first."""
    hierarchy: pathlib.Path | None = None
    """The ARX hierarchy file of a categorical column."""
    bounds: tuple[float, float] | None = None
    """The public ``(low, high)`` range of a numeric column (the epsilon-DP release)."""
    format: str | None = None
    """strftime format of a ``date`` column held as text (``None``: ISO 8601)."""
    publish: str | None = None
    """Published precision of a ``date`` column: ``day`` (default), ``month`` or ``year``."""
    round: int | str | None = None
    """Published digits of a numeric quasi-identifier; ``"none"``: not rounded; ``None``:
    the default (integer-valued columns to integers)."""
    missing: tuple[float | str, ...] = ()
    """Missing-value codes (``-9``, ``"."``), read as missing."""


@dataclass(frozen=True)
class Schema:
    """Column roles and types (see the module docstring)."""

    columns: Mapping[str, ColumnSpec]
    """Each column's :class:`ColumnSpec`, by column name."""
    source: str = "<schema>"
    """Where it was read from (named in messages)."""
    notes: tuple[str, ...] = field(default=())
    """What reading it noticed, for the user (not errors)."""
    plan: Plan | None = None
    """The file's ``[[steps]]`` as a plan; ``None``: one step on the quasi-identifiers."""

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
    def weight(self) -> str | None:
        """The sampling weight column, if any (:func:`load_schema` allows one)."""
        found = self.names("weight")
        return found[0] if found else None

    @property
    def household(self) -> str | None:
        """The household id column, if any (:func:`load_schema` allows one)."""
        found = self.names("household")
        return found[0] if found else None

    @property
    def strata(self) -> str | None:
        """The strata column, if any (:func:`load_schema` allows one)."""
        found = self.names("strata")
        return found[0] if found else None

    @property
    def hierarchies(self) -> dict[str, str]:
        return {c: str(s.hierarchy) for c, s in self.columns.items() if s.hierarchy}

    @property
    def bounds(self) -> dict[str, tuple[float, float]] | None:
        found = {c: s.bounds for c, s in self.columns.items() if s.bounds is not None}
        return found or None

    @property
    def dates(self) -> dict[str, dict[str, str]]:
        """The ``date`` columns: ``{column: {"format": ..., "publish": ...}}`` (keys given)."""
        return {c: {key: value for key, value in (("format", s.format), ("publish", s.publish))
                    if value is not None}
                for c, s in self.columns.items() if s.type == "date"}

    @property
    def rounding(self) -> dict[str, int | None]:
        """Columns with a ``round`` key: their digits (``None``: ``round = "none"``)."""
        return {c: (None if s.round == "none" else int(s.round))
                for c, s in self.columns.items() if s.round is not None}

    def spelled_as(self, columns: Iterable[object]) -> Schema:
        """This schema with each column named as the table ``columns`` spell it.

        A ``[columns."ége"]`` written in NFC names a header stored in NFD, and ``age`` names
        a header `` age `` (:func:`~microagg._base.column_names.match_columns`), as on the command
        line; a name that matches no column stays, for :meth:`check` to report.

        Examples
        --------
        >>> schema = Schema({"age": ColumnSpec("quasi-identifier")})
        >>> list(schema.spelled_as([" age ", "x"]).columns)
        [' age ']
        """
        names = match_columns(list(self.columns), columns) or []
        if names == list(self.columns) or len(set(names)) < len(names):
            return self
        return replace(self, columns=dict(zip(names, self.columns.values(), strict=True)),
                       plan=renamed_plan(self.plan, list(self.columns), names))

    def with_plan(self, plan: Plan | None) -> Schema:
        """This schema running ``plan`` (:func:`.._schema_steps.schema_with_plan`)."""
        return schema_with_plan(self, plan)

    @property
    def missing(self) -> dict[str, tuple[float | str, ...]]:
        """The columns with missing-value codes, and their codes (for ``read_table``)."""
        return {c: s.missing for c, s in self.columns.items() if s.missing}

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
            if spec.type == "date" and (pd.api.types.is_numeric_dtype(series)
                                        or pd.api.types.is_bool_dtype(series)):
                problems.append(f"column {col!r} is declared a date but holds numbers (dtype "
                                f"{series.dtype}); dates are text or datetimes")
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

        They are the ``categorical``, ``ordinal`` and ``date`` columns and those with a
        hierarchy (a date is parsed with its declared format, never guessed by the reader).
        """
        return [c for c, s in self.columns.items()
                if s.type in ("categorical", "ordinal", "date") or s.hierarchy is not None]

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

    Parameters
    ----------
    path : str or os.PathLike
        A TOML schema file (``[columns.NAME]`` tables).

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
    unknown_top = sorted(set(raw) - {"columns", "steps"})
    if unknown_top:
        problems.append(f"unknown top-level key(s) {unknown_top} (only [columns.NAME] and "
                        "[[steps]] tables)")
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
    for single in ("weight", "household", "strata"):
        several = [c for c, spec in specs.items() if spec.role == single]
        if len(several) > 1:
            problems.append(f"{len(several)} columns have role = \"{single}\" "
                            f"({', '.join(map(repr, several))}); at most one may")
    plan = read_steps(raw.get("steps"), {c: s.role for c, s in specs.items()}, problems)
    if problems:
        raise SchemaError(f"Schema file {str(file)!r} has {len(problems)} problem(s): "
                          + "; ".join(problems) + ".")
    return Schema(columns=specs, source=str(file), plan=plan)


def _read_toml(file: pathlib.Path) -> dict[str, Any]:
    """The parsed file; every way it cannot be read is a :class:`SchemaError` naming it.

    TOML files are UTF-8 by the format's definition, so there is no encoding to choose: a
    file in another encoding is refused with the offset of its first byte that is not
    UTF-8.
    """
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise SchemaError(f"Schema file {str(file)!r} does not exist.") from None
    except IsADirectoryError:
        raise SchemaError(f"Schema file {str(file)!r} is a directory; give the path of a "
                          ".toml file.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SchemaError(
            f"Schema file {str(file)!r} is not UTF-8 text: byte {error.start} (0x"
            f"{data[error.start]:02x}) {error.reason}. TOML files are UTF-8; save it as UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8, or 'Save as... UTF-8' in an editor).") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SchemaError(f"Schema file {str(file)!r} is not valid TOML: {error}.") from None
    except RecursionError:
        raise SchemaError(f"Schema file {str(file)!r} nests arrays or tables too deeply to "
                          "read; a schema needs only [columns.NAME] tables with flat "
                          "values.") from None


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
    problems += _date_problems(where, kind, entry.get("format"), entry.get("publish"))
    problems += _round_problems(where, kind, role, entry.get("round"))
    codes = _missing_codes(where, entry.get("missing"), problems)
    if isinstance(role, str) and role in ROLES:
        return ColumnSpec(role=role, type=kind, order=tuple(map(str, order or ())),
                          hierarchy=hierarchy_path, bounds=bounds_pair,
                          format=entry.get("format"), publish=entry.get("publish"),
                          round=entry.get("round"), missing=codes)
    return None


def _date_problems(where: str, kind: Any, fmt: Any, publish: Any) -> list[str]:
    found = []
    if (fmt is not None or publish is not None) and kind != "date":
        found.append(f"{where}: format and publish apply to type = \"date\" only")
    if fmt is not None and (not isinstance(fmt, str) or "%" not in fmt):
        found.append(f"{where}: format must be a strftime format such as \"%Y-%m-%d\"; got "
                     f"{fmt!r}")
    elif fmt is not None and (problem := format_problem(fmt)) is not None:
        found.append(f"{where}: format {fmt!r} is not a strftime format ({problem}); "
                     "e.g. \"%Y-%m-%d\" or \"%d.%m.%Y\"")
    if publish is not None and publish not in _PRECISIONS:
        found.append(f"{where}: publish must be one of {', '.join(_PRECISIONS)}; got "
                     f"{publish!r}")
    return found


def _round_problems(where: str, kind: Any, role: Any, digits: Any) -> list[str]:
    if digits is None:
        return []
    found = []
    low, high = _DIGITS
    if digits != "none" and (isinstance(digits, bool) or not isinstance(digits, int)
                             or not low <= digits <= high):
        found.append(f"{where}: round must be an integer number of digits in [{low}, {high}] "
                     f"(0: integers, -1: tens) or \"none\"; got {digits!r}")
    if role != "quasi-identifier" or kind not in (None, "numeric"):
        found.append(f"{where}: round applies to numeric quasi-identifiers only (other "
                     "columns are published as they are; dates have publish)")
    return found


def _missing_codes(where: str, codes: Any, problems: list[str]) -> tuple[float | str, ...]:
    if codes is None:
        return ()
    if not isinstance(codes, list) or not codes or not all(
            (isinstance(c, (int, float)) and not isinstance(c, bool)) or (isinstance(c, str)
                                                                           and c)
            for c in codes):
        problems.append(f"{where}: missing must be a list of codes, numbers or non-empty "
                        f"texts (e.g. [-9, 99, \".\"]); got {codes!r}")
        return ()
    return tuple(float(c) if not isinstance(c, str) else c for c in codes)


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
