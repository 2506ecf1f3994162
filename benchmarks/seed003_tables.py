"""Reproduce seed 003's Tables VI-VIII and its timing figures with every registered method.

For Tarragona, Census and EIA (11 columns) and k = 3, 4, 5, 10 it prints our IL
(100 * SSE / SST on z-scores, groups formed on z-scores) for every method next to the value
seed 003 prints, the running time, a rigorous lower bound on the IL of any k-partition, the
quality mode (mdav-ls, under a time limit), and the Meansort / MultiDSort figures computed
the way the paper evidently computed them (no scaling at all, IL in raw units).

    python benchmarks/seed003_tables.py                       # quality mode 60 s per case
    python benchmarks/seed003_tables.py --refine-seconds 10   # quicker
    python benchmarks/seed003_tables.py --markdown out.md     # also write the tables

Timing vs file size (seed 003 Fig. 6) is measured on random subsets of EIA.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.neighbors import NearestNeighbors

from microagg import load_dataset
from microagg.metrics import sse, sst
from microagg.partition import PARTITIONERS, meansort_ps, multidsort_ps
from microagg.partition.local_search import quality_mode

KS = (3, 4, 5, 10)
DATASETS = ("tarragona", "census", "eia")

# Seed 003, Tables VI-VIII (None: not printed). The paper quotes them from [12], [13], [32],
# [33]; its "MDAV-1" column is Lin et al.'s MDAV-1.
PAPER: dict[str, dict[str, tuple[float | None, ...]]] = {
    "tarragona": {
        "mhm-mdav": (16.9326, None, 22.4617, 33.1923), "mhm-md": (16.9829, None, 22.5269, 33.1834),
        "mhm-cbfs": (16.9714, None, 22.8227, 33.2188), "mhm-npn": (17.3949, None, 27.0213, 40.1831),
        "tfrp1": (17.228, 19.396, 22.110, 33.186), "tfrp2": (16.881, 19.181, 21.847, 33.088),
        "mdav1": (16.93258762, 19.54578612, 22.46128236, 33.19235838),
        "mdav2": (16.38261429, 19.01314997, 22.07965363, 33.17932950),
        "dba1": (20.69948803, 23.82761456, 26.00129826, 35.39295837),
        "dba2": (16.15265063, 22.67107728, 25.45039236, 34.80675148),
        "multidsort-ps": (9.86, 12.17, 18.52, 32.23), "meansort-ps": (5.49, 8.34, 10.89, 17.00),
    },
    "census": {
        "mhm-mdav": (5.6523, None, 9.0870, 14.2239), "mhm-md": (5.69724, None, 8.98594, 14.3965),
        "mhm-cbfs": (5.6734, None, 8.8942, 13.8925), "mhm-npn": (6.3498, None, 11.3443, 18.7335),
        "tfrp1": (5.931, 7.880, 9.357, 14.442), "tfrp2": (5.803, 7.638, 8.980, 13.959),
        "mdav1": (5.692186279, 7.494699833, 9.088435498, 14.15593043),
        "mdav2": (5.656049371, 7.409645342, 9.012389597, 13.94411775),
        "dba1": (6.144855154, 9.127883805, 10.84218735, 15.78549732),
        "dba2": (5.581605762, 7.591307664, 9.046162117, 13.52140518),
        "multidsort-ps": (2.10, 3.63, 3.46, 6.85), "meansort-ps": (1.92, 2.28, 2.72, 4.61),
    },
    "eia": {
        "mhm-mdav": (0.4081, None, 1.2563, 3.7725), "mhm-md": (0.4422, None, 1.2627, 3.6374),
        "mhm-npn": (0.5525, None, 0.9602, 2.3188),
        "tfrp1": (0.530, 0.661, 1.651, 3.242), "tfrp2": (0.428, 0.599, 0.910, 2.590),
        "mdav1": (0.482938725, 0.671345141, 1.666657361, 3.83966422),
        "mdav2": (0.411101515, 0.587381756, 0.946263963, 3.16085577),
        "dba1": (1.090194828, 0.84346907, 1.895536919, 4.265801303),
        "dba2": (0.421048322, 0.559755523, 0.81849828, 2.080980825),
        "multidsort-ps": (0.41, 0.71, 0.85, 1.38), "meansort-ps": (0.21, 0.31, 0.43, 1.04),
    },
}


def zscore(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)


def il(X: np.ndarray, labels: np.ndarray) -> float:
    return 100.0 * sse(X, labels) / sst(X)


def lower_bound(X: np.ndarray, k: int) -> float:
    """IL lower bound of any partition into groups >= k: SSE >= sum_i D_i(k-1) / (2k),
    D_i(k-1) the sum of squared distances from record i to its k-1 nearest others."""
    dist, _ = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X)
    return 100.0 * float((np.sort(dist, axis=1)[:, 1:] ** 2).sum()) / (2 * k) / sst(X)


def fmt(v: float | None, digits: int = 4) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--refine-seconds", type=float, default=60.0)
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    emit(f"machine: {platform.machine()}, Python {platform.python_version()}; quality mode "
         f"mdav-ls with time_limit={args.refine_seconds:g} s, random_state=0")
    warm = zscore(load_dataset("census").benchmark_view().to_numpy(dtype=float))
    for entry in PARTITIONERS.values():  # compile everything before timing
        entry(warm[:60], 3)
    methods = [m for m in PARTITIONERS if m != "mdav-ls"]
    for name in DATASETS:
        X = zscore(load_dataset(name).benchmark_view().to_numpy(dtype=float))
        emit(f"\n### {name} ({X.shape[0]} x {X.shape[1]}), IL on z-scores, k = 3 / 4 / 5 / 10\n")
        emit("| method | ours | paper | seconds (4 k) |")
        emit("|---|---|---|---:|")
        for method in methods:
            t = time.perf_counter()
            ours = [il(X, PARTITIONERS[method](X, k)) for k in KS]
            seconds = time.perf_counter() - t
            paper = PAPER[name].get(method)
            emit(f"| {method} | {' / '.join(fmt(v) for v in ours)} | "
                 f"{' / '.join(fmt(v) for v in paper) if paper else '-'} | {seconds:.2f} |")
        t = time.perf_counter()
        best = []
        for k in KS:
            labels = quality_mode(X, k, rounds=10**9, time_limit=args.refine_seconds, random_state=0)
            assert np.bincount(labels).min() >= k
            best.append(il(X, labels))
        emit(f"| **mdav-ls** | {' / '.join(fmt(v) for v in best)} | - | "
             f"{time.perf_counter() - t:.1f} |")
        emit(f"| lower bound | {' / '.join(fmt(lower_bound(X, k)) for k in KS)} | - | - |")
        R = load_dataset(name).benchmark_view().to_numpy(dtype=float)
        for label, func in (("meansort-ps", meansort_ps), ("multidsort-ps", multidsort_ps)):
            raw = [il(R, func(R, k, normalize="none")) for k in KS]
            emit(f"| {label}, raw units (paper's way) | {' / '.join(fmt(v, 2) for v in raw)} | "
                 f"{' / '.join(fmt(v, 2) for v in PAPER[name][label])} | - |")

    emit("\n### Time vs file size (EIA subsets, seconds; seed 003 Fig. 6)\n")
    X = zscore(load_dataset("eia").benchmark_view().to_numpy(dtype=float))
    rng = np.random.default_rng(0)
    sizes = (500, 1000, 2000, 4092)
    emit("| method | " + " | ".join(str(s) for s in sizes) + " |")
    emit("|---|" + "---:|" * len(sizes))
    for method in ("mdav", "meansort-ps", "multidsort-ps", "mhm-mdav", "tfrp2", "dba2"):
        cells = []
        for size in sizes:
            rows = np.sort(rng.permutation(X.shape[0])[:size])
            t = time.perf_counter()
            PARTITIONERS[method](X[rows], 5)
            cells.append(f"{time.perf_counter() - t:.3f}")
        emit(f"| {method} | " + " | ".join(cells) + " |")
    if args.markdown:
        args.markdown.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
