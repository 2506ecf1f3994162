"""docs/cli.md is generated from the app; it must not go stale."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from microagg.cli._reference import render_reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_is_up_to_date() -> None:
    text = render_reference()
    for command in ("anonymize", "check", "report", "sweep", "init-schema", "methods",
                    "datasets"):
        assert f"## `microagg {command}`" in text
    assert "### `microagg graph anonymize`" in text and "### `microagg graph check`" in text
    assert "`-k <int>`" in text and "[default: 5]" in text
    page = PAGE.read_text(encoding="utf-8")
    if f"typer {typer.__version__})" not in page.split("\n", 3)[2]:
        pytest.skip("docs/cli.md was generated with another typer, which formats help "
                    "records differently; run `make docs-cli`")
    assert page == text, (
        "docs/cli.md is stale: run `make docs-cli` and commit it")
