"""What a numeric release keeps and risks: the metrics of a Release, from the original and
the published quasi-identifiers (the generalizing stage measures in :mod:`.mixed`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._base.scaling import safe_exponents, to_safe_range
from ..metrics import (
    clustering_information_loss,
    dld_risk,
    fuzzy_clustering_information_loss,
    group_size_summary,
    homogeneity,
    il1s,
    information_loss,
    intersection_attack,
    moment_changes,
    privacy_of_sensitive,
)
from ..models import l_diversity

__all__ = ["DLD_SAMPLE", "DLD_SAMPLE_ABOVE", "Tables", "completed_tables", "numeric_metrics",
           "sensitive_metrics"]

DLD_SAMPLE_ABOVE = 100_000
DLD_SAMPLE = 2_000
"""Files with more than DLD_SAMPLE_ABOVE rows get the DLD risk estimated on DLD_SAMPLE
records, each linked against all the originals (an unbiased estimate, standard error at most
0.5 / sqrt(2000) = 0.011, and sqrt(r (1 - r) / 2000) for a risk r: 0.008 at r = 0.15): a
nearest-neighbour query in 10 dimensions costs about 0.8 ms per record at 10^6 records."""


def sensitive_metrics(classes: NDArray[np.intp], published: pd.DataFrame,
                      sens: tuple[str, ...]) -> dict[str, Any]:
    """Homogeneity, the distinct l reached and P(S) of seed 004 (always reported)."""
    return {
        "homogeneity": MappingProxyType({
            col: MappingProxyType(homogeneity(classes, published[col])) for col in sens}),
        "distinct_l": MappingProxyType({
            col: l_diversity(classes, published[col].to_numpy()) for col in sens}),
        "privacy_of_sensitive": privacy_of_sensitive(
            classes, [published[c].to_numpy() for c in sens]),
    }


def _dld_sample(n: int) -> int | None:
    return DLD_SAMPLE if n > DLD_SAMPLE_ABOVE else None


@dataclass(frozen=True)
class Tables:
    """The quasi-identifiers of a release: original and published, on the original scale
    and scaled for the distances; the groups; which columns vary."""

    values: NDArray[np.float64]
    masked: NDArray[np.float64]
    scaled: NDArray[np.float64]
    masked_scaled: NDArray[np.float64]
    labels: NDArray[np.intp]
    qi: tuple[str, ...]
    varying: NDArray[np.bool_]


def _at_mean(original: NDArray[np.float64], masked: NDArray[np.float64],
             missing: NDArray[np.bool_]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both tables with the originally missing cells, and the masked table with its blanked
    cells, at the column's observed mean."""
    observed = np.where(missing, 0.0, original)
    count = (~missing).sum(axis=0)
    mean = np.divide(observed.sum(axis=0), count, out=np.zeros(original.shape[1]),
                     where=count > 0)
    blank = missing | np.isnan(masked)
    return (np.ascontiguousarray(np.where(missing, mean, original)),
            np.ascontiguousarray(np.where(blank, mean, masked)))


def completed_tables(t: Tables) -> Tables:
    """The tables the metrics read when cells are missing: the metrics count observed
    cells only (an originally missing cell is set to its column's observed mean in both
    tables, so that it adds nothing to a loss or a deviation), and a cell the pattern
    strategy blanked counts as published at the column's mean: it loses its whole deviation
    from the mean (Templ 2017, ch. 5, counts a suppressed value's loss the same way). The
    variance, covariance and IL1s measures then see the missing cells at the mean, which
    understates the spread (each such cell adds no deviation)."""
    missing = np.isnan(t.values)
    if not missing.any() and not np.isnan(t.masked).any():
        return t
    values, masked = _at_mean(t.values, t.masked, missing)
    cols = t.varying if t.scaled.shape[1] == int(t.varying.sum()) else slice(None)
    scaled, masked_scaled = _at_mean(np.where(missing[:, cols], np.nan, t.scaled),
                                     t.masked_scaled, missing[:, cols])
    return Tables(values, masked, scaled, masked_scaled, t.labels, t.qi, t.varying)


def _column_loss(t: Tables) -> Mapping[str, float]:
    """Per varying quasi-identifier, the share of its variation the masking removed, in %
    (:func:`~microagg.metrics.headline.column_losses`): the plain words name the worst."""
    from ..metrics.headline import column_losses

    losses = column_losses(t.values, t.masked)
    return MappingProxyType({c: round(float(v), 4) for c, v, on in
                             zip(t.qi, losses, t.varying, strict=True)
                             if on and np.isfinite(v)})


def _sdcmicro_numeric(t: Tables) -> dict[str, Any]:
    """sdcMicro's numeric measures on the varying quasi-identifiers: interval
    disclosure at p = 1, 5, 10 % (every value inside its interval, the rule the issue's
    sdcMicro 5.8.1 figures follow), IL1s as a sum, the eigenvalue measure. Left out when a
    cell is missing (they are defined on complete tables) or fewer than two columns vary."""
    from ..metrics.interval import interval_disclosure
    from ..metrics.sdc_utility import eigenvalue_utility, il1s_total

    values, masked = t.values[:, t.varying], t.masked[:, t.varying]
    if values.shape[1] < 1 or len(values) < 3 or not (np.isfinite(values).all()
                                                      and np.isfinite(masked).all()):
        return {}
    # each measure is invariant to a column's scale: divide by its largest magnitude first,
    # so that values near 1e308 do not overflow the variances
    scale = np.maximum(np.abs(values).max(axis=0), np.abs(masked).max(axis=0))
    scale[scale == 0] = 1.0
    values, masked = values / scale, masked / scale
    out: dict[str, Any] = {
        "interval_disclosure": MappingProxyType({
            f"p = {p:g}": interval_disclosure(values, masked, p=p, max_outside=0)
            for p in (0.01, 0.05, 0.10)}),
        "il1s_total": il1s_total(values, masked)}
    try:
        out["eigenvalue_utility"] = eigenvalue_utility(values, masked)
    except ValueError:  # a column constant after masking: no standardized spectrum
        pass
    return out


def numeric_metrics(tables: Tables, *, known: tuple[str, ...] = (),
                    clustering_il: int | None = None,
                    attribute_groups: Mapping[str, Any] | None = None,
                    of_classes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Information loss (on z-scores and in original units), linkage risk, group sizes,
    then ``of_classes`` (:func:`sensitive_metrics`, when given), IL1s and moments; with
    ``clustering_il`` the clustering-based losses; with ``attribute_groups``
    (``{"groups": ...}``) the intersection attack; with ``known`` the linkage risk on the
    columns an intruder holds."""
    t = tables
    metrics: dict[str, Any] = {
        "information_loss": information_loss(t.scaled, t.masked_scaled),
        "information_loss_columns": tuple(c for c, v in zip(t.qi, t.varying, strict=True)
                                          if v),
        "information_loss_original_units": information_loss(t.values, t.masked),
        "column_loss": _column_loss(t),
        **_sdcmicro_numeric(t),
        "dld_risk": dld_risk(t.scaled, t.masked_scaled, sample=_dld_sample(len(t.values))),
        **group_size_summary(t.labels),
        **(of_classes or {}),
    }
    return metrics | _more_metrics(t, known=known, clustering_il=clustering_il,
                                   attribute_groups=attribute_groups)


def _more_metrics(t: Tables, *, known: tuple[str, ...], clustering_il: int | None,
                  attribute_groups: Mapping[str, Any] | None) -> dict[str, Any]:
    n = t.scaled.shape[0]
    safe = safe_exponents(t.values)  # the metrics below are scale-free column by column
    original_safe, masked_safe = to_safe_range(t.values, safe), to_safe_range(t.masked, safe)
    metrics: dict[str, Any] = {}
    if n > DLD_SAMPLE_ABOVE:
        metrics["dld_risk_sampled_records"] = DLD_SAMPLE
    metrics["il1s"] = il1s(original_safe, masked_safe)
    metrics.update(moment_changes(original_safe, masked_safe))
    if clustering_il is not None:
        metrics.update(clustering_information_loss(original_safe, masked_safe,
                                                   n_clusters=clustering_il))
        metrics["il_fuzzy_rand"] = fuzzy_clustering_information_loss(
            original_safe, masked_safe, n_clusters=clustering_il)
    position = {c: j for j, c in enumerate(t.qi)}
    if attribute_groups:
        attack = intersection_attack(
            t.scaled, t.masked_scaled,
            [[position[c] for c in g] for g in attribute_groups["groups"]],
            known=[position[c] for c in known] if known else None)
        metrics.update({f"intersection_attack_{name}": value for name, value in attack.items()})
    if known:  # the linkage on the known columns only (constant ones tell nobody apart)
        cols = [int(t.varying[:j].sum()) for j, c in enumerate(t.qi)
                if c in known and t.varying[j]]
        metrics["dld_risk_known"] = (dld_risk(
            t.scaled, t.masked_scaled, attributes=cols, sample=_dld_sample(n))
            if cols else 1.0 / n)
    return metrics
