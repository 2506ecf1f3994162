"""Speed and memory of the top-down k-partition (seed 000) on 100,000 x 10, k = 5.

    python benchmarks/bench_top_down.py

Each configuration runs in a fresh child process so that its peak memory (ru_maxrss, the
interpreter and the data included) is its own; the first run of a child compiles nothing
new once the numba cache is warm (a warm-up child runs first).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import numpy as np


def child(n: int, p: int, k: int, c: int) -> None:
    from microagg.metrics import sse, sst
    from microagg.partition import top_down

    X = np.random.default_rng(0).standard_normal((n, p))
    t = time.perf_counter()
    labels = top_down(X, k, c=c, random_state=0)
    seconds = time.perf_counter() - t
    counts = np.bincount(labels)
    il = 100 * sse(X, labels) / sst(X)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{seconds:.2f} {peak:.0f} {counts.min()} {counts.max()} {il:.4f}")


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(*(int(v) for v in sys.argv[2:]))
        return
    subprocess.run([sys.executable, __file__, "--child", "5000", "10", "5", "5"], check=True,
                   capture_output=True)  # warm the numba cache
    print("| n | p | k | c | seconds | peak MiB | group sizes | IL (%) |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|")
    for c in (1, 50):
        out = subprocess.run([sys.executable, __file__, "--child", "100000", "10", "5", str(c)],
                             check=True, capture_output=True, text=True).stdout.split()
        print(f"| 100,000 | 10 | 5 | {c} | {out[0]} | {out[1]} | {out[2]}..{out[3]} | {out[4]} |")


if __name__ == "__main__":
    main()
