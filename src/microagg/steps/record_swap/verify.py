"""The verifier of targeted record swapping: from the original and the published table
alone (and, when given, the step's record), it checks that every household moved as a whole
(its geography and carried-along values one per household), that the published geography
still nests (no district in two regions), and that the swaps kept the similarity profiles:
the multiset of (similar values, geography, carried-along values) over households is the
original's, which holds exactly when every household took the place of one of its own
profile. It reports the achieved swap rate per level and the records at risk before and
after (sdcMicro ``recordSwap``'s k-anonymity rule, counts within each area).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._prepare import Households, codes, combine, nesting_problem, prepare
from .core import risk_figures
from .options import SwapHouseholds

__all__ = ["household_report", "verify_record_swap"]


def _common(before: pd.Series, after: pd.Series) -> tuple[NDArray[np.int64],
                                                         NDArray[np.int64]]:
    """Codes of both columns in one coding (numbers as floats; else as text)."""
    def plain(series: pd.Series) -> pd.Series:
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            return series.astype(np.float64).reset_index(drop=True)
        return series.astype(object).where(series.notna(), None).map(
            lambda v: v if v is None else str(v)).reset_index(drop=True)
    a, b = plain(before), plain(after)
    if a.dtype != b.dtype:
        a, b = a.astype(object).map(str), b.astype(object).map(str)
    found = codes(pd.concat([a, b], ignore_index=True))
    return found[:len(a)], found[len(a):]


def verify_record_swap(options: SwapHouseholds, original: pd.DataFrame,
                       published: pd.DataFrame, *, households: str,
                       details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Check the swap on the output (see the module); ``published`` carries the household
    id column of ``original`` row by row."""
    hh = prepare(original, options, households)
    before, after, inconsistent = [], [], 0
    for column in options.columns:
        a, b = _common(original[column], published[column])
        inconsistent += int(np.unique(hh.member[b != b[hh.first[hh.member]]]).size)
        before.append(a[hh.first])
        after.append(b[hh.first])
        del a, b
    similar_kept = True
    for column in options.similar:
        a, b = _common(original[column], published[column])
        similar_kept &= bool(np.array_equal(a, b))
    keys = (combine([codes(original[c]) for c in options.risk_variables])
            if options.k > 0 else None)
    return household_report(options, hh, before, after, inconsistent=inconsistent,
                            similar_kept=similar_kept, keys=keys, details=details)


def household_report(options: SwapHouseholds, hh: Households,
                     before: Sequence[NDArray[np.int64]], after: Sequence[NDArray[np.int64]],
                     *, inconsistent: int, similar_kept: bool,
                     keys: NDArray[np.int64] | None,
                     details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The verifier's report from the household table of the original (``hh``), each of
    the step's columns (:attr:`SwapHouseholds.columns`) per household before and after
    (one coding for both), the households whose published values vary
    (``inconsistent``), whether the similarity columns are unchanged, and each record's
    risk-variable combination: what the in-memory and the file engines both check."""
    report: dict[str, Any] = {"model": "targeted record swapping: whole households "
                              "exchanged their geography with a household of the same "
                              "similarity profile; not k-anonymity, not differential privacy"}
    levels_at = [options.columns.index(c) for c in options.hierarchy]
    geography = [(before[j], after[j]) for j in levels_at]
    labels = [pd.Series(np.arange(int(g[1].max(initial=0)) + 1)) for g in geography]
    problem = nesting_problem([g[1] for g in geography], labels, options.hierarchy)
    # one code per (profile, values) over the households before and after: the same
    # multiset before and after exactly when every household took one of its profile's place
    h = hh.count
    kind = combine([np.concatenate([hh.profile, hh.profile]),
                    *(np.concatenate([b, a]) for b, a in zip(before, after, strict=True))])
    size = int(kind.max(initial=-1)) + 1
    profiles_kept = bool(np.array_equal(np.bincount(kind[:h], minlength=size),
                                        np.bincount(kind[h:], minlength=size)))
    moved_any = np.zeros(h, dtype=bool)
    for b, a in zip(before, after, strict=True):
        moved_any |= b != a
    after_geo = tuple(combine([g[1]]) for g in geography)
    risk_after = risk_figures(hh, after_geo, keys, options.k)
    levels = {}
    for level, column in enumerate(options.hierarchy):
        moved = int((geography[level][0] != geography[level][1]).sum())
        levels[column] = {"moved_households": moved, "moved_share": moved / hh.count,
                          "risky_records_before": hh.risky_records[level],
                          "risky_records_after": risk_after[level]["records"]}
    swapped = int(moved_any.sum())
    report.update(households=hh.count, swapped_households=swapped,
                  achieved_swaprate=swapped / hh.count, swaprate=options.swaprate,
                  households_split=inconsistent, hierarchy_nested=problem is None,
                  similar_unchanged=similar_kept, profiles_kept=profiles_kept, levels=levels)
    holds = inconsistent == 0 and problem is None and similar_kept and profiles_kept
    if details is not None and "swapped_households" in details:
        # two swapped households lie in different finest areas: every swap is seen
        matches = swapped == int(details["swapped_households"])
        report["matches_record"] = bool(matches)
        holds = holds and matches
    report["holds"] = bool(holds)
    return report
