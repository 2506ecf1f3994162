"""The full measure set of a release, part by part: its time on eusilc and on synthetic rows
(10^6 by default), from the release's own ``timings``, with the release's total beside it;
and ``microagg risk``'s figures on the same raw file with and without its attacks.

    python benchmarks/bench_measure_set.py [--eusilc PATH] [--rows 1000000] [--runs 2]

The measure set of one in-memory release with a sampling weight and a household id (beside
it, ``validate``, and the masking: a plan's ``steps``, or ``partition`` and ``aggregate``):

- ``measure``: the information-loss metrics (SSE/SST, IL1s, NCP, moments, group sizes,
  homogeneity of the sensitive column); a release whose keys have missing values measures
  each missing pattern inside ``partition_and_aggregate`` instead (no ``measure`` key);
- ``survey_risk``: the individual, global and household risk, SUDA2, the population figures
  (k-map, journalist, marketer) and the main-effects log-linear model, before and after;
- ``analysis_utility``: the release's default analyses (weighted totals and means, pMSE);
- ``attacks``: singling out, linkability and the inference of the sensitive column on 2,000
  attacked records, against the leave-one-out control.

1. eusilc (``--eusilc``, skipped with a line when absent): the keys of docs/board.md
   (db040, hsize, rb090, pb220a, pl030), the weight rb050 (kept), the household db030, the
   sensitive eqIncome; ``k = 3`` by the default microaggregation (MAGE).
2. ``--rows`` synthetic records, households of two, the same five kinds of keys (region 9,
   hsize 1-6, sex, citizenship 3, status 7; all codes), a weight by region (kept), the
   sensitive health (4 codes); ``k = 3`` by local suppression (``SuppressToK``): MAGE on
   these keys took 3 s at 10^5 rows and 79 s at 2 x 10^5, too long at 10^6. Not a continuous sensitive column: the l-diversity counts of
   the measure stage (``models._l_diversity.class_counts``) are a dense classes x values
   matrix, about 6.7 GB at 50,000 rows with a continuous income and terabytes at 10^6.

For each, the first release in the process (numba kernels loaded) and ``--runs`` more; and
``file_risk`` (``microagg risk``'s figures: survey risk, risky cells, population figures,
SUDA2) on the raw file with the attacks and without.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

import microagg
from _machine import machine
from microagg.cli._risk_attacks import RiskAttacks
from microagg.cli.risk import file_risk
from microagg.steps import Plan, SuppressToK

KEYS = ["db040", "hsize", "rb090", "pb220a", "pl030"]
EUSILC = [*KEYS, "db030", "eqIncome", "rb050"]
PARTS = ("validate", "steps", "partition", "aggregate", "partition_and_aggregate", "publish",
         "verify", "measure", "survey_risk", "analysis_utility", "attacks")


def synthetic(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` persons in households of two, eusilc's kinds of keys, a weight by region."""
    hh = np.repeat(np.arange(n // 2 + 1), 2)[:n]
    region = rng.integers(0, 9, n // 2 + 1)[hh]
    return pd.DataFrame({
        "db030": hh, "db040": np.array([f"R{i}" for i in range(9)])[region],
        "hsize": rng.integers(1, 7, n // 2 + 1)[hh].astype(str), "rb090": rng.choice(["f", "m"], n),
        "pb220a": rng.choice(["AT", "EU", "Other"], n, p=[0.85, 0.1, 0.05]),
        "pl030": rng.integers(1, 8, n).astype(str),
        "eqIncome": rng.lognormal(10, 0.8, n).round(2),
        "health": rng.choice(["good", "fair", "bad", "very bad"], n, p=[0.6, 0.25, 0.1, 0.05]),
        "rb050": (300.0 + 50.0 * region)})


def release(df: pd.DataFrame, secret: str, suppress: bool) -> Any:
    """k = 3 on the keys: microaggregated (MAGE, the default), or by local suppression."""
    how: dict[str, Any] = ({"plan": Plan([SuppressToK(KEYS, k=3)])} if suppress
                           else {"quasi_identifiers": KEYS, "k": 3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return microagg.anonymize(df, sensitive=[secret], weights="rb050",
                                  households="db030", keep=["rb050"], random_state=0, **how)


def _row(label: str, timings: dict[str, float]) -> str:
    cells = [f"{timings[p]:.2f}" if p in timings else "-" for p in PARTS]
    measured = sum(timings.get(p, 0.0) for p in ("measure", "survey_risk",
                                                 "analysis_utility", "attacks"))
    return (f"| {label} | " + " | ".join(cells) + f" | {measured:.2f} | "
            f"{timings['total']:.2f} | {100 * measured / timings['total']:.0f} % |")


def releases(name: str, df: pd.DataFrame, secret: str, runs: int, *, suppress: bool) -> None:
    print(f"\n### {name}: {len(df):,} rows, {df['db030'].nunique():,} households, "
          f"{'local suppression' if suppress else 'MAGE'}\n")
    print("| run | " + " | ".join(PARTS) + " | measure set | total | share |")
    print("|---" * (len(PARTS) + 4) + "|")
    for run in range(runs + 1):
        made = release(df, secret, suppress)
        print(_row("first" if run == 0 else str(run), dict(made.timings)), flush=True)
    attacks = made.metrics.get("attacks", {})
    worst = max([attacks[a] for a in ("singling_out", "singling_out_multivariate",
                                      "linkability") if a in attacks]
                + list(attacks.get("inference", {}).values()), key=lambda r: r["risk"])
    print(f"\nverdict: {made.verdict.headline[:120]}; highest attack risk "
          f"{worst['risk']:.3f} ({worst['attack']})")


def risk_command(df: pd.DataFrame, secret: str, runs: int) -> None:
    """``microagg risk``'s figures on the raw file, with and without the attacks."""
    def once(attacked: bool) -> float:
        asked = RiskAttacks(secrets=[secret], seed=0) if attacked else None
        t = time.perf_counter()
        file_risk(df, KEYS, weights="rb050", households="db030", threshold=0.05,
                  ks=(2, 3, 5), missing="any", suda=True, attacks=asked)
        return time.perf_counter() - t

    once(True)
    times = {flag: [] for flag in (False, True)}  # type: dict[bool, list[float]]
    for _ in range(runs):
        for flag in (False, True):
            times[flag].append(once(flag))
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(f"\n`microagg risk` figures, median of {runs}: without attacks {off:.2f} s, with "
          f"{on:.2f} s (attacks {on - off:.2f} s, ratio {on / off:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eusilc", default="/work/shared/datasets/eusilc.csv")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    print(machine(f"load average {os.getloadavg()[0]:.2f} at the start"))
    if os.path.exists(args.eusilc):
        df = pd.read_csv(args.eusilc)[EUSILC]
        releases("eusilc", df, "eqIncome", args.runs, suppress=False)
        risk_command(df, "eqIncome", args.runs)
    else:
        print(f"\neusilc: skipped ({args.eusilc} is absent)")
    df = synthetic(args.rows, np.random.default_rng(0)).drop(columns="eqIncome")
    releases("synthetic", df, "health", args.runs, suppress=True)
    risk_command(df, "health", args.runs)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
