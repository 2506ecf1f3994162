"""Help texts survive rich markup (issue 18: ``microagg graph --help`` printed "Needs
microagg." because rich took ``[graph]`` for a style tag)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

from microagg.cli._reference import render_reference


@pytest.mark.parametrize(("command", "extra"), [
    (["graph"], "microagg[graph]"),
    (["anonymize"], "microagg[formats]"),
    (["anonymize"], "microagg[sql]"),
])
def test_install_extras_are_printed_whole(command: list[str], extra: str) -> None:
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *command, "--help"],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "400", "NO_COLOR": "1"})
    assert extra in done.stdout


def test_reference_shows_extras_unescaped() -> None:
    text = render_reference()
    assert "microagg[graph]" in text and "\\[" not in text
    # every extra named anywhere in the reference is one pyproject.toml defines
    pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    extras = set(tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"])
    assert set(re.findall(r"microagg\[(\w+)\]", text)) <= extras - {"dev"}
