"""Targeted record swapping (TRS) of households between the areas of a geographic hierarchy,
after sdcMicro ``recordSwap`` (Gussenbauer; C++, since sdcMicro 5.7.1; the ONS SAS code on
targeted record swapping recommended by Eurostat for the 2021 census):

1. Risk: at each level of the hierarchy a record is at risk if its combination of
   ``risk_variables`` occurs fewer than ``k`` times in its area; a household is targeted at
   the coarsest level where one of its records is at risk.
2. Targeted swaps, coarsest level first: every targeted household not yet swapped gets a
   donor household of the same ``similar`` values in another area of that level (one in
   the same parent area first), and the two exchange their geography and carried-along
   values; every member moves with its household.
3. The rate: the swap rate, counting both households of a swap, is spread over the finest
   areas (``swaprate * households / 2`` draws each, randomly rounded so that the total is
   the file's); each area whose targeted households fell short is filled with households
   drawn with probability proportional to their risk (1 / count at the finest level).

The record (details) gives the achieved swap rate overall and per level, the households
targeted and those left without a donor, and the records at risk before and after.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import _match
from ._prepare import Households, combine, level_risk, prepare
from .options import SwapHouseholds

__all__ = ["apply_record_swap", "check_donors", "decide_swap", "draws_per_area", "risk_figures",
           "risk_keys", "source_rows", "swap_details"]


def _without_donor(hh: Households, level: int) -> NDArray[np.bool_]:
    """Households no household of their profile in another area of ``level`` can match."""
    area = hh.geography[level]
    profile_count = np.bincount(hh.profile)
    cell = combine([hh.profile, area])
    return (profile_count[hh.profile] - np.bincount(cell)[cell]) == 0


def check_donors(table: pd.DataFrame, options: SwapHouseholds, hh: Households,
                 households: str) -> None:
    """Refuse a swap whose targeted households (or, untargeted, all households) have no
    possible donor, naming how many and the first."""
    target = hh.target_level()
    lonely = np.zeros(hh.count, dtype=bool)
    for level in range(len(hh.geography)):
        lonely |= (target == level) & _without_donor(hh, level)
    everyone = _without_donor(hh, len(hh.geography) - 1)
    if not lonely.any() and not (options.swaprate > 0 and everyone.all()):
        return
    bad = lonely if lonely.any() else everyone
    h = int(np.flatnonzero(bad)[0])
    row = table.iloc[int(hh.first[h])]
    values = ", ".join(f"{c}={row[c]!r}" for c in options.similar)
    where = ("households at risk" if lonely.any() else "households (all of them)")
    column = options.hierarchy[int(target[h])] if lonely.any() else options.hierarchy[-1]
    raise ValueError(f"Step {options.name!r}: {int(bad.sum())} {where} have no donor: no "
                     f"household with the same values of similar {list(options.similar)} "
                     f"lies in another area of {column!r} (first: household "
                     f"{row[households]!r}, {values}, {column}={row[column]!r}). Coarsen the "
                     "similar columns (band the household size), or lower k.")


def draws_per_area(area: NDArray[np.int64], households: int, swaprate: float,
                   rng: np.random.Generator) -> NDArray[np.int64]:
    """Swaps to draw in each finest area: ``swaprate * n_a / 2``, rounded at random so
    that they add up to the file's ``swaprate * households / 2`` (itself rounded at
    random), as sdcMicro's ``distributeDraws``."""
    n = np.bincount(area).astype(np.float64)
    wanted = swaprate * n / 2.0
    total = swaprate * households / 2.0
    total_int = int(np.floor(total)) + int(rng.random() < total - np.floor(total))
    base = np.floor(wanted).astype(np.int64)
    extra = total_int - int(base.sum())
    fraction = wanted - base
    if extra > 0 and fraction.sum() > 0:
        extra = min(extra, int((fraction > 0).sum()))
        chosen = rng.choice(n.size, size=extra, replace=False, p=fraction / fraction.sum())
        base[chosen] += 1
    return base


def _groups(hh: Households, level: int) -> tuple[_match.Groups, _match.Groups]:
    parent = hh.geography[level - 1] if level > 0 else np.zeros(hh.count, dtype=np.int64)
    far = _match.group(hh.profile)
    near = _match.group(combine([hh.profile, parent])) if level > 0 else far
    return near, far


def _swap(hh: Households, options: SwapHouseholds, rng: np.random.Generator
          ) -> tuple[NDArray[np.int64], dict[str, Any]]:
    """Every household's partner (-1: not swapped) and the counts of the swap."""
    sampled = np.zeros(hh.count, dtype=bool)
    partner = np.full(hh.count, -1, dtype=np.int64)
    target = hh.target_level()
    state = _match.stream(rng)
    pairs, unmatched = [], 0
    for level, area in enumerate(hh.geography):
        samples = rng.permutation(np.flatnonzero(target == level)).astype(np.int64)
        before = int((partner >= 0).sum())
        unmatched += _match.match(samples, area, partner, sampled, *_groups(hh, level), state)
        pairs.append((int((partner >= 0).sum()) - before) // 2)
    finest = hh.geography[-1]
    need = draws_per_area(finest, hh.count, options.swaprate, rng)
    need = np.maximum(0, need - np.bincount(finest[sampled], minlength=need.size))
    # the areas in a random order, each area's households by Efraimidis-Spirakis keys
    # (probability proportional to their risk, without replacement)
    rank = rng.permutation(need.size).astype(np.int64)
    key = -np.log(rng.random(hh.count)) / np.maximum(hh.weight, 1e-300)
    order = np.lexsort((key, rank[finest])).astype(np.int64)
    start = np.searchsorted(rank[finest][order], np.arange(need.size + 1)).astype(np.int64)
    by_rank = np.empty_like(need)
    by_rank[rank] = need
    filled = _match.fill(order, start, by_rank, finest, partner, sampled,
                         *_groups(hh, len(hh.geography) - 1), state)
    return partner, {"targeted_pairs": pairs, "targeted_unmatched": unmatched,
                     "fill_pairs": filled, "targeted": int((target >= 0).sum())}


def risk_figures(hh: Households, geography: tuple[NDArray[np.int64], ...],
                 keys: NDArray[np.int64] | None, k: int) -> list[dict[str, int]]:
    """Records and households at risk at each level with the households' areas
    ``geography`` (each household's code per level)."""
    out = []
    for area in geography:
        if keys is None or k == 0:
            out.append({"records": 0, "households": 0})
            continue
        at_risk, _ = level_risk(area[hh.member], keys, k)
        households = np.bincount(hh.member, weights=at_risk, minlength=hh.count) > 0
        out.append({"records": int(at_risk.sum()), "households": int(households.sum())})
    return out


def decide_swap(table: pd.DataFrame, options: SwapHouseholds, rng: np.random.Generator, *,
                households: str | None) -> tuple[Households, NDArray[np.int64], dict[str, Any]]:
    """The swap's decisions on ``table`` (which needs only the household id and the swap's
    columns): the household table, every household's partner (-1: not swapped) and the
    counts of the swap. Every input check runs first."""
    hh = prepare(table, options, households)
    assert households is not None
    check_donors(table, options, hh, households)
    partner, counts = _swap(hh, options, rng)
    return hh, partner, counts


def source_rows(hh: Households, partner: NDArray[np.int64]) -> NDArray[np.int64]:
    """The row each record takes its geography and carried-along values from (its
    household's partner's first record, or its own household's)."""
    source = np.where(partner >= 0, partner, np.arange(hh.count))
    return hh.first[source[hh.member]]


def swap_details(hh: Households, partner: NDArray[np.int64], counts: dict[str, Any],
                 options: SwapHouseholds, keys: NDArray[np.int64] | None) -> dict[str, Any]:
    """The step's details (see the module) from its decisions; ``keys``: each record's
    combination of the risk variables (``None`` when k = 0)."""
    source = np.where(partner >= 0, partner, np.arange(hh.count))
    after_geo = tuple(g[source] for g in hh.geography)
    after = risk_figures(hh, after_geo, keys, options.k)
    before_households = hh.risky.sum(axis=1)
    swapped = partner >= 0
    target = hh.target_level()
    levels = {}
    for level, column in enumerate(options.hierarchy):
        moved = int((after_geo[level] != hh.geography[level]).sum())
        pairs = (counts["targeted_pairs"][level]
                 + (counts["fill_pairs"] if level == len(options.hierarchy) - 1 else 0))
        levels[column] = {
            "targeted_households": int((target == level).sum()),
            "swapped_households": 2 * pairs, "moved_households": moved,
            "moved_share": moved / hh.count,
            "risky_records_before": hh.risky_records[level],
            "risky_records_after": after[level]["records"],
            "risky_households_before": int(before_households[level]),
            "risky_households_after": after[level]["households"]}
    n_swapped = int(swapped.sum())
    return {"households": hh.count, "records": int(hh.member.size),
            "swaprate": options.swaprate, "k": options.k,
            "swapped_households": n_swapped, "achieved_swaprate": n_swapped / hh.count,
            "records_swapped": int(swapped[hh.member].sum()),
            "targeted_households": counts["targeted"],
            "targeted_swapped": int((swapped & (target >= 0)).sum()),
            "targeted_without_donor": counts["targeted_unmatched"],
            "fill_pairs": counts["fill_pairs"], "levels": levels}


def risk_keys(table: pd.DataFrame, options: SwapHouseholds) -> NDArray[np.int64] | None:
    """Each record's combination of the risk variables as one code (``None`` when k = 0)."""
    if options.k == 0:
        return None
    return combine([_codes(table, c) for c in options.risk_variables])


def apply_record_swap(table: pd.DataFrame, options: SwapHouseholds, rng: np.random.Generator,
                      *, households: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Swap households between areas (see the module); returns the table with the geography
    and carried-along columns of each swapped household replaced by its partner's (every
    other column, and every row's place, unchanged) and the step's details."""
    hh, partner, counts = decide_swap(table, options, rng, households=households)
    rows = source_rows(hh, partner)
    published = table.copy()
    for column in options.columns:
        published[column] = pd.Series(table[column].to_numpy()[rows], index=table.index,
                                      name=column, dtype=table[column].dtype)
    return published, swap_details(hh, partner, counts, options, risk_keys(table, options))


def _codes(table: pd.DataFrame, column: str) -> NDArray[np.int64]:
    from ._prepare import codes

    return codes(table[column])
