"""The Roles page's logic: the proposal with its reasons, the edited form, schema TOML out
and in (validated by :func:`microagg.schema.load_schema`, then against the table)."""

from __future__ import annotations

import json
import pathlib
import re
import secrets
import shlex
import tomllib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pandas as pd

from microagg.exceptions import SchemaError
from microagg.schema._propose import _toml_key, propose_schema
from microagg.schema.schema_file import ROLES, TYPES, load_schema

__all__ = ["DETAILS", "ROLES", "TYPES", "details_text", "from_form", "from_toml",
           "parse_details", "propose", "to_toml", "validate"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_EDITED = ("role", "type", "order")
DETAILS = {"bounds": "bounds=LOWER:UPPER (numeric; the public bounds for epsilon)",
           "round": "round=DIGITS or round=none (a numeric quasi-identifier's published "
                    "digits: 0 integers, -2 hundreds, 2 cents)",
           "format": "format=STRFTIME (date; e.g. format=%d.%m.%Y)",
           "publish": "publish=day|month|year (date; the published precision)"}
"""The schema keys the Roles form's details field edits, with their syntax."""


def _number_text(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def details_text(entry: Mapping[str, Any]) -> str:
    """The details field of a column: its bounds, rounding, date format and precision."""
    parts = []
    if entry.get("bounds") is not None:
        low, high = entry["bounds"]
        parts.append(f"bounds={_number_text(low)}:{_number_text(high)}")
    if entry.get("round") is not None:
        parts.append(f"round={entry['round']}")
    for key in ("format", "publish"):
        if entry.get(key) is not None:
            parts.append(shlex.quote(f"{key}={entry[key]}"))
    return " ".join(parts)


def _detail_value(column: str, key: str, value: str) -> Any:
    if key == "bounds":
        low, sep, high = value.partition(":")
        try:
            if not sep:
                raise ValueError
            return [float(low), float(high)]
        except ValueError:
            raise ValueError(f"Column {column!r}: bounds must be LOWER:UPPER (two numbers); "
                             f"got {value!r}.") from None
    if key == "round" and value != "none":
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"Column {column!r}: round must be a whole number of digits or "
                             f"none; got {value!r}.") from None
    return value


def parse_details(column: str, text: str) -> dict[str, Any]:
    """The details field (``key=value`` separated by spaces, quoted where a value has a
    space) as schema keys; a ValueError naming the column and the allowed keys."""
    try:
        tokens = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"Column {column!r}: details {text!r}: {error}.") from None
    out: dict[str, Any] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in DETAILS or not value:
            raise ValueError(f"Column {column!r}: {token!r} is not a detail; allowed: "
                             + "; ".join(DETAILS.values()) + ".")
        out[key] = _detail_value(column, key, value)
    return out


def propose(df: pd.DataFrame) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The ``init-schema`` proposal for ``df``: each column's entry, and its reason."""
    text = propose_schema(df)
    columns = tomllib.loads(text)["columns"]
    headers = {line.split("]  # ", 1)[0] + "]": line.split("]  # ", 1)[1]
               for line in text.splitlines() if line.startswith("[columns.") and "]  # " in line}
    reasons = {str(col): headers.get(f"[columns.{_toml_key(str(col))}]", "")
               for col in df.columns}
    return {str(name): dict(entry) for name, entry in columns.items()}, reasons


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):  # an inline table (a step's method_params)
        return "{" + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value), ensure_ascii=False)


def to_toml(schema: Mapping[str, Mapping[str, Any]], reasons: Mapping[str, str] | None = None,
            *, steps: Sequence[Mapping[str, Any]] = ()) -> str:
    """The schema as a TOML file (the reasons as comments), with a plan's records as its
    ``[[steps]]`` tables when ``steps`` are given (:mod:`microagg.schema._steps`)."""
    lines = ["# microagg schema, from the workbench: check every role before use.", ""]
    for name, entry in schema.items():
        reason = (reasons or {}).get(name)
        lines.append(f"[columns.{_key(name)}]" + (f"  # {' '.join(reason.split())}" if reason else ""))
        lines += [f"{_key(str(k))} = {_value(v)}" for k, v in entry.items()]
        lines.append("")
    for record in steps:
        lines.append("[[steps]]")
        lines += [f"{_key(str(k))} = {_value(v)}" for k, v in record.items()]
        lines.append("")
    return "\n".join(lines)


def validate(schema: Mapping[str, Mapping[str, Any]], folder: pathlib.Path,
             table: pd.DataFrame | None) -> list[str]:
    """Every problem of ``schema`` (as :func:`load_schema` reports them), then of the table
    against it; an empty list when it is ready to use."""
    file = folder / f"schema-{secrets.token_hex(8)}.toml"
    file.write_text(to_toml(schema), encoding="utf-8")
    try:
        loaded = load_schema(file)
        if table is not None:
            loaded.check(table)
    except SchemaError as error:
        return [str(error).replace(repr(str(file)), "the schema")]
    finally:
        file.unlink(missing_ok=True)
    return []


def from_form(fields: Mapping[str, str], current: Mapping[str, Mapping[str, Any]]
              ) -> dict[str, dict[str, Any]]:
    """The schema edited in the Roles form (fields ``role-i``, ``type-i``, ``order-i`` and
    ``details-i`` for the i-th column, see :func:`parse_details`); keys the form does not
    show (a hierarchy) are kept while the role and type are kept. A ValueError for a
    malformed details field."""
    edited: dict[str, dict[str, Any]] = {}
    for i, (name, entry) in enumerate(current.items()):
        role = fields.get(f"role-{i}", str(entry.get("role", "")))
        kind = fields.get(f"type-{i}", str(entry.get("type", ""))).strip()
        new: dict[str, Any] = {"role": role}
        if kind:
            new["type"] = kind
        order = [v.strip() for v in fields.get(f"order-{i}", "").split(",") if v.strip()]
        if order:
            new["order"] = order
        shown = f"details-{i}" in fields
        if role == entry.get("role") and kind == entry.get("type", ""):
            new.update({k: v for k, v in entry.items()
                        if k not in _EDITED and not (shown and k in DETAILS)})
        if shown:
            new.update(parse_details(name, fields[f"details-{i}"]))
        edited[name] = new
    return edited


def from_toml(text: str, stored: Collection[str] = ()
              ) -> tuple[dict[str, dict[str, Any]] | None, list[str]]:
    """An uploaded schema's columns, or the problems that are sure before validation
    (not TOML, no columns, a hierarchy path other than the ``stored`` ones, the files
    uploaded in this session: any other would be read from the server's disk)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return None, [f"the file is not valid TOML: {error}"]
    problems = [f"unknown top-level key {key!r} (only [columns.NAME] tables)"
                for key in raw if key not in ("columns", "steps")]
    if "steps" in raw:  # a plan is chosen on the Protect page, where the server checks it
        problems.append("the workbench reads a schema's columns, not its [[steps]]: remove "
                        "them and give the second step on the Protect page")
    columns = raw.get("columns")
    if not isinstance(columns, dict) or not columns:
        return None, [*problems, "no [columns.NAME] tables"]
    schema: dict[str, dict[str, Any]] = {}
    for name, entry in columns.items():
        if not isinstance(entry, dict):
            problems.append(f"[columns.{name}] must be a table")
            continue
        hierarchy = entry.get("hierarchy")
        kept = isinstance(hierarchy, str) and hierarchy in stored
        if hierarchy is not None and not kept:
            problems.append(
                f"[columns.{name}]: hierarchy {hierarchy!r} is not a file uploaded in this "
                "session; the workbench opens no other file: upload the hierarchy on the Roles "
                "page (it is then named hierarchies/N.csv) or remove the hierarchy key")
        schema[str(name)] = {k: v for k, v in entry.items() if k != "hierarchy" or kept}
    return schema, problems
