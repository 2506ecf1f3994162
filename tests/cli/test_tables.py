"""The table printed after a release (cli/_tables.py), as a separate CLI process prints it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _cell_rows(stdout: str, name: str) -> str:
    """The value of row ``name`` of the printed table, its folded lines joined."""
    value, inside = [], False
    for line in stdout.splitlines():
        line = line.strip()
        cells = [cell.strip() for cell in line[1:-1].split("│")] if line.startswith("│") else []
        if len(cells) != 2:
            inside = False
            continue
        if cells[0] == name:
            inside = True
        elif cells[0]:
            inside = False
        if inside:
            value.append(cells[1])
    return "".join(value)


def test_a_long_output_path_is_printed_whole(tmp_path: Path) -> None:
    source = tmp_path / "people.csv"
    source.write_text("age,income\n" + "".join(f"{20 + i},{1000 + 37 * i % 500}\n"
                                               for i in range(30)))
    folder = tmp_path / ("a_folder_whose_name_is_much_longer_than_the_table_cell_" * 2)
    folder.mkdir()
    output = folder / "released_household_survey_k3.csv"
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           "anonymize", str(source), "-q", "age,income", "-k", "3",
                           "--random-state", "0", "-o", str(output)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert output.exists()
    assert "…" not in done.stdout
    assert _cell_rows(done.stdout, "output") == str(output)
