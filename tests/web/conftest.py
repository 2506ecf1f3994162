"""Fixtures of the workbench tests: an app with a known token and a work folder under
tmp_path, and clients that have opened the printed address."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Iterator

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.applications import Starlette
from starlette.testclient import TestClient

from microagg.web import Settings, create_app

TOKEN = "test-token-" + "x" * 32


def csrf(client: TestClient, page: str = "/data") -> str:
    """The CSRF token in the forms of ``page``."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(page).text)
    assert found is not None
    return found.group(1)


def signed_in(app: Starlette) -> TestClient:
    """A client that opened the address with the token (now in its cookie)."""
    client = TestClient(app, follow_redirects=True)
    assert client.get(f"/?token={TOKEN}").status_code == 200
    return client


def make_settings(tmp_path: pathlib.Path, **changes: object) -> Settings:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    options: dict[str, object] = {"token": TOKEN, "work_dir": work, **changes}
    return Settings(**options)  # type: ignore[arg-type]


@pytest.fixture
def app(tmp_path: pathlib.Path) -> Iterator[Starlette]:
    application = create_app(make_settings(tmp_path))
    yield application
    application.state.store.close()


@pytest.fixture
def client(app: Starlette) -> Iterator[TestClient]:
    with signed_in(app) as opened:
        yield opened


def upload(client: TestClient, name: str, content: bytes, *, path: str = "/data/upload",
           token: str | None = None):  # type: ignore[no-untyped-def]
    """POST ``content`` as the file ``name`` with the page's CSRF token (or ``token``)."""
    given = csrf(client, "/data") if token is None else token
    return client.post(path, data={"csrf_token": given}, files={"file": (name, content)})
