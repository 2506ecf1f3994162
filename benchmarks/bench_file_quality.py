"""The quality mode out of core (issue 21): Parquet to Parquet with the file engine and
``refine`` (mdav-scale in blocks, then across their borders), against exact MDAV's loss.

    python benchmarks/bench_file_quality.py --n 10000000           # about 10 minutes
    python benchmarks/bench_file_quality.py --n 100000000 --folder /big/disk   # ~45 minutes

Data: independent standard normal columns (p = 10, seed 0), written in chunks of 10^6 rows
(the input file is kept in ``--folder`` and reused by a later run of the same size), k = 5.
Exact MDAV cannot run at these sizes (O(n^2): hours at 10^7), so its information loss is
**extrapolated**: exact MDAV is run on 10^4 to 3 x 10^5 rows of the same distribution
(each in this process, a few seconds to a minute) and ``IL = a n^b`` is fitted in logs
(quantization theory gives b = -2/p = -0.2 for cells of k records in p dimensions);
``--mdav-1m`` adds a measured 10^6 point. Peak memory is the summed resident set of this
process and its workers, sampled every 50 ms (an upper bound: shared pages count twice).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time
import warnings

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)
from bench_scale import PeakMemory  # benchmarks/bench_scale.py

K = 5
P = 10
CHUNK = 1_000_000


def write_input(path: pathlib.Path, n: int) -> None:
    """``n`` rows of P standard normal columns (seed 0), written chunk by chunk."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    partial = path.with_suffix(".partial")
    rng = np.random.default_rng(0)
    writer = None
    for first in range(0, n, CHUNK):
        chunk = pd.DataFrame(rng.standard_normal((min(CHUNK, n - first), P)),
                             columns=[f"x{j}" for j in range(P)])
        table = pa.Table.from_pandas(chunk, preserve_index=False)
        writer = writer or pq.ParquetWriter(partial, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()
    partial.rename(path)


def mdav_extrapolated(n: int, measured_1m: float | None) -> tuple[float, list[tuple[int, float]]]:
    """Exact MDAV's IL at ``n`` from a log-log fit on smaller runs (module docstring)."""
    from microagg.partition import mdav

    points = []
    for size in (10_000, 30_000, 100_000, 300_000):
        X = np.random.default_rng(size).standard_normal((size, P))
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        labels = mdav(X, K)
        sums = np.zeros((labels.max() + 1, P))
        np.add.at(sums, labels, X)
        counts = np.bincount(labels)
        sse = float((X * X).sum() - ((sums ** 2).sum(axis=1) / counts).sum())
        points.append((size, 100.0 * sse / float((X * X).sum())))
    if measured_1m is not None:
        points.append((1_000_000, measured_1m))
    slope, intercept = np.polyfit(np.log([s for s, _ in points]),
                                  np.log([il for _, il in points]), 1)
    return float(np.exp(intercept) * n ** slope), points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--folder", type=pathlib.Path,
                        default=pathlib.Path(__file__).parent / "data")
    parser.add_argument("--block-size", type=int, default=None,
                        help="first-pass blocks (default: the method's)")
    parser.add_argument("--mdav-1m", type=float, default=7.993,
                        help="exact MDAV's IL measured at 10^6 (bench_quality_scale.py); "
                             "0 leaves it out of the fit")
    parser.add_argument("--tol", type=float, default=None,
                        help="mdav-scale's tol (default 1e-3): a sweep that gains less than "
                             "this share of the SSE ends the local search")
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: one per CPU; 1: the blocks one at "
                             "a time in this process, on every thread)")
    parser.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from microagg.engines.file.engine import anonymize_file

    args.folder.mkdir(parents=True, exist_ok=True)
    source = args.folder / f"gauss-{args.n}.parquet"
    target = args.folder / f"gauss-{args.n}-out.parquet"
    if not source.exists():
        t = time.perf_counter()
        write_input(source, args.n)
        print(f"input written in {time.perf_counter() - t:.0f} s: {source} "
              f"({source.stat().st_size / 2**30:.2f} GiB)")
    print(f"machine: {machine()}\n")
    with PeakMemory() as memory:
        t = time.perf_counter()
        release = anonymize_file(source, target, quasi_identifiers=[f"x{j}" for j in range(P)],
                                 k=K, random_state=0, refine=3600.0,
                                 method_params=None if args.tol is None else {"tol": args.tol},
                                 block_size=args.block_size, n_jobs=args.jobs,
                                 workdir=args.folder)
        seconds = time.perf_counter() - t
    load = os.getloadavg()[0]
    il = release.metrics["information_loss"]
    estimate, points = mdav_extrapolated(args.n, args.mdav_1m or None)
    stages = ", ".join(f"{name} {value:.0f} s" for name, value in release.timings.items()
                       if name != "total")
    print(f"n = {args.n:,} x {P}, k = {K}, method {release.params['method']}, blocks of "
          f"{release.params['block_size']:,}: total {seconds:.0f} s ({stages}); peak memory "
          f"{memory.peak / 2**30:.2f} GiB resident ({memory.peak_anon / 2**30:.2f} GiB "
          f"anonymous; the rest: mapped file pages); "
          f"{release.metrics['n_blocks']} blocks, "
          f"{release.metrics['n_groups']:,} groups (smallest "
          f"{release.metrics['group_size_min']}); k verified on the written file: "
          f"{release.checks['k_anonymity']['achieved']}; load {load:.1f}")
    print(f"IL {il:.3f} %; exact MDAV extrapolated to this n: {estimate:.3f} % "
          f"(fit on {', '.join(f'{s:,}: {v:.3f}' for s, v in points)}); ratio "
          f"{il / estimate:.3f}")
    if args.json:
        args.json.write_text(json.dumps({
            "n": args.n, "block_size": int(release.params["block_size"]),
            "tol": args.tol, "seconds": seconds,
            "timings": dict(release.timings),
            "peak_gib": memory.peak / 2**30, "peak_anon_gib": memory.peak_anon / 2**30,
            "il": il, "mdav_estimate": estimate,
            "fit_points": points, "n_groups": release.metrics["n_groups"],
            "k_achieved": release.checks["k_anonymity"]["achieved"], "load": load}))
    target.unlink()


if __name__ == "__main__":
    main()
