"""Time of sdcMicro's numeric measures (issue 19, part 3) on the bundled Census file.

    python benchmarks/bench_sdc_numeric.py

Census, columns AFNLWGT .. TAXINC (1080 rows), masked by mdav at k = 3 without rounding;
each measure timed as the median of 3 runs, with its value beside it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable

import numpy as np

import microagg
from microagg.datasets import load_dataset
from microagg.metrics import dld_risk
from microagg.metrics.interval import interval_disclosure, robust_interval_disclosure
from microagg.metrics.linkage import linkage_one_to_one
from microagg.metrics.sdc_utility import eigenvalue_utility, il1s_total

COLUMNS = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC"]


def _median_time(fn: Callable[[], object]) -> tuple[float, object]:
    runs, value = [], None
    for _ in range(3):
        t = time.perf_counter()
        value = fn()
        runs.append(time.perf_counter() - t)
    return float(np.median(runs)), value


def main() -> None:
    data = load_dataset("census").data[COLUMNS]
    release = microagg.anonymize(data, quasi_identifiers=COLUMNS, k=3, method="mdav",
                                 random_state=0, rounding=False)
    x, xm = data.to_numpy(float), release.data[COLUMNS].to_numpy(float)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    zx, zm = (x - mu) / sd, (xm - mu) / sd
    cases: dict[str, Callable[[], object]] = {
        "interval_disclosure (dRisk)": lambda: interval_disclosure(x, xm),
        "robust_interval_disclosure (dRiskRMD)": lambda: robust_interval_disclosure(x, xm),
        "il1s_total": lambda: il1s_total(x, xm),
        "eigenvalue_utility": lambda: eigenvalue_utility(x, xm),
        "eigenvalue_utility robust": lambda: eigenvalue_utility(x, xm, robust=True),
        "dld_risk": lambda: dld_risk(zx, zm),
        "linkage_one_to_one": lambda: linkage_one_to_one(zx, zm),
    }
    for name, fn in cases.items():
        seconds, value = _median_time(fn)
        print(f"{name:40s} {seconds * 1000:8.1f} ms  {value}")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}")


if __name__ == "__main__":
    main()
