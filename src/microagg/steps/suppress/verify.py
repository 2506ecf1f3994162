"""Verifiers of the suppression steps: each promise re-derived from the published table
(and, for "only cells blanked", the original), counted independently of the step's code."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...metrics.survey_risk import frequencies
from .options import SuppressRisk, SuppressToK

__all__ = ["verify_suppress", "verify_suppress_risk"]


def _only_blanked(options: Any, original: pd.DataFrame, published: pd.DataFrame) -> int:
    """Records whose keys changed by anything but a value set missing (or rows changed)."""
    if len(original) != len(published) or not original.index.equals(published.index):
        return max(len(original), len(published))
    bad = np.zeros(len(original), dtype=bool)
    for key in options.keys:
        a, b = original[key].astype(object), published[key].astype(object)
        same = (a == b) | (a.isna() & b.isna())
        bad |= ~(same | b.isna()).to_numpy()
    return int(bad.sum())


def verify_suppress(options: SuppressToK, original: pd.DataFrame, published: pd.DataFrame,
                    *, households: str | None = None, weights: str | None = None,
                    strata: str | None = None) -> dict[str, Any]:
    """Recount every required subset of keys on the published table under the named missing
    semantics (sdcMicro's ``freqCalc`` rule for ``"any"``), within strata, and check that
    only key cells were blanked, no row dropped, and household-level keys stay constant
    within households."""
    del weights
    subsets = []
    for subset, k in options.requirements:
        names = [options.keys[j] for j in subset]
        fk = frequencies(published, names, missing=options.missing, strata=strata)[0]
        achieved = int(fk.min(initial=len(published)))
        subsets.append({"keys": names, "k": k, "achieved": achieved,
                        "violating": int((fk < k).sum())})
    changed = _only_blanked(options, original, published)
    varying = 0
    for key in options.household_keys if households is not None else ():
        varying += int((published.groupby(households)[key]
                        .nunique(dropna=False) > 1).sum())
    cells = int(sum((published[key].isna() & original[key].notna()).sum()
                    for key in options.keys)) if not changed else None
    return {"model": f"k-anonymity on every required subset of {list(options.keys)} with "
                     f"missing={options.missing!r} (a missing value "
                     f"{'matches any value' if options.missing == 'any' else 'is a category'})"
                     f"{'' if strata is None else f', within strata {strata!r}'}",
            "holds": all(s["violating"] == 0 for s in subsets) and changed == 0
            and varying == 0,
            "subsets": subsets, "records_changed_otherwise": changed,
            "households_varying": varying, "cells_suppressed": cells}


def verify_suppress_risk(options: SuppressRisk, original: pd.DataFrame,
                         published: pd.DataFrame, *, households: str | None = None,
                         weights: str | None = None, strata: str | None = None
                         ) -> dict[str, Any]:
    """Recompute every record's individual risk on the published table and check it is at
    most the threshold, and that only key cells were blanked."""
    del households
    from ...metrics.survey_risk import individual_risk

    fk, Fk = frequencies(published, list(options.keys), weights=weights,
                         missing=options.missing, strata=strata)
    risk = individual_risk(fk, Fk)
    changed = _only_blanked(options, original, published)
    above = int((risk > options.threshold).sum())
    return {"model": f"individual risk <= {options.threshold} on {list(options.keys)} with "
                     f"missing={options.missing!r}",
            "holds": above == 0 and changed == 0, "max_risk": float(risk.max(initial=0.0)),
            "above_threshold": above, "records_changed_otherwise": changed}
