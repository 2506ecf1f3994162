"""The integer master over the whole file's columns (issue 23): does the LP that certifies
the bound hold better partitions than colgen's parts find?

    python benchmarks/bench_global_master.py eia 3 --bound-seconds 120 --mip-seconds 120

``lower_bound`` (seeded with mdav-ls, 10 s, ``random_state=0``, like bench_bounds.py) fills
a column pool; HiGHS's branch and bound then solves the set-partitioning problem over every
column of it (:func:`microagg.bounds._integer.integer_master`). IL = 100 SSE / SST on
z-scores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)
from bench_bounds import zscore  # benchmarks/bench_bounds.py
from microagg.bounds import _lower_bound
from microagg.bounds._integer import integer_master
from microagg.bounds._master import ColumnPool
from microagg.datasets import load_dataset
from microagg.metrics import sse, sst
from microagg.partition.local_search import quality_mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("k", type=int)
    parser.add_argument("--bound-seconds", type=float, default=120.0)
    parser.add_argument("--mip-seconds", type=float, default=120.0)
    args = parser.parse_args()
    print(machine(f"bound {args.bound_seconds:g} s", f"integer master {args.mip_seconds:g} s"))
    X = zscore(load_dataset(args.dataset).benchmark_view().to_numpy(dtype=float))
    scale = 100.0 / sst(X)
    start = quality_mode(X, args.k, time_limit=10, random_state=0)
    pool = ColumnPool(X)
    t = time.perf_counter()
    res = _lower_bound(X, args.k, "column-generation", args.bound_seconds,
                       np.random.default_rng(0), [start], pool)
    print(f"{args.dataset} k = {args.k}: bound {res.bound * scale:.4f}, LP reached "
          f"{res.lp_value * scale:.4f}{' (optimal)' if res.lp_certified else ''}, mdav-ls "
          f"{sse(X, start) * scale:.4f}, best start {res.best_sse * scale:.4f}, "
          f"{len(pool.members):,} columns, {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    labels = integer_master(pool, args.mip_seconds)
    seconds = time.perf_counter() - t
    if labels is None:
        print(f"integer master: no partition in {seconds:.0f} s")
        return
    print(f"integer master over the pool: IL {sse(X, labels) * scale:.4f} in {seconds:.0f} s "
          f"(certified gap {100 * (1 - res.bound / sse(X, labels)):.1f} %)")


if __name__ == "__main__":
    main()
