"""The generic machinery of :mod:`microagg.steps`: a step registered by a test (a recode of a
categorical column, :mod:`tests.steps.toy_step`) runs from the API, a schema file and the
CLI with the same bytes, records its details, and its verifier's failure is the verdict
"not protected" in the JSON, the CLI's exit status 4 and the HTML report."""

from __future__ import annotations

import html
import json
import pathlib
import pickle
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.cli import EXIT_NOT_PROTECTED
from microagg.schema.schema_file import load_schema
from microagg.steps import STEPS, Plan
from microagg.steps._options import as_bool, as_float, as_int, as_list, option_docs

from .toy_step import Merge, registered

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGION = ["a"] * 20 + ["b"] * 15 + ["c"] * 3 + ["d"] * 2  # counts by hand: 20, 15, 3, 2
MERGED = "merge column=region into='{\"c\": \"other\", \"d\": \"other\"}' min-count=5"
SHORT = "merge column=region into='{\"d\": \"c\"}' min-count=6"  # leaves c with 5 < 6
SCHEMA = """
[columns.region]
role = "quasi-identifier"
[columns.income]
role = "sensitive"

[[steps]]
step = "merge"
column = "region"
into = {{ {into} }}
min_count = {min_count}
"""


@pytest.fixture
def table(tmp_path: pathlib.Path) -> pathlib.Path:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"region": REGION, "income": rng.normal(3e4, 5e3, 40).round(2)})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own, with the toy step registered."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
            "from tests.steps.toy_step import registered; from microagg.cli import main; "
            "sys.argv[0] = 'microagg'\nwith registered(): main()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


def test_a_registered_step_runs_on_a_categorical_column_and_records_its_details():
    df = pd.DataFrame({"region": pd.Categorical(REGION), "income": np.arange(40.0)})
    with registered():
        release = microagg.anonymize(df, plan=Plan.from_text([MERGED]), sensitive="income",
                                     random_state=1)
        assert pickle.loads(pickle.dumps(release)).steps == release.steps
    assert release.data["region"].dtype == "category"  # categories kept, as they came
    assert release.data["region"].value_counts().to_dict() == {"a": 20, "b": 15, "other": 5}
    assert release.data["income"].tolist() == df["income"].tolist()  # rows in order
    (record,) = release.steps
    assert record.step == "merge" and record.cells_changed == 5
    assert dict(record.details["values recoded"]) == {"region": 5}
    assert record.before.k_anonymity == 2 and record.after.k_anonymity == 5
    assert release.summary()["steps"][0]["details"] == {"values recoded": {"region": 5}}
    (check,) = release.checks["steps"]
    assert check["holds"] is True and check["achieved"] == 5 and check["name"] == "merge"
    assert release.checks["k_anonymity"]["required"] is None
    assert release.checks["k_anonymity"]["achieved"] == 5
    assert release.verdict.status == "no k required"


def test_a_verifier_that_does_not_hold_makes_the_release_not_protected():
    df = pd.DataFrame({"region": REGION, "income": np.arange(40.0)})
    with registered():
        release = microagg.anonymize(df, plan=Plan.from_text([SHORT]), sensitive="income")
    assert release.checks["steps"][0]["achieved"] == 5  # c: 3 + 2 merged
    assert release.verdict.status == "not protected"
    assert "step 1 of the plan (merge)" in release.verdict.headline
    assert json.loads(release.to_json())["verdict"]["status"] == "not protected"


@pytest.mark.parametrize(("step", "into", "min_count", "status"), [
    (MERGED, '"c" = "other", "d" = "other"', 5, 0),
    (SHORT, '"d" = "c"', 6, EXIT_NOT_PROTECTED)])
def test_api_schema_and_cli_publish_the_same_bytes_and_the_same_verdict(
        table, tmp_path, step, into, min_count, status):
    schema_file = tmp_path / "people.toml"
    schema_file.write_text(SCHEMA.format(into=into, min_count=min_count), encoding="utf-8")
    with registered():
        api = microagg.anonymize(pd.read_csv(table), plan=Plan.from_text([step]),
                                 sensitive="income", random_state=0)
        by_schema = microagg.anonymize(pd.read_csv(table), schema=load_schema(schema_file),
                                       random_state=0)
    outputs = {}
    for face, args in (("cli", ("-s", "income", "--step", step)),
                       ("file", ("--schema", schema_file))):
        out, summary, report = (tmp_path / f"{face}.csv", tmp_path / f"{face}.json",
                                tmp_path / f"{face}.html")
        done = _cli("anonymize", table, *args, "--random-state", "0", "-o", out,
                    "--summary-json", summary, "--report", report)
        assert done.returncode == status, done.stderr
        outputs[face] = out.read_bytes()
        assert json.loads(summary.read_text())["verdict"] == api.verdict.summary()
        page = report.read_text(encoding="utf-8")
        assert f"{api.verdict.label}:</b> {html.escape(api.verdict.detail)}" in page
    api.data.to_csv(tmp_path / "api.csv", index=False)
    assert outputs["cli"] == outputs["file"] == (tmp_path / "api.csv").read_bytes()
    assert by_schema.verdict == api.verdict
    assert api.params["plan"] == by_schema.params["plan"]


def test_plans_find_options_through_the_registry():
    with pytest.raises(ValueError, match="unknown step 'merge'; the steps are microaggregate"):
        Plan.from_text([MERGED])
    with registered():
        assert {"microaggregate", "merge"} <= set(STEPS)
        plan = Plan.from_text([MERGED])
        assert plan == Plan([Merge("region", {"c": "other", "d": "other"}, min_count=5)])
        assert Plan.from_records(plan.to_records()) == plan
        with pytest.raises(ValueError, match=re.escape(
                "'min_count' option of step 'merge' must be an int in [1, inf]. Got 0")):
            Plan.from_text(["merge column=region min-count=0"])
    assert "merge" not in STEPS
    assert option_docs(Merge)["min_count"] == "The fewest records every published value " \
                                              "must have."


def test_the_shared_conversions_read_text_as_the_cli_gives_it():
    where = {"step": "s", "option": "o"}
    assert as_int("+7", **where) == 7 and as_float("2.5e3", **where) == 2500.0
    assert as_bool("yes", **where) is True and as_bool("off", **where) is False
    assert as_list("[1, 2]", **where) == (1, 2) and as_list(["a"], **where) == ("a",)
    with pytest.raises(ValueError, match=re.escape(
            "'o' option of step 's' must be a number in [0, 1]. Got 1.5")):
        as_float("1.5", **where, low=0, high=1)
    with pytest.raises(TypeError, match=re.escape("must be true or false. Got 'maybe'")):
        as_bool("maybe", **where)
