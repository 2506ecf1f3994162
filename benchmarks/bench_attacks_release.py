"""The cost of the attacks every release is tried with: ``microagg.anonymize`` on mixed
numeric + categorical keys with and without them (``attacks=False``), paired in the same
run, several repeats; prints the ratio of the times (the issue's bound: <= 2 at 10^5 rows).

    PYTHONPATH=src python benchmarks/bench_attacks_release.py --rows 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd


def table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n), "income": rng.lognormal(10, 0.5, n).round(-1),
        "hours": rng.integers(10, 60, n), "region": rng.choice([f"r{i}" for i in range(12)], n),
        "health": rng.choice(list("abcde"), n)})


def main() -> None:
    from microagg import anonymize

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--method", default=None)
    args = parser.parse_args()
    df = table(args.rows)
    keys = ["age", "income", "hours", "region"]
    with warnings.catch_warnings():  # kernels loaded (or compiled) before any timing
        warnings.simplefilter("ignore")
        for attacks in (False, True):
            anonymize(table(300), quasi_identifiers=keys, k=5, method=args.method,
                      sensitive="health", random_state=0, attacks=attacks)
    ratios = []
    for repeat in range(args.repeats):
        times = {}
        for attacks in (False, True) if repeat % 2 == 0 else (True, False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                release = anonymize(df, quasi_identifiers=keys, k=5, method=args.method,
                                    sensitive="health", random_state=repeat, attacks=attacks)
                times[attacks] = time.perf_counter() - t
            if attacks:
                spent = release.timings["attacks"]
        ratios.append(times[True] / times[False])
        print(f"repeat {repeat}: without {times[False]:.2f} s, with {times[True]:.2f} s "
              f"(attacks {spent:.2f} s), ratio {ratios[-1]:.3f}")
    print(f"rows {args.rows:,}: median ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
