"""The Protect and Sweep pages offer only the methods that apply to the roles and types (the
registry's ``mixed`` and ``needs_sensitive``, :mod:`microagg.partition._offer`), list the
others with why, and refuse a posted one with that reason; messages name types in plain
words; references by author and year; the missing-value strategy, the aggregation and the
intruder's knowledge set on the one-step form reach the release and its exported command,
which gives the same bytes (issue 51, item 3)."""

from __future__ import annotations

import html
import pathlib
import re

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from microagg.cli import app as cli_app
from microagg.datasets import load_dataset

from .conftest import csrf, download, open_census, post_protect, settled, upload

SURVEY = (b"age,sex,region\n" + b"".join(
    f"{20 + i % 37},{'fm'[i % 2]},{['North', 'South', 'East'][i % 3]}\n".encode()
    for i in range(30)))
MIXED = {"mdav-categorical", "mage", "semantic-mdav"}
"""The registry's methods that take categories, less cdt (it needs a sensitive column),
written out by hand from their entries."""


@pytest.fixture
def survey(client: TestClient) -> TestClient:
    """A survey of age (a number) and sex and region (text), all three quasi-identifiers."""
    assert upload(client, "survey.csv", SURVEY).status_code == 200
    client.get("/roles")
    saved = client.post("/roles", data={
        "csrf_token": csrf(client, "/roles"), "role-0": "quasi-identifier",
        "role-1": "quasi-identifier", "role-2": "quasi-identifier"})
    assert "Roles saved" in saved.text, saved.text
    return client


def _options(page: str, select: str) -> set[str]:
    found = re.search(rf'<select id="{select}".*?</select>', page, flags=re.S)
    assert found is not None
    return set(re.findall(r'<option value="([^"]+)"', found.group(0)))


def test_the_protect_page_offers_only_the_methods_for_categories(survey: TestClient) -> None:
    page = html.unescape(survey.get("/protect").text)
    assert _options(page, "method") == MIXED
    refused = page[page.index('id="methods-not-offered"'):]
    refused = refused[:refused.index("</p>")]
    assert ("mdav (needs numeric quasi-identifiers: sex and region are categories)"
            in refused)
    assert "cdt (needs a sensitive column" in refused
    assert "insensitive (needs numeric quasi-identifiers" in refused
    assert '<option value="mage" selected>' in page  # the recommended one


def test_a_posted_method_that_does_not_apply_is_refused_with_why(survey: TestClient) -> None:
    response = post_protect(survey, method="mdav", k="3")
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert ("method 'mdav' does not apply to these roles and types: needs numeric "
            "quasi-identifiers: sex and region are categories.") in text
    assert "dtype" not in text
    assert survey.get("/result").text.count('id="achieved-k"') == 0  # nothing released
    assert post_protect(survey, method="mage", k="3").status_code == 200


def test_the_sweep_page_offers_and_accepts_only_what_applies(survey: TestClient) -> None:
    page = html.unescape(survey.get("/sweep").text)
    boxes = set(re.findall(r'name="method-([a-z0-9-]+)"', page))
    assert boxes == MIXED
    assert "mdav (needs numeric quasi-identifiers: sex and region are categories)" in page
    response = survey.post("/sweep", data={"csrf_token": csrf(survey, "/sweep"), "k": "3",
                                           "method-mdav": "on", "method-mage": "on"})
    assert response.status_code == 400
    assert ("method 'mdav' does not apply to these roles and types: needs numeric "
            "quasi-identifiers: sex and region are categories.") in html.unescape(
                response.text)


def test_the_census_is_offered_every_numeric_method(client: TestClient) -> None:
    from microagg.partition import PARTITIONERS

    open_census(client)
    page = html.unescape(client.get("/protect").text)
    # no sensitive column: every method but cdt, and the epsilon partition
    assert _options(page, "method") == set(PARTITIONERS) - {"cdt"} | {"insensitive"}
    sweep = html.unescape(client.get("/sweep").text)
    assert "cdt (needs a sensitive column" in sweep and 'name="method-cdt"' not in sweep


def test_references_by_author_and_year_never_seed_numbers(client: TestClient) -> None:
    open_census(client)
    for path in ("/protect", "/sweep"):
        page = html.unescape(client.get(path).text)
        assert re.search(r"seed 00\d", page, flags=re.I) is None, path
    page = html.unescape(client.get("/protect").text)
    assert "Kabir, Mahmood, Mustafa & Wang, IEEE Trans. Cloud Comput. 8(2) (2020)" in page
    assert "Yang, Random Aggregation: Differential Privacy in k-Anonymity" in page


def test_a_form_message_names_types_in_plain_words(client: TestClient) -> None:
    assert upload(client, "survey.csv", SURVEY).status_code == 200
    client.get("/roles")
    response = client.post("/roles", data={
        "csrf_token": csrf(client, "/roles"), "role-0": "quasi-identifier",
        "role-1": "quasi-identifier", "type-1": "numeric", "role-2": "quasi-identifier"})
    text = html.unescape(response.text)
    assert "column 'sex' is declared numeric but has type text" in text
    assert "dtype" not in text


def test_the_data_page_shows_plain_types(survey: TestClient) -> None:
    page = survey.get("/data").text
    rows = dict(re.findall(r'<th scope="row">(\w+)</th><td>([^<]+)</td>', page))
    assert rows == {"age": "whole number", "sex": "text", "region": "text"}


def test_the_settings_offered_follow_the_keys(survey: TestClient) -> None:
    page = html.unescape(survey.get("/protect").text)
    assert _options(page, "missing") == {"pattern", "category", "impute:median",
                                         "impute:mean", "refuse"}
    # categories generalize: the numeric columns' representatives only, no intruder boxes
    assert _options(page, "aggregation") == {"mean", "interval"}
    assert 'id="intruder-knows"' not in page and 'id="intruder-not-offered"' in page
    refused = post_protect(survey, method="mage", k="3", aggregation="median",
                           **{"knows-0": "age"})
    assert refused.status_code == 400
    text = html.unescape(refused.text)
    assert "aggregation 'median' does not apply to these quasi-identifiers" in text
    assert "The intruder's knowledge applies to numeric microaggregation" in text


def test_the_settings_reach_the_release_and_the_exported_command(
        client: TestClient, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_census(client)
    page = html.unescape(client.get("/protect").text)
    assert {"mean", "median", "mode", "rho"} <= _options(page, "aggregation")
    keys = re.findall(r'name="knows-(\d+)" value="([^"]+)"', page)
    first, second = keys[0][1], keys[1][1]
    response = post_protect(client, aggregation="median", missing="refuse",
                            **{"knows-0": first, "knows-1": second})
    assert response.status_code == 200, response.text
    state = client.app.state.store  # type: ignore[attr-defined]
    (session,) = state._sessions.values()
    params = session.attempts[-1].release.params
    assert params["aggregation"] == "median" and params["missing"]["strategy"] == "refuse"
    assert list(params["intruder_knows"]) == [first, second]
    export = html.unescape(client.get("/export").text)
    found = re.search(r'<pre id="command">microagg (.*?)</pre>', export)
    assert found is not None
    args = found.group(1).split()
    assert " ".join(args[args.index("--missing"):args.index("--missing") + 6]) == (
        f"--missing refuse --aggregation median --intruder-knows {first},{second}")
    assert "aggregation='median'" in client.get("/export/reproduce.txt").text
    load_dataset("census").data.to_csv(tmp_path / "INPUT.csv", index=False)
    (tmp_path / "schema.toml").write_bytes(client.get("/export/schema.toml").content)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").read_bytes() == download(
        client, "/export/published.csv").content


def test_an_unknown_strategy_or_a_column_not_a_key_is_refused(client: TestClient) -> None:
    open_census(client)
    response = settled(client, client.post("/protect", data={
        "csrf_token": csrf(client, "/protect"), "k": "5", "method": "mdav",
        "missing": "drop", "knows-0": "nosuch"}))
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert "missing must be one of pattern, category, impute:median" in text
    assert "The intruder's knowledge names 'nosuch', which are not quasi-identifiers" in text
