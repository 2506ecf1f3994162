"""What a release publishes besides the masked quasi-identifiers.

Every column without a role is published unchanged. Two ways that can undo the masking:

* **an identifier published by mistake** (a person id, a name, an e-mail): refused by
  :func:`check_unmasked_identifiers` when the Request is built, unless the user keeps it on
  purpose (``keep``), which the release records (``params["keep"]``) and the report shows;
* **a published column that breaks k**: a column an intruder may know too (a household's
  sampling weight, a postcode) splits the k-anonymous classes when added to the
  quasi-identifiers. :func:`published_column_checks` measures it on the published table and
  the release warns, naming each such column and the k it leaves.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._base.identifiers import IDENTIFIER_NAMES, NEARLY_UNIQUE, identifier_reason
from ..exceptions import PrivacyLeakWarning, SchemaError
from .notes import warn_user
from .verify import class_sizes, published_classes

if TYPE_CHECKING:  # pragma: no cover
    from .request import Request

__all__ = ["IDENTIFIER_NAMES", "NEARLY_UNIQUE", "broken_columns_check", "check_keep",
           "check_unmasked_identifiers", "identifier_reason", "published_column_checks",
           "row_positions", "unchanged_columns_check", "warn_broken_k"]


def check_keep(df: pd.DataFrame, keep: Sequence[str], roles: Mapping[str, Sequence[str]]
               ) -> tuple[str, ...]:
    """``keep`` as a tuple: existing columns without another role."""
    keep = tuple(keep)
    unknown = [c for c in keep if c not in df.columns]
    if unknown:
        raise SchemaError(f"keep names unknown column(s) {', '.join(map(repr, unknown))}; "
                          f"available: {', '.join(map(repr, map(str, df.columns)))}.")
    clash = [f"{c!r} ({role})" for role, names in roles.items() for c in keep if c in names]
    if clash:
        raise SchemaError(f"keep lists column(s) with a role: {', '.join(clash)}; keep is for "
                          "columns published unchanged on purpose.")
    return keep


def check_unmasked_identifiers(df: pd.DataFrame, published_as_is: Sequence[str],
                               keep: Sequence[str], *, whole: bool = True) -> tuple[str, ...]:
    """Refuse columns without a role that look like direct identifiers.

    Every engine judges them by the one rule (:func:`identifier_reason`): the in-memory
    engine on the whole table, an engine that reads the file itself on the first rows its
    Request is built from (``whole=False``; the message says so).

    Parameters
    ----------
    df : DataFrame
        The table, or for an engine that reads the file itself its first rows
        (``whole=False``; a Dask frame's meta has none: only the names are judged there).
    published_as_is : sequence of str
        The columns that would be published unchanged (no role).
    keep : sequence of str
        Columns the user publishes unchanged on purpose: never refused.

    Returns
    -------
    tuple of str
        The kept columns that look like identifiers (recorded as ``params["keep"]``).

    Raises
    ------
    SchemaError
        Naming every such column, why it looks like an identifier, and the two ways out.
    """
    found = {}
    for col in published_as_is:
        reason = identifier_reason(df[col], str(col))
        if reason is not None:
            found[str(col)] = reason
    refused = {c: why for c, why in found.items() if c not in keep}
    if refused:
        listed = "; ".join(f"{c!r} ({why})" for c, why in refused.items())
        names = ",".join(refused)
        judged = "" if whole or not len(df) else (
            f" (judged on the first {len(df)} rows read of the input)")
        raise SchemaError(
            f"{len(refused)} column(s) without a role look like direct identifiers and would be "
            f"published unchanged next to the masked quasi-identifiers: {listed}{judged}. Drop "
            f"them (--drop {names}; identifiers=[...] in Python; role = \"identifier\" in a "
            "schema), mask them as quasi-identifiers, or publish them on purpose "
            f"(--keep {names}; keep=[...] in Python).")
    return tuple(c for c in found if c in keep)


def row_positions(df: pd.DataFrame, named: Collection[str]) -> pd.DataFrame:
    """``df`` indexed by row position (0 .. n-1): a release never publishes the input's row
    labels (``release.data.to_csv()`` would write them).

    A default index (a ``RangeIndex`` from 0, unnamed) is kept as it is. Any other index is
    judged level by level with the rule for columns (:func:`identifier_reason`: its name,
    or text unique on (nearly) every row, or a record number): one that looks like a direct
    identifier is refused, any other is dropped. An unnamed index of whole numbers holds
    pandas' row labels (of a filtered or sliced table), never judged by its values.

    Parameters
    ----------
    df : DataFrame
        The input table.
    named : collection of str
        The column names the request gives a role (or keeps): an index level of one of
        these names that is not also a column is refused (it is not a column).

    Raises
    ------
    SchemaError
        Naming each index level that looks like an identifier (and why) or that a role
        names, with the ways out: ``df.reset_index()`` to make it a column with a role, or
        ``df.reset_index(drop=True)`` to drop it.

    Examples
    --------
    >>> df = pd.DataFrame({"age": [30, 40]}, index=pd.Index(["north", "south"], name="region"))
    >>> row_positions(df, ["age"]).index.tolist()
    [0, 1]
    """
    index = df.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 \
            and index.name is None:
        return df
    in_roles = [str(n) for n in index.names
                if n is not None and str(n) in named and n not in df.columns]
    if in_roles:
        raise SchemaError(
            f"{', '.join(map(repr, in_roles))} named in a role is the DataFrame's index, not a "
            "column: make it a column with df.reset_index() first.")
    found = []
    for level, name in enumerate(index.names):
        values = pd.Series(index.get_level_values(level))
        if name is None and pd.api.types.is_integer_dtype(values):
            continue  # pandas' row labels (of a sliced or filtered table)
        reason = identifier_reason(values, "" if name is None else str(name))
        if reason is not None:
            found.append(f"{'the index' if name is None else f'index level {str(name)!r}'} "
                         f"({reason})")
    if found:
        raise SchemaError(
            f"The DataFrame's index looks like a direct identifier: {'; '.join(found)}. A "
            "release is indexed by row position and never publishes the input's index: make "
            "it a column with df.reset_index() and give it a role (identifiers=[...] drops "
            "it, keep=[...] publishes it on purpose), or drop it with "
            "df.reset_index(drop=True).")
    return df.reset_index(drop=True)


def published_column_checks(published: pd.DataFrame, qi: Sequence[str],
                            columns: Sequence[str], k: int) -> Mapping[str, Any] | None:
    """The k left when an intruder also knows one published column (``checks["published_columns"]``).

    Each column published unchanged besides the quasi-identifiers is added to them in turn
    and the smallest class of identical published records is counted, by the release's
    verifier (:func:`~microagg._pipeline.verify.published_classes`). Only the columns that
    leave fewer than ``k`` records are listed; ``None`` when there is none.

    Examples
    --------
    >>> out = pd.DataFrame({"age": [30.0] * 4, "weight": [1.0, 1.0, 2.0, 2.0]})
    >>> dict(published_column_checks(out, ["age"], ["weight"], 3)["columns"])
    {'weight': 2}
    """
    broken = {}
    classes = published_classes(published, list(qi))  # once: each column refines them
    for col in columns:
        pair = pd.DataFrame({"_class": classes, "_column": published[col].to_numpy()})
        sizes = class_sizes(published_classes(pair, ["_class", "_column"]))
        achieved = int(sizes.min()) if sizes.size else 0
        if achieved < k:
            broken[str(col)] = achieved
    return broken_columns_check(broken, k)


def broken_columns_check(broken: Mapping[str, int], k: int) -> Mapping[str, Any] | None:
    """``checks["published_columns"]`` of the columns that leave fewer than ``k`` records
    (``broken``: the k each leaves); ``None`` when there is none. The one format, whichever
    engine counted them."""
    if not broken:
        return None
    return MappingProxyType({
        "required": k, "columns": MappingProxyType(broken),
        "model": "k-anonymity counted with one published column added to the quasi-"
                 "identifiers (an intruder who also knows it)"})


def warn_broken_k(check: Mapping[str, Any] | None, notes: list[str]) -> None:
    """The release's warning for :func:`published_column_checks`' result."""
    if not check:
        return
    listed = ", ".join(f"{c!r} (k = {v})" for c, v in check["columns"].items())
    warn_user(notes, f"Published unchanged, {len(check['columns'])} column(s) break the "
                     f"release's {check['required']}-anonymity for an intruder who knows them "
                     f"too: {listed}. Drop them, mask them as quasi-identifiers, or coarsen "
                     "them before release.", PrivacyLeakWarning, first=True)


def unchanged_columns_check(published: pd.DataFrame, request: Request,
                            required: int | None) -> Mapping[str, Any] | None:
    """``checks["published_columns"]`` of a release (:func:`published_column_checks`), or
    ``None`` when no column published unchanged breaks its ``required`` k.

    The columns checked are those without a role that are published as they are (not the
    sensitive ones: what an intruder must not learn, not what they know). A noisy release
    promises no k (``required`` is ``None``), so nothing is checked against one.
    """
    keys, perturbed = _plan_keys(request)
    roles = {*keys, *perturbed, *request.sensitive, *request.identifiers}
    as_is = [c for c in published.columns if c not in roles]
    if not as_is or required is None:
        return None
    return published_column_checks(published, keys, as_is, required)


def _plan_keys(request: Request) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The columns the required k is promised over, and those a randomized step that
    promises no k perturbed (PRAM, noise, swapping: what they promise is their own check).

    Without a plan of steps, or when no step's promise covers the plan's keys, the release's
    quasi-identifiers. A plan whose promise covers some columns
    (:func:`~.plan_request.promised_k`) checks every other published column an intruder
    could know exactly against it: unchanged, or changed by a deterministic step (a recoded
    region, a top-coded income)."""
    from .plan_request import promised_k, runs_as_plan

    plan = request.plan
    if plan is None or not runs_as_plan(plan):
        return tuple(request.quasi_identifiers), ()
    promise = promised_k(plan)
    if promise is None:
        return tuple(request.quasi_identifiers), ()
    from ..steps import STEPS

    perturbed = tuple(c for step in plan.steps
                      if step.required_k is None and STEPS[step.name].randomized
                      for c in step.columns)
    return tuple(promise[2]), perturbed
