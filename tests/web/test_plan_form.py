"""The Protect page's plan of steps: any registered step added, removed and moved on the
server (no script), its options typed as text and converted by the step's own options class,
every bad value refused at once with a 400 naming the step and the option; the Result page
lists each step's before / after figures (equal to the API's ``Release.steps``); **Undo the
last step** gives the API's release of the shorter plan; the exported schema with its
``[[steps]]`` and the ``--step`` command reproduce the download byte for byte.

The two-step plan is microaggregate + the test-only categorical step of
:mod:`tests.steps.toy_step` (registered in the server's process by the test and in the
worker processes by :mod:`tests.web.toy_jobs`)."""

from __future__ import annotations

import html
import io
import json
import pathlib
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

import microagg
from microagg.exceptions import PrivacyLeakWarning
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan
from microagg.web import protect
from microagg.web.plan_form import PlanErrors, edited, plan_options, records_as_fields, step_text
from microagg.web.protect import reproduction
from tests.steps.toy_step import registered

from . import toy_jobs
from .conftest import csrf, open_census, post_protect, settled, shown_figures, upload
from .conftest import download as _download

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = {"age": {"role": "quasi-identifier"}, "income": {"role": "quasi-identifier"},
          "bmi": {"role": "quasi-identifier"}, "disease": {"role": "sensitive"}}
COLUMNS = ["age", "income", "bmi", "disease"]
ONE_STEP = {"k": 5, "method": "mdav", "method_params": None, "l": None, "random_state": 7}
SECOND = ["FICA", "WSALVAL", "ERNVAL"]
# region counts by hand: a 20, b 15, c 3, d 2; merging c and d into "other" leaves 5
REGION = ["a"] * 20 + ["b"] * 15 + ["c"] * 3 + ["d"] * 2
MERGE = {"plan-2-step": "merge", "plan-2-column": "region",
         "plan-2-into": '{"c": "other", "d": "other"}', "plan-2-min_count": "5"}
AGE = {"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age", "plan-1-k": "3",
       "plan-1-method": "mdav"}


def _options(**fields: str) -> dict[str, object]:
    return plan_options(fields, ONE_STEP, SCHEMA, COLUMNS, n_rows=40)


# ------------------------------------------------------------------- the form's logic

def test_without_plan_steps_the_form_is_the_one_step_form() -> None:
    assert _options() == ONE_STEP
    assert _options(add_step="microaggregate", action="") == ONE_STEP


def test_plan_fields_make_a_plan_of_any_registered_step() -> None:
    fields = {"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age,income",
              "plan-1-k": "5", "plan-1-method": "mdav", "plan-1-scaling": "",
              "plan-2-step": "microaggregate", "plan-2-quasi_identifiers": "bmi",
              "plan-2-k": "3", "plan-2-method_params": '{"gamma": 0.2}'}
    options = _options(**fields)
    assert Plan.from_records(options["plan"]) == Plan([  # type: ignore[arg-type]
        Microaggregate(["age", "income"], k=5, method="mdav"),
        Microaggregate(["bmi"], k=3, method_params={"gamma": 0.2})])
    assert "k" not in options and "method" not in options and options["random_state"] == 7
    # what the form shows again for a plan's records: the same fields, blank ones left out
    assert records_as_fields(options["plan"]) == {  # type: ignore[arg-type]
        k: v for k, v in fields.items() if v}


@pytest.mark.parametrize(("fields", "messages"), [
    ({"plan-1-step": "swap"}, ["plan-1-step: unknown step 'swap'; the steps are "
                               "microaggregate"]),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age,income,bmi",
      "plan-1-k": "x", "plan-2-step": "microaggregate", "plan-2-nope": "1",
      "plan-2-quasi_identifiers": "bmi", "plan-2-k": "3"},
     ["step 1 of the plan (microaggregate): The 'k' option of step 'microaggregate' must "
      "be an int >= 2. Got 'x' instead.",
      "step 2 of the plan (microaggregate): unknown option(s) 'nope'"]),
    ({"plan-1-step": "microaggregate", "plan-1-k": "3"},
     ["step 1 of the plan (microaggregate) needs 'quasi_identifiers'."]),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age,zip",
      "plan-1-k": "3"}, ["quasi_identifiers 'zip' are not columns of the schema",
                         "quasi-identifier(s) 'income', 'bmi' are in no step"]),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age,income,bmi,disease",
      "plan-1-k": "3"}, ["'disease' has role 'sensitive'"]),
    ({"plan-2-step": "microaggregate"}, ["must be numbered 1 to 1 (plan-N-step); got 2."]),
    ({"plan-1-k": "3"}, ["plan-1-step is missing"]),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "age,income,bmi",
      "plan-1-k": "3", "params": "gamma=0.2"}, ["params are the one-step form's"]),
])
def test_bad_plans_are_refused_with_every_message(fields: dict[str, str],
                                                  messages: list[str]) -> None:
    with pytest.raises(PlanErrors) as caught:
        _options(**fields)
    for message in messages:
        assert any(message in problem for problem in caught.value.problems), \
            (message, caught.value.problems)
    assert len(caught.value.problems) >= len(messages)


def test_edits_add_remove_and_move_steps() -> None:
    one = {"plan-1-step": "microaggregate", "plan-1-k": "4"}
    added = edited({**one, "action": "add", "add_step": "microaggregate"})
    assert added == {**one, "plan-2-step": "microaggregate", "add_step": "microaggregate"}
    moved = edited({**added, "plan-2-k": "9", "action": "up-2"})
    assert moved is not None and (moved["plan-1-k"], moved["plan-2-k"]) == ("9", "4")
    assert edited({**added, "action": "remove-1"}) == {
        "plan-1-step": "microaggregate", "add_step": "microaggregate"}
    assert edited({**one, "action": "protect"}) is None and edited(one) is None
    for form, message in (({**one, "action": "add", "add_step": "<b>"}, "unknown step"),
                          ({**one, "action": "remove-3"}, "no step 3 to remove"),
                          ({**one, "action": "up-1"}, "no step 1 to move up")):
        with pytest.raises(ValueError, match=message):
            edited(form)


def test_step_text_reads_back_as_the_same_step() -> None:
    record = Microaggregate(["age", "bmi"], k=5, method="mdav",
                            method_params={"gamma": 0.2}).to_record()
    assert Plan.from_text([step_text(record)]).to_records() == [record]


def test_reproduction_of_a_plan_gives_its_steps_and_the_plan_file() -> None:
    options = _options(**{"plan-1-step": "microaggregate", "plan-1-k": "5",
                          "plan-1-quasi_identifiers": "age,income", "plan-1-method": "mdav",
                          "plan-2-step": "microaggregate", "plan-2-quasi_identifiers": "bmi",
                          "plan-2-k": "3"})
    script = reproduction(SimpleNamespace(options=options))  # type: ignore[arg-type]
    assert "--step 'microaggregate quasi-identifiers=age,income k=5 method=mdav' --step " \
           "'microaggregate quasi-identifiers=bmi k=3'" in script["command"]
    assert " -k " not in script["command"]
    assert script["plan_command"] == ("microagg anonymize INPUT.csv --schema plan.toml "
                                      "--random-state 7 -o out.csv")
    assert "plan=Plan.from_records(" in script["python"]


# ---------------------------------------------------------------- the pages, census





def test_the_protect_page_adds_a_step_with_its_options(client: TestClient) -> None:
    open_census(client)
    page = client.get("/protect").text
    assert 'name="add_step"' in page and 'id="add-step"' in page
    assert '<option value="microaggregate">microaggregate: groups of at least k' in page
    response = post_protect(client, action="add", add_step="microaggregate")
    assert response.status_code == 200
    page = response.text
    assert 'name="plan-1-step" value="microaggregate"' in page
    for option in ("quasi_identifiers", "k", "method", "method_params", "scaling"):
        assert f'name="plan-1-{option}"' in page
    # the help is the field's docstring, the default shown
    assert "k (required): The smallest group size (&gt;= 2)" in page
    assert "method_params (default: {}): Keyword parameters of the partitioner" in page
    assert "reported, not promised" in page


@pytest.mark.parametrize(("fields", "message"), [
    ({"plan-1-step": "generalise"}, "plan-1-step: unknown step 'generalise'"),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "FICA,nope",
      "plan-1-k": "3"}, "'nope' are not columns of the schema"),
    ({"plan-1-step": "microaggregate", "plan-1-quasi_identifiers": "<script>",
      "plan-1-k": "3"}, "'<script>' are not columns of the schema"),
    ({"action": "add", "add_step": "<script>"}, "add_step: unknown step '<script>'"),
])
def test_the_server_refuses_a_bad_plan_with_400(client: TestClient, fields: dict[str, str],
                                                message: str) -> None:
    open_census(client)
    response = post_protect(client, **fields)
    assert response.status_code == 400
    assert message in html.unescape(response.text)
    assert "<script>" not in response.text  # shown escaped, never as markup


def test_a_two_step_plan_from_the_form_is_released(client: TestClient) -> None:
    from microagg.datasets import load_dataset

    open_census(client)
    first = [c for c in load_dataset("census").quasi_identifiers if c not in SECOND]
    response = post_protect(client, **{
        "plan-1-step": "microaggregate", "plan-1-quasi_identifiers": ",".join(first),
        "plan-1-k": "5", "plan-1-method": "mdav", "plan-2-step": "microaggregate",
        "plan-2-quasi_identifiers": ",".join(SECOND), "plan-2-k": "3"})
    assert response.status_code == 200, response.text
    summary = client.get("/export/summary.json").json()
    assert summary["params"]["plan"] == [
        {"step": "microaggregate", "quasi_identifiers": first, "k": 5, "method": "mdav"},
        {"step": "microaggregate", "quasi_identifiers": SECOND, "k": 3}]
    published = pd.read_csv(io.BytesIO(_download(client, "/export/published.csv").content))
    assert published.groupby(first).size().min() >= 5
    assert published.groupby(SECOND).size().min() >= 3
    assert "--step" in client.get("/export/reproduce.txt").text


# ------------------------------------------------- the pages, with the toy step

def _people() -> bytes:
    rng = np.random.default_rng(4)
    order = rng.permutation(40)
    frame = pd.DataFrame({"region": np.array(REGION)[order],
                          "age": rng.integers(20, 70, 40),
                          "income": rng.normal(3e4, 5e3, 40).round(2)})
    return frame.to_csv(index=False).encode()


@pytest.fixture
def toy(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """The client with the toy step registered (server and workers) and the people table
    open: region and age quasi-identifiers, income sensitive."""
    monkeypatch.setattr(protect, "release_for", toy_jobs.release_for)
    with registered():
        assert upload(client, "people.csv", _people()).status_code == 200
        client.get("/roles")
        saved = client.post("/roles", data={
            "csrf_token": csrf(client, "/roles"), "role-0": "quasi-identifier",
            "type-0": "categorical", "role-1": "quasi-identifier", "type-1": "numeric",
            "role-2": "sensitive", "type-2": "numeric"})
        assert "Roles saved" in saved.text
        yield client


def _api(tmp_path: pathlib.Path, records: list[dict[str, object]], region: str
         ) -> microagg.Release:
    """The API's release of ``records`` on the uploaded table, region with role ``region``
    (age a quasi-identifier, income sensitive), seed 7."""
    from microagg.io import read_table

    (tmp_path / "people.csv").write_bytes(_people())
    (tmp_path / "api.toml").write_text(
        f'[columns.region]\nrole = "{region}"\ntype = "categorical"\n'
        '[columns.age]\nrole = "quasi-identifier"\ntype = "numeric"\n'
        '[columns.income]\nrole = "sensitive"\ntype = "numeric"\n', encoding="utf-8")
    return microagg.anonymize(read_table(tmp_path / "people.csv"),
                              schema=load_schema(tmp_path / "api.toml"),
                              plan=Plan.from_records(records), random_state=7)


def _rows(page: str) -> list[dict[str, str]]:
    """The Result page's plan table: each row's cells by class."""
    rows = re.findall(r'<tr id="plan-row-\d+">(.*?)</tr>', page, flags=re.S)
    return [dict(re.findall(r'<td class="([a-z-]+)">([^<]*)</td>', row)) for row in rows]


def _inputs(page: str) -> dict[str, str]:
    """The name and value of every input of ``page``."""
    return {html.unescape(name): html.unescape(value) for name, value in re.findall(
        r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page)}




def test_a_plan_with_the_toy_step_shows_each_step_and_undoes_the_last(
        toy: TestClient, tmp_path: pathlib.Path) -> None:
    client = toy
    response = post_protect(client, **AGE, **MERGE)
    assert response.status_code == 200, response.text
    page = html.unescape(response.text)
    records = client.get("/export/summary.json").json()["params"]["plan"]
    api = _api(tmp_path, records, "quasi-identifier")
    rows = _rows(page)
    assert len(rows) == 2 and rows[1]["cells"] == "5"  # merge: the 3 + 2 rows of c and d
    assert rows[1]["details"] == "values recoded: region 5"
    for row, record in zip(rows, api.steps, strict=True):
        assert {k: row[k] for k in shown_figures(record)} == shown_figures(record)
    download = _download(client, "/export/published.csv").content
    published = pd.read_csv(io.BytesIO(download))
    assert published["region"].value_counts().to_dict() == {"a": 20, "b": 15, "other": 5}
    assert published["age"].tolist() == api.data["age"].tolist()
    assert 'id="undo"' in page

    undone = settled(client, client.post("/result/undo",
                                         data={"csrf_token": csrf(client, "/result")}))
    assert undone.status_code == 200, undone.text
    page = html.unescape(undone.text)
    assert len(_rows(page)) == 1 and 'id="undone"' in page and 'id="undo"' not in page
    # the API's release of the one-step plan: region, changed by no step, published as it
    # was (role other), the same seed
    one = Plan.from_records(records).without_last_step().to_records()
    with pytest.warns(PrivacyLeakWarning, match="'region' \\(k = 1\\)"):  # it says so
        api_one = _api(tmp_path, one, "other")
    assert _rows(page)[0] == {**_rows(page)[0], **shown_figures(api_one.steps[0])}
    published_one = pd.read_csv(io.BytesIO(_download(client, "/export/published.csv").content))
    assert published_one["age"].tolist() == api_one.data["age"].tolist() \
        == published["age"].tolist()  # the step kept gives the same result
    assert published_one["region"].value_counts().to_dict() == {"a": 20, "b": 15, "c": 3,
                                                                "d": 2}
    assert "The roles changed" not in page

    # the undone step added again: the form filled in, and the same release as the first
    form = _inputs(client.get("/protect?attempt=2&add_back=1").text)
    plan = {name: value for name, value in form.items() if name.startswith("plan-") and value}
    assert plan == {**AGE, **MERGE}
    again = post_protect(client, **plan)
    assert again.status_code == 200
    assert _download(client, "/export/published.csv").content == download


def test_a_bad_option_of_the_toy_step_is_a_400_naming_step_and_option(
        toy: TestClient) -> None:
    response = post_protect(toy, **{**AGE, "plan-1-k": "three", **MERGE,
                                "plan-2-min_count": "0", "plan-2-into": "[1"})
    assert response.status_code == 400
    page = html.unescape(response.text)
    assert "step 1 of the plan (microaggregate): The 'k' option of step 'microaggregate'" \
        in page
    assert "step 2 of the plan (merge): The 'into' option of step 'merge' must be a JSON " \
           "object" in page  # the first problem of the step: its options stop there
    # the form keeps what was typed
    assert 'value="three"' in page and 'name="plan-2-min_count"' in page


def _cli(cwd: pathlib.Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own, in ``cwd``, with the toy step."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            "from tests.steps.toy_step import registered; from microagg.cli import main; "
            "sys.argv[0] = 'microagg'\nwith registered(): main()")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, check=False, cwd=cwd)


def test_the_exported_plan_reproduces_the_download(toy: TestClient,
                                                   tmp_path: pathlib.Path) -> None:
    client = toy
    assert post_protect(client, **AGE, **MERGE).status_code == 200
    plan_toml = client.get("/export/plan.toml").text
    assert plan_toml.count("[[steps]]") == 2
    assert 'step = "merge"\ncolumn = "region"\ninto = {c = "other", d = "other"}\n' \
           'min_count = 5' in plan_toml
    for name in ("plan.toml", "schema.toml"):
        (tmp_path / name).write_bytes(client.get(f"/export/{name}").content)
    (tmp_path / "people.csv").write_bytes(_people())
    page = html.unescape(client.get("/export").text)
    download = _download(client, "/export/published.csv").content
    for element in ("command", "plan-command"):
        found = re.search(rf'<pre id="{element}">microagg (.*?)</pre>', page)
        assert found is not None, element
        (tmp_path / "out.csv").unlink(missing_ok=True)
        done = _cli(tmp_path, shlex.split(found.group(1)))
        assert (tmp_path / "out.csv").read_bytes() == download, (element, done.stderr)
    summary = json.loads(client.get("/export/summary.json").content)
    assert summary["params"]["plan"][1]["step"] == "merge"
