"""`microagg check` speed (issue 10, item 5): the figures of a published 1,000,000-row table.

    python benchmarks/bench_check.py

Table: age (72 values), zip (300), sex (2) as quasi-identifiers -> 43,200 classes; disease
(8 values) and income (rounded normal) as sensitive columns. Reported: k, the class risk,
l (distinct, entropy), t (EMD) and homogeneity for both sensitive columns; median of 3 runs.
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import pandas as pd

from microagg.audit.check import check_table


def main() -> None:
    rng = np.random.default_rng(0)
    n = 1_000_000
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(0, 300, n),
                       "sex": rng.choice(["f", "m"], n), "income": rng.normal(size=n).round(1),
                       "disease": rng.choice(list("abcdefgh"), n)})
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        result = check_table(df, quasi_identifiers=["age", "zip", "sex"],
                             sensitive=["disease", "income"])
        runs.append(time.perf_counter() - t)
    k_only = time.perf_counter()
    check_table(df, quasi_identifiers=["age", "zip", "sex"])
    k_only = time.perf_counter() - k_only
    print(f"1,000,000 rows, {result.classes:,} classes: k = {result.k}; full check (k, risk, "
          f"l, t, homogeneity of 2 sensitive columns) median {np.median(runs):.2f} s of 3; "
          f"k and risk only {k_only:.2f} s")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}")


if __name__ == "__main__":
    main()
