"""Speed of the log-linear risk of the key table (``microagg.metrics.loglinear_risk``,
sdcMicro's ``modRisk``) on eusilc, for each method and for a model with an interaction.

Prints a table (data x rows x method x formula x cells x seconds x tau1 x tau2).

    python benchmarks/bench_loglinear.py

Data: eusilc (laeken) with the keys db040, hsize, rb090, pb220a, pl030 and the weights
rb050 (3,402 cells); eusilc stacked 10 times (148,270 rows, weights divided by 10 so that the
population stays the same). Each time is the best of 3 runs (the file read once).
"""

from __future__ import annotations

import time

import pandas as pd

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg.datasets import load_dataset
from microagg.metrics.loglinear_risk import loglinear_risk

KEYS = ["db040", "hsize", "rb090", "pb220a", "pl030"]
CASES = [("default", None), ("CE", None), ("PML", None), ("weightedLLM", None),
         ("default", "db040*hsize + rb090 + pb220a + pl030")]


def best_of(df: pd.DataFrame, method: str, formula: str | None, repeat: int = 3
            ) -> tuple[float, dict]:
    times, summary = [], {}
    for _ in range(repeat):
        t = time.perf_counter()
        summary = loglinear_risk(df, KEYS, weights="rb050", method=method,
                                 formula=formula).summary()
        times.append(time.perf_counter() - t)
    return min(times), summary


def main() -> None:
    print(machine())
    eusilc = load_dataset("eusilc").data
    stacked = pd.concat([eusilc] * 10, ignore_index=True)
    stacked["rb050"] = (stacked["rb050"] / 10).clip(lower=1.0)
    print(f"{'data':<12} {'rows':>8} {'method':<12} {'cells':>6} {'seconds':>8} "
          f"{'tau1':>9} {'tau2':>8}  formula")
    for name, df in (("eusilc", eusilc), ("eusilc x 10", stacked)):
        for method, formula in CASES:
            seconds, s = best_of(df, method, formula)
            print(f"{name:<12} {len(df):>8,} {method:<12} {s['n_cells']:>6,} {seconds:>8.3f} "
                  f"{s['tau1']:>9.4g} {s['tau2']:>8.4g}  {s['formula']}")


if __name__ == "__main__":
    main()
