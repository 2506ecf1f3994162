"""Time of each recoding step and of its verifier on 10^6 records (one column each), with
the verifier's verdict: ``PYTHONPATH=src python benchmarks/bench_recode.py [n]``."""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from _machine import machine
from microagg.steps.recode import Band, MultivariateTopCode, Recode, RecodeDate, TopCode
from microagg.steps.recode.bands import apply_band
from microagg.steps.recode.categories import apply_recode
from microagg.steps.recode.dates import apply_recode_date
from microagg.steps.recode.topcode import apply_mvtopcode, apply_topcode
from microagg.steps.recode.verify import (
    verify_band,
    verify_mvtopcode,
    verify_recode,
    verify_recode_date,
    verify_topcode,
)


def table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Region (30 codes), age, a birth date, income and expenditure (log-normal)."""
    income = rng.lognormal(10, 1, n)
    return pd.DataFrame({
        "region": rng.choice([f"R{i:02d}" for i in range(30)], n).astype(object),
        "age": rng.integers(0, 100, n).astype(np.float64),
        "birth": pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 34000, n), "D"),
        "income": income, "expend": income * rng.uniform(0.3, 1.1, n)})


def main(n: int) -> None:
    rng = np.random.default_rng(2024)
    data = table(n, rng)
    steps = [(apply_recode, verify_recode, Recode("region", groups={
                 "North": [f"R{i:02d}" for i in range(10)]})),
             (apply_band, verify_band, Band("age", breaks=[0, 15, 30, 45, 65, 100])),
             (apply_band, verify_band, Band("income", method="quantiles", bands=10)),
             (apply_recode_date, verify_recode_date, RecodeDate("birth", "age",
                                                                reference="2024-06-30")),
             (apply_topcode, verify_topcode, TopCode("income", top_quantile=0.99)),
             (apply_mvtopcode, verify_mvtopcode, MultivariateTopCode("income,expend"))]
    print(machine(f"n={n}"))
    print("| step | apply (s) | verify (s) | records changed | holds |")
    print("|---|---|---|---|---|")
    for apply, verify, options in steps:
        start = time.perf_counter()
        out, details = apply(data, options, rng)
        middle = time.perf_counter()
        check = verify(options, data, out)
        end = time.perf_counter()
        assert check["records_changed"] == details["records_changed"], options
        print(f"| {options.name} {options.to_record()} | {middle - start:.2f} | "
              f"{end - middle:.2f} | {details['records_changed']:,} | {check['holds']} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10**6)
