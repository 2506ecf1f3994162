"""Survey disclosure risk (issue 19, part 1): frequencies, individual and household risk.

    python benchmarks/bench_survey_risk.py

Rows: laeken's eusilc (14,827 records, keys db040, hsize, rb090, pb220a, pl030, weight rb050,
household db030; once with the missing pl030 / pb220a as a category, once with sdcMicro's
wildcard rule), eusilc x 10 (148,270 records, household ids made distinct per copy) and a
synthetic 1,000,000 x 5 table (keys of 9, 10, 2, 3 and 8 categories, 5 % missing in one key,
households of 1-5 members, weights 50-1,000). Median of 5 runs of ``survey_risk`` (frequencies,
individual risk, household risk, summary). sdcMicro 5.8.1 (issue 19, same kind of machine):
0.89 s on eusilc, 3.59 s on eusilc x 10.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from _machine import machine
from microagg.datasets import load_dataset
from microagg.metrics.survey_risk import survey_risk

KEYS = ["db040", "hsize", "rb090", "pb220a", "pl030"]


def _synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    status = rng.integers(1, 9, n).astype(float)
    status[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame({
        "region": rng.integers(0, 9, n), "size": rng.integers(1, 11, n),
        "sex": rng.choice(["f", "m"], n), "citizen": rng.choice(["AT", "EU", "Other"], n),
        "status": status, "w": rng.uniform(50, 1000, n),
        "hid": np.repeat(np.arange(n), rng.integers(1, 6, n))[:n]})


def _median_time(df: pd.DataFrame, keys: list[str], *, weights: str, households: str,
                 missing: str, runs: int = 5) -> tuple[float, float]:
    times, global_risk = [], 0.0
    for _ in range(runs):
        start = time.perf_counter()
        res = survey_risk(df, keys, weights=weights, households=households, missing=missing)
        global_risk = res.summary()["global_risk"]
        times.append(time.perf_counter() - start)
    return float(np.median(times)), global_risk


def main() -> None:
    eusilc = load_dataset("eusilc").data
    copies = []
    for i in range(10):
        part = eusilc.copy()
        part["db030"] = part["db030"] + i * 1_000_000
        copies.append(part)
    eusilc10 = pd.concat(copies, ignore_index=True)
    synthetic = _synthetic(1_000_000)
    synthetic_keys = ["region", "size", "sex", "citizen", "status"]
    cases = [
        ("eusilc", eusilc, KEYS, "rb050", "db030", "category", "0.89"),
        ("eusilc", eusilc, KEYS, "rb050", "db030", "any", "0.89"),
        ("eusilc x 10", eusilc10, KEYS, "rb050", "db030", "category", "3.59"),
        ("eusilc x 10", eusilc10, KEYS, "rb050", "db030", "any", "3.59"),
        ("synthetic", synthetic, synthetic_keys, "w", "hid", "category", "-"),
        ("synthetic", synthetic, synthetic_keys, "w", "hid", "any", "-"),
    ]
    print(machine())
    print(f"{'data':<12} {'rows':>9} {'missing':>8} {'median s':>9} {'sdcMicro s':>10} "
          f"{'global risk':>12}")
    for name, df, keys, w, hid, missing, sdc in cases:
        seconds, risk = _median_time(df, keys, weights=w, households=hid, missing=missing)
        print(f"{name:<12} {len(df):>9,} {missing:>8} {seconds:>9.3f} {sdc:>10} {risk:>12.10f}")


if __name__ == "__main__":
    main()
