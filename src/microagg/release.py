"""The release pipeline: validate, scale, partition, aggregate, verify, measure -> Release."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import __version__
from ._scaling import SCALINGS, apply_scaler, fit_scaler
from ._validation import RandomState, check_k, check_labels, resolve_seed
from .aggregate import AGGREGATORS, aggregate
from .exceptions import ConstantColumnWarning, InternalError, SchemaError
from .metrics import dld_risk, group_size_summary, information_loss
from .models import check_k_anonymity
from .partition import get_partitioner

__all__ = ["SCALINGS", "Release", "anonymize"]


@dataclass(frozen=True, eq=False)
class Release:
    """A verified release: the only object users hold. It never contains identifiers.

    Attributes
    ----------
    data : pandas.DataFrame
        The published table: the input's columns minus the identifiers, rows in the input's
        order; quasi-identifiers replaced by their group's representative.
    labels : ndarray of shape (n_samples,)
        Group of each published row.
    params : Mapping
        Everything needed to reproduce the release (method, k, roles, aggregation, scaling,
        method parameters, microagg version).
    seed : int
        The random seed actually used (drawn and recorded when ``random_state=None``).
    checks : Mapping
        Privacy levels re-derived from the published data, e.g.
        ``checks["k_anonymity"] = {"required": 5, "achieved": 5, "model": ...}``.
    metrics : Mapping
        Information loss and disclosure risk (Python floats / ints).
    warnings : tuple of str
        Everything the user should know, privacy-relevant ones first.
    timings : Mapping
        Seconds spent in each stage.
    """

    data: pd.DataFrame
    labels: NDArray[np.intp]
    params: Mapping[str, Any]
    seed: int
    checks: Mapping[str, Any]
    metrics: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """The k-anonymity achieved by the published quasi-identifiers."""
        return int(self.checks["k_anonymity"]["achieved"])

    def summary(self) -> dict[str, Any]:
        """Everything but the data and labels, as plain JSON-serializable values."""
        return {
            "rows": int(self.data.shape[0]),
            "columns": [str(c) for c in self.data.columns],
            "params": _plain(self.params),
            "seed": self.seed,
            "checks": _plain(self.checks),
            "metrics": _plain(self.metrics),
            "warnings": list(self.warnings),
            "timings": _plain(self.timings),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`summary` as a JSON string."""
        return json.dumps(self.summary(), indent=indent)

    def __repr__(self) -> str:
        return (
            f"Release(rows={self.data.shape[0]}, method={self.params['method']!r}, "
            f"k={self.params['k']}, achieved_k={self.k}, "
            f"information_loss={self.metrics['information_loss']:.4f})"
        )


def _plain(value: Any) -> Any:
    """Turn mappings, tuples and numpy scalars into JSON-ready Python values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _as_names(value: str | Sequence[str] | None, role: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    names = tuple(value)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise TypeError(f"Column names in {role!r} must be strings. Got {bad!r}.")
    return names


def _validate_roles(
    df: pd.DataFrame, quasi_identifiers: tuple[str, ...], sensitive: tuple[str, ...],
    identifiers: tuple[str, ...],
) -> None:
    """Every role names existing columns, no column has two roles; lists every problem."""
    problems: list[str] = []
    available = [str(c) for c in df.columns]
    if not quasi_identifiers:
        problems.append("No quasi-identifiers given: name at least one column to mask.")
    seen: dict[str, str] = {}
    for role, names in (("quasi_identifiers", quasi_identifiers), ("sensitive", sensitive),
                        ("identifiers", identifiers)):
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            problems.append(f"{role} lists {', '.join(map(repr, dup))} more than once.")
        for name in names:
            if name not in df.columns:
                problems.append(f"Unknown column {name!r} in {role}.")
            elif name in seen and seen[name] != role:
                problems.append(f"Column {name!r} is both in {seen[name]} and in {role}.")
            seen.setdefault(name, role)
    if problems:
        if any(p.startswith("Unknown column") for p in problems):
            problems.append(f"Available columns: {', '.join(map(repr, available))}.")
        raise SchemaError(" ".join(problems))


def _quasi_identifier_matrix(df: pd.DataFrame, columns: tuple[str, ...]) -> NDArray[np.float64]:
    """The quasi-identifiers as float64, with errors that name columns, dtypes and counts."""
    not_numeric = [
        f"{c!r} (dtype {df[c].dtype})" for c in columns
        if not (pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]))
    ]
    if not_numeric:
        raise SchemaError(
            "Quasi-identifiers must be numeric for the numeric methods; not numeric: "
            f"{', '.join(not_numeric)}. Encode them, or pass them as sensitive or other columns."
        )
    values = df.loc[:, list(columns)].to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(values)
    if not finite.all():
        bad = [
            f"{c!r}: {int(n_nan)} missing, {int(n_inf)} infinite"
            for c, n_nan, n_inf in zip(
                columns, np.isnan(values).sum(axis=0), np.isinf(values).sum(axis=0), strict=True
            )
            if n_nan or n_inf
        ]
        raise SchemaError(
            f"Quasi-identifiers contain missing or infinite values in {len(df)} rows checked "
            f"({'; '.join(bad)}). Impute or drop them first; microagg never imputes silently."
        )
    return np.ascontiguousarray(values)


def anonymize(
    df: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    k: int,
    method: str = "mdav",
    sensitive: str | Sequence[str] = (),
    identifiers: str | Sequence[str] = (),
    aggregation: str = "mean",
    scaling: str = "standard",
    random_state: RandomState = None,
    method_params: Mapping[str, Any] | None = None,
) -> Release:
    """Mask the quasi-identifiers of ``df`` by microaggregation and return a verified release.

    Records are grouped on the scaled quasi-identifiers (groups of at least ``k``) and each
    group's quasi-identifiers are replaced by the group's representative, computed on the
    original scale. Identifiers are dropped; sensitive and other columns pass through
    unchanged; the row order is kept. The achieved k-anonymity is re-derived from the
    published quasi-identifiers and a shortfall raises :class:`PrivacyViolationError`.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent.
    quasi_identifiers : str or sequence of str
        Numeric columns to mask (key variables an intruder may know).
    k : int
        Minimum group size, ``2 <= k <= len(df)``.
    method : str, default="mdav"
        A partitioner name, see :data:`microagg.partition.PARTITIONERS`.
    sensitive : str or sequence of str, default=()
        Confidential columns: published unchanged (later privacy models check them).
    identifiers : str or sequence of str, default=()
        Direct identifiers: removed from the release.
    aggregation : {"mean", "median", "mode"}, default="mean"
        Group representative for the quasi-identifiers.
    scaling : {"standard", "minmax", "none"}, default="standard"
        Scaling of the quasi-identifiers for the distances (z-scores with ddof=1, min-max to
        [0, 1], or none). It affects grouping only; aggregation uses the original values.
    random_state : None, int or numpy.random.Generator, default=None
        The single source of randomness. ``None`` draws a seed, which is recorded in
        ``Release.seed`` so that the release can be reproduced.
    method_params : mapping, default=None
        Extra parameters of the method (e.g. ``{"gamma": 0.5}`` for ``vmdav``).

    Returns
    -------
    Release

    Warns
    -----
    ConstantColumnWarning
        A quasi-identifier is constant: it is excluded from the distances (it identifies
        nobody and is published unchanged).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [24, 31, 32, 57, 49, 43], "income": [21, 19, 22, 43, 39, 32]})
    >>> release = anonymize(df, quasi_identifiers=["age", "income"], k=3, random_state=0)
    >>> release.k, release.data["age"].round(2).tolist()
    (3, [29.0, 29.0, 29.0, 49.67, 49.67, 49.67])
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"anonymize expects a pandas DataFrame. Got {type(df).__name__} instead.")
    qi = _as_names(quasi_identifiers, "quasi_identifiers")
    sens = _as_names(sensitive, "sensitive")
    ids = _as_names(identifiers, "identifiers")
    _validate_roles(df, qi, sens, ids)
    if df.shape[0] == 0:
        raise SchemaError("The input table has no rows; there is nothing to release.")
    k = check_k(k, n_samples=df.shape[0], caller="anonymize")
    if scaling not in SCALINGS:  # checked early: before any work
        raise ValueError(f"Unknown scaling {scaling!r}. Valid scalings: {', '.join(SCALINGS)}.")
    if aggregation not in AGGREGATORS:
        raise ValueError(
            f"Unknown aggregation {aggregation!r}. "
            f"Valid aggregations: {', '.join(sorted(AGGREGATORS))}."
        )
    partitioner = get_partitioner(method)
    params = dict(method_params or {})
    seed, rng = resolve_seed(random_state)
    values = _quasi_identifier_matrix(df, qi)
    notes: list[str] = []
    varying = np.ptp(values, axis=0) > 0
    constant = [c for c, v in zip(qi, varying, strict=True) if not v]
    if constant:
        msg = (f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: excluded "
               "from the distances and published unchanged.")
        warnings.warn(msg, ConstantColumnWarning, stacklevel=2)
        notes.append(msg)
    timings["validate"] = time.perf_counter() - t0

    t = time.perf_counter()
    scaler = fit_scaler(values, scaling)
    scaled = apply_scaler(values, scaler)
    labels = partitioner(scaled, k, random_state=rng, **params)
    try:
        labels = check_labels(labels, n_samples=values.shape[0], k=k)
    except (TypeError, ValueError) as error:
        raise InternalError(
            f"Method {partitioner.name!r} returned an invalid partition ({error}). Nothing "
            "was released. This is a bug in microagg."
        ) from error
    timings["partition"] = time.perf_counter() - t

    t = time.perf_counter()
    masked = aggregate(values, labels, method=aggregation, random_state=rng)
    published = df.drop(columns=list(ids))
    for j, col in enumerate(qi):
        published[col] = masked[:, j]
    timings["aggregate"] = time.perf_counter() - t

    t = time.perf_counter()
    achieved = check_k_anonymity(published.loc[:, list(qi)].to_numpy(dtype=np.float64), k)
    timings["verify"] = time.perf_counter() - t

    t = time.perf_counter()
    masked_scaled = apply_scaler(masked, scaler)
    metrics: dict[str, Any] = {
        "information_loss": information_loss(scaled, masked_scaled),
        "information_loss_original_units": information_loss(values, masked),
        "dld_risk": dld_risk(scaled, masked_scaled),
        **group_size_summary(labels),
    }
    timings["measure"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0

    return Release(
        data=published,
        labels=labels,
        params=MappingProxyType({
            "method": partitioner.name,
            "k": k,
            "quasi_identifiers": qi,
            "sensitive": sens,
            "identifiers": ids,
            "aggregation": aggregation,
            "scaling": scaling,
            "method_params": MappingProxyType({**partitioner.params, **params}),
            "microagg_version": __version__,
        }),
        seed=seed,
        checks=MappingProxyType({
            "k_anonymity": MappingProxyType({
                "required": k,
                "achieved": achieved,
                "model": "k-anonymity: smallest number of published records sharing the same "
                         "quasi-identifier values, counted on the published data",
            }),
        }),
        metrics=MappingProxyType(metrics),
        warnings=tuple(notes),
        timings=MappingProxyType(timings),
    )
