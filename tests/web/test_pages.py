"""Every page of the workbench, and every form error (issue 20, Data and Roles)."""

from __future__ import annotations

import io
import pathlib
import re

import pandas as pd
import pytest
from starlette.testclient import TestClient

from microagg.schema.schema_file import load_schema

from .conftest import csrf, upload

CSV = b"age,sex,income\n30,f,1000\n40,m,\n50,f,3000\n"


def _open(client: TestClient, name: str) -> str:
    response = client.post("/data/dataset", data={"dataset": name, "csrf_token": csrf(client)})
    assert response.status_code == 200
    return response.text


def _cells(html: str, column: str) -> list[str]:
    """The type, missing and distinct cells of ``column`` in the columns table."""
    found = re.search(rf'<th scope="row">{column}</th><td>([^<]*)</td><td>(\d+)</td>'
                      rf"<td>(\d+)</td>", html)
    assert found is not None, column
    return list(found.groups())


def test_home_leads_to_the_data_page(client: TestClient) -> None:
    response = client.get("/")
    assert response.url.path == "/data"
    assert "Upload a table" in response.text


@pytest.mark.parametrize("path", ["/data", "/roles"])
def test_every_page_renders_without_a_table(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "<main>" in response.text


def test_schema_download_without_a_table_leads_to_roles(client: TestClient) -> None:
    response = client.get("/roles/schema.toml")
    assert response.url.path == "/roles"
    assert "Open a table on the" in response.text


def test_css_is_served_locally_and_no_page_loads_a_cdn(client: TestClient) -> None:
    assert "border-collapse" in client.get("/static/workbench.css").text
    _open(client, "survey")
    for page in ("/data", "/roles"):
        assert "http" not in client.get(page).text.replace("http-equiv", "")


def test_csv_upload_shows_types_missing_and_distinct(client: TestClient) -> None:
    response = upload(client, "people.csv", CSV)
    assert response.status_code == 200
    html = response.text
    assert "Table: <span>people.csv</span>" in html
    assert _cells(html, "age") == ["whole number", "0", "3"]  # int64: in plain words
    assert _cells(html, "income") == ["number", "1", "2"]
    assert _cells(html, "sex")[1:] == ["0", "2"]
    assert "Rows 1 to 3 of 3" in html


@pytest.mark.parametrize(("suffix", "write"), [
    (".parquet", lambda df, f: df.to_parquet(f)),
    (".xlsx", lambda df, f: df.to_excel(f, index=False)),
    (".tsv", lambda df, f: df.to_csv(f, sep="\t", index=False)),
])
def test_other_formats_are_read_by_their_extension(client: TestClient, tmp_path: pathlib.Path,
                                                   suffix: str, write) -> None:  # type: ignore[no-untyped-def]
    file = tmp_path / f"t{suffix}"
    write(pd.DataFrame({"age": [30, 40], "zone": ["a", "b"]}), file)
    response = upload(client, f"T{suffix.upper()}", file.read_bytes())
    assert response.status_code == 200
    assert _cells(response.text, "age")[1:] == ["0", "2"]


@pytest.mark.parametrize("name", ["census", "survey"])
def test_bundled_data_sets_open(client: TestClient, name: str) -> None:
    html = _open(client, name)
    assert f"Table: <span>bundled data set {name}</span>" in html
    assert "Rows 1 to 50 of" in html
    assert html.count("<tr>") >= 50


def test_survey_preview_counts_missing_income(client: TestClient) -> None:
    assert _cells(_open(client, "survey"), "income")[1] == "412"


def test_unknown_data_set_is_an_error(client: TestClient) -> None:
    response = client.post("/data/dataset", data={"dataset": "nope", "csrf_token": csrf(client)})
    assert response.status_code == 400
    assert "unknown dataset &#39;nope&#39;; valid names are: census" in response.text


def test_preview_pages(client: TestClient) -> None:
    _open(client, "survey")
    html = client.get("/data?page=2").text
    assert "Rows 51 to 100 of 5000" in html
    assert "page 2 of 100" in html
    last = client.get("/data?page=100").text
    assert "Rows 4951 to 5000 of 5000" in last
    assert 'href="/data?page=101"' not in last


@pytest.mark.parametrize("page", ["0", "101", "x", "-1"])
def test_a_page_out_of_range_is_an_error(client: TestClient, page: str) -> None:
    _open(client, "survey")
    response = client.get(f"/data?page={page}")
    assert response.status_code == 400
    assert f"page must be a whole number in [1, 100]; got &#39;{page}&#39;" in response.text


@pytest.mark.parametrize(("name", "content", "message"), [
    ("table.exe", b"a,b\n1,2\n", "unsupported extension; allowed: .csv"),
    ("table", b"a,b\n1,2\n", "unsupported extension"),
    ("broken.csv", b'a,b\n1,"2\n', "Could not parse &#39;broken.csv&#39; as CSV"),
    ("empty.csv", b"", "&#39;empty.csv&#39; is empty"),
    ("header.csv", b"a,b\n", "has no rows"),
    ("twice.csv", b"a,a\n1,2\n", "Column names must be unique"),
    ("fake.parquet", b"not parquet", "Could not read &#39;fake.parquet&#39; as Parquet"),
])
def test_a_bad_file_shows_the_error(client: TestClient, name: str, content: bytes,
                                    message: str) -> None:
    response = upload(client, name, content)
    assert response.status_code == 400
    assert message in response.text
    assert "/tmp" not in response.text and "upload-" not in response.text  # no server path


def test_upload_without_a_file_is_an_error(client: TestClient) -> None:
    response = client.post("/data/upload", data={"csrf_token": csrf(client)},
                           files={"other": (None, b"text")})
    assert response.status_code == 400
    assert "Choose a file to upload." in response.text


def test_upload_that_is_not_multipart_is_an_error(client: TestClient) -> None:
    response = client.post("/data/upload", data={"csrf_token": csrf(client)})
    assert response.status_code == 400
    assert "multipart/form-data" in response.text


# ---------------------------------------------------------------------------------- roles

def _role_row(html: str, i: int) -> tuple[str, str | None]:
    role = re.search(rf'name="role-{i}">(.*?)</select>', html, re.S)
    kind = re.search(rf'name="type-{i}">(.*?)</select>', html, re.S)
    assert role is not None and kind is not None
    chosen_role = re.search(r'<option value="([^"]*)" selected>', role.group(1))
    chosen_type = re.search(r'<option value="([^"]*)" selected>', kind.group(1))
    assert chosen_role is not None and chosen_type is not None
    return chosen_role.group(1), chosen_type.group(1) or None


def test_roles_are_pre_filled_from_the_survey_with_reasons(client: TestClient) -> None:
    _open(client, "survey")
    html = client.get("/roles").text
    assert _role_row(html, 0) == ("identifier", None)  # person_id
    assert _role_row(html, 2) == ("quasi-identifier", "numeric")  # age
    assert _role_row(html, 8) == ("quasi-identifier", "date")  # date_of_birth
    assert _role_row(html, 12) == ("weight", None)
    assert _role_row(html, 13) == ("household", None)
    assert "ages are classic quasi-identifiers" in html
    assert "its name looks like a sampling weight" in html


def _form(html: str) -> dict[str, str]:
    """The Roles form as the browser would send it."""
    fields = {f"role-{i}": role or "" for i, (role, _) in enumerate(_rows(html))}
    fields.update({f"type-{i}": kind or "" for i, (_, kind) in enumerate(_rows(html))})
    token = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert token is not None
    fields["csrf_token"] = token.group(1)
    return fields


def _rows(html: str) -> list[tuple[str, str | None]]:
    return [_role_row(html, i) for i in range(html.count('name="role-'))]


def test_roles_edited_and_saved(client: TestClient) -> None:
    _open(client, "survey")
    fields = _form(client.get("/roles").text)
    fields.update({"role-11": "sensitive", "type-10": "ordinal"})  # diagnosis, occupation
    fields["order-10"] = ""  # an ordinal without its order: an error
    response = client.post("/roles", data=fields)
    assert response.status_code == 400
    assert "[columns.occupation]: an ordinal column needs order" in response.text
    assert _role_row(response.text, 11) == ("sensitive", "categorical")  # the edit is kept
    fields["type-10"] = "categorical"
    saved = client.post("/roles", data=fields)
    assert saved.status_code == 200
    assert "Roles saved" in saved.text
    assert _role_row(client.get("/roles").text, 11) == ("sensitive", "categorical")


def _details(html: str, i: int) -> str:
    found = re.search(rf'name="details-{i}" type="text" value="([^"]*)"', html)
    assert found is not None
    return found.group(1)


def test_details_set_rounding_bounds_and_date_precision(client: TestClient) -> None:
    """income (7): rounded to hundreds with public bounds; date_of_birth (8): published as
    months; then the TOML download carries them and the form shows them again."""
    _open(client, "survey")
    fields = _form(client.get("/roles").text) | {
        "details-7": "round=-2 bounds=0:1e6", "details-8": "publish=month"}
    saved = client.post("/roles", data=fields)
    assert saved.status_code == 200, saved.text
    assert _details(saved.text, 7) == "bounds=0:1000000 round=-2"
    assert _details(saved.text, 8) == "publish=month"
    toml = client.get("/roles/schema.toml").text
    assert "bounds = [0.0, 1000000.0]" in toml and "round = -2" in toml
    assert 'publish = "month"' in toml
    cleared = client.post("/roles", data=_form(saved.text) | {"details-7": ""})
    assert _details(cleared.text, 7) == "" and "round = -2" not in client.get(
        "/roles/schema.toml").text


@pytest.mark.parametrize(("details", "message"), [
    ("rounding=2", "&#39;rounding=2&#39; is not a detail; allowed: bounds=LOWER:UPPER"),
    ("bounds=5", "bounds must be LOWER:UPPER (two numbers); got &#39;5&#39;"),
    ("round=two", "round must be a whole number of digits or none; got &#39;two&#39;"),
    ("format='%d", "No closing quotation"),
    ("publish=week", "publish"),
])
def test_bad_details_name_the_column_and_the_syntax(client: TestClient, details: str,
                                                    message: str) -> None:
    _open(client, "survey")
    response = client.post("/roles", data=_form(client.get("/roles").text)
                           | {"details-7": details if "publish" not in details else "",
                              "details-8": details if "publish" in details else ""})
    assert response.status_code == 400
    assert message in response.text


def test_an_unknown_role_is_an_error(client: TestClient) -> None:
    _open(client, "survey")
    fields = _form(client.get("/roles").text) | {"role-2": "boss"}
    response = client.post("/roles", data=fields)
    assert response.status_code == 400
    assert "[columns.age]: role must be one of identifier" in response.text
    assert "got &#39;boss&#39;" in response.text


def test_toml_download_round_trips_through_load_schema(client: TestClient,
                                                       tmp_path: pathlib.Path) -> None:
    _open(client, "survey")
    fields = _form(client.get("/roles").text) | {"role-11": "sensitive"}
    client.post("/roles", data=fields)
    response = client.get("/roles/schema.toml")
    assert response.headers["content-disposition"] == 'attachment; filename="schema.toml"'
    file = tmp_path / "schema.toml"
    file.write_bytes(response.content)
    schema = load_schema(file)
    assert schema.sensitive == ["diagnosis"]
    assert schema.weight == "weight" and schema.household == "household_id"
    assert schema.columns["date_of_birth"].type == "date"
    assert "# ages are classic quasi-identifiers" in response.text
    again = client.post("/roles/upload", data={"csrf_token": csrf(client)},
                        files={"file": ("schema.toml", response.content)})
    assert "Schema schema.toml applied." in again.text


def test_an_uploaded_toml_is_applied(client: TestClient) -> None:
    upload(client, "people.csv", CSV)
    text = ('[columns.age]\nrole = "quasi-identifier"\ntype = "numeric"\n'
            '[columns.sex]\nrole = "sensitive"\ntype = "categorical"\n'
            '[columns.income]\nrole = "other"\n')
    response = client.post("/roles/upload", data={"csrf_token": csrf(client)},
                           files={"file": ("mine.toml", text.encode())})
    assert response.status_code == 200
    assert "Schema mine.toml applied." in response.text
    assert _rows(response.text) == [("quasi-identifier", "numeric"),
                                    ("sensitive", "categorical"), ("other", None)]


def test_a_toml_with_errors_shows_them_all(client: TestClient) -> None:
    upload(client, "people.csv", CSV)
    text = ('[columns.age]\nrole = "boss"\ntype = "number"\ncolour = 1\n'
            '[columns.sex]\nrole = "sensitive"\nhierarchy = "../../etc/passwd"\n')
    response = client.post("/roles/upload", data={"csrf_token": csrf(client)},
                           files={"file": ("bad.toml", text.encode())})
    assert response.status_code == 400
    html = response.text
    for problem in ("is not a file uploaded in this session; the workbench opens no other file",
                    "role must be one of identifier", "got &#39;boss&#39;",
                    "type must be one of numeric", "unknown key(s) [&#39;colour&#39;]",
                    "no column has role = &#34;quasi-identifier&#34;"):
        assert problem in html, problem
    assert _rows(html)[0] == ("quasi-identifier", "numeric")  # the proposal is kept


@pytest.mark.parametrize(("name", "content", "message"), [
    ("s.toml", b"[columns.age\nrole=", "not valid TOML"),
    ("s.toml", b"title = 1\n", "no [columns.NAME] tables"),
    ("s.txt", b"[columns.age]\nrole = \"other\"\n", "unsupported extension; allowed: .toml"),
    ("s.toml", b"\xff\xfe", "not UTF-8"),
    ("s.toml", b'[columns.age]\nrole = "quasi-identifier"\n',
     "column(s) &#39;sex&#39;, &#39;income&#39; are in the table but not in the schema"),
])
def test_bad_schema_uploads_show_the_error(client: TestClient, name: str, content: bytes,
                                           message: str) -> None:
    upload(client, "people.csv", CSV)
    response = client.post("/roles/upload", data={"csrf_token": csrf(client)},
                           files={"file": (name, content)})
    assert response.status_code == 400
    assert message in response.text


def test_schema_upload_without_a_table_is_an_error(client: TestClient) -> None:
    response = client.post("/roles/upload", data={"csrf_token": csrf(client)},
                           files={"file": ("s.toml", b"")})
    assert response.status_code == 400
    assert "Open a table, then choose a schema file." in response.text


def test_roles_post_without_a_table_leads_back(client: TestClient) -> None:
    response = client.post("/roles", data={"csrf_token": csrf(client)})
    assert response.url.path == "/roles"
    assert "Open a table on the" in response.text


def test_excel_bytes_are_not_kept_after_reading(client: TestClient) -> None:
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_excel(buffer, index=False)
    upload(client, "t.xlsx", buffer.getvalue())
    store = client.app.state.store  # type: ignore[attr-defined]
    assert [p for p in store.root.rglob("*") if p.is_file()] == []



def test_roles_page_offers_strata_and_the_risk_page_counts_within_them(
        client: TestClient, tmp_path: pathlib.Path) -> None:
    _open(client, "survey")
    html = client.get("/roles").text
    assert html.count('<option value="strata"') == html.count('name="role-')  # every column
    saved = client.post("/roles", data=_form(html) | {"role-4": "strata"})  # region
    assert saved.status_code == 200 and "Roles saved" in saved.text
    assert _role_row(client.get("/roles").text, 4) == ("strata", "categorical")
    file = tmp_path / "schema.toml"
    file.write_bytes(client.get("/roles/schema.toml").content)
    assert load_schema(file).strata == "region"
    risk = client.get("/risk").text
    assert re.search(r'<th scope="row">strata</th><td>region</td>', risk)
