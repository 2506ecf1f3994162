"""The exact mode against brute-force minimal suppression on small random tables; the
heuristic never below the optimum and always k-anonymous."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.steps.suppress.exact import exact_blanks
from microagg.steps.suppress.heuristic import greedy_blanks

from ._brute import minimal, sizes


def _cases(seed: int, count: int) -> list[tuple[np.ndarray, int, str]]:
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        n, d, k = int(rng.integers(8, 11)), int(rng.integers(2, 4)), int(rng.integers(2, 4))
        codes = rng.integers(0, int(rng.integers(2, 4)), (n, d))
        missing = ("any", "category")[len(cases) % 2]
        if greedy_blanks(codes, k, missing, np.arange(d)).sum() <= 5:  # brute force stays fast
            cases.append((codes, k, missing))
    return cases


@pytest.mark.parametrize("codes,k,missing", _cases(7, 14))
def test_exact_equals_brute_force(codes: np.ndarray, k: int, missing: str) -> None:
    best = minimal(codes, k, missing)
    mask, info = exact_blanks(codes, [(tuple(range(codes.shape[1])), k)], missing, 20.0)
    assert int(mask.sum()) == best
    assert info["optimal"] and info["lower_bound"] == best and info["gap"] == 0.0
    assert sizes(np.where(mask, -1, codes), missing).min() >= k
    heuristic = greedy_blanks(codes, k, missing, np.arange(codes.shape[1]))
    assert int(heuristic.sum()) >= best
    assert sizes(np.where(heuristic, -1, codes), missing).min() >= k


def test_one_blank_rescues_every_unique_record() -> None:
    # Worked by hand: (a_t, x) unique for t = 0..3 and three records (b, x); blanking the
    # first key of ONE record makes it (*, x), which matches every record under "any", so
    # every class reaches 2 (k = 2): 1 cell, where blanking each unique record costs 4.
    codes = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [4, 0], [4, 0], [4, 0]])
    mask, info = exact_blanks(codes, [((0, 1), 2)], "any", 10.0)
    assert int(mask.sum()) == 1 and info["optimal"]
    assert sizes(np.where(mask, -1, codes), "any").min() >= 2
