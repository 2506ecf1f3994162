"""colgen, the quality mode by column generation (issue 23), against MDAV and mdav-ls.

For Tarragona, Census and EIA at k = 3, 4, 5, 10 it prints IL = 100 * SSE / SST on z-scores
(as benchmarks/seed003_tables.py) of MDAV, mdav-ls (``--ls-seconds``), colgen (``--seconds``;
default: its own budget, 30 s plus 60 s per 1,000 records) and the best value seed 003
quotes (its Tables VI-VIII, raw-unit sorting methods left out), with colgen's seconds.
``--bound-seconds`` > 0 adds the certified bound of :func:`microagg.bounds.lower_bound`
(seeded with colgen's groups) and the certified gap of the best partition; it is off by
default because the bounds do not depend on the partitions (benchmarks/results/bounds-2026.md lists
them from ``bench_bounds.py``).

    python benchmarks/bench_colgen.py
    python benchmarks/bench_colgen.py --datasets census --ks 3 --bound-seconds 120
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _machine import machine
from bench_bounds import KS, published, zscore
from microagg import load_dataset
from microagg.bounds import lower_bound
from microagg.metrics import sse, sst
from microagg.partition import partition
from microagg.partition.colgen import colgen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ls-seconds", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=None,
                        help="colgen's time_limit (default: its 'auto' budget)")
    parser.add_argument("--bound-seconds", type=float, default=0.0)
    parser.add_argument("--datasets", nargs="+", default=["tarragona", "census", "eia"])
    parser.add_argument("--ks", nargs="+", type=int, default=list(KS))
    args = parser.parse_args()
    print(machine(f"mdav-ls time_limit={args.ls_seconds:g} s",
                  f"colgen time_limit={args.seconds or 'auto'}", "random_state=0"))
    colgen(np.random.default_rng(0).normal(size=(40, 3)), 3, random_state=0, time_limit=5)
    print("\n| data | k | MDAV IL | mdav-ls IL | colgen IL | colgen s | best published IL "
          "(seed 003) | certified bound | certified gap % |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for name in args.datasets:
        X = zscore(load_dataset(name).benchmark_view().to_numpy(dtype=float))
        scale = 100.0 / sst(X)
        for k in args.ks:
            mdav_il = sse(X, partition(X, k, method="mdav")) * scale
            ls = partition(X, k, method="mdav-ls", time_limit=args.ls_seconds, random_state=0)
            t0 = time.perf_counter()
            cg = colgen(X, k, random_state=0,
                        time_limit="auto" if args.seconds is None else args.seconds)
            secs = time.perf_counter() - t0
            bound = gap = "-"
            if args.bound_seconds > 0:
                res = lower_bound(X, k, time_limit=args.bound_seconds, random_state=0,
                                  initial_partitions=[ls, cg])
                best = min(sse(X, ls), sse(X, cg), res.best_sse)
                bound = f"{res.bound * scale:.4f}"
                gap = f"{100.0 * (1.0 - res.bound / best):.1f}"
            print(f"| {name} | {k} | {mdav_il:.4f} | {sse(X, ls) * scale:.4f} | "
                  f"{sse(X, cg) * scale:.4f} | {secs:.0f} | "
                  f"{published(name, k) if k in KS else '-'} | {bound} | {gap} |", flush=True)


if __name__ == "__main__":
    main()
