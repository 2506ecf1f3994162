"""Utility by analysis: its time on eusilc and on 10^6 rows, and the share of a release's
time its default takes at 50,000 rows (issue "What the release board asks": the default
release's measure stage must stay cheap, at most ~10 % of ``anonymize``).

    python benchmarks/bench_analysis_utility.py [--eusilc PATH] [--rows 1000000] [--runs 3]

1. eusilc (14,827 persons, 6,000 households, weight rb050; nine columns): released by
   ``microagg.anonymize(quasi_identifiers=[age, py010n, eqIncome, rb090, db040], k=5,
   weights="rb050", households="db030", keep=["rb050"])``; the release's own default
   (``timings["analysis_utility"]``) beside the full set of
   :func:`~microagg.metrics.analysis_utility.utility_by_analysis`: totals and means of
   two incomes and age by region, a ratio, a table of pl030 by region, one linear model, pMSE, a random
   forest on pl030.
2. ``--rows`` synthetic records (weight, households of 2, a region, three numbers), the
   release a copy with noise on two numbers: the default set and the full set.
3. 50,000 synthetic records released with a weight: the default's share of the release.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import microagg
from _machine import machine
from microagg._pipeline.analysis_step import default_analyses
from microagg.metrics.analysis_utility import Analyses, utility_by_analysis

COLUMNS = ["db030", "db040", "hsize", "age", "rb090", "pl030", "py010n", "eqIncome", "rb050"]


def _median(fn, runs: int):  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _full(by: str, table: str | None, model: str, target: str | None,
          columns: list[str], ratio: tuple[str, str]) -> Analyses:
    return Analyses(columns=tuple(columns), ratios=(ratio,),
                    tables=() if table is None else (table,), by=by, models=(model,),
                    target=target)


def eusilc(path: str, runs: int) -> None:
    df = pd.read_csv(path)[COLUMNS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = microagg.anonymize(df, quasi_identifiers=["age", "py010n", "eqIncome",
                                                            "rb090", "db040"], k=5,
                                     weights="rb050", households="db030", keep=["rb050"],
                                     random_state=0)
    own = release.timings["analysis_utility"]
    print(f"eusilc {len(df):,} rows: release {release.timings['total']:.2f} s, its default "
          f"analyses {own:.3f} s ({100 * own / release.timings['total']:.1f} %)")
    a = _full("db040", "pl030", "eqIncome ~ age + C(rb090) + C(db040)", "pl030", ["py010n", "eqIncome", "age"],
              ("py010n", "eqIncome"))
    seconds, out = _median(lambda: utility_by_analysis(
        df, release.data, a, weights="rb050", households="db030", random_state=0), runs)
    s = out["estimates_summary"]
    print(f"  full set {seconds:.2f} s: {s['n_estimates']} estimates, {s['inside_ci']} "
          f"inside the interval; mean overlap "
          f"{out['models'][a.models[0]]['mean_overlap']:.3f}; pMSE ratio "
          f"{out['pmse']['ratio']:.2f}; accuracy release {out['classification']['released']:.3f}"
          f" / original {out['classification']['original']:.3f}")


def synthetic(n: int, rng: np.random.Generator) -> pd.DataFrame:
    hh = np.repeat(np.arange((n + 1) // 2), 2)[:n]
    x = rng.lognormal(10, 0.5, n)
    return pd.DataFrame({"hh": hh, "w": rng.uniform(50, 500, (n + 1) // 2)[hh],
                         "region": rng.choice([f"r{i}" for i in range(9)], n),
                         "age": rng.integers(16, 95, n).astype(float), "income": x,
                         "spend": 0.6 * x + rng.normal(0, 2000, n),
                         "job": rng.choice(list("abcd"), n)})


def large(n: int, runs: int) -> None:
    rng = np.random.default_rng(1)
    df = synthetic(n, rng)
    rel = df.assign(income=df["income"] * rng.normal(1, 0.05, n),
                    spend=df["spend"] + rng.normal(0, 500, n))
    default = default_analyses(df, rel, ("region",), {"w", "hh"})
    seconds, out = _median(lambda: utility_by_analysis(df, rel, default, weights="w",
                                                       households="hh", random_state=0), runs)
    print(f"{n:,} rows: default set {seconds:.2f} s ({out['estimates_summary']['n_estimates']}"
          f" estimates, pMSE on {out['pmse']['n_rows']:,} rows)")
    a = _full("region", "job", "spend ~ income + age + C(region)", "job",
              ["income", "spend", "age"], ("spend", "income"))
    seconds, out = _median(lambda: utility_by_analysis(df, rel, a, weights="w",
                                                       households="hh", random_state=0), runs)
    print(f"  full set {seconds:.2f} s ({out['estimates_summary']['n_estimates']} estimates, "
          f"model on {n:,} rows, pMSE and forest on {a.sample:,} rows)")


def share(n: int) -> None:
    df = synthetic(n, np.random.default_rng(2)).drop(columns="job")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        microagg.anonymize(df.head(2000).drop(columns=["w", "hh"]), random_state=0,
                           quasi_identifiers=["age", "income", "spend"], k=5)  # compile
        release = microagg.anonymize(df, quasi_identifiers=["age", "income", "spend"], k=5,
                                     weights="w", households="hh", keep=["w"],
                                     random_state=0)
    own, total = release.timings["analysis_utility"], release.timings["total"]
    print(f"anonymize {n:,} rows with a weight: {total:.2f} s, the default analyses "
          f"{own:.3f} s = {100 * own / (total - own):.1f} % on top of the rest")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eusilc", default="../shared/datasets/eusilc.csv")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--share-rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    eusilc(args.eusilc, args.runs)
    large(args.rows, args.runs)
    share(args.share_rows)


if __name__ == "__main__":
    main()
