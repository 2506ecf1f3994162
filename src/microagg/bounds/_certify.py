"""Certified bound by supergradient ascent on the anchored Lagrangian bound (validation
assumed done)."""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from ._pricing import anchored_bound, knn_table


def ascend(X: NDArray[np.float64], k: int, duals: NDArray[np.float64] | None, target: float,
           time_limit: float) -> tuple[float, int]:
    """Largest :func:`anchored_bound` found, and the number of evaluations.

    Every value evaluated is a proved bound (it holds for any ``u``), so the search is free to
    be heuristic: it starts from the best of the k-NN point ``u_i = T_i(k-1)/(2k)`` (where
    the bound is at least close to the k-NN bound), the LP duals and two mixtures of them,
    then follows supergradients with Polyak steps towards ``target`` (the best known SSE),
    halving the step after five steps without progress and stopping once it is below
    1e-4 of the Polyak step.
    """
    start = time.perf_counter()
    table = knn_table(X, k)
    u0 = table[:, k - 1] / (2.0 * k)
    starts = [u0] if duals is None else [u0, 0.75 * u0 + 0.25 * duals,
                                          0.5 * u0 + 0.5 * duals, duals]
    best, u, grad, evals = -np.inf, u0, np.zeros_like(u0), 0
    for cand in starts:
        value, g = anchored_bound(X, cand, table, k)
        evals += 1
        if value > best:
            best, u, grad = value, cand, g
    cur, stall, lam = best, 0, 0.05
    while time.perf_counter() - start < time_limit and lam > 1e-4:
        norm = float((grad * grad).sum())
        if norm <= 0.0 or target <= cur:
            break
        u = u + lam * (target - cur) / norm * grad
        cur, grad = anchored_bound(X, u, table, k)
        evals += 1
        if cur > best + 1e-12 * abs(best):
            best, stall = cur, 0
        else:
            stall += 1
            if stall >= 5:
                lam, stall = lam / 2.0, 0
    return best, evals
