"""Time the CLI on a synthetic census (the one of ``bench_record_swap.py``, citizenship as
a categorical column), Parquet in and out: targeted record swapping of households
(``swap_households``, k = 3, swap rate 5 %) then PRAM of citizenship (``pd=0.8``), in
memory. Reports the wall time, the peak resident memory (``/usr/bin/time -v``), the exit
status and the release's verdict (``--engine file``: the chunked census plan of
``microagg.engines.file.plan_census``), and the persons and households moved across each level
of the geography (swaps that cross a region would tie regions together in a partitioned
run).

    PYTHONPATH=src python benchmarks/bench_census_scale.py [--persons 10000000] [--dir /tmp]
        [--engine file]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_record_swap import census

STEPS = ("swap_households hierarchy=region,district,municipality similar=hsize "
         "risk_variables=age,sex k=3 swaprate=0.05", "pram variables=citizen pd=0.8")


def write_census(persons: int, folder: Path) -> Path:
    """The synthetic census as Parquet, citizenship as text categories (PRAM's input)."""
    table = census(persons)
    table["citizen"] = table["citizen"].astype(int).astype(str).astype("category")
    path = folder / f"census_{persons}.parquet"
    table.to_parquet(path, index=False)
    return path


def run_cli(source: Path, folder: Path, engine: str = "local") -> dict[str, object]:
    """``microagg anonymize`` under ``/usr/bin/time -v``: seconds, peak RSS, verdict."""
    out = folder / f"out_{source.stem}_{engine}.parquet"
    summary = folder / f"sum_{source.stem}_{engine}.json"
    command = ["/usr/bin/time", "-v", str(Path(sys.executable).parent / "microagg"),
               "anonymize", str(source), "--engine", engine, "--household", "hid",
               "-o", str(out), "--summary-json", str(summary), "--random-state", "1"]
    for step in STEPS:
        command += ["--step", step]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    seconds = sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.group(1).split(":"))))
    verdict = json.loads(summary.read_text()).get("verdict") if summary.exists() else None
    return {"rc": done.returncode, "wall_s": seconds, "peak_rss_mb": int(rss.group(1)) / 1024,
            "verdict": verdict, "out": out}


def moved(source: Path, out: Path) -> dict[str, int]:
    """Persons whose code changed at each level (row order is kept by the release)."""
    cols = ["region", "district", "municipality"]
    before, after = pd.read_parquet(source, columns=cols), pd.read_parquet(out, columns=cols)
    return {c: int((before[c].to_numpy() != after[c].to_numpy()).sum()) for c in cols}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--persons", type=int, default=10_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--engine", choices=("local", "file"), default="local",
                        help="local: in memory; file: the chunked census plan")
    args = parser.parse_args()
    source = args.dir / f"census_{args.persons}.parquet"
    if not source.exists():
        source = write_census(args.persons, args.dir)
    result = run_cli(source, args.dir, args.engine)
    print(json.dumps({k: v for k, v in result.items() if k != "out"}))
    if result["rc"] in (0, 4):
        print("persons moved per level:", moved(source, result["out"]))


if __name__ == "__main__":
    main()
