"""Progress of exact MDAV (issue 18, item 8): chunked kernel calls give the same labels, the
records reach the CLI, shown as a bar on a terminal and as plain lines otherwise."""

from __future__ import annotations

import io
import itertools
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from microagg._runtime.progress import current_progress, reporting
from microagg.cli._common import DelayedProgress
from microagg.partition import mdav, mdav1
from microagg.partition.blocking import blocked_partition

MDAV_MODULE = sys.modules["microagg.partition.mdav"]


def _data(n: int, p: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[::5] = X[1]  # heavy ties: the tie-breaking must carry over between calls
    X[::7, 0] = np.round(X[::7, 0], 1)
    return X


@pytest.mark.parametrize(("n", "p", "k", "seed"), [
    (37, 2, 3, 0), (500, 3, 2, 1), (2_000, 4, 5, 2), (3_001, 6, 7, 3), (9_000, 3, 4, 4),
])
@pytest.mark.parametrize("partitioner", [mdav, mdav1])
def test_chunked_calls_give_the_labels_of_one_call(monkeypatch, partitioner, n, p, k,
                                                   seed) -> None:
    X = _data(n, p, seed)
    whole = partitioner(X, k)
    monkeypatch.setattr(MDAV_MODULE, "PROGRESS_MIN_ROWS", 0)
    seen: list[tuple[int, int]] = []
    with reporting(lambda grouped, total: seen.append((grouped, total))):
        chunked = partitioner(X, k)
    np.testing.assert_array_equal(chunked, whole)
    assert chunked.dtype == whole.dtype
    # the reports: from 0 to n, never backwards, every one about all n records
    assert seen[0] == (0, n) and seen[-1] == (n, n)
    assert all(total == n for _, total in seen)
    assert all(a <= b for (a, _), (b, _) in itertools.pairwise(seen))
    assert len(seen) > 3 if n >= 2_000 else len(seen) >= 2


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_any_cut_into_calls_gives_the_same_labels(steps: int) -> None:
    X = _data(1_500, 3, 7)
    k = 3
    work = MDAV_MODULE._mdav_start(X)
    m, g = X.shape[0], 0
    calls = 0
    while m >= 3 * k:
        m, g = MDAV_MODULE._mdav_steps(*work, k, 3, m, g, steps)
        calls += 1
    labels = MDAV_MODULE._mdav_finish(X, *work, k, 3, m, g)
    np.testing.assert_array_equal(labels, mdav(X, k))
    assert calls == -(-(X.shape[0] // (2 * k) - 1) // steps)  # ceil(steps of 2k / steps)


def test_small_inputs_and_no_listener_report_nothing(monkeypatch) -> None:
    X = _data(300, 2, 0)
    seen: list[tuple[int, int]] = []
    with reporting(lambda grouped, total: seen.append((grouped, total))):
        mdav(X, 3)  # below PROGRESS_MIN_ROWS: one kernel call
    assert seen == []
    assert current_progress() is None  # the listener is gone after the block


def test_blocks_report_as_a_whole_not_each_from_zero(monkeypatch) -> None:
    monkeypatch.setattr(MDAV_MODULE, "PROGRESS_MIN_ROWS", 0)
    seen: list[tuple[int, int]] = []
    with reporting(lambda grouped, total: seen.append((grouped, total))):
        labels = blocked_partition(_data(600, 2, 1), 3, blocking="kd", block_size=100)
    assert np.bincount(labels).min() >= 3
    grouped = [g for g, _ in seen]
    assert seen[0] == (0, 600) and seen[-1] == (600, 600) and grouped.count(0) == 1
    assert grouped == sorted(grouped) and {t for _, t in seen} == {600}


def test_records_on_a_terminal_show_the_count_and_the_time_left() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    with DelayedProgress(console, ("read", "anonymize", "write"), delay=0.0) as progress:
        progress.records(0, 10_000)
        progress.records(5_000, 10_000)
        progress._progress.refresh()
        shown = buffer.getvalue()
    assert "mdav: grouping records" in shown
    assert "5,000/10,000" in shown
    assert re.search(r"about \d+ s left", shown)


def test_records_in_a_log_are_lines_at_each_tenth() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=200)
    with DelayedProgress(console, ("read",), log_delay=0.0, log_every=1e9) as progress:
        for grouped in range(0, 10_001, 250):
            progress.records(grouped, 10_000)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 10  # 10 %, 20 %, ..., 90 %, then the end
    assert re.fullmatch(r"mdav: 1,000 of 10,000 records grouped \(10 %\), about \d+ s left",
                        lines[0])
    assert lines[-1].startswith("mdav: 10,000 of 10,000 records grouped (100 %) in ")


def test_records_in_a_log_wait_for_the_delay() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False)
    with DelayedProgress(console, ("read",)) as progress:  # LOG_DELAY: 5 s
        for grouped in range(0, 10_001, 1_000):
            progress.records(grouped, 10_000)
    assert buffer.getvalue() == ""


# --- the command, in a fresh process, stderr captured ------------------------------------

_DRIVER = """
import sys, time
import microagg.cli._common as common
common.LOG_DELAY = 0.0
common.PROGRESS_DELAY = 0.0
import importlib
importlib.import_module("microagg.partition.mdav").PROGRESS_MIN_ROWS = 0
if "--slow-reports" in sys.argv:  # keep the bar up long enough for a refresh
    sys.argv.remove("--slow-reports")
    records = common.DelayedProgress.records
    def slow(self, grouped, total):
        records(self, grouped, total)
        if grouped in (0, total) or grouped * 2 // total != (grouped - 1) * 2 // total:
            time.sleep(0.4)
    common.DelayedProgress.records = slow
from microagg.cli import main
sys.argv = ["microagg", *sys.argv[1:]]
main()
"""


def _table(tmp_path: Path, n: int = 3_000) -> Path:
    rng = np.random.default_rng(0)
    path = tmp_path / "in.csv"
    data = rng.normal(size=(n, 3)).round(4)
    path.write_text("a,b,c\n" + "\n".join(",".join(map(str, row)) for row in data) + "\n")
    return path


def _args(tmp_path: Path) -> list[str]:
    return ["anonymize", str(_table(tmp_path)), "-q", "a,b,c", "-k", "3", "-o",
            str(tmp_path / "out.csv")]


def test_command_logs_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _DRIVER, *_args(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("mdav: ")]
    assert len(lines) >= 5, done.stderr
    assert re.fullmatch(r"mdav: [\d,]+ of 3,000 records grouped \(\d+ %\), about \d+ "
                        r"(s|min) left", lines[0])
    assert lines[-1].startswith("mdav: 3,000 of 3,000 records grouped (100 %) in ")
    assert "\x1b[" not in done.stderr  # no terminal codes in a log
    assert (tmp_path / "out.csv").is_file()


def test_command_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-c", _DRIVER, *_args(tmp_path),
                                "--slow-reports"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the other end closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    process.stdout.read()
    assert process.wait(timeout=300) == 0
    reader.join(timeout=10)
    os.close(master)
    shown = b"".join(chunks).decode(errors="replace")
    assert "mdav: grouping records" in shown
    assert re.search(r"[\d,]+/3,000, about \d+ s left", shown)
    assert "records grouped (" not in shown  # the bar, not the log lines


def test_quick_command_prints_no_progress(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *_args(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "records grouped" not in done.stderr


def test_a_blocked_run_logs_lines_block_by_block(tmp_path: Path) -> None:
    # the blocks report nothing themselves (MDAV's own reports are off here: small blocks)
    done = subprocess.run([sys.executable, "-c", _DRIVER.replace("PROGRESS_MIN_ROWS = 0",
                                                                 "PROGRESS_MIN_ROWS = 10**9"),
                           *_args(tmp_path), "--blocking", "kd", "--block-size", "300"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("mdav: ")]
    assert len(lines) >= 5, done.stderr
    assert re.fullmatch(r"mdav: [\d,]+ of 3,000 records grouped \(\d+ %\), about \d+ "
                        r"(s|min) left", lines[0])
    assert lines[-1].startswith("mdav: 3,000 of 3,000 records grouped (100 %) in ")


def test_a_blocked_run_estimates_the_time_left_linearly() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=120)
    with DelayedProgress(console, ("read", "anonymize", "write"), log_delay=0.0) as progress:
        progress.quadratic = False
        progress.records(0, 10_000)
        progress._records_began -= 5.0  # the first tenth took 5 s
        progress.records(1_000, 10_000)
    # nine tenths left at that pace: 45 s (exact MDAV's model would say about 21 s)
    assert buffer.getvalue().splitlines()[0] == \
        "mdav: 1,000 of 10,000 records grouped (10 %), about 45 s left"
