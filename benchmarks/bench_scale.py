"""Scale (issue 9): blocked microaggregation against exact MDAV, 10^6 rows in memory, and
10^7 rows Parquet to Parquet out of core, with peak memory.

    python benchmarks/bench_scale.py                 # all three (about 5 minutes)
    python benchmarks/bench_scale.py --only 100k     # or 1m, 10m

Data: independent standard normal columns (seed 0), 10 quasi-identifiers, k = 5. Peak
memory is sampled every 50 ms as the summed resident set of this process and its worker
processes (forked workers share pages, so the sum over-counts: an upper bound).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import tempfile
import threading
import time
import warnings

import numpy as np
import pandas as pd

from microagg import anonymize
from microagg.metrics import information_loss
from microagg.partition import mdav
from microagg.partition.blocking import BLOCKINGS, blocked_partition

K = 5
P = 10


class PeakMemory:
    """Largest summed RSS of this process and all its descendants (the worker processes a
    fork server starts are its grandchildren), sampled every 0.1 s in a thread: ``peak``
    counts every resident page (file-backed pages of mapped files too), ``peak_anon`` the
    anonymous ones (the processes' own memory). One pass over /proc per sample."""

    INTERVAL = 0.1

    def __init__(self) -> None:
        self.peak = 0
        self.peak_anon = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _tree() -> list[int]:
        """This process and its descendants."""
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
        tree, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, ()))
        return tree

    @classmethod
    def _tree_rss(cls) -> tuple[int, int]:
        """Summed VmRSS and RssAnon of the tree, in bytes."""
        rss = anon = 0
        for pid in cls._tree():
            try:
                with open(f"/proc/{pid}/status") as handle:
                    for line in handle:
                        if line.startswith("VmRSS:"):
                            rss += int(line.split()[1]) * 1024
                        elif line.startswith("RssAnon:"):
                            anon += int(line.split()[1]) * 1024
            except (OSError, ValueError, IndexError):
                continue
        return rss, anon

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, anon = self._tree_rss()
            self.peak, self.peak_anon = max(self.peak, rss), max(self.peak_anon, anon)
            time.sleep(self.INTERVAL)

    def __enter__(self) -> PeakMemory:
        self.peak, self.peak_anon = self._tree_rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def il_of(X: np.ndarray, labels: np.ndarray) -> float:
    sums = np.zeros((labels.max() + 1, X.shape[1]))
    np.add.at(sums, labels, X)
    return information_loss(X, (sums / np.bincount(labels)[:, None])[labels])


def bench_100k() -> None:
    X = np.random.default_rng(0).normal(size=(100_000, P))
    mdav(X[:200], K)
    blocked_partition(X[:3000], K, block_size=1000)  # compile / load everything first
    t = time.perf_counter()
    exact = il_of(X, mdav(X, K))
    t_exact = time.perf_counter() - t
    print("## 100,000 x 10, k = 5: blocked MDAV against exact MDAV (same data, same run)\n")
    print(f"exact MDAV: {t_exact:.2f} s, IL {exact:.3f} %\n")
    print("| blocking | block size | time (s) | speed-up | IL (%) | IL vs exact |")
    print("|---|---|---|---|---|---|")
    for blocking in BLOCKINGS:
        for size in (1_000, 2_000, 5_000, 10_000, 25_000):
            t = time.perf_counter()
            labels = blocked_partition(X, K, blocking=blocking, block_size=size,
                                       random_state=0)
            seconds = time.perf_counter() - t
            il = il_of(X, labels)
            print(f"| {blocking} | {size:,} | {seconds:.2f} | {t_exact / seconds:.1f}x | "
                  f"{il:.3f} | {100 * (il / exact - 1):+.1f} % |")
    print()


def bench_1m() -> None:
    X = np.random.default_rng(0).normal(size=(1_000_000, P))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    anonymize(df.iloc[:5000], quasi_identifiers=list(df.columns), k=K, blocking="kd",
              block_size=1000)  # warm-up
    print("## 1,000,000 x 10, k = 5, in memory (`anonymize(..., blocking='kd')`)\n")
    print("| block size | total (s) | partition (s) | measure (s) | IL (%) | DLD (%, 2,000-record "
          "sample) | k | peak memory (GiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for size in (5_000, 10_000):
        with PeakMemory() as memory:
            t = time.perf_counter()
            release = anonymize(df, quasi_identifiers=list(df.columns), k=K, blocking="kd",
                                block_size=size, random_state=0)
            seconds = time.perf_counter() - t
        print(f"| {size:,} | {seconds:.1f} | {release.timings['partition']:.1f} | "
              f"{release.timings['measure']:.1f} | {release.metrics['information_loss']:.3f} | "
              f"{100 * release.metrics['dld_risk']:.1f} | {release.k} | "
              f"{memory.peak / 2**30:.2f} |")
    print(f"\n(The input DataFrame alone is {df.memory_usage().sum() / 2**30:.2f} GiB.)\n")


def bench_10m(folder: pathlib.Path) -> None:

    from bench_file_quality import write_input  # the same standard normal chunks, seed 0
    from microagg.engines.file.engine import anonymize_file

    source, target = folder / "in.parquet", folder / "out.parquet"
    write_input(source, 10_000_000)
    print("## 10,000,000 x 10, k = 5, Parquet to Parquet out of core (`anonymize_file`)\n")
    with PeakMemory() as memory:
        t = time.perf_counter()
        release = anonymize_file(source, target, quasi_identifiers=[f"x{j}" for j in range(P)],
                                 k=K, random_state=0)
        seconds = time.perf_counter() - t
    stages = ", ".join(f"{name} {value:.0f} s" for name, value in release.timings.items()
                       if name != "total")
    print(f"total {seconds:.0f} s ({stages}); peak memory {memory.peak / 2**30:.2f} GiB; "
          f"{release.metrics['n_blocks']} blocks, {release.metrics['n_groups']:,} groups; "
          f"IL {release.metrics['information_loss']:.3f} %; k verified on the written file: "
          f"{release.k}; output {target.stat().st_size / 2**20:.0f} MiB\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["100k", "1m", "10m"])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.only in (None, "100k"):
        bench_100k()
    if args.only in (None, "1m"):
        bench_1m()
    if args.only in (None, "10m"):
        with tempfile.TemporaryDirectory(dir=pathlib.Path(__file__).parent) as folder:
            bench_10m(pathlib.Path(folder))
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
