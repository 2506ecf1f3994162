"""Assess a release made elsewhere: rebuild a :class:`~microagg.release.Release` from an
original table and its published version, for ``microagg report`` (issue 10, item 1).

Everything is re-derived from the two tables: the equivalence classes of identical published
quasi-identifiers (:func:`microagg._pipeline.verify.published_classes`, the one verifier's)
stand for the groups, k / l / t come from :func:`microagg.check.check_table`,
and the information loss and linkage risk compare the numeric quasi-identifiers row by row
(z-scores of the original, as :func:`microagg.anonymize` does). A microagg summary JSON, when
given, adds the parameters, seed and warnings the release was made with; its figures are not
trusted but recomputed.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._pipeline.verify import published_classes
from .check import check_table
from .exceptions import SchemaError
from .metrics import dld_risk, group_size_summary, il1s, information_loss, moment_changes
from .release import DLD_SAMPLE, DLD_SAMPLE_ABOVE, Release

__all__ = ["UNKNOWN_SEED", "assess_release", "load_summary"]

UNKNOWN_SEED = -1
"""The ``seed`` of an assessed release whose summary does not give one."""


def load_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a release summary written by ``--summary-json`` (or :meth:`Release.to_json`).

    Raises
    ------
    ValueError
        If the file is not JSON or not an object with ``params``.
    """
    file = pathlib.Path(path).expanduser()
    try:
        summary = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{str(file)!r} is not JSON: {exc}") from exc
    if not isinstance(summary, dict) or not isinstance(summary.get("params"), dict):
        raise ValueError(f"{str(file)!r} is not a microagg release summary (no 'params').")
    return summary


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def assess_release(original: pd.DataFrame, published: pd.DataFrame, *,
                   quasi_identifiers: Sequence[str], sensitive: Sequence[str] = (),
                   summary: Mapping[str, Any] | None = None) -> Release:
    """A :class:`~microagg.release.Release` re-derived from an original and a published table.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before masking.
    published : pandas.DataFrame
        The released table: the same records in the same order (microagg keeps the order; a
        release that shuffled its rows cannot be compared record by record).
    quasi_identifiers : sequence of str
        Columns present in both tables.
    sensitive : sequence of str, default=()
        Published sensitive columns, for l, t and homogeneity.
    summary : mapping, optional
        A release summary (:func:`load_summary`): its params, seed and warnings are shown.

    Returns
    -------
    Release
        ``labels`` are the published equivalence classes; ``checks`` and ``metrics`` are
        recomputed; ``seed`` is the summary's or :data:`UNKNOWN_SEED`.

    Raises
    ------
    SchemaError
        If a column is missing from either table (named), or the row counts differ.

    Examples
    --------
    >>> original = pd.DataFrame({"age": [30.0, 32.0, 50.0, 54.0]})
    >>> published = pd.DataFrame({"age": [31.0, 31.0, 52.0, 52.0]})
    >>> release = assess_release(original, published, quasi_identifiers=["age"])
    >>> release.k, round(release.metrics["information_loss"], 3)  # 100 * 10 / 451
    (2, 2.217)
    """
    qi = list(quasi_identifiers)
    sens = list(sensitive)
    for name, table, columns in (("original", original, qi),
                                 ("published", published, [*qi, *sens])):
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise SchemaError(f"Column(s) {', '.join(map(repr, missing))} are not in the "
                              f"{name} table; its columns: "
                              f"{', '.join(map(str, table.columns))}.")
    if len(original) != len(published):
        raise SchemaError(f"The original has {len(original):,} rows but the published table "
                          f"{len(published):,}; the report compares them record by record.")
    result = check_table(published, quasi_identifiers=qi, sensitive=sens)
    labels = published_classes(published, qi)
    params: dict[str, Any] = dict(summary.get("params", {})) if summary else {}
    params.setdefault("quasi_identifiers", qi)
    params.setdefault("sensitive", sens)
    params.setdefault("method", "unknown (assessed from the files)")
    params.setdefault("k", None)
    required_k = params.get("k")
    checks: dict[str, Any] = {"k_anonymity": {
        "required": required_k, "achieved": result.k,
        "model": "k-anonymity of the published quasi-identifiers (re-derived from the file)"}}
    for col in sens:
        checks[f"l_diversity ({col})"] = {"required": None,
                                          "achieved": result.l_diversity[col]["distinct"],
                                          "model": "distinct l-diversity of " + col}
        checks[f"t_closeness ({col})"] = {"required": None,
                                          "achieved": result.t_closeness[col],
                                          "model": "t-closeness (EMD) of " + col}
    numeric = [c for c in qi if _numeric(original[c]) and _numeric(published[c])]
    metrics: dict[str, Any] = {**group_size_summary(labels),
                               "risk_per_record_mean": result.risk["mean"],
                               "share_in_classes_below_5": result.risk[
                                   "share_in_classes_below_5"]}
    if numeric:
        values = original[numeric].to_numpy(dtype=np.float64)
        masked = published[numeric].to_numpy(dtype=np.float64)
        bad = [c for c, ok in zip(numeric, np.isfinite(values).all(axis=0)
                                  & np.isfinite(masked).all(axis=0), strict=True) if not ok]
        if bad:
            raise SchemaError(f"Numeric quasi-identifier(s) {bad} have missing or infinite "
                              "values in one of the tables; the comparison needs them filled.")
        scale = values.std(axis=0)
        scale[scale == 0] = 1.0
        center = values.mean(axis=0)
        scaled, masked_scaled = (values - center) / scale, (masked - center) / scale
        metrics.update({
            "information_loss": information_loss(scaled, masked_scaled),
            "information_loss_original_units": information_loss(values, masked),
            "dld_risk": dld_risk(scaled, masked_scaled, sample=(
                DLD_SAMPLE if len(values) > DLD_SAMPLE_ABOVE else None)),
            "il1s": il1s(values, masked),
            **moment_changes(values, masked),
        })
    for col in sens:
        metrics[f"homogeneous classes ({col})"] = result.homogeneity[col]
    warnings = tuple(summary.get("warnings", ())) if summary else ()
    other = [c for c in qi if c not in numeric]
    if other:
        warnings += (f"Quasi-identifier(s) {other} are not numeric in both tables: they are "
                     "compared by category (no SSE/SST, no linkage distance).",)
    if required_k is not None and result.k < int(required_k):
        warnings = (f"The published file is NOT {required_k}-anonymous: its smallest class "
                    f"has {result.k} record(s).", *warnings)
    seed = summary.get("seed") if summary else None
    return Release(data=published, labels=labels, params=params,
                   seed=int(seed) if isinstance(seed, int) else UNKNOWN_SEED,
                   checks=checks, metrics=metrics, warnings=warnings)
