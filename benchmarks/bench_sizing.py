"""Calibrate the cost model of :mod:`microagg._runtime.sizing` (issue 18, item 8) on this machine.

    python benchmarks/bench_sizing.py          # about 1 minute on 2 cores

Times exact MDAV on standard normal data (seed 0) for several n, p, k and blocked MDAV (kd
blocks of 10,000) on 200,000 records, median of 3 runs (1 for blocked), and prints each time
next to the model's estimate and the constants a least-squares fit would give. Run it on an
idle machine: a loaded one slows numba's parallel distance passes far more than linearly.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from _machine import machine
from microagg._runtime import sizing as _sizing
from microagg.partition import mdav
from microagg.partition.blocking import blocked_partition

EXACT = [(10_000, 10, 5), (20_000, 10, 5), (40_000, 10, 5), (20_000, 3, 5), (20_000, 30, 5),
         (20_000, 10, 10)]
BLOCKED = [(200_000, 10, 5), (200_000, 3, 5)]


def _median_seconds(run: Callable[[np.ndarray, int], object], n: int, p: int, k: int,
                    repeats: int) -> float:
    X = np.random.default_rng(0).normal(size=(n, p))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(X, k)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print(machine())
    mdav(np.zeros((10, 2)), 2)  # load the kernels
    blocked_partition(np.random.default_rng(0).normal(size=(30_000, 2)), 5)
    width = _sizing.FEATURE_OFFSET
    print(f"{'run':<26}{'seconds':>9}{'model':>9}  constant")
    fits = []
    for n, p, k in EXACT:
        seconds = _median_seconds(mdav, n, p, k, 3)
        model = _sizing.estimate(n, p, k).exact
        fits.append(seconds / (n * n * (p + width) / k))
        print(f"exact {n:>7,} x {p:<3} k={k:<4}{seconds:>9.3f}{model:>9.3f}  {fits[-1]:.3g}")
    blocked_fits = []
    for n, p, k in BLOCKED:
        seconds = _median_seconds(lambda X, k: blocked_partition(X, k, blocking="kd"),
                                  n, p, k, 1)
        model = _sizing.estimate(n, p, k).blocked
        blocked_fits.append(seconds / (n * 10_000 * (p + width) / k))
        print(f"blocked {n:>5,} x {p:<3} k={k:<4}{seconds:>9.3f}{model:>9.3f}  "
              f"{blocked_fits[-1]:.3g}")
    print(f"median fit: EXACT_SECONDS = {statistics.median(fits):.2g} "
          f"(in use {_sizing.EXACT_SECONDS:.2g}); BLOCKED_SECONDS = "
          f"{statistics.median(blocked_fits):.2g} (in use {_sizing.BLOCKED_SECONDS:.2g})")


if __name__ == "__main__":
    main()
