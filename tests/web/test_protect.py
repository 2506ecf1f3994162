"""The Risk, Protect, Result and Export pages (issue 20, steps 3 to 6)."""

from __future__ import annotations

import html
import io
import pathlib
import re

import pandas as pd
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from typer.testing import CliRunner

from microagg.cli import app as cli_app
from microagg.datasets import load_dataset

from .conftest import csrf, download, open_census, post_protect, upload

NEW_PAGES = ["/risk", "/protect", "/result", "/export"]






@pytest.fixture
def released(client: TestClient) -> TestClient:
    """A client with Census open and one k = 5 release made from the form."""
    open_census(client)
    response = post_protect(client)
    assert response.status_code == 200  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("path", NEW_PAGES)
def test_every_new_page_renders_without_a_table(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert "<main>" in response.text
    assert re.search(r'href="/(data|protect)"', response.text)


@pytest.mark.parametrize("path", [*NEW_PAGES, "/result/report.html", "/export/published.csv"])
def test_every_new_page_needs_the_token(app: Starlette, path: str) -> None:
    response = TestClient(app).get(path)
    assert response.status_code == 403
    assert "access token" in response.text


@pytest.mark.parametrize(("path", "data"), [
    ("/protect", {"k": "5", "method": "mdav"}),
    ("/result/current", {"attempt": "1"}),
    ("/result/undo", {}),
])
def test_posts_without_csrf_are_forbidden(released: TestClient, path: str,
                                          data: dict[str, str]) -> None:
    response = released.post(path, data=data)
    assert response.status_code == 403
    assert "CSRF" in response.text
    bad = released.post(path, data={**data, "csrf_token": "wrong"})
    assert bad.status_code == 403


def test_protect_page_lists_methods_and_recommends_mdav(client: TestClient) -> None:
    open_census(client)
    page = client.get("/protect").text
    assert "Method (recommended: mdav)" in page
    assert '<option value="mdav" selected>mdav (recommended)</option>' in page
    assert "<th scope=\"row\">mage</th>" in page
    for name in ("k", "method", "l", "t", "epsilon", "bounds", "params", "random_state"):
        assert f'name="{name}"' in page


def test_protect_recommends_mage_with_a_categorical_quasi_identifier(
        client: TestClient) -> None:
    upload(client, "people.csv", b"age,zone,income\n30,a,1\n40,b,2\n50,a,3\n60,b,4\n")
    roles = client.get("/roles").text
    assert "zone" in roles
    page = client.get("/protect").text
    assert "Method (recommended: mage)" in page


@pytest.mark.parametrize(("fields", "message"), [
    ({"k": "1"}, "The 'k' parameter of anonymize must be an int >= 2. Got 1 instead."),
    ({"method": "nosuch"}, "Unknown method 'nosuch'. Valid:"),
    ({"l": "2"}, "l-diversity needs at least one sensitive column"),
    ({"k": "five"}, "k must be a whole number; got 'five'."),
    ({"bounds": "AGI=0"}, "--bounds must look like column=lower:upper"),
    ({"params": "gamma"}, "--param must look like name=value."),
    ({"params": "gamma=0.5"}, "Unknown parameter(s) gamma for method 'mdav'."),
    ({"t": "0.2"}, "t-closeness needs at least one sensitive column"),
    ({"epsilon": "1"}, "the differentially private release needs the insensitive partition"),
])
def test_protect_form_errors_show_the_requests_message(client: TestClient,
                                                       fields: dict[str, str],
                                                       message: str) -> None:
    open_census(client)
    response = post_protect(client, **fields)
    assert response.status_code == 400  # type: ignore[attr-defined]
    text = html.unescape(response.text)  # type: ignore[attr-defined]
    assert message in text
    assert 'role="alert"' in text
    for name, value in fields.items():  # the form keeps what was typed
        assert f'name="{name}"' in text and value in text


def test_census_k5_release_shows_achieved_k_checks_and_report(released: TestClient) -> None:
    page = released.get("/result").text
    assert '<span id="achieved-k">5</span>' in page
    assert '<table id="checks">' in page and "k_anonymity" in page
    assert '<iframe id="report"' in page and 'src="/result/report.html"' in page
    report = released.get("/result/report.html")
    assert report.status_code == 200
    assert "microagg release report" in report.text
    assert len(report.headers.get_list("content-security-policy")) == 1
    csp = report.headers["content-security-policy"]
    assert "frame-ancestors 'self'" in csp and "script-src" not in csp
    assert report.headers["x-frame-options"] == "SAMEORIGIN"
    assert released.get("/result").headers["x-frame-options"] == "DENY"


def test_downloaded_csv_is_k_anonymous(released: TestClient) -> None:
    response = download(released, "/export/published.csv")
    assert response.status_code == 200
    assert "attachment" in response.headers["content-disposition"]
    published = pd.read_csv(io.BytesIO(response.content))
    original = load_dataset("census").data
    assert list(published.columns) == list(original.columns)
    assert published.groupby(list(published.columns)).size().min() >= 5
    assert not published.equals(original)
    parquet = pd.read_parquet(io.BytesIO(download(released, "/export/published.parquet").content))
    assert parquet.groupby(list(parquet.columns)).size().min() >= 5


def test_other_downloads(released: TestClient) -> None:
    summary = released.get("/export/summary.json").json()
    assert summary["checks"]["k_anonymity"]["achieved"] == 5
    assert summary["seed"] == 7
    assert "[columns.AGI]" in released.get("/export/schema.toml").text
    report = released.get("/export/report.html")
    assert "microagg release report" in report.text
    page = released.get("/export").text
    public = page[page.index('<ul id="downloads">'):page.index('id="internal-note"')]
    assert re.findall(r'href="([^"]+)"', public) == ["/export/published.csv",
                                                     "/export/published.parquet",
                                                     "/export/published.xlsx",
                                                     "/export/published.sav",
                                                     "/export/published.dta",
                                                     "/export/published.sqlite"]
    assert "seed" not in download(released, "/export/published.csv").text
    script = released.get("/export/reproduce.txt").text
    assert "--random-state 7" in script and "microagg.anonymize(" in script


def test_export_never_offers_the_original(released: TestClient) -> None:
    page = released.get("/export").text
    links = re.findall(r'href="(/export/[^"]+)"', page)
    assert sorted(links) == sorted(f"/export/{name}" for name in (
        "published.csv", "published.parquet", "published.xlsx", "published.sav",
        "published.dta", "published.sqlite",
        "report.html", "summary.json", "schema.toml", "reproduce.txt"))
    for name in ("original.csv", "data.csv", "..%2Fdata"):
        assert released.get(f"/export/{name}").status_code == 404


def _bounds() -> str:
    df = load_dataset("census").data
    return " ".join(f"{col}={df[col].min()}:{df[col].max()}" for col in df.columns)


@pytest.mark.parametrize("fields", [{}, {"method": "insensitive", "epsilon": "1"}])
def test_reproduction_command_gives_the_same_file(released: TestClient,
                                                  tmp_path: pathlib.Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  fields: dict[str, str]) -> None:
    if fields:
        response = post_protect(released, **{**fields, "bounds": _bounds()})
        assert 'id="achieved-k">5<' in response.text  # type: ignore[attr-defined]
    page = html.unescape(released.get("/export").text)
    found = re.search(r'<pre id="command">microagg (.*?)</pre>', page)
    assert found is not None
    args = found.group(1).split()
    assert args[:2] == ["anonymize", "INPUT.csv"]
    assert "--random-state" in args and "7" in args
    assert ("--epsilon" in args) == bool(fields)
    load_dataset("census").data.to_csv(tmp_path / "INPUT.csv", index=False)
    (tmp_path / "schema.toml").write_bytes(released.get("/export/schema.toml").content)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 0, result.output
    ours = download(released, "/export/published.csv").content
    if not fields:
        assert (tmp_path / "out.csv").read_bytes() == ours
        return
    assert 'id="dp-note"' in page  # the noise never comes from the seed: not reproducible
    again = pd.read_csv(tmp_path / "out.csv")
    assert list(again.columns) == list(pd.read_csv(io.BytesIO(ours)).columns)
    assert again.groupby(list(again.columns)).size().min() >= 5


def test_two_attempts_side_by_side_then_go_back(released: TestClient) -> None:
    assert post_protect(released, k="10").status_code == 200  # type: ignore[attr-defined]
    page = released.get("/result").text
    assert '<span id="achieved-k">10</span>' in page
    rows = re.findall(r"<tr[^>]*><th scope=\"row\">(\d)</th>", page)
    assert rows == ["1", "2"]
    assert 'id="attempt-1"' in page and 'id="attempt-2"' not in page
    response = released.post("/result/current", data={"attempt": "1",
                                                      "csrf_token": csrf(released, "/result")})
    assert '<span id="achieved-k">5</span>' in response.text
    published = pd.read_csv(io.BytesIO(download(released, "/export/published.csv").content))
    assert published.groupby(list(published.columns)).size().min() >= 5
    bad = released.post("/result/current", data={"attempt": "9",
                                                 "csrf_token": csrf(released, "/result")})
    assert bad.status_code == 400
    assert "No attempt" in bad.text


def test_result_page_escapes_column_names(client: TestClient) -> None:
    name = "<script>alert(1)</script>"
    rows = "\n".join(f"{(i * 7) % 13},{i % 5}" for i in range(40))
    upload(client, "evil.csv", f"{name},b\n{rows}\n".encode())
    assert client.get("/roles").status_code == 200
    response = post_protect(client, k="3")
    assert response.status_code == 200  # type: ignore[attr-defined]
    page = client.get("/result").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>" not in page
    assert "<script>alert" not in client.get("/result/report.html").text


def test_risk_page_shows_class_sizes(client: TestClient) -> None:
    open_census(client)
    page = client.get("/risk").text
    assert '<table id="class-risk">' in page
    assert '<td id="k-before">1</td>' in page


def test_risk_page_shows_survey_risk_with_a_weight(client: TestClient) -> None:
    client.post("/data/dataset", data={"dataset": "survey", "csrf_token": csrf(client)})
    page = client.get("/risk").text
    assert '<table id="class-risk">' in page
    assert '<table id="survey-risk">' in page
    assert "SUDA2" in page
    # k-map and the journalist / marketer risks: population_summary on the table, weighted
    from microagg.datasets import load_dataset
    from microagg.metrics.population_risk import population_summary

    keys = re.search(r'<span id="risk-keys">([^<]+)</span>', page).group(1).split(", ")
    survey = load_dataset("survey")
    direct = population_summary(survey.data, keys, weights=survey.weight,
                                uniqueness=False)["k_map"]
    assert f"k-map</th><td>{direct['k_map']:.4g}</td>" in page
    assert f"journalist risk</th><td>{100 * direct['journalist_max']:.3g} %</td>" in page
    assert f"marketer risk</th><td>{100 * direct['marketer']:.3g} %</td>" in page


def test_protect_form_escapes_what_was_typed(client: TestClient) -> None:
    open_census(client)
    response = post_protect(client, params="<script>x=1</script>")
    assert response.status_code == 400  # type: ignore[attr-defined]
    text = response.text  # type: ignore[attr-defined]
    assert "<script>" not in text
    assert "&lt;script&gt;x=1&lt;/script&gt;" in text


def test_risk_page_without_a_quasi_identifier_says_so(client: TestClient) -> None:
    open_census(client)
    client.get("/roles")
    roles = {f"role-{i}": "other" for i in range(13)}
    client.post("/roles", data={**roles, "csrf_token": csrf(client, "/roles")})
    response = client.get("/risk")
    assert response.status_code == 400
    assert "quasi-identifier" in html.unescape(response.text)
    assert 'role="alert"' in response.text


PASS_CSV = (b"age,income,code,note\n"
            + b"".join(f"{20 + i},{1000 + 37 * i},{i % 3:05d},{t}\n".encode()
                       for i, t in enumerate(["NA", "None", "null", "nan", "x", ""] * 2)))
PASS_SCHEMA = b"""
[columns.age]
role = "quasi-identifier"
type = "numeric"

[columns.income]
role = "quasi-identifier"
type = "numeric"

[columns.code]
role = "other"
type = "numeric"

[columns.note]
role = "other"
"""


def test_downloads_publish_passthrough_columns_as_uploaded(client: TestClient,
                                                          tmp_path: pathlib.Path) -> None:
    import sqlite3

    import pyarrow.parquet as pq

    assert upload(client, "pass.csv", PASS_CSV).status_code == 200
    schema = client.post("/roles/upload", data={"csrf_token": csrf(client, "/roles")},
                         files={"file": ("s.toml", PASS_SCHEMA)})
    assert "Schema s.toml applied." in schema.text
    assert post_protect(client, k="3").status_code == 200  # type: ignore[attr-defined]
    codes = [f"{i % 3:05d}" for i in range(12)]
    notes = ["NA", "None", "null", "nan", "x", ""] * 2
    text = pd.read_csv(io.BytesIO(download(client, "/export/published.csv").content), dtype=str,
                       keep_default_na=False)
    assert (text["code"].tolist(), text["note"].tolist()) == (codes, notes)
    assert text.groupby(["age", "income"]).size().min() >= 3  # the masking is still there
    (tmp_path / "p.parquet").write_bytes(download(client, "/export/published.parquet").content)
    columns = pq.read_table(tmp_path / "p.parquet").to_pydict()
    assert columns["code"] == codes
    assert columns["note"] == [t or None for t in notes]  # an empty field is missing
    (tmp_path / "p.sqlite").write_bytes(download(client, "/export/published.sqlite").content)
    with sqlite3.connect(tmp_path / "p.sqlite") as db:
        rows = db.execute("SELECT code, note FROM published").fetchall()
    assert rows == [(c, t or None) for c, t in zip(codes, notes, strict=True)]


def test_parquet_list_and_struct_columns_through_the_workbench(client: TestClient,
                                                              tmp_path: pathlib.Path) -> None:
    import pyarrow.parquet as pq

    from tests.io.test_nested_columns import _nested_parquet

    source = _nested_parquet(tmp_path)
    assert upload(client, "nested.parquet", source.read_bytes()).status_code == 200
    roles_page = client.get("/roles").text
    assert "list&lt;element: int64&gt; cells: published unchanged" in roles_page  # other
    assert post_protect(client, k="3").status_code == 200  # type: ignore[attr-defined]
    (tmp_path / "out.parquet").write_bytes(download(client, "/export/published.parquet").content)
    before, after = pq.read_table(source), pq.read_table(tmp_path / "out.parquet")
    assert after.column("tags").equals(before.column("tags"))
    # the struct breaks k = 5 by itself (5 of its 6 values on fewer than 5 rows): proposed
    # as an identifier, so dropped, never published unchanged
    assert "home" not in after.column_names
    assert "breaks k = 5 by itself" in roles_page
    refused = download(client, "/export/published.csv")
    assert refused.status_code == 400
    assert "&#39;tags&#39; (list&lt;element: int64&gt;)" in refused.text


def _verdict_line(page: str, element: str) -> str:
    """The text of the verdict paragraph (the Result page's, or the report's status)."""
    found = re.search(rf"<p {element}[^>]*>(.*?)</p>", page, flags=re.S)
    assert found is not None, page[:3000]
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_result_page_leads_with_the_verdict_of_a_weight_that_breaks_k(
        client: TestClient) -> None:
    """Households of two share a weight (a role of its own, published unchanged): the
    release is 5-anonymous on age, but not for an intruder who knows the weight too."""
    rows = "".join(f"{20 + 3 * (i % 13)},{100 + i // 2}.5\n" for i in range(40))
    upload(client, "people.csv", f"age,weight\n{rows}".encode())
    assert "its name looks like a sampling weight" in client.get("/roles").text
    response = post_protect(client)
    assert response.status_code == 200  # type: ignore[attr-defined]
    page = client.get("/result").text
    headline = ("Not protected: published column(s) that break the required k: weight "
                "(k = 1 with it).")
    assert _verdict_line(page, 'id="verdict"') == headline
    assert page.index('id="verdict"') < page.index('id="achieved"')  # it leads
    report = client.get("/result/report.html").text
    assert _verdict_line(report, "class='status bad'") == headline
    summary = client.get("/export/summary.json").json()
    assert summary["verdict"]["headline"] == headline


def test_a_protected_release_says_so_first(released: TestClient) -> None:
    page = released.get("/result").text
    assert _verdict_line(page, 'id="verdict"') == ("Protected: k = 5 required and reached on "
                                                   "the published file.")


def _labelled_survey(path: pathlib.Path) -> None:
    """A survey written by pyreadstat to ``.sav`` or ``.dta`` (by ``path``'s suffix): value
    labels on ``sex``, variable labels, and a date of visit (``DATE11`` / ``%td``) that
    passes through."""
    import datetime

    import pyreadstat

    n = 24
    df = pd.DataFrame({"age": [float(20 + 2 * i) for i in range(n)],
                       "income": [float(1000 + 37 * i) for i in range(n)],
                       "sex": [float(1 + i % 2) for i in range(n)],
                       "visit": [datetime.date(2020, 1, 6) + datetime.timedelta(30 * (i % 4))
                                 for i in range(n)]})
    labels = {"age": "Age in years", "income": "Monthly income", "sex": "Sex",
              "visit": "Date of visit"}
    write, date_format = ((pyreadstat.write_sav, "DATE11") if path.suffix == ".sav"
                          else (pyreadstat.write_dta, "%td"))
    write(df, str(path), column_labels=labels, variable_value_labels={
        "sex": {1: "male", 2: "female"}}, variable_format={"visit": date_format})


LABELLED_SCHEMA = b"""
[columns.age]
role = "quasi-identifier"
type = "numeric"

[columns.income]
role = "quasi-identifier"
type = "numeric"

[columns.sex]
role = "other"

[columns.visit]
role = "other"
"""


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_export_in_the_uploads_format_keeps_its_labels_and_date_format(
        client: TestClient, tmp_path: pathlib.Path, suffix: str) -> None:
    import pyreadstat

    source = tmp_path / f"survey{suffix}"
    _labelled_survey(source)
    assert upload(client, source.name, source.read_bytes()).status_code == 200
    schema = client.post("/roles/upload", data={"csrf_token": csrf(client, "/roles")},
                         files={"file": ("s.toml", LABELLED_SCHEMA)})
    assert "Schema s.toml applied." in schema.text
    assert post_protect(client, k="3").status_code == 200  # type: ignore[attr-defined]
    links = re.findall(r'(?:href="/export/|name="name" value=")(published\.\w+)"',
                       client.get("/export").text)  # links, or the confirmation's buttons
    assert links[0] == f"published{suffix}"  # the upload's own format first
    assert {"published.sav", "published.dta"} <= set(links)
    response = download(client, f"/export/published{suffix}")
    assert response.status_code == 200
    out = tmp_path / f"out{suffix}"
    out.write_bytes(response.content)
    read = pyreadstat.read_sav if suffix == ".sav" else pyreadstat.read_dta
    data, meta = read(str(out))
    _, before = read(str(source))
    assert meta.variable_value_labels["sex"] == {1: "male", 2: "female"}
    assert meta.column_names_to_labels["visit"] == "Date of visit"
    assert meta.column_names_to_labels["age"] == "Age in years"
    assert meta.original_variable_types["visit"] == before.original_variable_types["visit"]
    original, _ = read(str(source))
    assert data["visit"].tolist() == original["visit"].tolist()
    assert data.groupby(["age", "income"]).size().min() >= 3  # the masking is still there
