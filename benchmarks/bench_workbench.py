"""`microagg serve` speed (issue 20): the Data page of a 100,000-row table after its upload.

    python benchmarks/bench_workbench.py

A 100,000-row, 8-column CSV (numbers, text codes, 5 % missing) is uploaded once through
Starlette's test client (the statistics are computed then, once); the Data page is then
requested again (first page, and page 1000 of the preview). Reported: the upload, and the
median of 20 renders of each page. Goal: under 200 ms a page.
"""

from __future__ import annotations

import pathlib
import re
import statistics
import tempfile
import time

import numpy as np
import pandas as pd
from starlette.testclient import TestClient

from _machine import machine
from microagg.web import Settings, create_app


def _table(n: int) -> bytes:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(1000, 9999, n),
                       "sex": rng.choice(["f", "m"], n),
                       "income": rng.normal(30000, 8000, n).round(0),
                       "region": rng.choice([f"r{i}" for i in range(40)], n),
                       "education": rng.choice(["none", "primary", "secondary", "degree"], n),
                       "weight": rng.uniform(50, 150, n).round(2),
                       "household_id": rng.integers(0, n // 3, n)})
    df.loc[rng.random(n) < 0.05, "income"] = np.nan
    return df.to_csv(index=False).encode()


def _median_ms(client: TestClient, path: str, runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(path)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200
    return 1000 * statistics.median(times)


def main() -> None:
    n = 100_000
    content = _table(n)
    with tempfile.TemporaryDirectory() as work:
        settings = Settings(work_dir=pathlib.Path(work))
        with TestClient(create_app(settings)) as client:
            page = client.get(f"/?token={settings.token}").text
            found = re.search(r'name="csrf_token" value="([^"]+)"', page)
            assert found is not None
            start = time.perf_counter()
            response = client.post("/data/upload", data={"csrf_token": found.group(1)},
                                   files={"file": ("big.csv", content)})
            upload = time.perf_counter() - start
            assert response.status_code == 200
            first, later = _median_ms(client, "/data"), _median_ms(client, "/data?page=1000")
    print(f"{n:,} rows x 8 columns ({len(content) / 1e6:.1f} MB CSV): upload, read and "
          f"statistics {upload:.2f} s; Data page median {first:.1f} ms (page 1), "
          f"{later:.1f} ms (page 1000) of 20; goal < 200 ms")
    print(f"Machine: {machine()}")


if __name__ == "__main__":
    main()
