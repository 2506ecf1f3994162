"""Which registered methods apply to a table's roles and types, and, for each that does not,
why in plain words: the facts a release itself refuses a method on, read from the registry
entries' fields (:attr:`~Partitioner.mixed`, :attr:`~Partitioner.needs_sensitive`,
:attr:`~Partitioner.extra`), never from a method's name.

A release (:func:`microagg.anonymize`) treats a quasi-identifier as categorical when its
schema declares it ``categorical`` or ``ordinal`` or gives it a hierarchy, or when it holds
neither numbers nor dates (text, true/false: ``Schema.apply`` and
``microagg._pipeline.rules.load_hierarchies``); a method that is not ``mixed`` then refuses
("works on numeric data only"). A method that ``needs_sensitive`` refuses a release without
a sensitive column; one whose optional extra is not installed cannot be imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._partitioner import Partitioner

__all__ = ["categorical_keys", "method_refusal", "methods_that_apply"]

_CATEGORY_TYPES = ("categorical", "ordinal")
_NUMBER_TYPES = ("numeric", "date")


def _is_category(entry: Mapping[str, Any], dtype: Any) -> bool:
    """Whether a release groups this quasi-identifier as a category (see the module)."""
    import pandas as pd

    declared = entry.get("type")
    if declared in _CATEGORY_TYPES or entry.get("hierarchy"):
        return True
    if declared in _NUMBER_TYPES or dtype is None:
        return False
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return False  # dates are microaggregated as numbers (microagg._pipeline.dates)
    return not (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))


def categorical_keys(schema: Mapping[str, Mapping[str, Any]],
                     dtypes: Mapping[str, Any]) -> list[str]:
    """The quasi-identifiers of ``schema`` that a release treats as categories.

    Parameters
    ----------
    schema : mapping of column -> entry
        ``{"role": ..., "type": ..., "hierarchy": ...}`` by column (a schema's columns).
    dtypes : mapping of column -> dtype
        The table's dtypes (a type the schema does not declare is read from them).

    Examples
    --------
    >>> import numpy as np
    >>> schema = {"age": {"role": "quasi-identifier"}, "sex": {"role": "quasi-identifier"},
    ...           "zip": {"role": "quasi-identifier", "type": "categorical"}}
    >>> categorical_keys(schema, {"age": np.dtype("int64"), "sex": np.dtype(object),
    ...                           "zip": np.dtype("int64")})
    ['sex', 'zip']
    """
    return [str(c) for c, entry in schema.items() if entry.get("role") == "quasi-identifier"
            and _is_category(entry, dtypes.get(str(c)))]


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def method_refusal(entry: Partitioner, *, categorical: Sequence[str],
                   sensitive: Sequence[str]) -> str | None:
    """Why a release with method ``entry`` would be refused for these keys and roles, in
    plain words (every reason, joined by ``"; "``), or ``None`` when it applies.

    Parameters
    ----------
    entry : Partitioner
        The method's registry entry.
    categorical : sequence of str
        The quasi-identifiers a release treats as categories (:func:`categorical_keys`).
    sensitive : sequence of str
        The sensitive columns.

    Examples
    --------
    >>> from microagg.partition import PARTITIONERS
    >>> method_refusal(PARTITIONERS["mdav"], categorical=["sex", "region"], sensitive=[])
    'needs numeric quasi-identifiers: sex and region are categories'
    >>> method_refusal(PARTITIONERS["mage"], categorical=["sex"], sensitive=[]) is None
    True
    """
    reasons = []
    if categorical and not entry.mixed:
        verb = "is a category" if len(categorical) == 1 else "are categories"
        reasons.append(f"needs numeric quasi-identifiers: {_listed(list(categorical))} {verb}")
    if entry.needs_sensitive and not sensitive:
        reasons.append("needs a sensitive column (it groups records of dissimilar sensitive "
                       "values)")
    if entry.extra is not None and not entry.installed:
        reasons.append(f"needs the optional extra {entry.extra}: pip install "
                       f"'microagg[{entry.extra}]'")
    return "; ".join(reasons) or None


def methods_that_apply(schema: Mapping[str, Mapping[str, Any]], dtypes: Mapping[str, Any],
                       partitioners: Mapping[str, Partitioner] | None = None,
                       ) -> tuple[list[str], dict[str, str]]:
    """The methods of the registry a release can use with this schema, in registry order,
    and the others with why not (:func:`method_refusal`).

    Parameters
    ----------
    schema : mapping of column -> entry
        The columns' roles and types (``{"role": ..., "type": ...}`` by column).
    dtypes : mapping of column -> dtype
        The table's dtypes.
    partitioners : mapping of name -> Partitioner, default=None
        The registry to read (default :data:`microagg.partition.PARTITIONERS`).

    Returns
    -------
    offered : list of str
        The names of the methods that apply.
    refused : dict of str -> str
        Each other method's name and the reason, in plain words.
    """
    if partitioners is None:
        from . import PARTITIONERS
        partitioners = PARTITIONERS
    categorical = categorical_keys(schema, dtypes)
    sensitive = [str(c) for c, e in schema.items() if e.get("role") == "sensitive"]
    offered: list[str] = []
    refused: dict[str, str] = {}
    for name, entry in partitioners.items():
        why = method_refusal(entry, categorical=categorical, sensitive=sensitive)
        if why is None:
            offered.append(name)
        else:
            refused[name] = why
    return offered, refused
