"""Risk-utility maps of the bundled numeric benchmark files (issue 10: the sweep plot for the
bundled datasets), written to docs/topics/sweeps/.

    python benchmarks/sweep_datasets.py

Grid: mdav, md, top-down (c = 1) x k = 2, 3, 5, 10, 20, each with the mean and with
rho = 0.5; seed 0.
"""

from __future__ import annotations

import pathlib
import warnings

from microagg.datasets import load_dataset
from microagg.sweep import plot_sweep, sweep

OUT = pathlib.Path(__file__).resolve().parents[1] / "docs" / "topics" / "sweeps"


def main() -> None:
    warnings.simplefilter("ignore")
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("census", "tarragona", "eia"):
        data = load_dataset(name)
        table = sweep(data.data, quasi_identifiers=list(data.quasi_identifiers),
                      identifiers=list(data.identifiers), ks=[2, 3, 5, 10, 20],
                      methods=["mdav", "md", "top-down"],
                      aggregations=[("mean", {}), ("rho", {"rho": 0.5})], random_state=0)
        table.to_csv(OUT / f"{name}.csv", index=False)
        plot_sweep(table, OUT / f"{name}.png", title=f"Risk-utility map: {name}")
        front = table[table["pareto"]].sort_values("information_loss")
        print(f"{name}: {len(table)} runs, Pareto front: "
              + ", ".join(f"{r.method} k={r.k}" + ("" if r.aggregation == "mean" else " rho")
                          for r in front.itertuples()))


if __name__ == "__main__":
    main()
