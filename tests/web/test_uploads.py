"""Upload forms that are refused: a body that is not a complete multipart form is a 400 with
a message (never a server error), and no refused upload leaves its file in the session
folder."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from microagg.web import create_app
from microagg.web.jobs import JobRunner
from microagg.web.uploads import PART_HEADER_LIMIT

from .conftest import TOKEN, csrf, make_settings, upload

BOUNDARY = "microagg-test-boundary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


@pytest.fixture
def served(tmp_path: pathlib.Path, runner: JobRunner) -> Iterator[tuple[Starlette, TestClient]]:
    """An app and a signed-in client that sees a server error as a 500 answer (not as the
    exception raised in the test)."""
    app = create_app(make_settings(tmp_path, max_upload_bytes=1000), runner=runner)
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        yield app, client
    app.state.store.close()


def _files(app: Starlette) -> list[pathlib.Path]:
    """Every file in the work folder (the sessions' folders)."""
    return [p for p in app.state.store.root.rglob("*") if p.is_file()]


def _part(headers: str, content: bytes) -> bytes:
    return f"--{BOUNDARY}\r\n{headers}\r\n\r\n".encode() + content + b"\r\n"


def _field(name: str, value: str) -> bytes:
    return _part(f'Content-Disposition: form-data; name="{name}"', value.encode())


def _file(content: bytes, filename: str = "t.csv") -> bytes:
    return _part(f'Content-Disposition: form-data; name="file"; filename="{filename}"',
                 content)


END = f"--{BOUNDARY}--\r\n".encode()
LONG_HEADER = 'Content-Disposition: form-data; name="note"\r\nX-Note: ' + "n" * 6000


def _bodies(token: str) -> dict[str, tuple[str, bytes, str]]:
    """Refused bodies, by what is wrong: (content type, body, what the answer says)."""
    start = _field("csrf_token", token) + _file(b"a,b\n1,2\n")  # a file begun, then:
    return {
        "long file name": (MULTIPART, _field("csrf_token", token)
                           + _file(b"a\n1\n", "n" * 5000 + ".csv") + END,
                           f"longer than {PART_HEADER_LIMIT:,} bytes"),
        "6 KB part header": (MULTIPART, start + _part(LONG_HEADER, b"x") + END,
                             f"longer than {PART_HEADER_LIMIT:,} bytes"),
        "no boundary in the body": (MULTIPART, b"a,b\n1,2\n",
                                    "not a well-formed multipart/form-data form"),
        "boundary over 256 bytes": (f"multipart/form-data; boundary={'b' * 300}", start + END,
                                    "not a well-formed multipart/form-data form"),
        "cut short": (MULTIPART, start[:-10], "ended before its closing boundary"),
        "no boundary parameter": ("multipart/form-data", start + END,
                                  "must be sent as multipart/form-data"),
        "not multipart": ("application/x-www-form-urlencoded", b"csrf_token=x&file=a",
                          "must be sent as multipart/form-data"),
        "plain text": ("text/plain", b"a,b\n1,2\n", "must be sent as multipart/form-data"),
    }


@pytest.mark.parametrize("path", ["/data/upload", "/roles/upload", "/roles/hierarchy"])
@pytest.mark.parametrize("case", list(_bodies("")))
def test_a_malformed_upload_is_a_400_with_a_message(served: tuple[Starlette, TestClient],
                                                     path: str, case: str) -> None:
    app, client = served
    content_type, body, message = _bodies(csrf(client))[case]
    response = client.post(path, content=body, headers={"content-type": content_type})
    assert response.status_code == 400, response.text
    assert message in response.text
    assert "Traceback" not in response.text and "Error:" not in response.text
    assert _files(app) == []
    assert "Table:" not in client.get("/data").text  # nothing was opened
    assert upload(client, "t.csv", b"a,b\n1,2\n").status_code == 200  # and the next works


@pytest.mark.parametrize(("path", "name", "content", "status", "census"), [
    ("/data/upload", "table.exe", b"a,b\n1,2\n", 400, False),  # wrong type
    ("/data/upload", "table", b"a,b\n1,2\n", 400, False),  # no extension
    ("/data/upload", "table.parquet", b"not parquet", 400, False),  # unparsable
    ("/data/upload", "table.xlsx", b"PK\x03\x04 not a workbook", 400, False),
    ("/data/upload", "table.csv", b"a,b\n" + b"1,2\n" * 400, 413, False),  # too large
    ("/roles/upload", "schema.toml", b"x", 400, False),  # no table open
    ("/roles/upload", "schema.exe", b"x", 400, True),
    ("/roles/upload", "schema.toml", b"\xff\xfe not UTF-8", 400, True),
    ("/roles/hierarchy", "h.csv", b"a;b\n", 400, True),  # no such column
    ("/roles/hierarchy", "h.csv", b"a;b\n", 400, False),  # no table open
])
def test_a_refused_upload_leaves_no_file(served: tuple[Starlette, TestClient], path: str,
                                         name: str, content: bytes, status: int,
                                         census: bool) -> None:
    app, client = served
    if census:
        client.post("/data/dataset", data={"dataset": "census", "csrf_token": csrf(client)})
    response = client.post(path, data={"csrf_token": csrf(client), "column": "nosuch"},
                           files={"file": (name, content)})
    assert response.status_code == status, response.text
    assert _files(app) == []


def test_an_upload_without_the_csrf_token_leaves_no_file(
        served: tuple[Starlette, TestClient]) -> None:
    app, client = served
    response = upload(client, "t.csv", b"a,b\n1,2\n", token="wrong")
    assert response.status_code == 403
    assert _files(app) == []
