"""The matching kernels of targeted record swapping (numba): each sampled household is
paired with an unused donor household of the same similarity profile in another area of the
level, drawn at random from the donors of its parent area first, then from the whole file
(sdcMicro ``recordSwap``'s donor search, with its ``similar`` profile).

The kernels draw from a SplitMix64 stream (Steele, Lea & Flood 2014, OOPSLA) whose state is
seeded from the caller's :class:`numpy.random.Generator`, so one ``random_state`` gives one
result and no global generator is touched.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["Groups", "fill", "group", "match", "stream"]

TRIES = 16
"""Random draws from a donor group before it is scanned in full."""

Groups = NDArray[np.int64]
"""``(3, h)``: households sorted by a key, and each household's range ``[lo, hi)`` of its
key in that order."""


def group(key: NDArray[np.int64]) -> Groups:
    """Every household's group of the same ``key`` as a range of a sorted array."""
    order = np.argsort(key, kind="stable").astype(np.int64)
    ordered = key[order]
    return np.stack([order, np.searchsorted(ordered, key, "left"),
                     np.searchsorted(ordered, key, "right")]).astype(np.int64)


def stream(rng: np.random.Generator) -> NDArray[np.uint64]:
    """A kernel generator's state, drawn from ``rng``."""
    return rng.integers(0, 2**63 - 1, size=1, dtype=np.int64).astype(np.uint64)


@njit(cache=True)
def _below(state: NDArray[np.uint64], n: int) -> int:  # pragma: no cover - compiled
    """A draw in 0..n-1 (SplitMix64; modulo bias below 2**-40 for n < 2**24)."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int(z % np.uint64(n))


@njit(cache=True)
def _draw(groups: NDArray[np.int64], h: int, area: NDArray[np.int64],
          partner: NDArray[np.int64], state: NDArray[np.uint64]) -> int:  # pragma: no cover
    lo, n = groups[1, h], groups[2, h] - groups[1, h]
    if n <= 1:
        return -1
    for _ in range(TRIES):
        j = groups[0, lo + _below(state, n)]
        if partner[j] < 0 and area[j] != area[h]:
            return j
    start = _below(state, n)
    for t in range(n):
        j = groups[0, lo + (start + t) % n]
        if partner[j] < 0 and area[j] != area[h]:
            return j
    return -1


@njit(cache=True)
def _pair(h: int, area: NDArray[np.int64], partner: NDArray[np.int64],
          sampled: NDArray[np.bool_], near: NDArray[np.int64], far: NDArray[np.int64],
          state: NDArray[np.uint64]) -> bool:  # pragma: no cover - compiled
    d = _draw(near, h, area, partner, state)
    if d < 0:
        d = _draw(far, h, area, partner, state)
    if d < 0:
        return False
    partner[h] = d
    partner[d] = h
    sampled[h] = True
    return True


@njit(cache=True)
def _match(samples: NDArray[np.int64], area: NDArray[np.int64], partner: NDArray[np.int64],
           sampled: NDArray[np.bool_], near: NDArray[np.int64], far: NDArray[np.int64],
           state: NDArray[np.uint64]) -> int:  # pragma: no cover - compiled
    unmatched = 0
    for h in samples:
        if partner[h] < 0 and not _pair(h, area, partner, sampled, near, far, state):
            unmatched += 1
    return unmatched


def match(samples: NDArray[np.int64], area: NDArray[np.int64], partner: NDArray[np.int64],
          sampled: NDArray[np.bool_], near: Groups, far: Groups,
          state: NDArray[np.uint64]) -> int:
    """Pair each of ``samples`` (in order) not swapped yet (``partner < 0``) with a donor
    (see the module); ``partner`` and ``sampled`` are updated in place. Returns how many
    found no donor."""
    return int(_match(samples, area, partner, sampled, near, far, state))


@njit(cache=True)
def _fill(order: NDArray[np.int64], start: NDArray[np.int64], need: NDArray[np.int64],  # noqa: PLR0913 - numba kernel: arrays, not objects
          area: NDArray[np.int64], partner: NDArray[np.int64], sampled: NDArray[np.bool_],
          near: NDArray[np.int64], far: NDArray[np.int64], state: NDArray[np.uint64]
          ) -> int:  # pragma: no cover
    pairs = 0
    for a in range(need.size):
        left, i = need[a], start[a]
        while left > 0 and i < start[a + 1]:
            h = order[i]
            i += 1
            if partner[h] < 0 and _pair(h, area, partner, sampled, near, far, state):
                left -= 1
                pairs += 1
    return pairs


def fill(order: NDArray[np.int64], start: NDArray[np.int64], need: NDArray[np.int64],  # noqa: PLR0913 - the kernel's arrays
         area: NDArray[np.int64], partner: NDArray[np.int64], sampled: NDArray[np.bool_],
         near: Groups, far: Groups, state: NDArray[np.uint64]
         ) -> int:
    """In each finest area ``a`` (in the order of ``need``, which the caller permutes),
    pair its households in the order ``order[start[a]:start[a + 1]]`` (the sampling order)
    until ``need[a]`` pairs are made; returns the pairs made."""
    return int(_fill(order, start, need, area, partner, sampled, near, far, state))
