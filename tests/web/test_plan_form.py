"""The Protect form's plan: a second microaggregation step (its columns, k, method) posted by
the browser and checked by the server, never trusted (unknown steps and methods, columns not
in the upload, k out of range: 400 with a message)."""

from __future__ import annotations

import html
import io
from types import SimpleNamespace

import pandas as pd
import pytest
from starlette.testclient import TestClient

from microagg.steps import Microaggregate, Plan
from microagg.web.plan_form import plan_options, step_text
from microagg.web.protect import reproduction

from .conftest import csrf, settled

SCHEMA = {"age": {"role": "quasi-identifier"}, "income": {"role": "quasi-identifier"},
          "bmi": {"role": "quasi-identifier"}, "disease": {"role": "sensitive"}}
COLUMNS = ["age", "income", "bmi", "disease"]
ONE_STEP = {"k": 5, "method": "mdav", "method_params": None, "l": None, "random_state": 7}
SECOND = ["FICA", "WSALVAL", "ERNVAL"]


def _options(**fields: str) -> dict[str, object]:
    return plan_options(fields, ONE_STEP, SCHEMA, COLUMNS, n_rows=40)


def test_without_a_second_step_the_form_is_the_one_step_form() -> None:
    assert _options() == ONE_STEP
    assert _options(step2="", step2_columns="", step2_k="", step2_method="") == ONE_STEP


def test_a_second_step_makes_a_plan_of_two_steps() -> None:
    options = _options(step2="microaggregate", step2_columns="bmi", step2_k="3",
                       step2_method="mdav-ls")
    assert Plan.from_records(options["plan"]) == Plan([  # type: ignore[arg-type]
        Microaggregate(["age", "income"], k=5, method="mdav"),
        Microaggregate(["bmi"], k=3, method="mdav-ls")])
    assert "k" not in options and "method" not in options and options["random_state"] == 7


@pytest.mark.parametrize(("fields", "message"), [
    ({"step2": "swap", "step2_columns": "bmi", "step2_k": "3"},
     "Unknown step 'swap' in step2; the steps are microaggregate"),
    ({"step2": "microaggregate", "step2_columns": "bmi,zip", "step2_k": "3"},
     "step2_columns: 'zip' not in the upload"),
    ({"step2": "microaggregate", "step2_columns": "disease", "step2_k": "3"},
     "'disease' has role 'sensitive'"),
    ({"step2": "microaggregate", "step2_columns": "", "step2_k": "3"},
     "step2_columns is required"),
    ({"step2": "microaggregate", "step2_columns": "age income bmi", "step2_k": "3"},
     "The first step has no quasi-identifier left"),
    ({"step2": "microaggregate", "step2_columns": "bmi", "step2_k": "41"},
     "step2_k must be a whole number in [2, 40]"),
    ({"step2": "microaggregate", "step2_columns": "bmi", "step2_k": "1"},
     "step2_k must be a whole number in [2, 40]"),
    ({"step2": "microaggregate", "step2_columns": "bmi", "step2_k": "3",
      "step2_method": "nope"}, "Unknown method 'nope' in step2_method"),
    ({"step2_columns": "bmi"}, "step2 is blank but its columns"),
])
def test_bad_second_steps_are_refused_with_a_message(fields: dict[str, str],
                                                     message: str) -> None:
    with pytest.raises(ValueError) as caught:
        _options(**fields)
    assert message in str(caught.value)


def test_step_text_reads_back_as_the_same_step() -> None:
    record = Microaggregate(["age", "bmi"], k=5, method="mdav",
                            method_params={"gamma": 0.2}).to_record()
    assert Plan.from_text([step_text(record)]).to_records() == [record]


def test_reproduction_of_a_plan_gives_its_steps() -> None:
    options = _options(step2="microaggregate", step2_columns="bmi", step2_k="3")
    script = reproduction(SimpleNamespace(options=options))  # type: ignore[arg-type]
    assert "--step 'microaggregate quasi-identifiers=age,income k=5 method=mdav' --step " \
           "'microaggregate quasi-identifiers=bmi k=3'" in script["command"]
    assert " -k " not in script["command"]
    assert "plan=Plan.from_records(" in script["python"]
    assert "from microagg.steps import Plan" in script["python"]


def _census(client: TestClient) -> None:
    response = client.post("/data/dataset", data={"dataset": "census",
                                                  "csrf_token": csrf(client)})
    assert response.status_code == 200


def _protect(client: TestClient, **fields: str):  # type: ignore[no-untyped-def]
    data = {"k": "5", "method": "mdav", "random_state": "7", **fields}
    return settled(client, client.post("/protect",
                                       data={**data, "csrf_token": csrf(client, "/protect")}))


def test_the_protect_page_offers_a_second_step(client: TestClient) -> None:
    _census(client)
    page = client.get("/protect").text
    for name in ("step2", "step2_columns", "step2_k", "step2_method"):
        assert f'name="{name}"' in page
    assert '<option value="microaggregate">microaggregate</option>' in page
    assert "reported, not promised" in page


@pytest.mark.parametrize(("fields", "message"), [
    ({"step2": "no_such_step", "step2_columns": "FICA", "step2_k": "3"},
     "Unknown step 'no_such_step'"),
    ({"step2": "microaggregate", "step2_columns": "FICA,nope", "step2_k": "3"},
     "'nope' not in the upload"),
    ({"step2": "microaggregate", "step2_columns": "FICA", "step2_k": "5000"},
     "step2_k must be a whole number in [2, 1080]"),
    ({"step2": "microaggregate", "step2_columns": "FICA", "step2_k": "3",
      "step2_method": "<script>"}, "Unknown method '<script>'"),
])
def test_the_server_refuses_a_bad_plan_with_400(client: TestClient, fields: dict[str, str],
                                                message: str) -> None:
    _census(client)
    response = _protect(client, **fields)
    assert response.status_code == 400
    assert message in html.unescape(response.text)
    assert "<script>" not in response.text  # shown escaped, never as markup


def test_a_two_step_plan_from_the_form_is_released(client: TestClient) -> None:
    from microagg.datasets import load_dataset

    _census(client)
    response = _protect(client, step2="microaggregate", step2_columns=",".join(SECOND),
                        step2_k="3", step2_method="mdav")
    assert response.status_code == 200, response.text
    first = [c for c in load_dataset("census").quasi_identifiers if c not in SECOND]
    summary = client.get("/export/summary.json").json()
    assert summary["params"]["plan"] == [
        {"step": "microaggregate", "quasi_identifiers": first, "k": 5, "method": "mdav"},
        {"step": "microaggregate", "quasi_identifiers": SECOND, "k": 3, "method": "mdav"}]
    published = pd.read_csv(io.BytesIO(client.get("/export/published.csv").content))
    assert published.groupby(first).size().min() >= 5
    assert published.groupby(SECOND).size().min() >= 3
    assert "--step" in client.get("/export/reproduce.txt").text


def test_an_uploaded_schema_with_steps_points_to_the_protect_page() -> None:
    from microagg.web.roles import from_toml

    columns, problems = from_toml('[columns.age]\nrole = "quasi-identifier"\n\n[[steps]]\n'
                                  'step = "microaggregate"\nquasi_identifiers = ["age"]\n'
                                  'k = 5\n')
    assert columns == {"age": {"role": "quasi-identifier"}}
    assert problems == ["the workbench reads a schema's columns, not its [[steps]]: remove "
                        "them and give the second step on the Protect page"]
