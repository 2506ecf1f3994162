"""The Roles page's logic: the proposal with its reasons, the edited form, schema TOML out
and in (validated by :func:`microagg.schema.load_schema`, then against the table)."""

from __future__ import annotations

import json
import pathlib
import re
import secrets
import tomllib
from collections.abc import Mapping
from typing import Any

import pandas as pd

from microagg._schema_propose import _toml_key, propose_schema
from microagg.exceptions import SchemaError
from microagg.schema import ROLES, TYPES, load_schema

__all__ = ["ROLES", "TYPES", "from_form", "from_toml", "propose", "to_toml", "validate"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_EDITED = ("role", "type", "order")


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
    return json.dumps(str(value), ensure_ascii=False)


def to_toml(schema: Mapping[str, Mapping[str, Any]], reasons: Mapping[str, str] | None = None,
            ) -> str:
    """The schema as a TOML file (the reasons as comments)."""
    lines = ["# microagg schema, from the workbench: check every role before use.", ""]
    for name, entry in schema.items():
        reason = (reasons or {}).get(name)
        lines.append(f"[columns.{_key(name)}]" + (f"  # {' '.join(reason.split())}" if reason else ""))
        lines += [f"{_key(str(k))} = {_value(v)}" for k, v in entry.items()]
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
    """The schema edited in the Roles form (fields ``role-i``, ``type-i``, ``order-i`` for the
    i-th column); keys the form does not show are kept while the role and type are kept."""
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
        if role == entry.get("role") and kind == entry.get("type", ""):
            new.update({k: v for k, v in entry.items() if k not in _EDITED})
        edited[name] = new
    return edited


def from_toml(text: str) -> tuple[dict[str, dict[str, Any]] | None, list[str]]:
    """An uploaded schema's columns, or the problems that are sure before validation
    (not TOML, no columns, hierarchy files: they would be read from the server's disk)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return None, [f"the file is not valid TOML: {error}"]
    problems = [f"unknown top-level key {key!r} (only [columns.NAME] tables)"
                for key in raw if key != "columns"]
    columns = raw.get("columns")
    if not isinstance(columns, dict) or not columns:
        return None, [*problems, "no [columns.NAME] tables"]
    schema: dict[str, dict[str, Any]] = {}
    for name, entry in columns.items():
        if not isinstance(entry, dict):
            problems.append(f"[columns.{name}] must be a table")
            continue
        if "hierarchy" in entry:
            problems.append(f"[columns.{name}]: hierarchy files cannot be used in the "
                            "workbench yet; remove the hierarchy key")
        schema[str(name)] = {k: v for k, v in entry.items() if k != "hierarchy"}
    return schema, problems
