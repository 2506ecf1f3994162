"""Start-up time of the command line (issue 18, item 9), before and after, on one machine.

    python benchmarks/bench_startup.py                    # this tree against HEAD
    python benchmarks/bench_startup.py --baseline REV --runs 5 --write benchmarks/startup.md

Each command runs in a fresh interpreter (``python -c "from microagg.cli import main;
main()" ARGS``, what the ``microagg`` script does), ``--runs`` times per tree, the trees
interleaved round by round so that a busy machine slows both alike; the table gives the
median wall time. The baseline is ``git archive REV src`` unpacked in a temporary folder and
put first on ``PYTHONPATH``. Each tree has its own kernel cache (``NUMBA_CACHE_DIR``), warmed
by one untimed run of each command first: the times are those of a warm cache.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from _machine import machine

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAIN = "from microagg.cli import main; main()"


def _commands(out: pathlib.Path) -> dict[str, list[str]]:
    return {
        "microagg --version": ["-c", MAIN, "--version"],
        "python -c 'import microagg'": ["-c", "import microagg"],
        "microagg anonymize --dataset census -k 5": [
            "-c", MAIN, "anonymize", "--dataset", "census", "-k", "5", "-o", str(out)],
    }


def _baseline(rev: str, folder: pathlib.Path) -> pathlib.Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def _seconds(args: list[str], src: pathlib.Path, cache: pathlib.Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, cwd=cache,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", type=pathlib.Path, help="also write the table here")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        (work / "base").mkdir()
        trees = {f"before ({options.baseline})": _baseline(options.baseline, work / "base"),
                 "after (this tree)": ROOT / "src"}
        caches = {}
        for label in trees:
            caches[label] = work / f"cache-{len(caches)}"
            caches[label].mkdir()
        commands = _commands(work / "c5.csv")
        for label, src in trees.items():  # warm each tree's kernel cache (untimed)
            for args in commands.values():
                _seconds(args, src, caches[label])
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(options.runs):
            for name, args in commands.items():
                for label, src in trees.items():
                    times.setdefault((name, label), []).append(
                        _seconds(args, src, caches[label]))
    lines = [f"Start-up, median of {options.runs} runs, warm kernel cache; "
             f"{machine()}", "",
             "| command | " + " | ".join(trees) + " |",
             "|---|" + "---:|" * len(trees)]
    for name in commands:
        cells = [f"{statistics.median(times[(name, label)]):.2f} s" for label in trees]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"
    print(table)
    if options.write:
        options.write.write_text(table)


if __name__ == "__main__":
    main()
