"""The workbench's security points (issue 20): access token, cookies, CSRF, upload limit,
escaping, isolated sessions, paths confined to --data-dir, the private work folder."""

from __future__ import annotations

import os
import pathlib
import sqlite3
import stat

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from microagg.web import create_app
from microagg.web.pages import sqlite_path

from .conftest import TOKEN, csrf, make_settings, signed_in, upload

CSV = b"age,income\n30,1000\n40,2000\n"


@pytest.mark.parametrize("path", ["/", "/data", "/roles", "/roles/schema.toml",
                                  "/static/workbench.css"])
def test_no_token_is_forbidden(app: Starlette, path: str) -> None:
    response = TestClient(app).get(path)
    assert response.status_code == 403
    assert "access token" in response.text


def test_wrong_token_is_forbidden_in_query_and_cookie(app: Starlette) -> None:
    client = TestClient(app)
    assert client.get("/data?token=wrong").status_code == 403
    assert client.get("/data?token=").status_code == 403
    client.cookies.set("microagg_token_8765", "wrong")
    assert client.get("/data").status_code == 403


def test_token_in_query_sets_a_strict_httponly_cookie_then_pages_work(app: Starlette) -> None:
    client = TestClient(app, follow_redirects=False)
    first = client.get(f"/data?token={TOKEN}&page=1")
    assert first.status_code == 303
    assert first.headers["location"] == "/data?page=1"  # the token leaves the address
    cookies = first.headers.get_list("set-cookie")
    assert any(c.startswith(f"microagg_token_8765={TOKEN};") for c in cookies)
    assert all("HttpOnly" in c and "SameSite=Strict" in c for c in cookies)
    assert client.get("/data").status_code == 200
    assert client.get("/static/workbench.css").status_code == 200


def test_session_cookie_is_random_and_new_per_browser(app: Starlette) -> None:
    ids = set()
    for _ in range(2):
        client = TestClient(app, follow_redirects=False)
        client.get(f"/data?token={TOKEN}")
        ids.add(client.cookies["microagg_session_8765"])
    assert len(ids) == 2
    assert all(len(i) >= 43 for i in ids)  # 32 random bytes, base64


def test_post_without_or_with_a_wrong_csrf_token_is_forbidden(client: TestClient) -> None:
    assert client.post("/data/dataset", data={"dataset": "census"}).status_code == 403
    wrong = client.post("/data/dataset", data={"dataset": "census", "csrf_token": "x"})
    assert wrong.status_code == 403
    assert "CSRF" in wrong.text
    assert upload(client, "t.csv", CSV, token="x").status_code == 403
    assert client.post("/roles", data={"csrf_token": ""}).status_code == 403
    assert "Table:" not in client.get("/data").text  # nothing was opened


def test_csrf_token_of_another_session_is_refused(app: Starlette) -> None:
    first, second = signed_in(app), signed_in(app)
    response = second.post("/data/dataset", data={"dataset": "census",
                                                  "csrf_token": csrf(first)})
    assert response.status_code == 403


def _files(app: Starlette) -> list[pathlib.Path]:
    return [p for p in app.state.store.root.rglob("*") if p.is_file()]


def test_upload_over_the_limit_is_413_and_nothing_is_kept(tmp_path: pathlib.Path) -> None:
    app = create_app(make_settings(tmp_path, max_upload_bytes=1000))
    client = signed_in(app)
    response = upload(client, "big.csv", b"a,b\n" + b"1,2\n" * 400)
    assert response.status_code == 413
    assert "1,000 bytes" in response.text
    assert _files(app) == []
    assert "Table:" not in client.get("/data").text
    assert upload(client, "small.csv", CSV).status_code == 200  # under it: accepted
    assert _files(app) == []  # read, then removed
    app.state.store.close()


def test_a_form_over_its_limit_is_413(client: TestClient) -> None:
    response = client.post("/data/dataset", data={"csrf_token": csrf(client),
                                                  "dataset": "x" * (1024 * 1024 + 1)})
    assert response.status_code == 413


def test_column_names_and_values_are_escaped(client: TestClient) -> None:
    attack = "<script>alert(1)</script>"
    content = f'"{attack}",b\n"{attack}",1\n"<img src=x onerror=alert(2)>",2\n'.encode()
    response = upload(client, f"{attack}.csv", content)
    assert response.status_code == 200
    for page in ("/data", "/roles"):
        html = client.get(page).text
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_bad_file_name_is_escaped_in_the_error(client: TestClient) -> None:
    response = upload(client, "<script>x</script>.exe", b"data")
    assert response.status_code == 400
    assert "<script>x</script>" not in response.text
    assert "&lt;script&gt;x&lt;/script&gt;" in response.text


def test_two_sessions_never_see_each_other_s_table(app: Starlette) -> None:
    alice, bob = signed_in(app), signed_in(app)
    upload(alice, "alice.csv", b"secret_alice\n42\n")
    bob.post("/data/dataset", data={"dataset": "census", "csrf_token": csrf(bob)})
    assert "secret_alice" in alice.get("/data").text
    assert "secret_alice" not in bob.get("/data").text
    assert "secret_alice" not in bob.get("/roles").text
    assert "secret_alice" not in bob.get("/roles/schema.toml").text
    assert "census" not in alice.get("/data").text.split("<main>")[0]


@pytest.fixture
def data_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "data"
    folder.mkdir()
    with sqlite3.connect(folder / "in.db") as db:
        db.execute("CREATE TABLE people (age INTEGER, income REAL)")
        db.executemany("INSERT INTO people VALUES (?, ?)", [(30, 1.0), (40, 2.0)])
    outside = tmp_path / "x.db"
    with sqlite3.connect(outside) as db:
        db.execute("CREATE TABLE people (secret_outside INTEGER)")
        db.execute("INSERT INTO people VALUES (1)")
    (folder / "link.db").symlink_to(outside)
    return folder


@pytest.mark.parametrize("name", ["../x.db", "ABSOLUTE", "link.db", "", "."])
def test_sqlite_paths_outside_data_dir_are_refused(tmp_path: pathlib.Path,
                                                   data_dir: pathlib.Path, name: str) -> None:
    name = str(tmp_path / "x.db") if name == "ABSOLUTE" else name
    app = create_app(make_settings(tmp_path, data_dir=data_dir))
    client = signed_in(app)
    response = client.post("/data/sqlite", data={"database": name, "table": "people",
                                                 "csrf_token": csrf(client)})
    assert response.status_code == 400
    assert "secret_outside" not in response.text
    assert "outside the data folder" in response.text or "not a file" in response.text
    with pytest.raises(ValueError):
        sqlite_path(data_dir, name)
    app.state.store.close()


def test_sqlite_inside_data_dir_opens(tmp_path: pathlib.Path, data_dir: pathlib.Path) -> None:
    app = create_app(make_settings(tmp_path, data_dir=data_dir))
    client = signed_in(app)
    response = client.post("/data/sqlite", data={"database": "in.db", "table": "people",
                                                 "csrf_token": csrf(client)})
    assert response.status_code == 200
    assert "in.db (table people)" in response.text
    bad = client.post("/data/sqlite", data={"database": "in.db", "table": "people; DROP",
                                            "csrf_token": csrf(client)})
    assert bad.status_code == 400
    assert "letters, digits and _" in bad.text
    app.state.store.close()


def test_sqlite_is_off_without_data_dir(client: TestClient) -> None:
    assert "--data-dir DIR" in client.get("/data").text
    response = client.post("/data/sqlite", data={"database": "in.db", "table": "people",
                                                 "csrf_token": csrf(client)})
    assert response.status_code == 400
    assert "need a data folder" in response.text


def test_work_folder_is_private_and_removed_at_shutdown(tmp_path: pathlib.Path) -> None:
    app = create_app(make_settings(tmp_path))
    root = app.state.store.root
    with signed_in(app) as client:
        upload(client, "t.csv", CSV)
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        folders = list(root.iterdir())
        assert folders and all(stat.S_IMODE(os.stat(f).st_mode) == 0o700 for f in folders)
    assert not root.exists()  # the lifespan's shutdown removed it


@pytest.mark.parametrize("path", ["/data", "/roles", "/static/workbench.css", "/nowhere"])
def test_every_answer_forbids_framing_caching_and_other_origins(client: TestClient,
                                                                  path: str) -> None:
    headers = client.get(path).headers
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["cache-control"] == "no-store"
    assert headers["referrer-policy"] == "no-referrer"
    assert TestClient(client.app).get(path).headers["x-frame-options"] == "DENY"  # 403 too


def test_upload_declared_over_the_limit_is_refused_before_reading(
        tmp_path: pathlib.Path) -> None:
    app = create_app(make_settings(tmp_path, max_upload_bytes=1000))
    client = signed_in(app)
    response = upload(client, "big.csv", b"a\n" + b"1\n" * (600 * 1024))
    assert response.status_code == 413
    assert "larger than the limit of 1,000 bytes" in response.text
    assert _files(app) == []
    app.state.store.close()
