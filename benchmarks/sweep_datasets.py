"""Risk-utility maps of the bundled numeric benchmark files (issue 10: the sweep plot for the
bundled datasets), written to docs/topics/sweeps/.

    python benchmarks/sweep_datasets.py

Grid for the numeric files (Census, Tarragona, EIA, Pima, breast cancer): mdav, md,
top-down (c = 1) x k = 2, 3, 5, 10, 20, each with the mean and with rho = 0.5; seed 0. The
breast-cancer file's 16 records with a missing bare_nuclei are left out (683 remain: the
methods need complete quasi-identifiers). Adult (categorical, with its ARX hierarchies): MAGE
x the same k, loss = NCP and risk = mean 1 / class size, since distance linkage is not
defined on generalized values.
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
    for name in ("census", "tarragona", "eia", "pima", "breast_cancer", "adult"):
        data = load_dataset(name)
        qi = list(data.quasi_identifiers)
        frame = data.data.dropna(subset=qi).reset_index(drop=True)
        hierarchies = {c: str(p) for c, p in data.hierarchies.items()
                       if c in qi and frame[c].dtype.kind not in "biuf"}
        categorical = bool(hierarchies)
        table = sweep(frame, quasi_identifiers=qi, identifiers=list(data.identifiers),
                      sensitive=list(data.sensitive) if categorical else (),
                      ks=[2, 3, 5, 10, 20],
                      methods=["mage"] if categorical else ["mdav", "md", "top-down"],
                      aggregations=[("mean", {})] if categorical else
                      [("mean", {}), ("rho", {"rho": 0.5})],
                      options={"hierarchies": hierarchies} if categorical else None,
                      random_state=0)
        table.to_csv(OUT / f"{name}.csv", index=False)
        plot_sweep(table, OUT / f"{name}.png", title=f"Risk-utility map: {name} "
                   f"({len(frame):,} records)")
        front = table[table["pareto"]].sort_values("information_loss")
        print(f"{name}: {len(table)} runs on {len(frame):,} records, Pareto front: "
              + ", ".join(f"{r.method} k={r.k}" + ("" if r.aggregation == "mean" else " rho")
                          for r in front.itertuples()))

if __name__ == "__main__":
    main()
