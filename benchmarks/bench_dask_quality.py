"""The Dask engine's quality mode on a 2-worker LocalCluster against one process (issue 21).

    python benchmarks/bench_dask_quality.py                     # 10^6 x 10, k = 5
    python benchmarks/bench_dask_quality.py --n 200000 --block-size 50000

The same Dask DataFrame (Gaussian, p = 10, from ``bench_quality_scale.make_data``) is
released twice with ``refine`` (mdav-scale in the blocks, then the second pass across their
borders): once in this process (``scheduler="sync"``), once on a ``LocalCluster`` of two
worker processes with one thread each. The issue's target: the same IL to 4 digits; this
prints both ILs, whether the published frames are identical, and the seconds of each run
(kernels compiled or loaded beforehand in every process, so the time is the release alone).
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pandas as pd

from _machine import machine  # benchmarks/_machine.py (run as a script)
from bench_quality_scale import make_data


def _warm() -> None:
    """Load or compile mdav-scale's kernels in this process."""
    from microagg.partition.scale import mdav_scale, refine_groups

    A = np.random.default_rng(0).normal(size=(3_000, 10))
    refine_groups(A, mdav_scale(A, 5, random_state=0), 5, random_state=0)


def main() -> None:
    import dask
    import dask.dataframe as dd
    import distributed

    from microagg.engines.dask.engine import anonymize_dask

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--block-size", type=int, default=None)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--refine", type=float, default=3600.0)
    args = parser.parse_args()
    print(machine(f"n={args.n:,}", "p=10", f"k={args.k}", f"block_size={args.block_size}",
                  f"refine={args.refine:g} s"))
    columns = [f"x{j}" for j in range(10)]
    frame = pd.DataFrame(make_data(args.n, 10, "gaussian", 0), columns=columns)
    kwargs = dict(quasi_identifiers=columns, k=args.k, random_state=0, refine=args.refine)
    if args.block_size:
        kwargs["block_size"] = args.block_size
    _warm()
    parts = max(2, args.n // 50_000)
    runs = {}
    with dask.config.set(scheduler="sync"):
        t = time.perf_counter()
        release = anonymize_dask(dd.from_pandas(frame, npartitions=parts), **kwargs)
        published = release.data.compute()
        runs["one process (sync)"] = (release, published, time.perf_counter() - t)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    try:
        client.run(_warm)
        t = time.perf_counter()
        release = anonymize_dask(dd.from_pandas(frame, npartitions=parts), client=client,
                                 **kwargs)
        published = release.data.compute()
        runs["LocalCluster, 2 workers"] = (release, published, time.perf_counter() - t)
    finally:
        client.close()
        cluster.close()
    print("\n| run | IL % | seconds | k verified | method |")
    print("|---|---:|---:|---:|---|")
    for name, (rel, _, seconds) in runs.items():
        print(f"| {name} | {rel.metrics['information_loss']:.6f} | {seconds:.1f} | {rel.k} "
              f"| {rel.params['method']} |")
    (_, one, _), (_, two, _) = runs.values()
    same = one.sort_index().equals(two.sort_index())
    print(f"\npublished frames identical: {same}")


if __name__ == "__main__":
    main()
