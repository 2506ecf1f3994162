"""Speed and memory of the MDAV family, with a plain NumPy MDAV as the in-process baseline.

Prints a table (method x n x p x k x seconds x IL) and, unless ``--quick``, the peak memory of
MDAV on 1,000,000 x 10 measured in a child process (``ru_maxrss``). At 50,000 x 10, k = 5 the
table quotes ``anonymize`` as a whole beside the partition alone: its stages (partition,
measure: the release metrics) and the measure stage's share of the partition.

    python benchmarks/bench_mdav.py            # full table + 1M memory run (~10 minutes)
    python benchmarks/bench_mdav.py --quick    # small sizes only (~1 minute)

Data: standard Gaussian records (seed 0), the setting of the issue's targets
(50,000 x 10 and 200,000 x 10 at k = 5). IL = 100 * SSE / SST.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg import anonymize
from microagg.metrics import sse, sst
from microagg.partition import PARTITIONERS, mdav
from microagg.partition._reference import mdav_numpy


def timed(func, *args, **kwargs):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = func(*args, **kwargs)
    return out, time.perf_counter() - t


def warm_up() -> None:
    """Compile every kernel (the parallel pass included) before timing anything."""
    X = np.random.default_rng(1).standard_normal((9000, 3))
    for entry in PARTITIONERS.values():
        entry(X[:200], 3)
    mdav(X, 3)
    whole_call(X[:2000])


def whole_call(X: np.ndarray) -> tuple[float, float, dict[str, float]]:
    """``anonymize`` on every column of ``X`` (exact MDAV, k = 5): wall seconds, the release's
    information loss (%) and its stage timings."""
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    release, seconds = timed(anonymize, df, quasi_identifiers=list(df.columns), k=5,
                             method="mdav", random_state=0)
    return seconds, float(release.metrics["information_loss"]), dict(release.timings)


def whole_call_row(X: np.ndarray) -> tuple[str, int, int, int, float, float, str]:
    """The table's ``anonymize`` row, its note the stages beside the partition."""
    seconds, il, stages = whole_call(X)
    note = (f"whole call: partition {stages['partition']:.2f} s, measure "
            f"{stages['measure']:.2f} s ({stages['measure'] / stages['partition']:.0%} of the "
            f"partition)")
    print(f"  {'anonymize':<12} n={X.shape[0]:>7} p={X.shape[1]:>2} k= 5 {seconds:8.2f} s  "
          f"IL={il:8.4f}  {note}", flush=True)
    return ("anonymize", X.shape[0], X.shape[1], 5, seconds, il, note)


def memory_child(n: int, p: int, k: int) -> None:
    X = np.random.default_rng(0).standard_normal((n, p))
    labels, seconds = timed(mdav, X, k)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{seconds:.1f} {peak_kib} {int(labels.max()) + 1}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, no 1M memory run")
    parser.add_argument("--memory-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(*args.memory_child)
        return

    print(f"machine: {machine()}")
    warm_up()
    rng = np.random.default_rng(0)
    rows: list[tuple[str, int, int, int, float, float, str]] = []

    def record(name: str, X: np.ndarray, k: int, labels: np.ndarray, seconds: float,
               note: str = "") -> None:
        il = 100.0 * sse(X, labels) / sst(X)
        rows.append((name, X.shape[0], X.shape[1], k, seconds, il, note))
        print(f"  {name:<12} n={X.shape[0]:>7} p={X.shape[1]:>2} k={k:>2} "
              f"{seconds:8.2f} s  IL={il:8.4f}  {note}", flush=True)

    baseline_sizes = [(20_000, 10)] if args.quick else [(20_000, 10), (50_000, 10)]
    for n, p in baseline_sizes:
        X = rng.standard_normal((n, p))
        fast, t_fast = timed(mdav, X, 5)
        slow, t_slow = timed(mdav_numpy, X, 5)
        same = "same partition" if np.array_equal(fast, slow) else "PARTITIONS DIFFER"
        record("numpy-mdav", X, 5, slow, t_slow, "baseline (plain NumPy)")
        record("mdav", X, 5, fast, t_fast, f"{t_slow / t_fast:.0f}x faster, {same}")

    tables: dict[int, np.ndarray] = {}
    big = [(50_000, 10)] if args.quick else [(50_000, 10), (100_000, 10), (200_000, 10)]
    for n, p in big:
        X = rng.standard_normal((n, p))
        for k in (5,) if n > 50_000 else (3, 5, 10):
            labels, seconds = timed(mdav, X, k)
            record("mdav", X, k, labels, seconds)
        tables[n] = X
    rows.append(whole_call_row(tables[50_000]))  # the same records as the mdav rows above

    X = rng.standard_normal((5_000 if args.quick else 20_000, 10))
    for name, entry in PARTITIONERS.items():
        try:  # a method may refuse a file of this size (cdt: an n x n matrix), or be slow
            labels, seconds = timed(entry, X, 5, random_state=0)
        except ValueError as refusal:
            print(f"  {name:<12} refused: {refusal}")
            continue
        record(name, X, 5, labels, seconds)

    print("\n| method | n | p | k | seconds | IL (%) | note |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, n, p, k, seconds, il, note in rows:
        print(f"| {name} | {n:,} | {p} | {k} | {seconds:.2f} | {il:.4f} | {note} |")

    if not args.quick:
        n, p, k = 1_000_000, 10, 5
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(n), str(p), str(k)],
            check=True, capture_output=True, text=True,
        ).stdout.split()
        seconds, peak_kib, groups = float(out[0]), int(out[1]), int(out[2])
        print(f"\nmdav n={n:,} p={p} k={k}: {seconds:.1f} s, {groups:,} groups, "
              f"peak memory (ru_maxrss of the whole process, data included) "
              f"{peak_kib / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
