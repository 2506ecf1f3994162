"""The Risk page's key variables chosen apart from the columns to mask, its individual-risk
histogram and riskiest records, and the Result page's published rows beside the original
ones (issue 51, item 2)."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

from microagg.datasets import load_dataset
from microagg.web.beside import beside, same_value
from microagg.web.risk_figures import histogram_drawing, risk_histogram

from .conftest import csrf, open_census, post_protect, upload


def _survey(client: TestClient) -> pd.DataFrame:
    response = client.post("/data/dataset", data={"dataset": "survey",
                                                  "csrf_token": csrf(client)})
    assert response.status_code == 200
    return load_dataset("survey").data


def _ticked(page: str) -> list[int]:
    return [int(i) for i in re.findall(r'id="key-(\d+)" name="key-\d+" value="yes" checked',
                                       page)]


def _offered(page: str) -> list[int]:
    return [int(i) for i in re.findall(r'<input type="checkbox" id="key-(\d+)"', page)]


def _choose(client: TestClient, df: pd.DataFrame, keys: list[str]):  # type: ignore[no-untyped-def]
    fields = {f"key-{list(df.columns).index(key)}": "yes" for key in keys}
    return client.post("/risk", data={**fields, "csrf_token": csrf(client, "/risk")})


def _table(page: str, table_id: str) -> list[list[str]]:
    """The body cells (th and td, as text) of the table ``table_id``."""
    body = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert body is not None, table_id
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell))
             for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)]


def test_keys_offered_are_the_columns_an_intruder_may_know(client: TestClient) -> None:
    df = _survey(client)
    page = client.get("/risk").text
    # the proposal: person_id, name identifiers; weight the weight; household_id the household
    offered = [df.columns[i] for i in _offered(page)]
    assert offered == [c for c in df.columns if c not in ("person_id", "name", "weight",
                                                           "household_id")]
    assert _ticked(page) == _offered(page)  # by default: every quasi-identifier
    assert 'id="reset-keys"' not in page
    assert "the library takes no separate risk keys" in page
    for label in re.findall(r'<label class="choice" for="(key-\d+)"><input type="checkbox" '
                            r'id="(key-\d+)"', page):
        assert label[0] == label[1]  # every checkbox has its label


def test_chosen_keys_are_kept_and_measured(client: TestClient) -> None:
    df = _survey(client)
    keys = ["sex", "region", "education"]
    page = _choose(client, df, keys).text
    assert re.search(r'<span id="risk-keys">sex, region, education</span>', page)
    assert [df.columns[i] for i in _ticked(page)] == keys
    # k before: the smallest class on the three keys, counted here
    sizes = df.groupby(keys, dropna=False).size()
    assert f'<td id="k-before">{sizes.min()}</td>' in page
    # kept in the session: the page shows them again; the Protect page is not changed by them
    assert _ticked(client.get("/risk").text) == _ticked(page)
    # reset: the quasi-identifiers of the roles again
    back = client.post("/risk", data={"reset": "yes", "csrf_token": csrf(client, "/risk")})
    assert _ticked(back.text) == _offered(back.text) and "id=\"reset-keys\"" not in back.text


def test_riskiest_records_are_those_of_largest_weighted_risk(client: TestClient) -> None:
    from microagg.metrics.survey_risk import survey_risk

    df = _survey(client)
    keys = ["sex", "region", "household_size", "education"]  # the table's order
    page = _choose(client, df, keys).text
    rows = _table(page, "riskiest")
    assert len(rows) == 20
    risk = survey_risk(df, keys, weights="weight")
    # fk counted here: records sharing the four values
    fk = df.groupby(keys, dropna=False)[keys[0]].transform("size").to_numpy()
    order = sorted(range(len(df)), key=lambda i: (-risk.risk[i], i))[:20]
    for row, i in zip(rows, order, strict=True):
        assert row[0] == str(i + 1)
        assert row[1:5] == [str(v) for v in df.loc[i, keys]]
        assert row[5] == str(fk[i])
        assert row[6] == f"{risk.Fk[i]:,.1f}"  # the sum of the weights of the class
        assert row[7] == f"{100 * risk.risk[i]:.4g} %"
    assert abs(risk.Fk[order[0]] - df.loc[fk == fk[order[0]]].pipe(
        lambda d: d[(d[keys] == df.loc[order[0], keys]).all(axis=1)]["weight"].sum())) < 1e-6
    # the columns shown: the row, the keys, fk, Fk and the risk, nothing else
    header = re.search(r'<table id="riskiest">\s*<thead><tr>(.*?)</tr>', page).group(1)
    assert re.findall(r'<th scope="col">([^<]+)</th>', header)[1:5] == keys
    for identifier in ("person_id", "name", "weight", "household_id"):
        assert f">{identifier}<" not in header


def test_histogram_counts_one_over_fk_without_a_weight(client: TestClient) -> None:
    open_census(client)
    df = load_dataset("census").data
    keys = ["FICA"]
    page = _choose(client, df, keys).text
    assert "taken for the population" in page
    risk = 1 / df.groupby(keys)[keys[0]].transform("size").to_numpy()
    counted = [int(row[2]) for row in _table(page, "risk-histogram")]
    top = float(_table(page, "risk-histogram")[-1][1].rstrip(" %")) / 100
    assert risk.max() <= top < 2.5 * risk.max() or top == 1.0
    brute = [int(((risk >= top * b / 20) & ((risk < top * (b + 1) / 20) | (b == 19))).sum())
             for b in range(20)]
    assert counted == brute and sum(counted) == len(df)
    assert 'id="risk-histogram-plot"' in page and "<title" in page


def test_no_key_ticked_is_an_error_and_the_choice_stays(client: TestClient) -> None:
    df = _survey(client)
    _choose(client, df, ["sex"])
    response = client.post("/risk", data={"csrf_token": csrf(client, "/risk")})
    assert response.status_code == 400
    assert "Tick at least one key variable" in response.text
    assert [df.columns[i] for i in _ticked(client.get("/risk").text)] == ["sex"]


def test_the_keys_form_needs_the_csrf_token(client: TestClient) -> None:
    _survey(client)
    assert client.post("/risk", data={"key-2": "yes"}).status_code == 403


def test_key_values_are_escaped_and_identifiers_never_shown(client: TestClient) -> None:
    evil = "<script>alert(1)</script>"
    rows = "".join(f"P{i:03d},{evil if i == 0 else 'x' + str(i % 3)},{20 + i % 7}\n"
                   for i in range(30))
    upload(client, "evil.csv", f"person_id,code,age\n{rows}".encode())
    page = client.get("/risk").text
    assert evil not in page and html.escape(evil, quote=False) in page.replace("&#39;", "'")
    riskiest = _table(page, "riskiest")
    assert riskiest[0][1:3] == [evil, "20"]  # the unique record first, its key values shown
    assert not any(cell.startswith("P0") for row in riskiest for cell in row)


# ----------------------------------------------------------------- the result page sample

def test_result_shows_published_rows_beside_the_original(client: TestClient) -> None:
    open_census(client)
    assert post_protect(client).status_code == 200  # type: ignore[attr-defined]
    page = client.get("/result").text
    original = load_dataset("census").data
    release = client.app.state.store  # type: ignore[attr-defined]
    session = next(iter(release._sessions.values()))
    published = session.attempts[-1].release.data
    shown = re.findall(r'<tr id="beside-(\d+)-published"', page)
    assert len(shown) == 10 and shown == sorted(shown, key=int)
    rows = _table(page, "beside")
    for pair, number in zip(range(0, 20, 2), shown, strict=True):
        i = int(number) - 1
        before, after = rows[pair], rows[pair + 1]
        assert before[:2] == [number, "original"] and after[0] == "published"
        assert [float(v) for v in before[2:]] == original.iloc[i].tolist()
        cells = [v.replace(" (changed)", "") for v in after[1:]]
        assert np.allclose([float(v) for v in cells], published.iloc[i].to_numpy(), rtol=1e-9)
        marked = [v.endswith(" (changed)") for v in after[1:]]
        assert marked == [not np.isclose(a, b, rtol=0, atol=0)
                          for a, b in zip(original.iloc[i], published.iloc[i], strict=True)]
    # the same records for the next attempt: attempts compare row for row
    assert post_protect(client, k="10").status_code == 200  # type: ignore[attr-defined]
    assert re.findall(r'<tr id="beside-(\d+)-published"', client.get("/result").text) == shown


def test_result_sample_never_shows_dropped_identifiers(client: TestClient) -> None:
    rows = "".join(f"P{i:03d},Person {i},{20 + (i * 7) % 40},{1000 + 13 * i}\n"
                   for i in range(60))
    upload(client, "people.csv", f"person_id,name,age,income\n{rows}".encode())
    assert post_protect(client, k="3").status_code == 200  # type: ignore[attr-defined]
    page = client.get("/result").text
    table = re.search(r'<table id="beside">.*?</table>', page, re.S).group(0)
    header = re.findall(r'<th scope="col">([^<]+)</th>', table)
    assert header == ["row", "version", "age", "income"]
    assert "P0" not in table and "Person" not in table


# ------------------------------------------------------------------ the figures, by hand

def test_histogram_by_hand() -> None:
    found = risk_histogram([1.0, 0.5, 0.5, 0.25, 0.25, 0.25], bins=4)
    assert found.edges == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert found.counts == (0, 3, 2, 1) and not found.log  # 0.25 in [0.25, 0.5)
    small = risk_histogram([0.003, 0.0004], bins=5)  # the right end: 0.005, the round top
    assert small.edges[-1] == pytest.approx(0.005) and small.counts == (1, 0, 0, 1, 0)


def test_a_skewed_histogram_gets_a_log_count_axis() -> None:
    found = risk_histogram([0.01] * 990 + [0.85] * 10, bins=10)
    assert found.counts == (990, 0, 0, 0, 0, 0, 0, 0, 10, 0) and found.log
    drawn = histogram_drawing(found)
    assert drawn["ylabel"] == "records (log scale)"
    assert [label for _, label in drawn["yticks"]] == ["1", "10", "100", "1,000"]
    bottom, top = drawn["plot"]["bottom"], drawn["plot"]["top"]
    tall, short = drawn["bars"][0]["height"], drawn["bars"][8]["height"]
    # heights (1 + log10 count) / (1 + 3) of the plot: 990 -> 0.9989, 10 -> 0.5
    assert tall == pytest.approx((bottom - top) * (1 + np.log10(990)) / 4, abs=0.1)
    assert short == pytest.approx((bottom - top) * 0.5, abs=0.1)
    linear = histogram_drawing(risk_histogram([0.25, 0.75, 0.75], bins=2))
    assert linear["ylabel"] == "records"
    assert linear["bars"][0]["height"] == pytest.approx(linear["bars"][1]["height"] / 2)


@pytest.mark.parametrize(("original", "published", "same"), [
    (36, 36.0, True), (36, 36.4, False), ("Coast", "Islands", False), ("Coast", None, False),
    (None, float("nan"), True), ("2020-01-02", pd.Timestamp("2020-01-02"), True),
    ("not a date", pd.Timestamp("2020-01-02"), False), (True, 1.0, False),
])
def test_same_value(original: object, published: object, same: bool) -> None:
    assert same_value(original, published) is same


def test_a_shuffled_release_pairs_no_rows() -> None:
    df = pd.DataFrame({"a": [1, 2, 3]})
    assert beside(df, df, shuffled=True)["rows"] == []
    drawn = beside(df, df.assign(a=[1, 5, 3]), n=3)
    assert [r["changed"] for r in drawn["rows"]] == [[False], [True], [False]]
    assert drawn["changed"] == 1


def test_a_sensitive_column_with_missing_values_does_not_stop_the_page(
        client: TestClient) -> None:
    rows = "".join(f"{20 + i % 4},{'' if i % 5 == 0 else 1000 + i}\n" for i in range(40))
    upload(client, "gaps.csv", f"age,income\n{rows}".encode())
    client.get("/roles")
    saved = client.post("/roles", data={"role-0": "quasi-identifier", "type-0": "numeric",
                                        "role-1": "sensitive", "type-1": "numeric",
                                        "csrf_token": csrf(client, "/roles")})
    assert saved.status_code == 200, saved.text
    page = client.get("/risk")
    assert page.status_code == 200 and '<td id="k-before">10</td>' in page.text
