"""The matching kernels of targeted record swapping (numba): each sampled household is
paired with an unused donor household of the same similarity profile in another area of the
level, drawn at random from the donors of its parent area first, then from the whole file
(sdcMicro ``recordSwap``'s donor search, with its ``similar`` profile).

The kernels draw from numba's own generator, seeded from the caller's
:class:`numpy.random.Generator` (:func:`seed`), so one ``random_state`` gives one result.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["Groups", "fill", "group", "match", "seed"]

TRIES = 16
"""Random draws from a donor group before it is scanned in full."""


@njit(cache=True)
def _seed(value: int) -> None:  # pragma: no cover - compiled
    np.random.seed(value)


def seed(rng: np.random.Generator) -> None:
    """Seed the kernels' generator from ``rng``."""
    _seed(int(rng.integers(0, 2**31 - 1)))


Groups = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]
"""Households sorted by a key, and each household's range ``[lo, hi)`` of its key."""


def group(key: NDArray[np.int64]) -> Groups:
    """Every household's group of the same ``key`` as a range of a sorted array."""
    order = np.argsort(key, kind="stable").astype(np.int64)
    ordered = key[order]
    lo = np.searchsorted(ordered, key, "left").astype(np.int64)
    hi = np.searchsorted(ordered, key, "right").astype(np.int64)
    return order, lo, hi


@njit(cache=True)
def _draw(members: NDArray[np.int64], lo: int, hi: int, h: int, area: NDArray[np.int64],
          used: NDArray[np.bool_]) -> int:  # pragma: no cover - compiled
    n = hi - lo
    if n <= 1:
        return -1
    for _ in range(TRIES):
        j = members[lo + np.random.randint(n)]
        if not used[j] and area[j] != area[h]:
            return j
    start = np.random.randint(n)
    for t in range(n):
        j = members[lo + (start + t) % n]
        if not used[j] and area[j] != area[h]:
            return j
    return -1


@njit(cache=True)
def _donor(h: int, area: NDArray[np.int64], used: NDArray[np.bool_],
           near: NDArray[np.int64], near_lo: NDArray[np.int64], near_hi: NDArray[np.int64],
           far: NDArray[np.int64], far_lo: NDArray[np.int64], far_hi: NDArray[np.int64]
           ) -> int:  # pragma: no cover - compiled
    d = _draw(near, near_lo[h], near_hi[h], h, area, used)
    if d < 0:
        d = _draw(far, far_lo[h], far_hi[h], h, area, used)
    return d


@njit(cache=True)
def _match(samples: NDArray[np.int64], area: NDArray[np.int64], used: NDArray[np.bool_],
           partner: NDArray[np.int64], sampled: NDArray[np.bool_],
           near: NDArray[np.int64], near_lo: NDArray[np.int64], near_hi: NDArray[np.int64],
           far: NDArray[np.int64], far_lo: NDArray[np.int64], far_hi: NDArray[np.int64]
           ) -> int:  # pragma: no cover - compiled
    unmatched = 0
    for h in samples:
        if used[h]:
            continue
        d = _donor(h, area, used, near, near_lo, near_hi, far, far_lo, far_hi)
        if d < 0:
            unmatched += 1
            continue
        used[h] = True
        used[d] = True
        partner[h] = d
        partner[d] = h
        sampled[h] = True
    return unmatched


def match(samples: NDArray[np.int64], area: NDArray[np.int64], used: NDArray[np.bool_],
          partner: NDArray[np.int64], sampled: NDArray[np.bool_], near: Groups,
          far: Groups) -> int:
    """Pair each of ``samples`` (in order) not used yet with a donor (see the module);
    ``used``, ``partner`` and ``sampled`` are updated in place. Returns how many found no
    donor."""
    return int(_match(samples, area, used, partner, sampled, *near, *far))


@njit(cache=True)
def _fill(order: NDArray[np.int64], start: NDArray[np.int64], areas: NDArray[np.int64],
          need: NDArray[np.int64], area: NDArray[np.int64], used: NDArray[np.bool_],
          partner: NDArray[np.int64], sampled: NDArray[np.bool_],
          near: NDArray[np.int64], near_lo: NDArray[np.int64], near_hi: NDArray[np.int64],
          far: NDArray[np.int64], far_lo: NDArray[np.int64], far_hi: NDArray[np.int64]
          ) -> int:  # pragma: no cover - compiled
    pairs = 0
    for a in areas:
        left = need[a]
        i = start[a]
        while left > 0 and i < start[a + 1]:
            h = order[i]
            i += 1
            if used[h]:
                continue
            d = _donor(h, area, used, near, near_lo, near_hi, far, far_lo, far_hi)
            if d < 0:
                continue
            used[h] = True
            used[d] = True
            partner[h] = d
            partner[d] = h
            sampled[h] = True
            left -= 1
            pairs += 1
    return pairs


def fill(order: NDArray[np.int64], start: NDArray[np.int64], areas: NDArray[np.int64],
         need: NDArray[np.int64], area: NDArray[np.int64], used: NDArray[np.bool_],
         partner: NDArray[np.int64], sampled: NDArray[np.bool_], near: Groups, far: Groups
         ) -> int:
    """In each finest area (in the order ``areas``), pair its households in ``order``
    (``order[start[a]:start[a + 1]]``, the sampling order) until ``need[a]`` pairs are
    made; returns the pairs made."""
    return int(_fill(order, start, areas, need, area, used, partner, sampled, *near, *far))
