"""Recoding and local suppression of 10^6 and 10^7 records with 5 categorical keys, through
the command line, Parquet in and out: time, peak memory, cells suppressed, and k verified on
the written file (read back, counted under the step's missing semantics).

    python benchmarks/bench_suppress_scale.py --rows 1000000 [--engine local] [--k 5]
    python benchmarks/bench_suppress_scale.py --rows 10000000 --engine two-pass \
        --chunk-rows 1000000 [--workdir DIR]

``--engine local`` or ``file`` (the chunked runner, with the release) runs ``microagg
anonymize``; ``--engine two-pass`` runs
:func:`microagg.engines.file.plan_suppress.suppress_file` on the same plan (no release).

Synthetic data (seeded): ``region`` (60 regions, Zipf-like sizes), ``age`` (0-99, a
population pyramid, banded by the plan into 5-year bands), ``sex`` (2), ``occupation``
(45 codes, Zipf-like, the 20 rarest recoded into their major group by the plan) and
``education`` (8 levels, skewed), plus a numeric ``income`` published as is. The plan:

    --step "band column=age breaks=0,5,...,100"
    --step "recode column=occupation groups={...}"
    --step "suppress keys=region,age,sex,occupation,education k=5"

Each run is a child process measured by ``resource.getrusage``
(peak RSS of the child); k is then verified on the written Parquet file by the project's
counter (``microagg.metrics.survey_risk.frequencies``, sdcMicro's ``freqCalc`` rule for a
missing value matching any value), independently of the step.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _machine import machine

KEYS = ("region", "age", "sex", "occupation", "education")
AGE_BREAKS = tuple(range(0, 101, 5))
RARE_OCCUPATIONS = 20


def _zipf_probabilities(n: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return weights / weights.sum()


def synthetic(rows: int, seed: int = 2026) -> pd.DataFrame:
    """The benchmark's table: 5 keys with skewed frequencies and one numeric column."""
    rng = np.random.default_rng(seed)
    region = rng.choice(60, size=rows, p=_zipf_probabilities(60, 1.1))
    pyramid = np.exp(-np.arange(100) / 45.0) * (1 + 0.3 * np.sin(np.arange(100) / 9.0))
    age = rng.choice(100, size=rows, p=pyramid / pyramid.sum())
    sex = rng.integers(0, 2, size=rows)
    occupation = rng.choice(45, size=rows, p=_zipf_probabilities(45, 1.3))
    education = rng.choice(8, size=rows, p=_zipf_probabilities(8, 0.9))
    income = np.round(rng.lognormal(10.0, 0.7, size=rows), 2)
    return pd.DataFrame({
        "region": pd.Categorical.from_codes(region, [f"R{i:02d}" for i in range(60)]),
        "age": age.astype(np.int64),
        "sex": pd.Categorical.from_codes(sex, ["F", "M"]),
        "occupation": pd.Categorical.from_codes(occupation, [f"O{i:02d}" for i in range(45)]),
        "education": pd.Categorical.from_codes(education, [f"E{i}" for i in range(8)]),
        "income": income})


def plan_steps(k: int) -> list[str]:
    """The three ``--step`` texts of the plan."""
    rare = [f"O{i:02d}" for i in range(45 - RARE_OCCUPATIONS, 45)]
    groups = {"O-other": rare}
    return [f"band column=age breaks={','.join(map(str, AGE_BREAKS))}",
            f"recode column=occupation groups='{json.dumps(groups)}'",
            f"suppress keys={','.join(KEYS)} k={k}"]


def verify_written(path: Path, k: int) -> dict[str, int]:
    """k over the keys of the written file, a missing value matching any value (the step's
    semantics), counted by the project's ``frequencies`` on the file read back."""
    from microagg.metrics.survey_risk import frequencies

    published = pd.read_parquet(path, columns=list(KEYS))
    fk = frequencies(published, list(KEYS), missing="any")[0]
    return {"rows": len(published), "achieved": int(fk.min()),
            "violating": int((fk < k).sum()),
            "cells_missing": int(published.isna().to_numpy().sum())}


TWO_PASS = """
import json, sys
from microagg.engines.file.plan_suppress import suppress_file
from microagg.steps import Plan
source, out, chunk, *steps = sys.argv[1:]
figures = suppress_file(source, out, Plan.from_text(steps).steps, chunk_rows=int(chunk))
open(out + ".json", "w").write(json.dumps(figures))
"""


def run_cli(source: Path, out: Path, k: int, engine: str, chunk_rows: int | None) -> dict:
    """``microagg anonymize`` (or, ``--engine two-pass``, the two-pass file plan) in a child
    process: wall time and the child's peak RSS."""
    if engine == "two-pass":
        command = [sys.executable, "-c", TWO_PASS, str(source), str(out),
                   str(chunk_rows or 1_000_000), *plan_steps(k)]
    else:
        command = [sys.executable, "-c", "from microagg.cli import main; main()", "anonymize",
                   str(source), "-o", str(out), "-s", "income", "--summary-json",
                   str(out.with_suffix(".json"))]
        for step in plan_steps(k):
            command += ["--step", step]
        if engine != "local":
            command += ["--engine", engine]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode not in (0, 4):
        raise SystemExit(f"microagg anonymize failed ({done.returncode}):\n{done.stderr}")
    return {"seconds": seconds, "peak_rss_mib": max(peak, before) / 1024,
            "returncode": done.returncode, "stdout": done.stdout}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--engine", default="local")
    parser.add_argument("--chunk-rows", type=int, default=None)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    print(machine(f"load {os.getloadavg()[0]:.2f}"))
    work = Path(args.workdir or tempfile.mkdtemp(prefix="suppress-scale-"))
    source = work / f"synthetic-{args.rows}.parquet"
    if not source.exists():
        start = time.perf_counter()
        synthetic(args.rows).to_parquet(source, index=False)
        print(f"data: {args.rows:,} rows written in {time.perf_counter() - start:.1f} s")
    out = work / f"released-{args.rows}-{args.engine}.parquet"
    result = run_cli(source, out, args.k, args.engine, args.chunk_rows)
    if args.engine == "two-pass":
        figures = json.loads(Path(str(out) + ".json").read_text())
        holds = [figures["check"]["holds"]]
        print(f"two-pass: {figures['patterns']:,} patterns, seconds {figures['seconds']}, "
              f"per key {figures['per_key']}")
    else:
        summary = json.loads(out.with_suffix(".json").read_text())
        holds = [s.get("holds") for s in summary.get("checks", {}).get("steps", [])]
        print(f"timings {summary.get('timings')}")
    check = verify_written(out, args.k)
    print(f"| {args.rows:,} | {args.engine} | {result['seconds']:.1f} s | "
          f"{result['peak_rss_mib']:,.0f} MiB | {check['cells_missing']:,} | "
          f"{check['achieved']} (violating {check['violating']}) | {holds} | "
          f"load {os.getloadavg()[0]:.2f} |")


if __name__ == "__main__":
    main()
