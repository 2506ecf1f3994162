"""Local suppression to k-anonymity on the bundled eusilc against sdcMicro 5.8.1's
``localSuppression`` (issue "The statistical office's first tools", Measure section).

    python benchmarks/bench_suppress.py [--time-limit 60] [--runs 3]

Every key as a categorical factor, missing matches any value (sdcMicro's default). For each
row of the issue's table: the heuristic (median time of ``--runs``) and the exact mode
(HiGHS, ``--time-limit`` seconds, the heuristic as first incumbent): cells suppressed per key,
time, and k verified on the published table by ``verify_suppress``. With ``--plan``, also
the whole call ``microagg.anonymize(df, plan=Plan([step]))`` for the heuristic (every other
column sensitive): the step, publication, every step's verifier, the release's measures.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import microagg
from _machine import machine
from microagg.datasets import load_dataset
from microagg.steps import Plan
from microagg.steps.suppress import SuppressToK, apply_suppress, verify_suppress

KEYS_A = ("db040", "hsize", "rb090", "age", "pb220a")
KEYS_B = ("db040", "hsize", "rb090", "pb220a", "pl030")
CASES = [(KEYS_A, 3, ()), (KEYS_A, 5, ()),
         (KEYS_A, 3, (1, 2, 5, 3, 4)), (KEYS_B, 3, ()), (KEYS_B, 5, ())]


def _importance(keys: tuple[str, ...], ranks: tuple[int, ...]) -> tuple[str, ...]:
    """sdcMicro's importance vector (1 = most important) as our order of keys."""
    return tuple(key for _, key in sorted(zip(ranks, keys, strict=True)))


def _run(df, options):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out, details = apply_suppress(df, options, np.random.default_rng(0))
    seconds = time.perf_counter() - t
    verdict = verify_suppress(options, df, out)
    per_key = {k: v["cells_suppressed"] for k, v in details["columns"].items()
               if v["cells_suppressed"]}
    return seconds, details, verdict, per_key


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plan", action="store_true",
                        help="also time the heuristic through anonymize(df, plan=...)")
    parser.add_argument("--heuristic-only", action="store_true")
    args = parser.parse_args()
    print(machine())
    df = load_dataset("eusilc").data.copy()
    for column in set(KEYS_A) | set(KEYS_B):
        df[column] = df[column].astype("string").astype(object).where(df[column].notna())
    print("| keys | k | importance | mode | cells (per key) | time | k verified | certificate |")
    print("|---|---|---|---|---|---|---|---|")
    for keys, k, ranks in CASES:
        importance = _importance(keys, ranks) if ranks else ()
        label = ", ".join(keys)
        imp = ", ".join(map(str, ranks)) or "-"
        heuristic = SuppressToK(keys, k=k, importance=importance)
        times = []
        for _ in range(args.runs):
            seconds, details, verdict, per_key = _run(df, heuristic)
            times.append(seconds)
        print(f"| {label} | {k} | {imp} | heuristic | {details['cells_suppressed']:,} "
              f"({per_key}) | {statistics.median(times):.2f} s | {verdict['holds']} | - |")
        if args.plan:
            _whole_call(df, heuristic, args.runs, label, k, imp)
        if args.heuristic_only:
            continue
        exact = SuppressToK(keys, k=k, importance=importance, mode="exact",
                            time_limit=args.time_limit)
        seconds, details, verdict, per_key = _run(df, exact)
        cert = details["exact"]
        note = ("optimal" if cert["optimal"] else
                f"lower bound {cert['lower_bound']:,}, gap {cert['gap']:.1%}")
        print(f"| {label} | {k} | {imp} | exact | {details['cells_suppressed']:,} "
              f"({per_key}) | {seconds:.1f} s | {verdict['holds']} | {note} |", flush=True)


def _whole_call(df, options, runs, label, k, imp):  # type: ignore[no-untyped-def]
    """The heuristic through the plan: ``anonymize`` from request to verified release."""
    others = [c for c in df.columns if c not in options.keys]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        release = microagg.anonymize(df, plan=Plan([options]), sensitive=others,
                                     random_state=0)
        times.append(time.perf_counter() - t)
    check = release.checks["steps"][0]
    print(f"| {label} | {k} | {imp} | heuristic, anonymize(plan=) | "
          f"{release.steps[0].details['cells_suppressed']:,} | "
          f"{statistics.median(times):.2f} s | {check['holds']} | - |", flush=True)


if __name__ == "__main__":
    main()
