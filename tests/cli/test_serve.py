"""``microagg serve``: options, warnings, the printed address, the missing extra, the port
bound before the address is told.

In this process the server itself is not started: :func:`microagg.cli.serve._run` is
replaced by a recorder (the port is bound: ``--port 0``, any free one); the tests of a real
start run ``microagg serve`` as a separate process.
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import re
import selectors
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
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
    """The calls of the server runner (recorded, not served), with the bound port."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("microagg.cli.serve._run",
                        lambda settings, listener, *, open_browser: calls.append(
                            {"settings": settings, "open_browser": open_browser,
                             "bound": listener.getsockname()[1]}))
    return calls


def test_help_lists_the_options() -> None:
    result = runner.invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--port", "--host", "--data-dir", "--no-browser", "--max-upload-mb"):
        assert option in result.output
    assert "microagg[web]" in result.output


def test_the_printed_url_carries_the_token_and_the_bound_port(
        started: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", "--port", "0"])
    assert result.exit_code == 0, result.output
    found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", result.output)
    assert found is not None
    settings = started[0]["settings"]
    assert int(found.group(1)) == settings.port == started[0]["bound"] > 0
    assert found.group(2) == settings.token and len(settings.token) >= 43
    assert started[0]["open_browser"] is False
    assert "Warning" not in result.output


def test_each_start_has_a_new_token() -> None:
    tokens = {startup(host="127.0.0.1", port=8765, data_dir=None, max_upload_mb=1)[0].token
              for _ in range(3)}
    assert len(tokens) == 3


def test_another_host_warns(started: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["serve", "--host", "0.0.0.0", "--no-browser", "--port", "0"])
    assert result.exit_code == 0
    assert "Warning: listening on 0.0.0.0, not 127.0.0.1" in result.output
    assert started[0]["settings"].host == "0.0.0.0"


def test_browser_opens_by_default(started: list[dict[str, Any]]) -> None:
    assert runner.invoke(app, ["serve", "--port", "0"]).exit_code == 0
    assert started[0]["open_browser"] is True


def test_options_reach_the_settings(started: list[dict[str, Any]],
                                    tmp_path: pathlib.Path) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", "--port", "0", "--data-dir",
                                 str(tmp_path), "--max-upload-mb", "5"])
    assert result.exit_code == 0
    settings = started[0]["settings"]
    assert settings.data_dir == tmp_path.resolve()
    assert settings.max_upload_bytes == 5 * 1024 * 1024


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "-1"], "--port must be in [0, 65535]; got -1"),
    (["--port", "70000"], "--port must be in [0, 65535]; got 70000"),
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


# ------------------------------------------------------------------ the port, bound first

START_SECONDS = 60.0


@pytest.fixture
def squatter() -> Iterator[socket.socket]:
    """Another program listening on a port of 127.0.0.1 (with SO_REUSEPORT, which would let
    a second socket that asks for it share the port)."""
    with socket.create_server(("127.0.0.1", 0), reuse_port=True) as sock:
        yield sock


def _serve(tmp_path: pathlib.Path, *options: str) -> subprocess.Popen[str]:
    """``microagg serve --no-browser`` as a user starts it (its work folder under
    ``tmp_path``)."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "COLUMNS": "400",
           "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-c", "from microagg.cli import main; main()",
                             "serve", "--no-browser", *options], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)


def _first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        assert selector.select(timeout=START_SECONDS), "microagg serve printed nothing"
    return process.stdout.readline()


def test_a_taken_port_starts_nothing(started: list[dict[str, Any]],
                                     squatter: socket.socket) -> None:
    port = squatter.getsockname()[1]
    result = runner.invoke(app, ["serve", "--port", str(port)])  # the browser would open
    assert result.exit_code == EXIT_USER_ERROR
    assert f"Port {port} on 127.0.0.1 is already in use" in " ".join(result.output.split())
    assert "token=" not in result.output
    assert started == []  # no server run, no browser opened


def test_an_address_not_of_this_machine_starts_nothing(started: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["serve", "--no-browser", "--port", "0",
                                 "--host", "192.0.2.1"])  # TEST-NET-1: no machine's address
    assert result.exit_code == EXIT_USER_ERROR
    flat = " ".join(result.output.split())
    assert "Cannot listen on 192.0.2.1 port 0" in flat and "--host or --port" in flat
    assert "token=" not in result.output and started == []


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_a_squatter_on_the_port_gets_no_token(tmp_path: pathlib.Path, host: str) -> None:
    with socket.create_server((host, 0), reuse_port=True) as squatter:
        port = squatter.getsockname()[1]
        process = _serve(tmp_path, "--port", str(port))
        output, _ = process.communicate(timeout=START_SECONDS)
    assert process.returncode == EXIT_USER_ERROR, output
    flat = " ".join(output.split())
    assert f"Port {port} on 127.0.0.1 is already in use" in flat and "--port" in flat
    assert "token=" not in output and "http://" not in output
    assert list(tmp_path.iterdir()) == []  # no work folder made


def test_the_printed_address_answers_at_once(tmp_path: pathlib.Path) -> None:
    process = _serve(tmp_path, "--port", "0")
    try:
        line = _first_line(process)
        found = re.search(r"http://127\.0\.0\.1:(\d+)(/\?token=[\w-]+)", line)
        assert found is not None, line
        # no waiting for the port to open: it is listening before the line is printed
        connection = http.client.HTTPConnection("127.0.0.1", int(found.group(1)),
                                                timeout=START_SECONDS)
        connection.request("GET", found.group(2))
        answer = connection.getresponse()
        assert answer.status == 303 and answer.getheader("location") == "/"
        cookie = answer.getheader("set-cookie") or ""
        assert cookie.startswith(f"microagg_token_{found.group(1)}=")
        answer.read()
        connection.request("GET", "/data", headers={"cookie": cookie.split(";")[0]})
        page = connection.getresponse()
        assert page.status == 200 and "<title>Data" in page.read().decode()
        connection.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert process.returncode == 0


def _multipart(filename: str, content: bytes, csrf: str) -> tuple[bytes, str]:
    boundary = "microaggtestboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n"
            f"{csrf}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            ).encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def test_the_real_server_refuses_bad_uploads_with_a_400_and_keeps_no_file(
        tmp_path: pathlib.Path) -> None:
    """Through ``microagg serve`` on 127.0.0.1: a 5,000-character file name, a body without
    its boundary and a file of an unsupported type each get a 400 with a message (no
    traceback), and none of their bytes stays in the work folder."""
    process = _serve(tmp_path, "--port", "0")
    try:
        found = re.search(r"http://127\.0\.0\.1:(\d+)(/\?token=[\w-]+)", _first_line(process))
        assert found is not None
        port = int(found.group(1))

        cookies: dict[str, str] = {}

        def call(method: str, path: str, **options: Any) -> tuple[int, str]:
            """One request with the cookies so far (a connection each: a refused body may be
            left unread), keeping the cookies it sets, as a browser does."""
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=START_SECONDS)
            headers = {**options.pop("headers", {}),
                       "cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
            try:
                connection.request(method, path, headers=headers, **options)
                reply = connection.getresponse()
                for line in reply.headers.get_all("set-cookie") or []:
                    name, _, value = line.split(";")[0].partition("=")
                    cookies[name] = value
                return reply.status, reply.read().decode()
            finally:
                connection.close()

        call("GET", found.group(2))

        def csrf() -> str:  # as a browser reloads the form
            token = re.search(r'name="csrf_token" value="([^"]+)"', call("GET", "/data")[1])
            assert token is not None
            return token.group(1)

        secret = b"a,b\n1,SECRET-BYTES\n"
        for filename, without_boundary in (("x" * 5000 + ".csv", False), ("t.csv", True),
                                           ("t.exe", False)):
            body, kind = _multipart(filename, secret, csrf())
            status, text = call("POST", "/data/upload", body=body, headers={
                "content-type": "multipart/form-data" if without_boundary else kind})
            assert status == 400, (filename, text[:300])
            assert "Traceback" not in text
            assert 'role="alert"' in text or text.startswith("400 Bad Request: ")  # a message
        kept = [p for p in tmp_path.rglob("*") if p.is_file()
                and b"SECRET-BYTES" in p.read_bytes()]
        assert kept == []
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert process.returncode == 0
