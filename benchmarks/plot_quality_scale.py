"""The plot of issue 21: mdav-scale's information loss as a share of exact MDAV's, and its
speed-up, against the number of records (``docs/images/quality-scale.png``).

    python benchmarks/bench_quality_scale.py --n 10000 30000 100000 300000 1000000 \\
        --generator gaussian --json data/quality-scale.jsonl
    python benchmarks/bench_file_quality.py --n 10000000 --json data/result-1e7.json
    python benchmarks/plot_quality_scale.py data/quality-scale.jsonl data/result-1e7.json

In-memory rows (JSON lines of ``bench_quality_scale.py``) are measured against exact MDAV in
the same run; file-engine results (``bench_file_quality.py``) against exact MDAV's loss
extrapolated from smaller runs, and its time against exact MDAV's time extrapolated as
``n^2`` from the largest measured run (hollow markers: estimates).
"""

from __future__ import annotations

import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", type=pathlib.Path, nargs="+")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent.parent
                        / "docs" / "images" / "quality-scale.png")
    args = parser.parse_args()
    measured, estimated = [], []
    for path in args.inputs:
        if path.suffix == ".jsonl":
            for line in path.read_text().splitlines():
                row = json.loads(line)
                if row["generator"] == "gaussian" and row["exact"]["il"] == row["exact"]["il"]:
                    measured.append((row["n"], row["scale"]["il"] / row["exact"]["il"],
                                     row["exact"]["seconds"] / row["scale"]["seconds"],
                                     row["exact"]["seconds"]))
        else:
            estimated.append(json.loads(path.read_text()))
    measured.sort()
    largest_n, _, _, largest_seconds = measured[-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot([m[0] for m in measured], [m[1] for m in measured], "o-", label="in memory")
    right.plot([m[0] for m in measured], [m[2] for m in measured], "o-", label="in memory")
    for colour, e in enumerate(estimated, start=1):
        mdav_seconds = largest_seconds * (e["n"] / largest_n) ** 2
        left.plot(e["n"], e["il"] / e["mdav_estimate"], "o", fillstyle="none", color=f"C{colour}",
                  label=f"file engine, blocks of {e.get('block_size', 100_000):,}")
        right.plot(e["n"], mdav_seconds / e["seconds"], "o", fillstyle="none", color=f"C{colour}")
    left.axhline(1.0, color="grey", lw=0.8)
    left.set(xscale="log", xlabel="records (p = 10, k = 5)",
             ylabel="IL of mdav-scale / IL of exact MDAV", title="Information loss")
    right.set(xscale="log", yscale="log", xlabel="records (p = 10, k = 5)",
              ylabel="exact MDAV time / mdav-scale time", title="Speed-up")
    left.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
