"""Risk-threshold local suppression (sdcMicro's ``localSupp``, on every key rather than one,
as UserSupport #266's users ask): blank, in every record whose individual risk is above the
threshold, the key whose blanking lowers its risk most, round after round, until none is.

The individual risk is the project's survey risk (:mod:`microagg.metrics.survey_risk`, the
one ``microagg risk`` reports: Benedetti & Franconi 1998 in sdcMicro's ``indivRisk`` form),
weighted when the release has weights, within strata when it has strata.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...metrics.survey_risk import frequencies, individual_risk
from .core import _check_columns, group_codes, missingness_details
from .options import SuppressRisk

__all__ = ["apply_suppress_risk", "record_risk"]


def record_risk(table: pd.DataFrame, keys: tuple[str, ...], missing: str,
                weights: str | None, strata: str | None) -> NDArray[np.float64]:
    """Each record's individual risk on ``keys`` (sdcMicro's ``indivRisk``)."""
    fk, Fk = frequencies(table, list(keys), weights=weights, missing=missing, strata=strata)
    return individual_risk(fk, Fk)


def apply_suppress_risk(table: pd.DataFrame, options: SuppressRisk,
                        rng: np.random.Generator, *, households: str | None = None,
                        weights: str | None = None, strata: str | None = None
                        ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Blank key values of the records above the risk threshold until none is.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table.
    options : SuppressRisk
        The step's options.
    rng : numpy.random.Generator
        Unused (deterministic); taken for the step contract.
    households : str, optional
        Unused (the risk is per person).
    weights, strata : str, optional
        Sampling weights (``Fk`` is their sum) and strata (counted within each).

    Returns
    -------
    published, details
        A new table (same rows, order, index; keys blanked) and per column the cells
        suppressed, the share, the association of the missingness with the other keys,
        the risk before and after and the rounds.

    References
    ----------
    Templ, M. Statistical Disclosure Control for Microdata. Springer, 2017 (``localSupp``).
    """
    del rng, households
    keys = options.keys
    _check_columns(table, keys, options.name)
    group_codes(table, strata, "strata", options.name)  # checks: none missing
    if weights is not None:
        _check_columns(table, (weights,), options.name)
    rank = ([options.importance.index(key) for key in keys] if options.importance
            else [0] * len(keys))
    work = table[list(keys) + [c for c in (weights, strata) if c is not None]].copy()
    for key in keys:
        if work[key].dtype.kind not in "fcM" and not isinstance(work[key].dtype,
                                                                pd.CategoricalDtype):
            work[key] = work[key].astype(object)
    original = work[list(keys)].isna().to_numpy()
    risk = record_risk(work, keys, options.missing, weights, strata)
    before = risk.copy()
    rounds = 0
    while (risk > options.threshold).any() and rounds < options.max_rounds:
        rounds += 1
        risky = np.flatnonzero(risk > options.threshold)
        trial = np.full((risky.size, len(keys)), np.inf)
        for j, key in enumerate(keys):
            observed = risky[work[key].iloc[risky].notna().to_numpy()]
            if observed.size == 0:
                continue
            candidate = work.copy()
            candidate.iloc[observed, j] = None
            after = record_risk(candidate, keys, options.missing, weights, strata)
            trial[np.isin(risky, observed), j] = after[observed]
        # the lowest risk after; ties: the least important key (highest rank)
        score = trial - 1e-12 * np.asarray(rank, dtype=float)[None, :]
        choice = np.argmin(score, axis=1)
        for j in range(len(keys)):
            rows = risky[(choice == j) & np.isfinite(trial[:, j])]
            work.iloc[rows, j] = None
        risk = record_risk(work, keys, options.missing, weights, strata)
    blank = work[list(keys)].isna().to_numpy() & ~original
    published = table.copy()
    for j, key in enumerate(keys):
        if blank[:, j].any():
            published[key] = work[key] if work[key].dtype.kind in "fcM" or \
                isinstance(work[key].dtype, pd.CategoricalDtype) else \
                published[key].astype(object).where(~blank[:, j], None)
    return published, {
        "model": f"individual risk <= {options.threshold} on {list(keys)}, "
                 f"missing={options.missing!r}",
        "cells_suppressed": int(blank.sum()), "rounds": rounds,
        "risk_before": {"max": float(before.max(initial=0.0)),
                        "above": int((before > options.threshold).sum())},
        "risk_after": {"max": float(risk.max(initial=0.0)),
                       "above": int((risk > options.threshold).sum())},
        "columns": missingness_details(table, keys, blank)}
