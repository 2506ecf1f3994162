"""The Protect page offers only the steps that can apply to the roles and types (from each
step's options' traits, ``column_types``, ``needs_roles`` and ``makes_type``, never its
name), and the Result and Export pages lead with the release's one verdict
(``Release.verdict.headline``); a published table of a release the verdict does not call
protected downloads only through the confirmation form (issue 51)."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from starlette.testclient import TestClient

from microagg.steps import STEPS
from microagg.web.plan_form import column_type, not_offered

from .conftest import csrf, open_census, post_protect

NUMBERS = {"age": np.dtype("int64"), "income": np.dtype("float64")}
BY_TYPE = {"numeric": {"microaggregate", "noise", "rank_swap", "shuffle", "band",
                       "mvtopcode", "topcode", "recode"},
           "categorical": {"pram", "suppress", "suppress_risk", "recode"}}
"""The steps that take each type, written out by hand from their checkers (microaggregate,
noise, swaps and codes refuse text; PRAM and suppression refuse numbers; recode groups
values of either)."""


def test_only_the_steps_whose_types_and_roles_apply_are_offered() -> None:
    schema = {"age": {"role": "quasi-identifier"}, "income": {"role": "quasi-identifier"}}
    refused = not_offered(schema, NUMBERS, [])
    assert set(STEPS) - set(refused) == BY_TYPE["numeric"]
    assert refused["household"] == "needs a column with role household"
    assert refused["pram"] == ("changes categorical or ordinal quasi-identifiers, and the "
                               "roles give none")
    assert "date" in refused["recode_date"]
    # text keys: the categorical steps; a household id: the household step too
    schema = {"region": {"role": "quasi-identifier"}, "hid": {"role": "household"}}
    refused = not_offered(schema, {"region": np.dtype(object), "hid": np.dtype(object)}, [])
    assert set(STEPS) - set(refused) == BY_TYPE["categorical"] | {"household", "swap_households"}
    # a declared type wins over the dtype (codes declared categorical)
    schema = {"code": {"role": "quasi-identifier", "type": "categorical"}}
    assert set(STEPS) - set(not_offered(schema, {"code": np.dtype("int64")}, [])) \
        == BY_TYPE["categorical"]


def test_a_step_that_makes_categories_offers_the_categorical_steps_after_it() -> None:
    schema = {"age": {"role": "quasi-identifier"}}
    assert "suppress" in not_offered(schema, NUMBERS, [])
    # bands publish text labels: suppressing them after is offered (steps chain on a column)
    assert STEPS["band"].options.makes_type == "categorical"
    assert "suppress" not in not_offered(schema, NUMBERS, [{"step": "band", "values": {}}])


@pytest.mark.parametrize(("entry", "dtype", "kind"), [
    ({}, np.dtype("int64"), "numeric"), ({}, np.dtype("bool"), "categorical"),
    ({}, np.dtype("datetime64[ns]"), "date"), ({}, np.dtype(object), "categorical"),
    ({"type": "ordinal"}, np.dtype("int64"), "ordinal")])
def test_column_type_reads_the_schema_then_the_values(entry: dict[str, str],
                                                      dtype: np.dtype, kind: str) -> None:
    assert column_type(entry, dtype) == kind






def _offered(page: str) -> set[str]:
    select = re.search(r'<select id="add_step".*?</select>', page, flags=re.S)
    assert select is not None
    return set(re.findall(r'<option value="([a-z_]+)"', select.group(0)))


def test_the_protect_page_offers_the_numeric_steps_for_the_census(client: TestClient
                                                                  ) -> None:
    open_census(client)  # 13 numeric quasi-identifiers, no household
    page = html.unescape(client.get("/protect").text)
    assert _offered(page) == BY_TYPE["numeric"]
    assert "household (needs a column with role household)" in page
    assert 'id="not-offered"' in page


def _verdict(page: str) -> str:
    found = re.search(r'<p id="verdict"[^>]*>(.*?)</p>', page, flags=re.S)
    assert found is not None
    return re.sub(r"<[^>]+>", "", html.unescape(found.group(1))).strip()


def test_a_protected_release_leads_with_its_verdict_and_downloads_directly(
        client: TestClient) -> None:
    open_census(client)
    result = post_protect(client)
    headline = client.get("/export/summary.json").json()["verdict"]["headline"]
    assert headline.startswith("Protected: ")
    assert _verdict(result.text) == headline == _verdict(client.get("/export").text)
    # the verdict comes before anything else of the page's content
    assert result.text.index('id="verdict"') < result.text.index('id="achieved"')
    export = client.get("/export").text
    assert 'id="confirm-form"' not in export and 'href="/export/published.csv"' in export
    assert client.get("/export/published.csv").status_code == 200


def test_an_unsafe_release_downloads_only_after_the_confirmation(client: TestClient
                                                                 ) -> None:
    from microagg.datasets import load_dataset

    open_census(client)
    # one noise step: no k is promised, so the verdict is not "protected"
    keys = ",".join(load_dataset("census").quasi_identifiers)
    assert post_protect(client, **{"plan-1-step": "noise", "plan-1-variables": keys}
                    ).status_code == 200
    verdict = client.get("/export/summary.json").json()["verdict"]
    assert verdict["status"] != "protected", verdict
    export = client.get("/export").text
    assert _verdict(export) == verdict["headline"] == _verdict(client.get("/result").text)
    assert 'id="confirm-form"' in export and 'type="checkbox" id="confirm"' in export
    assert "<script" not in export  # a form, no script (the CSP blocks inline ones)
    # the table is not handed over without the box ticked, by GET or by the form
    refused = client.get("/export/published.csv")
    assert refused.status_code == 409 and "tick the confirmation box" in refused.text
    token = csrf(client, "/export")
    form = {"csrf_token": token, "name": "published.csv"}
    assert client.post("/export/download", data=form).status_code == 400
    done = client.post("/export/download", data={**form, "confirm": "yes"})
    assert done.status_code == 200
    assert done.headers["content-disposition"] == 'attachment; filename="published.csv"'
    assert done.content.count(b"\n") == 1081  # the header and the 1,080 records
    bad = client.post("/export/download", data={**form, "name": "../x", "confirm": "yes"})
    assert bad.status_code == 400
    script = client.post("/export/download", data={**form, "name": "<script>x</script>"})
    assert script.status_code == 400 and "<script>" not in script.text  # escaped
    assert "&lt;script&gt;" in script.text
