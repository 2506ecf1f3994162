"""Time targeted record swapping (``swap_households``) on a synthetic census: 10^6 persons
in households of 1-8 (seeded), a three-level geography (10 regions > 100 districts > 2000
municipalities, codes unique in the file), household size as the similarity variable, age
band and sex as risk variables (citizenship carried in the table), k = 3, swap rate 5 %. Reports the time of the
swap and of its verifier with NUMBA_NUM_THREADS=1 and 2 (each in a fresh process), the swap
rate achieved overall and per level, and the records at risk before and after.

sdcMicro's ``recordSwap`` (R is not on this machine): with ``--sdcmicro-driver PATH`` the
script also writes the census as a CSV of integers (``hid,region,district,municipality,
hsize,age,sex,citizen``, sorted by ``hid``), runs the external driver ``--repeat`` times
(seeds 1, 2, ...) and measures its output with the same code as ours (records at risk,
households moved, household counts per area and size kept). The driver is not in this
repository (sdcMicro's code is EUPL): a small C++ program compiled with sdcMicro's own
``src/recordSwap/recordSwap.cpp`` and ``recordSwap.h`` (sdcTools/sdcMicro, the flags of
its ``compile.sh``: ``g++ -DNDEBUG -std=c++11 -fpic -g -O2``). Called as ``DRIVER IN.csv
OUT.csv SEED LOG``, it reads the CSV, transposes it to records x variables in the column
order sdcMicro's R front end builds (hid, hierarchy, risk variables, similarity variables,
a row-index helper), calls ``recordSwap`` as ``recordSwap.default`` does when ``risk`` is
``NULL`` (hierarchy = region, district, municipality; similar = {hsize}; swaprate 0.05;
risk empty; risk_threshold 0; k_anonymity 3; risk_variables = age, sex; carry_along
empty; the seed), times only that call with ``std::chrono::steady_clock``, writes the
swapped table to OUT.csv (input column order) and prints one JSON line with ``swap_s``,
``cpu_s`` (the call's CPU time, ``std::clock``), ``total_s`` (read + call + write),
``count_swapped_records`` and ``count_swapped_hid``.
See ``benchmarks/results/record-swap-2026.md`` for the figures and the procedure.

    PYTHONPATH=src python benchmarks/bench_record_swap.py [--persons 1000000] [--repeat 3]
        [--sdcmicro-driver PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


LEVELS = ("region", "district", "municipality")


def release_figures(original: pd.DataFrame, published: pd.DataFrame, k: int = 3
                    ) -> dict[str, object]:
    """What a swap did, measured on the two tables alone (the same code for our output and
    sdcMicro's): households whose area changed at each level, records at risk (their
    age/sex combination counted fewer than ``k`` times in their area) before and after,
    whether every household still has one area and whether the number of households of
    each size in each municipality is kept (a swap between households of the same size
    keeps it)."""
    first = original.groupby("hid", sort=False).head(1).index
    moved = {level: int((original.loc[first, level].to_numpy()
                         != published.loc[first, level].to_numpy()).sum()) for level in LEVELS}
    any_moved = np.zeros(first.size, dtype=bool)
    for level in LEVELS:
        any_moved |= original.loc[first, level].to_numpy() != published.loc[first, level].to_numpy()

    def at_risk(table: pd.DataFrame, level: str) -> int:
        size = table.groupby([level, "age", "sex"])["hid"].transform("size")
        return int((size < k).sum())

    def per_area_size(table: pd.DataFrame) -> pd.Series:
        heads = table.groupby("hid", sort=False).head(1)
        return heads.groupby(["municipality", "hsize"]).size().sort_index()

    one_area = all(published.groupby("hid")[level].nunique().max() == 1 for level in LEVELS)
    return {"households": int(first.size), "moved": moved,
            "swapped_households": int(any_moved.sum()),
            "achieved_swaprate": float(any_moved.mean()),
            "records_swapped": int(published["hid"].isin(
                original.loc[first[any_moved], "hid"]).sum()),
            "at_risk_before": {level: at_risk(original, level) for level in LEVELS},
            "at_risk_after": {level: at_risk(published, level) for level in LEVELS},
            "one_area_per_household": bool(one_area),
            "households_per_area_and_size_kept": bool(
                per_area_size(original).equals(per_area_size(published)))}


def one_run(persons: int, repeat: int) -> dict[str, object]:
    from microagg.steps.record_swap import SwapHouseholds, apply_record_swap, verify_record_swap
    table = census(persons)
    options = SwapHouseholds("region,district,municipality", "hsize", "age,sex",
                             k=3, swaprate=0.05)
    apply_record_swap(table.head(5000), options, np.random.default_rng(0),
                      households="hid")  # compile the kernels
    times, cpu_times, verify_times, per_seed = [], [], [], []
    for r in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        published, details = apply_record_swap(table, options, np.random.default_rng(r),
                                                households="hid")
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu)
        start = time.perf_counter()
        check = verify_record_swap(options, table, published, households="hid",
                                   details=details)
        verify_times.append(time.perf_counter() - start)
        per_seed.append(release_figures(table, published))
    return {"records": len(table), "households": details["households"],
            "apply_s": min(times), "apply_all_s": times, "apply_cpu_s": min(cpu_times),
            "verify_s": min(verify_times),
            "holds": check["holds"], "details": details,
            "figures": per_seed[-1], "per_seed": per_seed, "load": os.getloadavg()[0]}


def run_sdcmicro(driver: str, persons: int, repeat: int) -> dict[str, object]:
    """Run the external sdcMicro driver (see the module) ``repeat`` times on the census;
    its times, its own counts and the figures of its last output."""
    table = census(persons)
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp, "census.csv"), Path(tmp, "swapped.csv")
        table.astype(np.int64).to_csv(source, index=False)
        runs, per_seed = [], []
        for seed in range(1, repeat + 1):
            load = os.getloadavg()[0]
            out = subprocess.run([driver, str(source), str(target), str(seed),
                                  str(Path(tmp, "log.txt"))],
                                 check=True, capture_output=True, text=True).stdout
            runs.append(dict(json.loads(out.strip().splitlines()[-1]), load=load))
            per_seed.append(release_figures(table, pd.read_csv(target).astype(np.float64)))
    return {"runs": runs, "swap_s": min(r["swap_s"] for r in runs),
            "cpu_s": min(r.get("cpu_s", float("nan")) for r in runs),
            "total_s": min(r["total_s"] for r in runs),
            "figures": per_seed[-1], "per_seed": per_seed}


def ours(persons: int, repeat: int) -> dict[int, dict[str, object]]:
    """Our swap in a fresh process per thread count (1 and 2)."""
    results = {}
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                   OPENBLAS_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, __file__, "--child", "--persons",
                              str(persons), "--repeat", str(repeat)],
                             env=env, check=True, capture_output=True, text=True).stdout
        results[threads] = json.loads(out.strip().splitlines()[-1])
    return results


def report_ours(results: dict[int, dict[str, object]], repeat: int) -> None:
    first = results[1]
    print(f"census: {first['records']} records, {first['households']} households; "
          f"best of {repeat}")
    print("| threads | apply (s) | apply, CPU (s) | verify (s) | holds | load |\n"
          "|---|---|---|---|---|---|")
    for threads, r in results.items():
        print(f"| {threads} | {r['apply_s']:.3f} | {r['apply_cpu_s']:.3f} | "
              f"{r['verify_s']:.3f} | {r['holds']} | {r['load']:.1f} |")
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


def report_side_by_side(results: dict[int, dict[str, object]], theirs: dict[str, object]
                        ) -> None:
    runs = theirs["runs"]
    print("\nsdcMicro recordSwap (C++, one thread), seeds 1..{}: call {} s (CPU {} s), "
          "read+call+write {} s; its counts: {} households, {} records; load {}".format(
              len(runs), ", ".join(f"{r['swap_s']:.3f}" for r in runs),
              ", ".join(f"{r.get('cpu_s', float('nan')):.3f}" for r in runs),
              ", ".join(f"{r['total_s']:.3f}" for r in runs),
              runs[-1]["count_swapped_hid"], runs[-1]["count_swapped_records"],
              ", ".join(f"{r['load']:.1f}" for r in runs)))
    rows = [("microagg, 1 thread", results[1]["apply_s"], results[1]["apply_cpu_s"],
             results[1]["figures"]),
            ("microagg, 2 threads", results[2]["apply_s"], results[2]["apply_cpu_s"],
             results[2]["figures"]),
            ("sdcMicro C++", theirs["swap_s"], theirs["cpu_s"], theirs["figures"])]
    print("\n| swap | time (s, best) | CPU (s, best) | households swapped | rate | "
          "records swapped | at risk before (reg/dist/mun) | after (reg/dist/mun) | "
          "sizes per area kept |\n|---|---|---|---|---|---|---|---|---|")
    for name, seconds, cpu, f in rows:
        before = "/".join(str(f["at_risk_before"][level]) for level in LEVELS)
        after = "/".join(str(f["at_risk_after"][level]) for level in LEVELS)
        print(f"| {name} | {seconds:.3f} | {cpu:.3f} | {f['swapped_households']} | "
              f"{f['achieved_swaprate']:.4f} | {f['records_swapped']} | {before} | {after} | "
              f"{f['households_per_area_and_size_kept'] and f['one_area_per_household']} |")
    for name, seeds in (("microagg (seeds 0..)", results[1]["per_seed"]),
                        ("sdcMicro (seeds 1..)", theirs["per_seed"])):
        print(f"{name}: records swapped " + ", ".join(str(f["records_swapped"]) for f in seeds)
              + "; at risk after (municipality) "
              + ", ".join(str(f["at_risk_after"]["municipality"]) for f in seeds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sdcmicro-driver", default=None,
                        help="an already built driver of sdcMicro's C++ recordSwap")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.persons, args.repeat)))
        return
    print(f"load average before: {os.getloadavg()}")
    results = ours(args.persons, args.repeat)
    report_ours(results, args.repeat)
    if args.sdcmicro_driver:
        report_side_by_side(results, run_sdcmicro(args.sdcmicro_driver, args.persons,
                                                  args.repeat))
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
