"""The review's loss measures of a release with missing quasi-identifier values, by the
release's own definition (``missing="pattern"``): the records split by their published
missingness pattern, each pattern measured on the columns it observes with its published
classes, and the patterns combined weighted by their records
(:func:`microagg._pipeline.mixed_patterns.weighted_metrics`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._pipeline.mixed_patterns import Pieces, weighted_metrics
from .._pipeline.rules import load_hierarchies
from ..hierarchy import Hierarchy
from ..metrics import information_loss

__all__ = ["pattern_losses"]


def _z_scores_loss(values: NDArray[np.float64], masked: NDArray[np.float64]) -> float:
    """SSE/SST on the z-scores of ``values`` (a constant column scaled by 1)."""
    scale = values.std(axis=0)
    scale[scale == 0] = 1.0
    center = values.mean(axis=0)
    return information_loss((values - center) / scale, (masked - center) / scale)


def _one_pattern(original: pd.DataFrame, published: pd.DataFrame, observed: list[str],
                 numeric: list[str], classes: NDArray[np.intp],
                 hierarchies: Mapping[str, Hierarchy]) -> dict[str, Any]:
    """NCP (and SSE/SST on z-scores where the pattern observes a numeric column) of one
    pattern's records, on its observed columns, their published classes re-factorized."""
    from .assess import ncp_of_classes  # the review's one NCP of classes

    sub = pd.factorize(classes)[0].astype(np.intp)
    given = {c: h for c, h in hierarchies.items() if c in observed}
    out: dict[str, Any] = {"ncp": ncp_of_classes(original, published, observed, sub, given)}
    plain = [c for c in observed if c in numeric]
    if plain:
        out["information_loss"] = _z_scores_loss(original[plain].to_numpy(dtype=np.float64),
                                                 published[plain].to_numpy(dtype=np.float64))
    return out


def pattern_losses(original: pd.DataFrame, published: pd.DataFrame, qi: list[str],
                   numeric: list[str], classes: NDArray[np.intp],
                   hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None
                   ) -> dict[str, Any]:
    """The record-weighted NCP and SSE/SST of the missingness patterns, as the release
    reports them.

    Parameters
    ----------
    original, published : pandas.DataFrame
        The two tables as the release measured them (dates as days, ordinals by rank).
    qi : list of str
        The quasi-identifiers.
    numeric : list of str
        The quasi-identifiers numeric in both tables (SSE/SST is measured on them).
    classes : ndarray of intp
        The published equivalence classes.
    hierarchies : mapping, optional
        The categorical quasi-identifiers' hierarchies (a flat one of the original's
        observed values for a column without), loaded once on the whole original as the
        release loads them.

    Returns
    -------
    dict
        ``ncp``, ``information_loss`` where every pattern with observed columns measures
        it, and ``loss_measured_on``; empty when no record has an observed quasi-identifier.
    """
    loaded = load_hierarchies(original, tuple(qi), (), hierarchies, missing="pattern")[0]
    missing = (original[qi].isna() | published[qi].isna()).to_numpy()
    patterns, which = np.unique(missing, axis=0, return_inverse=True)
    which = np.asarray(which).ravel()
    parts: list[tuple[int, dict[str, Any]]] = []
    for j, row in enumerate(patterns):
        observed = [c for c, m in zip(qi, row, strict=True) if not m]
        if not observed:  # nothing published to measure: the release measures none either
            continue
        rows = np.flatnonzero(which == j)
        parts.append((rows.size, _one_pattern(
            original.iloc[rows].reset_index(drop=True),
            published.iloc[rows].reset_index(drop=True), observed, numeric, classes[rows],
            loaded)))
    if not parts:
        return {}
    combined = weighted_metrics(Pieces(len(original), {}, parts), classes, classes)
    return {key: combined[key] for key in ("ncp", "information_loss", "loss_measured_on")
            if key in combined}
