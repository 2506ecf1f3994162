"""``microagg serve`` (issue 20): options, warnings, the printed address, the missing extra.

The server itself is not started: :func:`microagg.cli.serve._run` is replaced by a recorder.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

# the app first: importing a command module alone would register it first (--help order)
from microagg.cli import EXIT_USER_ERROR, app
from microagg.cli.serve import startup

pytest.importorskip("starlette")

runner = CliRunner()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The calls of the server runner (recorded, not served)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("microagg.cli.serve._run",
                        lambda settings, *, open_browser: calls.append(
                            {"settings": settings, "open_browser": open_browser}))
    return calls


def test_help_lists_the_options() -> None:
    result = runner.invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--port", "--host", "--data-dir", "--no-browser", "--max-upload-mb"):
        assert option in result.output
    assert "microagg[web]" in result.output


def test_the_printed_url_carries_the_token(started: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", "--port", "9000"])
    assert result.exit_code == 0, result.output
    found = re.search(r"http://127\.0\.0\.1:9000/\?token=([\w-]+)", result.output)
    assert found is not None
    settings = started[0]["settings"]
    assert found.group(1) == settings.token and len(settings.token) >= 43
    assert started[0]["open_browser"] is False
    assert "Warning" not in result.output


def test_each_start_has_a_new_token() -> None:
    tokens = {startup(host="127.0.0.1", port=8765, data_dir=None, max_upload_mb=1)[0].token
              for _ in range(3)}
    assert len(tokens) == 3


def test_another_host_warns(started: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["serve", "--host", "0.0.0.0", "--no-browser"])
    assert result.exit_code == 0
    assert "Warning: listening on 0.0.0.0, not 127.0.0.1" in result.output
    assert started[0]["settings"].host == "0.0.0.0"


def test_browser_opens_by_default(started: list[dict[str, Any]]) -> None:
    assert runner.invoke(app, ["serve"]).exit_code == 0
    assert started[0]["open_browser"] is True


def test_options_reach_the_settings(started: list[dict[str, Any]],
                                    tmp_path: pathlib.Path) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", "--data-dir", str(tmp_path),
                                 "--max-upload-mb", "5"])
    assert result.exit_code == 0
    settings = started[0]["settings"]
    assert settings.data_dir == tmp_path.resolve()
    assert settings.max_upload_bytes == 5 * 1024 * 1024


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "0"], "--port must be in [1, 65535]; got 0"),
    (["--port", "70000"], "--port must be in [1, 65535]; got 70000"),
    (["--max-upload-mb", "0"], "--max-upload-mb must be in [1, 100000]; got 0"),
    (["--data-dir", "/no/such/folder"], "--data-dir '/no/such/folder' is not a folder"),
])
def test_bad_options_are_user_errors(started: list[dict[str, Any]], args: list[str],
                                     message: str) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", *args])
    assert result.exit_code == EXIT_USER_ERROR
    assert message in " ".join(result.output.split())
    assert started == []


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch,
                                started: list[dict[str, Any]]) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # importing it raises ImportError
    result = runner.invoke(app, ["serve", "--no-browser"])
    assert result.exit_code == EXIT_USER_ERROR
    assert "pip install 'microagg[web]'" in " ".join(result.output.split())
    assert "starlette is not installed" in " ".join(result.output.split())
    assert started == []


def test_the_app_loads_no_web_module() -> None:
    script = ("import json, sys\nfrom microagg.cli import app\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('starlette', 'uvicorn', 'jinja2', 'python_multipart') "
              "or m.startswith('microagg.web'))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
