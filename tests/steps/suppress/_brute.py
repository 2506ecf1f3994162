"""Independent class sizes and brute-force minimal suppression for the tests."""

from __future__ import annotations

import numpy as np


def sizes(cur: np.ndarray, missing: str) -> np.ndarray:
    """Class sizes by pairwise comparison (sdcMicro's freqCalc rule for "any")."""
    a, b = cur[:, None, :], cur[None, :, :]
    if missing == "category":
        return (a == b).all(2).sum(1)
    match = ((a == b) | (a < 0) | (b < 0)).all(2)
    if cur.shape[1] > 1:
        match[np.ix_((cur >= 0).all(1), (cur < 0).all(1))] = False
    return match.sum(1)


def minimal(codes: np.ndarray, k: int, missing: str) -> int:
    """The fewest cells to blank (depth-first search by budget, symmetric records ordered)."""
    c = codes[np.lexsort(codes.T[::-1])]
    n, d = c.shape
    ones = [bin(s).count("1") for s in range(2 ** d)]

    def search(i: int, budget: int, prev: int, cur: np.ndarray) -> bool:
        if i == n:
            return bool(sizes(cur, missing).min() >= k)
        low = prev if i > 0 and (c[i] == c[i - 1]).all() else 0
        for s in range(low, 2 ** d):
            if ones[s] > budget:
                continue
            cur[i] = [-1 if s >> j & 1 else c[i, j] for j in range(d)]
            if search(i + 1, budget - ones[s], s, cur):
                return True
        cur[i] = c[i]
        return False

    for budget in range(n * d + 1):
        if search(0, budget, 0, c.copy()):
            return budget
    raise AssertionError("unreachable")
