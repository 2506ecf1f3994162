"""Time targeted record swapping (``swap_households``) on a synthetic census: 10^6 persons
in households of 1-8 (seeded), a three-level geography (10 regions > 100 districts > 2000
municipalities, codes unique in the file), household size as the similarity variable, age
band and sex as risk variables (citizenship carried in the table), k = 3, swap rate 5 %. Reports the time of the
swap and of its verifier with NUMBA_NUM_THREADS=1 and 2 (each in a fresh process), the swap
rate achieved overall and per level, and the records at risk before and after. No sdcMicro
on this machine (no R): its ``recordSwap`` is not timed here.

    PYTHONPATH=src python benchmarks/bench_record_swap.py [--persons 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def census(persons: int, seed: int = 2026) -> pd.DataFrame:
    """About ``persons`` records in households, with geography, size, age, sex, citizenship."""
    rng = np.random.default_rng(seed)
    size = rng.choice(np.arange(1, 9), size=int(persons / 2.6),
                      p=[0.3, 0.3, 0.15, 0.13, 0.07, 0.03, 0.01, 0.01])
    n_households = size.size
    mun = rng.integers(0, 2000, n_households)
    district = mun // 20
    region = district // 10
    n = int(size.sum())
    return pd.DataFrame({
        "hid": np.repeat(np.arange(n_households), size),
        "region": np.repeat(region, size).astype(np.float64),
        "district": np.repeat(district, size).astype(np.float64),
        "municipality": np.repeat(mun, size).astype(np.float64),
        "hsize": np.repeat(size, size).astype(np.float64),
        "age": (rng.integers(0, 100, n) // 5).astype(np.float64),
        "sex": rng.integers(0, 2, n).astype(np.float64),
        "citizen": rng.choice(np.arange(6), n, p=[0.9, 0.04, 0.03, 0.01, 0.01, 0.01]
                              ).astype(np.float64)})


def one_run(persons: int, repeat: int) -> dict[str, object]:
    from microagg.steps.record_swap import SwapHouseholds, apply_record_swap, verify_record_swap
    table = census(persons)
    options = SwapHouseholds("region,district,municipality", "hsize", "age,sex",
                             k=3, swaprate=0.05)
    apply_record_swap(table.head(5000), options, np.random.default_rng(0),
                      households="hid")  # compile the kernels
    times, verify_times = [], []
    for r in range(repeat):
        start = time.perf_counter()
        published, details = apply_record_swap(table, options, np.random.default_rng(r),
                                                households="hid")
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        check = verify_record_swap(options, table, published, households="hid",
                                   details=details)
        verify_times.append(time.perf_counter() - start)
    return {"records": len(table), "households": details["households"],
            "apply_s": min(times), "verify_s": min(verify_times), "holds": check["holds"],
            "details": details}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.persons, args.repeat)))
        return
    results = {}
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, __file__, "--child", "--persons",
                              str(args.persons), "--repeat", str(args.repeat)],
                             env=env, check=True, capture_output=True, text=True).stdout
        results[threads] = json.loads(out.strip().splitlines()[-1])
    first = results[1]
    print(f"census: {first['records']} records, {first['households']} households; "
          f"best of {args.repeat}")
    print("| threads | apply (s) | verify (s) | holds |\n|---|---|---|---|")
    for threads, r in results.items():
        print(f"| {threads} | {r['apply_s']:.3f} | {r['verify_s']:.3f} | {r['holds']} |")
    d = first["details"]
    print(f"\nswap rate: target {d['swaprate']}, achieved {d['achieved_swaprate']:.4f} "
          f"({d['swapped_households']} households, {d['records_swapped']} records); "
          f"targeted {d['targeted_households']}, swapped {d['targeted_swapped']}, "
          f"without donor left {d['targeted_without_donor']}; fill pairs {d['fill_pairs']}")
    print("\n| level | targeted | moved share | records at risk before | after |\n"
          "|---|---|---|---|---|")
    for level, f in d["levels"].items():
        print(f"| {level} | {f['targeted_households']} | {f['moved_share']:.4f} | "
              f"{f['risky_records_before']} | {f['risky_records_after']} |")


if __name__ == "__main__":
    main()
