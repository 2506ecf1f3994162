"""Fixtures of the workbench tests: an app with a known token and a work folder under
tmp_path, and clients that have opened the printed address."""

from __future__ import annotations

import pathlib
import re
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.applications import Starlette
from starlette.testclient import TestClient

from microagg.web import Settings, create_app
from microagg.web.jobs import JobRunner

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


@pytest.fixture(scope="session")
def runner() -> Iterator[JobRunner]:
    """The worker processes, shared by the tests' apps (each start costs about 1.5 s)."""
    shared = JobRunner(2)
    shared.start()
    yield shared
    shared.close()


@pytest.fixture
def app(tmp_path: pathlib.Path, runner: JobRunner) -> Iterator[Starlette]:
    application = create_app(make_settings(tmp_path), runner=runner)
    yield application
    application.state.store.close()


@pytest.fixture
def client(app: Starlette) -> Iterator[TestClient]:
    with signed_in(app) as opened:
        yield opened


def settled(client: TestClient, response, seconds: float = 120.0):  # type: ignore[no-untyped-def]
    """``response``, or, if it is a job's progress page (the job took longer than the form
    waits), the page the job leads to once it ends (followed as the page's refresh does)."""
    deadline = time.monotonic() + seconds
    while response.url.path.startswith("/jobs/"):
        assert time.monotonic() < deadline, f"the job at {response.url.path} did not end"
        time.sleep(0.2)
        response = client.get(response.url.path)
    return response


def upload(client: TestClient, name: str, content: bytes, *, path: str = "/data/upload",
           token: str | None = None):  # type: ignore[no-untyped-def]
    """POST ``content`` as the file ``name`` with the page's CSRF token (or ``token``)."""
    given = csrf(client, "/data") if token is None else token
    return client.post(path, data={"csrf_token": given}, files={"file": (name, content)})


def download(client: TestClient, path: str):  # type: ignore[no-untyped-def]
    """GET ``path`` (``/export/published.EXT``); where the verdict does not call the release
    protected (409, the Export page asking for the confirmation), the confirmation form
    posted with its box ticked, as a steward who read the verdict does."""
    response = client.get(path)
    if response.status_code != 409:
        return response
    return client.post("/export/download", data={
        "csrf_token": csrf(client, "/export"), "name": path.rsplit("/", 1)[1],
        "confirm": "yes"})


def open_census(client: TestClient) -> None:
    """The bundled Census file opened on the Data page."""
    response = client.post("/data/dataset", data={"dataset": "census",
                                                  "csrf_token": csrf(client)})
    assert response.status_code == 200


def post_protect(client: TestClient, **fields: str):  # type: ignore[no-untyped-def]
    """The Protect form posted (k = 5, MDAV, seed 7 unless ``fields`` say otherwise), the
    job's page followed until it settles."""
    data = {"k": "5", "method": "mdav", "random_state": "7", **fields}
    return settled(client, client.post("/protect",
                                       data={**data, "csrf_token": csrf(client, "/protect")}))


def shown_figures(record: object) -> dict[str, str]:
    """A step record's figures as the Result page's plan table writes them."""
    b, a = record.before, record.after  # type: ignore[attr-defined]
    return {"cells": f"{record.cells_changed:,}",  # type: ignore[attr-defined]
            "k-before": str(b.k_anonymity), "k-after": str(a.k_anonymity),
            "unique-before": f"{100 * b.unique_share:.2f} %",
            "unique-after": f"{100 * a.unique_share:.2f} %",
            "loss-before": f"{b.information_loss:.2f} %",
            "loss-after": f"{a.information_loss:.2f} %"}
