"""mdav-scale against exact MDAV (issue 21): information loss, time and peak memory.

    python benchmarks/bench_quality_scale.py                          # 100,000, both generators
    python benchmarks/bench_quality_scale.py --n 1000000 --generator gaussian
    python benchmarks/bench_quality_scale.py --n 1000000 --skip-exact  # no 4-5 minute baseline
    python benchmarks/bench_quality_scale.py --quality   # also the quality mode's parameters
    python benchmarks/bench_quality_scale.py --repeat 5  # medians of 5 alternated runs each

Each method runs in its own child process on the same data (made from the seed in the
child), after its kernels are compiled or loaded on a small sample, so that the time is the
partition alone and the peak memory (``ru_maxrss``) is that method's. IL = 100 * SSE / SST
on the z-scored data, the same for both methods. Generators:

* ``gaussian``: independent standard normal columns;
* ``correlated``: standard normal rows times a random p x p mixing matrix, then
  ``sinh(x / 3)`` column by column (correlated columns with heavy tails).

The issue's targets (p = 10, k = 5): at 100,000 records, IL at most exact MDAV's and at
least 5 times faster; at 1,000,000, IL at most exact MDAV's in under 60 s and 2 GB.
The last column is the 1-minute load average after the row: other processes on the
machine slow both methods, the multi-threaded exact MDAV the more. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)

GENERATORS = ("gaussian", "correlated")


def make_data(n: int, p: int, generator: str, seed: int) -> np.ndarray:
    """The benchmark matrix, z-scored column by column."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if generator == "correlated":
        X = np.sinh(X @ rng.standard_normal((p, p)) / 3.0)
    return (X - X.mean(axis=0)) / X.std(axis=0)


def child(method: str, n: int, p: int, generator: str, k: int, seed: int) -> None:
    """Run one method on one file; print seconds, IL and peak memory as JSON."""
    from microagg.metrics import sse
    from microagg.partition import PARTITIONERS

    if method == "mdav-scale-quality":  # what the quality mode (refine=...) runs
        from functools import partial

        from microagg.partition.scale import QUALITY_PARAMS, mdav_scale

        entry = partial(mdav_scale, **QUALITY_PARAMS)
    elif method.startswith("mdav-scale-sweeps-"):  # another number of sweeps, e.g. 1
        from functools import partial

        from microagg.partition.scale import mdav_scale

        entry = partial(mdav_scale, sweeps=int(method.rsplit("-", 1)[1]))
    elif method.startswith("blocked-"):  # mdav-scale in kd blocks of this size + 2nd pass
        from functools import partial

        from microagg.partition.blocking import blocked_partition

        entry = partial(blocked_partition, method="mdav-scale",
                        block_size=int(method.split("-")[1]), n_jobs=1)
    else:
        entry = PARTITIONERS[method]
    warm = make_data(20_000, p, generator, seed + 1)  # >= 8,192: MDAV's parallel pass too
    entry(warm, k, random_state=0)
    X = make_data(n, p, generator, seed)
    t = time.perf_counter()
    labels = entry(X, k, random_state=0)
    seconds = time.perf_counter() - t
    il = 100.0 * sse(X, labels) / float((X * X).sum())  # z-scored: SST = sum of squares
    counts = np.bincount(labels)
    print(json.dumps({"seconds": seconds, "il": il, "groups": int(counts.size),
                      "min": int(counts.min()), "max": int(counts.max()),
                      "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))


def run_child(method: str, n: int, p: int, generator: str, k: int, seed: int
              ) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", method, str(n), str(p), generator, str(k),
         str(seed)], check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_pair(n: int, generator: str, args: argparse.Namespace
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """mdav-scale and exact MDAV (unless skipped), ``args.repeat`` times each, alternated:
    each result with its median ``seconds``, every run's in ``runs``, the highest peak of
    memory of its runs and their IL (the same in every run: one seed; an error if not)."""
    runs: dict[str, list[dict[str, float]]] = {"mdav-scale": [], "mdav": []}
    methods = ("mdav-scale",) if args.skip_exact else ("mdav-scale", "mdav")
    for _ in range(args.repeat):
        for method in methods:
            runs[method].append(run_child(method, n, args.p, generator, args.k, args.seed))
    results: list[dict[str, Any]] = []
    for method in ("mdav-scale", "mdav"):
        if not runs[method]:
            results.append({"il": float("nan"), "seconds": float("nan"), "runs": []})
            continue
        seconds = [run["seconds"] for run in runs[method]]
        losses = {round(run["il"], 9) for run in runs[method]}
        if len(losses) > 1:
            raise RuntimeError(f"{method} gave different IL in its {len(seconds)} runs with "
                               f"one seed: {sorted(losses)}")
        results.append({**runs[method][0], "seconds": float(np.median(seconds)),
                        "peak_gib": max(run["peak_gib"] for run in runs[method]),
                        "runs": seconds})
    return results[0], results[1]


def _span(seconds: list[float]) -> str:
    return f"{min(seconds):.2f}-{max(seconds):.2f} s" if seconds else "not run"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--generator", choices=[*GENERATORS, "both"], default="both")
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-exact", action="store_true",
                        help="leave out the exact MDAV baseline (minutes at 10^6 records)")
    parser.add_argument("--blocked", type=int, nargs="*", default=[],
                        help="also mdav-scale in kd blocks of these sizes, then across their "
                             "borders (blocked_partition: what the file and Dask engines do)")
    parser.add_argument("--quality", action="store_true",
                        help="also mdav-scale with the quality mode's parameters "
                             "(QUALITY_PARAMS: lists refined twice, sweeps until tol)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run mdav-scale and exact MDAV this many times each, alternated, "
                             "and give the median time (the machine's speed varies by 10-20 %% "
                             "within minutes)")
    parser.add_argument("--json", type=pathlib.Path,
                        help="also append each row here as a JSON line (plot_quality_scale.py)")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    if args.child:
        method, n, p, generator, k, seed = args.child
        child(method, int(n), int(p), generator, int(k), int(seed))
        return

    print(f"machine: {machine()}\n")
    print(f"p = {args.p}, k = {args.k}, seed {args.seed}; each method in its own process\n")
    print("| n | generator | exact MDAV IL (%) | time (s) | mdav-scale IL (%) | time (s) | "
          "IL ratio | speed-up | groups (sizes) | peak memory (GiB) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    generators = GENERATORS if args.generator == "both" else (args.generator,)
    for n in args.n:
        for generator in generators:
            new, exact = run_pair(n, generator, args)
            print(f"| {n:,} | {generator} | {exact['il']:.3f} | {exact['seconds']:.2f} | "
                  f"{new['il']:.3f} | {new['seconds']:.2f} | {new['il'] / exact['il']:.3f} | "
                  f"{exact['seconds'] / new['seconds']:.1f}x | "
                  f"{new['groups']:,} ({new['min']}-{new['max']}) | {new['peak_gib']:.2f} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
            if args.repeat > 1:
                print(f"  (medians of {args.repeat} runs, alternated: mdav-scale "
                      f"{_span(new['runs'])}, exact MDAV {_span(exact['runs'])})", flush=True)
            if args.json:
                with args.json.open("a") as handle:
                    handle.write(json.dumps({"n": n, "generator": generator, "exact": exact,
                                             "scale": new, "load": os.getloadavg()[0]}) + "\n")
            if args.quality:
                best = run_child("mdav-scale-quality", n, args.p, generator, args.k, args.seed)
                print(f"  (quality mode's parameters: IL {best['il']:.3f} % in "
                      f"{best['seconds']:.2f} s, peak {best['peak_gib']:.2f} GiB)", flush=True)
            for size in args.blocked:
                blocked = run_child(f"blocked-{size}", n, args.p, generator, args.k, args.seed)
                print(f"  (blocks of {size:,} + second pass: IL {blocked['il']:.3f} % in "
                      f"{blocked['seconds']:.1f} s, one process, peak "
                      f"{blocked['peak_gib']:.2f} GiB)", flush=True)


if __name__ == "__main__":
    main()
