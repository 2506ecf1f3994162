"""Time-series microaggregation (issue 22, part 3): time, information loss and linkage risk.

    python benchmarks/bench_series.py                 # the three parts below
    python benchmarks/bench_series.py --dtw-n 600     # a smaller DTW run

1. Euclidean MDAV on 5,000 random-walk series of length 500, k = 5 (the issue's target: the
   partition under 10 s on this machine).
2. DTW MDAV (Sakoe-Chiba band) with DBA representatives on ``--dtw-n`` random walks of
   length 275 (the length of Trace), k = 5.
3. The UCR Trace data set (200 series of length 275, shipped inside tslearn) at k = 3, 5, 10,
   Euclidean + mean and DTW (band 10) + DBA.

Every kernel (ours and tslearn's) is compiled on a small sample first, so the times are the
work alone. ``IL`` is 100 * SSE / SST on the series values (%); ``linkage`` the share of
records whose nearest published series (same distance) is their own; ``reid`` the same
divided by the number of records sharing it. Needs tslearn (``pip install microagg[series]``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg.series import anonymize_series

HEADER = ("| data | n x length | k | distance | representative | partition (s) | total (s) "
          "| IL (%) | DTW to published | linkage | reid |")


def walks(n: int, length: int, seed: int) -> pd.DataFrame:
    """Random walks (cumulative sums of standard normal steps), one per row."""
    X = np.random.default_rng(seed).standard_normal((n, length)).cumsum(axis=1)
    return pd.DataFrame(X, columns=[f"t{i:03d}" for i in range(length)])


def trace() -> pd.DataFrame:
    """UCR Trace, train and test together (200 x 275)."""
    from tslearn.datasets import CachedDatasets

    train, _, test, _ = CachedDatasets().load_dataset("Trace")
    X = np.concatenate([train, test])[:, :, 0]
    return pd.DataFrame(X, columns=[f"t{i:03d}" for i in range(X.shape[1])])


def row(name: str, df: pd.DataFrame, k: int, distance: str, band: int | None) -> str:
    """One table row: run the release and time it."""
    start = time.perf_counter()
    release = anonymize_series(df, series_columns="t", k=k, distance=distance, band=band,
                               random_state=0)
    total = time.perf_counter() - start
    m = release.metrics
    dtw = f"{m['dtw_mean']:.3f}" if "dtw_mean" in m else "-"
    label = distance + (f" (band {band})" if band is not None else "")
    return (f"| {name} | {df.shape[0]:,} x {df.shape[1]} | {k} | {label} | "
            f"{release.params['representative']} | {release.timings['partition']:.2f} | "
            f"{total:.2f} | {m['information_loss']:.2f} | {dtw} | {m['linkage_risk']:.3f} | "
            f"{m['reidentification_risk']:.3f} |")


def main() -> None:
    """Print the machine line and the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtw-n", type=int, default=1200)
    parser.add_argument("--band", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    warm = walks(40, 30, seed=1)  # compile the kernels (ours and tslearn's) first
    anonymize_series(warm, series_columns="t", k=5)
    anonymize_series(warm, series_columns="t", k=5, distance="dtw", band=3)
    print(HEADER)
    print("|" + "---|" * 11)
    print(row("random walks", walks(5000, 500, seed=0), 5, "euclidean", None), flush=True)
    print(row("random walks", walks(args.dtw_n, 275, seed=0), 5, "dtw", args.band), flush=True)
    data = trace()
    for k in (3, 5, 10):
        print(row("Trace", data, k, "euclidean", None), flush=True)
        print(row("Trace", data, k, "dtw", args.band), flush=True)


if __name__ == "__main__":
    main()
