"""Stream microaggregation (issue 8): speed, memory against the delay, IL and delays.

Prints four tables:

1. speed: 1,000,000 x 10 records at k = 5, delay = 1,000, fed as chunks of 10,000 rows and
   as single rows (tuples), every output record re-checked by ``StreamChecker``;
2. peak memory (``tracemalloc``, the stream's own allocations: input chunks are generated
   on the fly and outputs counted, not kept) for delay 100 / 1,000 / 10,000 at 200,000 and
   1,000,000 records;
3. information loss (IL = 100 * SSE / SST on the z-scored data) of the stream against batch
   MDAV on the same 100,000 records, with the delay distribution (mean, median, p95, max);
4. the ``flush_age`` policy at delay 1,000 on the same data.

    python benchmarks/bench_stream.py            # everything (about 2 minutes on 2 cores)
    python benchmarks/bench_stream.py --quick    # 100,000 records for table 1, no table 2

Data: standard Gaussian records, seed 0 (the setting of ``bench_mdav.py``).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Iterator

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg._base.groups import group_means
from microagg.engines.stream.check import StreamChecker
from microagg.engines.stream.engine import anonymize_stream
from microagg.metrics import information_loss
from microagg.partition import mdav

P = 10
K = 5
CHUNK = 10_000


def chunks(n: int, seed: int = 0) -> Iterator[np.ndarray]:
    """``n`` Gaussian records of width P, generated CHUNK rows at a time."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n:
        r = min(CHUNK, n - done)
        yield rng.standard_normal((r, P))
        done += r


def rows(n: int, seed: int = 0) -> Iterator[tuple[float, ...]]:
    for chunk in chunks(n, seed):
        yield from map(tuple, chunk.tolist())


def speed(n: int) -> None:
    print(f"\n## 1. Speed: n = {n:,} x {P}, k = {K}, delay = 1,000 (output re-checked)\n")
    print("| input | seconds | records/s | achieved k | max delay | clusters |")
    print("|---|---|---|---|---|---|")
    for label, source in (("chunks of 10,000", chunks(n)), ("single rows (tuples)", rows(n))):
        checker = StreamChecker(k=K, delay=1000)
        t = time.perf_counter()
        for record in anonymize_stream(source, K, delay=1000):
            checker.update(record)
        check = checker.result(n)
        s = time.perf_counter() - t
        print(f"| {label} | {s:.1f} | {n / s:,.0f} | {check.k} | {check.max_delay} | "
              f"{check.n_clusters:,} |")


def memory() -> None:
    print("\n## 2. Peak memory (tracemalloc), chunks of 10,000 generated on the fly\n")
    print("| delay | n | peak MiB | seconds (slowed by tracemalloc) |")
    print("|---|---|---|---|")
    for delay in (100, 1000, 10_000):
        for n in (200_000, 1_000_000):
            tracemalloc.start()
            t = time.perf_counter()
            count = 0
            for _ in anonymize_stream(chunks(n), K, delay=delay):
                count += 1
            s = time.perf_counter() - t
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            assert count == n
            print(f"| {delay:,} | {n:,} | {peak / 2**20:.2f} | {s:.1f} |")


def quality(n: int) -> None:
    X = np.concatenate(list(chunks(n)))
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    t = time.perf_counter()
    labels = mdav(Z, K)
    batch_s = time.perf_counter() - t
    batch_il = information_loss(Z, group_means(Z, labels)[labels])
    print(f"\n## 3. IL against batch MDAV, n = {n:,} x {P}, k = {K} (z-scored data)\n")
    print("| method | seconds | IL % | delay mean | median | p95 | max |")
    print("|---|---|---|---|---|---|---|")
    print(f"| batch MDAV | {batch_s:.2f} | {batch_il:.2f} | - | - | - | - |")
    for delay in (100, 1000, 10_000):
        _row(Z, f"stream, delay {delay:,}", delay=delay)
    print(f"\n## 4. flush_age at delay 1,000 (n = {n:,})\n")
    print("| flush_age | seconds | IL % | delay mean | median | p95 | max |")
    print("|---|---|---|---|---|---|---|")
    for flush_age in (0, 250, 500, 900):
        _row(Z, f"{flush_age}", delay=1000, flush_age=flush_age)


def _row(Z: np.ndarray, label: str, **kwargs: int) -> None:
    M = np.empty_like(Z)
    delays = np.empty(Z.shape[0], dtype=np.int64)
    checker = StreamChecker(k=K, delay=kwargs["delay"])
    t = time.perf_counter()
    for record in anonymize_stream(Z, K, **kwargs):
        M[record.arrival] = record.values
        delays[record.arrival] = record.delay
        checker.update(record)
    s = time.perf_counter() - t
    checker.result(Z.shape[0])
    print(f"| {label} | {s:.2f} | {information_loss(Z, M):.2f} | {delays.mean():.0f} | "
          f"{np.median(delays):.0f} | {np.percentile(delays, 95):.0f} | {delays.max()} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(f"machine: {machine('NumPy ' + np.__version__)}")
    # compile MDAV before timing, its parallel pass (from 8,192 records) included
    list(anonymize_stream(chunks(2_000), K, delay=1000))
    mdav(np.random.default_rng(1).standard_normal((9000, 3)), 3)
    speed(100_000 if args.quick else 1_000_000)
    if not args.quick:
        memory()
    quality(100_000)


if __name__ == "__main__":
    main()
