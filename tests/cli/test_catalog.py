"""``microagg methods``: a compact listing when stdout is not a terminal, the table on one."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from microagg.cli.catalog import COMPACT_WIDTH, method_family, shortened
from microagg.partition import PARTITIONERS, get_partitioner


def _methods(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           "methods"], capture_output=True, text=True, timeout=120,
                          env={**environ, **env})


def test_methods_in_a_pipe_is_one_line_per_method() -> None:
    done = _methods()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 2 * len(PARTITIONERS) + 4  # title, aliases, aggregations
    for name, entry in PARTITIONERS.items():
        line = next(line for line in lines if line.split(" ", 1)[0] == name)
        assert method_family(entry) in line
        assert len(line) <= COMPACT_WIDTH
        assert line.split(method_family(entry), 1)[1].strip().rstrip("…") in entry.summary
    assert any(line.strip() == "parameters: gamma=0.2" for line in lines)  # vmdav's
    assert "┃" not in done.stdout and "│" not in done.stdout  # no table


def test_methods_on_a_terminal_is_the_table() -> None:
    done = _methods(TTY_COMPATIBLE="1")
    assert done.returncode == 0, done.stderr
    shown = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # the terminal's styles
    assert "┃ name" in shown and "reference" in shown


def test_shortened_cuts_at_a_word_boundary() -> None:
    text = get_partitioner("md").summary
    assert shortened(text, len(text)) == text
    short = shortened(text, 30)
    assert len(short) <= 30 and short.endswith("…")
    assert text.startswith(short[:-1]) and text[len(short) - 1] in " ,;:"
