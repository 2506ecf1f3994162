"""Speed of SUDA2 (``microagg.metrics.suda.suda2``) against the issue's targets.

Prints a table (data x rows x keys x seconds x total SUDA score x target) and the process'
peak resident memory after the largest run.

    python benchmarks/bench_suda.py

Data: eusilc (laeken) with the keys db040, hsize, rb090, pb220a, pl030; eusilc stacked 10
times (148,270 rows; target < 0.3 s, sdcMicro 0.39 s); and 1,000,000 random records on 5
keys with eusilc's cardinalities (9, 9, 2, 3, 7; 18% missing on the last two; seed 0;
target < 3 s). Each time is the best of 3 runs after one warm-up (compilation) run.
"""

from __future__ import annotations

import resource
import time

import numpy as np
import pandas as pd

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg.datasets import load_dataset
from microagg.metrics.suda import suda2

KEYS = ["db040", "hsize", "rb090", "pb220a", "pl030"]


def best_of(df: pd.DataFrame, keys: list[str], repeat: int = 3) -> tuple[float, float]:
    times, total = [], 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        result = suda2(df, keys)
        times.append(time.perf_counter() - t)
        total = result.summary()["score_sum"]
    return min(times), total


def random_table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {}
    for name, levels in zip(KEYS, (9, 9, 2, 3, 7), strict=True):
        values = rng.integers(0, levels, size=n).astype(float)
        if name in ("pb220a", "pl030"):
            values[rng.random(n) < 0.18] = np.nan
        columns[name] = values
    return pd.DataFrame(columns)


def main() -> None:
    print(machine())
    eusilc = load_dataset("eusilc").data
    suda2(eusilc, KEYS)  # compile
    cases = [("eusilc", eusilc, "sdcMicro 0.04 s"),
             ("eusilc x 10", pd.concat([eusilc] * 10, ignore_index=True), "< 0.3 s"),
             ("random", random_table(1_000_000), "< 3 s")]
    print(f"{'data':<12} {'rows':>9} {'keys':>4} {'seconds':>8} {'score sum':>10}  target")
    for name, df, target in cases:
        seconds, total = best_of(df, KEYS)
        print(f"{name:<12} {len(df):>9,} {len(KEYS):>4} {seconds:>8.3f} {total:>10.0f}  {target}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
