"""Certified lower bounds on the IL of any k-partition (issue 23) next to MDAV and mdav-ls.

For Tarragona, Census and EIA at k = 3, 4, 5, 10 it prints IL = 100 * SSE / SST on z-scores
(as benchmarks/seed003_tables.py) for MDAV and mdav-ls (under a time limit), the best value
seed 003 quotes from the literature (its Tables VI-VIII, raw-unit sorting methods left out),
the k-NN bound, the certified bound of :func:`microagg.bounds.lower_bound`, the value the
column generation's restricted LP reached (not certified) and the certified gap of our best
partition, with the seconds the bound took.

    python benchmarks/bench_bounds.py                          # 10 s mdav-ls, 120 s bound
    python benchmarks/bench_bounds.py --bound-seconds 60 --datasets eia --ks 4 5 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _machine import machine
from microagg import load_dataset
from microagg.bounds import lower_bound
from microagg.metrics import sse, sst
from microagg.partition import partition
from microagg.partition.local_search import quality_mode
from seed003_tables import PAPER

RAW_UNITS = ("meansort-ps", "multidsort-ps")  # seed 003 computed these without scaling
KS = (3, 4, 5, 10)


def zscore(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)


def published(name: str, k: int) -> str:
    """Lowest IL seed 003 quotes for ``name`` at ``k`` and the method that has it."""
    col = KS.index(k)
    best = min(((v[col], m) for m, v in PAPER[name].items()
                if m not in RAW_UNITS and v[col] is not None), default=None)
    return "-" if best is None else f"{best[0]:.4f} ({best[1]})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ls-seconds", type=float, default=10.0)
    parser.add_argument("--bound-seconds", type=float, default=120.0)
    parser.add_argument("--datasets", nargs="+", default=["tarragona", "census", "eia"])
    parser.add_argument("--ks", nargs="+", type=int, default=list(KS))
    args = parser.parse_args()
    print(machine(f"mdav-ls time_limit={args.ls_seconds:g} s",
                  f"bound time_limit={args.bound_seconds:g} s", "random_state=0"))
    lower_bound(np.random.default_rng(0).normal(size=(40, 3)), 3, time_limit=1, random_state=0)
    print("\n| data | k | MDAV IL | mdav-ls IL | best published IL (seed 003) | k-NN bound "
          "| certified bound | LP reached (not certified) | certified gap % | bound s |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for name in args.datasets:
        X = zscore(load_dataset(name).benchmark_view().to_numpy(dtype=float))
        scale = 100.0 / sst(X)
        for k in args.ks:
            mdav_il = sse(X, partition(X, k, method="mdav")) * scale
            ls = quality_mode(X, k, time_limit=args.ls_seconds, random_state=0)
            t0 = time.perf_counter()
            res = lower_bound(X, k, time_limit=args.bound_seconds, random_state=0,
                              initial_partitions=[ls])
            secs = time.perf_counter() - t0
            best = min(sse(X, ls), res.best_sse)
            gap = 100.0 * (1.0 - res.bound / best)
            lp = f"{res.lp_value * scale:.4f}" + (" (optimal)" if res.lp_certified else "")
            print(f"| {name} | {k} | {mdav_il:.4f} | {sse(X, ls) * scale:.4f} | "
                  f"{published(name, k) if k in KS else '-'} | {res.knn_bound * scale:.4f} | "
                  f"{res.bound * scale:.4f} | {lp} | {gap:.1f} | {secs:.0f} |", flush=True)


if __name__ == "__main__":
    main()
