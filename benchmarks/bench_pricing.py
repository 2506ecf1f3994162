"""One exact pricing round of the certified bound (issue 23), every row.

    python benchmarks/bench_pricing.py census 5            # the k-NN point, then one lifting
    python benchmarks/bench_pricing.py census 10 --rounds 1

Prices at the k-NN point ``u_i = D_i(k-1) / (2k)`` (dual feasible) with the incumbents of
MDAV's groups (``--carry``: and of the previous round's best groups), then at each lifted
point ``u + max(rho, 0)``, and prints each round's proved
bound (IL %, on z-scores), whether every row was enumerated within its node budget, and the
seconds. The same rounds open :func:`microagg.bounds.lower_bound`'s lifting, so this times
the enumeration alone, without the master LP. The kernels are compiled (or loaded) first
on a 30-row sample.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg import load_dataset
from microagg.bounds._exact import NODE_BUDGET, exact_pricing
from microagg.bounds._master import ColumnPool, incumbents
from microagg.bounds._pricing import knn_table
from microagg.metrics import sst
from microagg.partition import partition


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", choices=["census", "tarragona", "eia"])
    parser.add_argument("k", type=int)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=int, default=NODE_BUDGET)
    parser.add_argument("--carry", action="store_true",
                        help="the incumbents of a round also from the previous round's best "
                             "groups (as lower_bound's rounds do)")
    args = parser.parse_args()
    print(machine(f"{args.dataset} k={args.k}", f"node budget {args.budget:,}"))
    X = load_dataset(args.dataset).benchmark_view().to_numpy(dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    k = args.k
    table = knn_table(X, k)
    u = table[:, k - 1] / (2.0 * k)
    pool = ColumnPool(X)  # MDAV's groups: the incumbents of every round
    pool.add_partition(partition(X, k, method="mdav"))
    exact_pricing(X[:30], u[:30], knn_table(X[:30], k), k, np.full(30, np.inf), args.budget)
    carried: list[np.ndarray] = []
    for r in range(args.rounds):
        t0 = time.perf_counter()
        priced = exact_pricing(X, u, table, k, incumbents(pool, u, k, carried), args.budget)
        print(f"round {r}: bound {100 * priced.bound / sst(X):.4f} % of the SST, every row "
              f"exact: {priced.exact}, negative groups {len(priced.found)}, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        u = u + np.maximum(priced.rho, 0.0)
        carried = priced.groups if args.carry else []


if __name__ == "__main__":
    main()
