"""The Hierarchies page: each builder's fields turned into a hierarchy (hand-worked), the
page built, previewed and saved on an uploaded table, every problem of a form at once,
values escaped, and a saved hierarchy used by a recode step of the plan (and no other file
opened)."""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

from microagg.hierarchy import Hierarchy
from microagg.hierarchy_builders import HierarchyBuildError
from microagg.web import hierarchy_form

from .conftest import csrf, download, post_protect, upload

SCRIPT = "<script>alert(1)</script>"
POSTCODES = ["75001", "75002", "75011", "69001", "69002"]
EDU = ["none", "primary", "secondary", "tertiary"]


def _people() -> bytes:
    """40 people: postcode (8 of each), region (one a script), edu, age 20 to 59."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "postcode": np.repeat(POSTCODES, 8),
        "region": np.array(["North", "South", "East", SCRIPT] * 10),
        "edu": np.array(EDU * 10),
        "age": np.arange(20, 60)[rng.permutation(40)]})
    return frame.to_csv(index=False).encode()


@pytest.fixture
def people(client: TestClient) -> TestClient:
    """The people table open, postcode and age quasi-identifiers (postcode categorical),
    region categorical and edu ordinal (other roles)."""
    assert upload(client, "people.csv", _people()).status_code == 200
    client.get("/roles")
    saved = client.post("/roles", data={
        "csrf_token": csrf(client, "/roles"),
        "role-0": "quasi-identifier", "type-0": "categorical",
        "role-1": "other", "type-1": "categorical",
        "role-2": "other", "type-2": "ordinal", "order-2": ",".join(EDU),
        "role-3": "quasi-identifier", "type-3": "numeric"})
    assert "Roles saved" in saved.text, saved.text
    return client


def _post(client: TestClient, column: str, **fields: str):  # type: ignore[no-untyped-def]
    token = csrf(client, f"/hierarchies?column={column}")
    return client.post("/hierarchies", data={"csrf_token": token, "column": column,
                                             "action": "preview", **fields})


def _preview(page: str) -> list[list[str]]:
    table = page[page.index('id="hierarchy-preview"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</tr>", table, flags=re.S)
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
             for c in re.split(r"</t[hd]><td>", row)] for row in rows]


# ------------------------------------------------------------------------ the form alone

def test_each_builder_reads_its_fields() -> None:
    ages = pd.Series([17, 24, 39])
    h = hierarchy_form.build("intervals", {"levels": "2", "level-1": "5",
                                           "level-2": "0, 18, inf"}, ages, [], "age")
    assert h.paths["17"] == ("17", "[15, 20)", "[0, 18)", "*")
    codes = pd.Series(POSTCODES)
    h = hierarchy_form.build("masking", {"levels": "2", "level-1": "1", "level-2": "3"},
                             codes, POSTCODES, "postcode")
    assert h.paths["75011"] == ("75011", "7501*", "75***", "*")
    regions = pd.Series(["N", "S", "E"])
    h = hierarchy_form.build("groups", {"levels": "1", "group-1-0": "NE", "group-1-1": "NE"},
                             regions, ["E", "N", "S"], "region")
    assert h.paths["N"] == ("N", "NE", "*") and h.paths["S"] == ("S", "S", "*")
    h = hierarchy_form.build("ordinal", {"levels": "2", "cut-1-2": "yes", "cut-1-3": "yes",
                                         "cut-2-2": "yes"}, pd.Series(EDU), EDU, "edu")
    assert h.paths["primary"] == ("primary", "none..primary", "none..primary", "*")
    assert h.paths["tertiary"] == ("tertiary", "tertiary", "secondary..tertiary", "*")


def test_the_form_gives_every_problem_at_once() -> None:
    with pytest.raises(HierarchyBuildError) as raised:
        hierarchy_form.build("intervals", {"levels": "3", "level-1": "abc", "level-2": "",
                                           "level-3": "5", "origin": "x"},
                             pd.Series([1.0]), [], "age")
    assert raised.value.problems == [
        "level-1 (column 'age'): 'abc' is not a number (a width such as 5, or breaks such "
        "as 0, 18, 65, inf).",
        "level-2 (column 'age'): give a width or breaks.",
        "origin (column 'age'): 'x' is not a number (a width such as 5, or breaks such as "
        "0, 18, 65, inf)."]
    with pytest.raises(HierarchyBuildError) as raised:
        hierarchy_form.build("kmeans", {"levels": "9", "x": "y" * 600}, pd.Series([1]), [],
                             "age")
    assert len(raised.value.problems) == 3
    assert "x: at most 500 characters; got 600." in raised.value.problems
    many = [str(i) for i in range(hierarchy_form.MAX_VALUES + 1)]
    with pytest.raises(HierarchyBuildError, match="501 distinct values; the groups builder "
                                                  "lists at most 500"):
        hierarchy_form.build("groups", {}, pd.Series(many), many, "id")


# ------------------------------------------------------------------------ the page

def test_the_page_offers_each_column_its_builder(people: TestClient) -> None:
    page = html.unescape(people.get("/hierarchies").text)
    assert '<a href="/hierarchies" aria-current="page">Hierarchies</a>' in page
    for name, what in (("postcode", "groups of categories"), ("edu", "ranges of ordered"),
                       ("age", "intervals of numbers")):
        assert f'<option value="{name}">{name} (' in page and what in page
    age = people.get("/hierarchies?column=age").text
    # ages 20..59: a round width for about 20 intervals is 2, then 4 and 8
    assert 'name="level-1" type="text" value="2"' in age
    assert 'name="level-3" type="text" value="8"' in age
    edu = people.get("/hierarchies?column=edu").text  # the Roles page's order, shown
    assert [html.unescape(v) for v in re.findall(r'<tr><th scope="row">([^<]+)</th>', edu)] \
        == EDU
    masking = people.get("/hierarchies?column=postcode&kind=masking").text
    assert 'name="level-3" type="number" min="1" step="1" value="3"' in masking
    bad = people.get("/hierarchies", params={"column": SCRIPT})
    assert bad.status_code == 400
    assert f"column: no column {SCRIPT!r} in this table" in html.unescape(bad.text)
    assert SCRIPT not in bad.text


def test_preview_counts_records_per_value_and_group(people: TestClient) -> None:
    response = _post(people, "postcode", kind="masking", levels="2", **{
        "level-1": "1", "level-2": "3"})
    assert response.status_code == 200, response.text
    assert _preview(response.text) == [  # 8 people a postcode
        ["69001", "8", "6900* (16)", "69*** (16)", "* (40)"],
        ["69002", "8", "6900* (16)", "69*** (16)", "* (40)"],
        ["75001", "8", "7500* (16)", "75*** (24)", "* (40)"],
        ["75002", "8", "7500* (16)", "75*** (24)", "* (40)"],
        ["75011", "8", "7501* (8)", "75*** (24)", "* (40)"]]
    assert "saved as" not in response.text  # a preview keeps nothing


def test_invalid_groups_show_every_problem_and_escape_values(people: TestClient) -> None:
    page = people.get("/hierarchies?column=region&levels=2").text
    assert SCRIPT not in page and html.escape(SCRIPT) in page  # the value, escaped
    values = sorted(["North", "South", "East", SCRIPT])  # the page's order: text sorted
    index = {v: i for i, v in enumerate(values)}
    response = _post(people, "region", kind="groups", levels="2", **{
        f"group-1-{index['North']}": "Mainland", f"group-1-{index['South']}": "Mainland",
        f"group-2-{index['North']}": "A", f"group-2-{index['South']}": "B",
        f"group-1-{index['East']}": "", f"group-2-{index[SCRIPT]}": SCRIPT,
        "level-9": "x" * 600})
    assert response.status_code == 400
    assert "level-9: at most 500 characters" in response.text
    response = _post(people, "region", kind="groups", levels="2", **{
        f"group-1-{index['North']}": "Mainland", f"group-1-{index['South']}": "Mainland",
        f"group-2-{index['North']}": "A", f"group-2-{index['South']}": "B",
        f"group-2-{index[SCRIPT]}": SCRIPT})
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert "the level-1 group 'Mainland' is split at level 2: value 'North' goes to 'A' " \
           "and value 'South' to 'B'" in text
    assert SCRIPT not in response.text


def test_save_keeps_an_arx_file_in_the_session_and_the_schema(people: TestClient,
                                                               tmp_path) -> None:
    response = _post(people, "edu", kind="ordinal", levels="1", action="save", schema="yes",
                     **{"cut-1-2": "yes"})
    assert response.status_code == 200, response.text
    text = html.unescape(response.text)
    assert "Hierarchy of column 'edu' saved as hierarchies/1.csv (2 level(s)" in text
    assert "The schema's entry of column 'edu' now names it." in text
    assert 'href="/hierarchies/download/1.csv"' in response.text
    got = people.get("/hierarchies/download/1.csv")
    assert got.status_code == 200 and got.text == (
        "none;none..primary;*\nprimary;none..primary;*\n"
        "secondary;secondary..tertiary;*\ntertiary;secondary..tertiary;*\n")
    (tmp_path / "edu.csv").write_text(got.text)
    assert Hierarchy.from_csv(tmp_path / "edu.csv").lca(["none", "primary"]) == (
        "none..primary", 1)
    assert 'hierarchy = "hierarchies/1.csv"' in people.get("/roles/schema.toml").text
    for name in ("2.csv", "..%2F1.csv", "1.txt"):
        assert people.get(f"/hierarchies/download/{name}").status_code == 404
    assert people.post("/hierarchies", data={"column": "edu", "kind": "ordinal",
                                             "action": "save"}).status_code == 403


def test_a_saved_hierarchy_recodes_in_the_plan(people: TestClient) -> None:
    saved = _post(people, "postcode", kind="masking", levels="2", action="save", **{
        "level-1": "1", "level-2": "3"})
    assert "saved as hierarchies/1.csv" in saved.text
    protect_page = people.get("/protect").text
    assert "build one on the Hierarchies page" not in protect_page  # no recode step yet
    plan = {"plan-1-step": "recode", "plan-1-column": "postcode",
            "plan-1-hierarchy": "hierarchies/1.csv", "plan-1-level": "2",
            "plan-2-step": "microaggregate", "plan-2-quasi_identifiers": "age",
            "plan-2-k": "4"}
    shown = post_protect(people, action="add", add_step="recode")
    assert '<option value="hierarchies/1.csv">' in shown.text
    response = post_protect(people, **plan)
    assert response.status_code == 200, response.text
    summary = people.get("/export/summary.json").json()
    assert summary["params"]["plan"][0] == {"step": "recode", "column": "postcode",
                                            "hierarchy": "hierarchies/1.csv", "level": 2}
    published = pd.read_csv(io.BytesIO(download(people, "/export/published.csv").content),
                            dtype={"postcode": str})
    assert published["postcode"].value_counts().to_dict() == {"75***": 24, "69***": 16}
    assert people.get("/export/hierarchies/1.csv").text.startswith("69001;6900*;69***;*")
    for path in ("/etc/passwd", "hierarchies/7.csv", "../hierarchies/1.csv"):
        refused = post_protect(people, **{**plan, "plan-1-hierarchy": path})
        assert refused.status_code == 400
        assert f"the 'hierarchy' option {path!r} is not a hierarchy of this session; give " \
               "one of hierarchies/1.csv" in html.unescape(refused.text)
