"""``microagg anonymize --step``: the repeated step texts read into a Plan, refused by name
with the one-step options (-q, -k, -m) and with a schema's own [[steps]]."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

from microagg.cli import EXIT_USER_ERROR
from microagg.cli._anonymize_run import (
    UsageError,
    columns_as_spelled,
    parse_plan,
    request_keywords,
)
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan

STEP_1 = "microaggregate quasi-identifiers=age,income k=5 method=mdav"
STEP_2 = "microaggregate quasi-identifiers=height,weight k=3"
SCHEMA = """
[columns.age]
role = "quasi-identifier"

[columns.income]
role = "quasi-identifier"

[[steps]]
step = "microaggregate"
quasi_identifiers = ["age", "income"]
k = 4
"""


def _cli(*args: str | pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own (its exit status is the command's)."""
    code = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture
def body(tmp_path: pathlib.Path) -> pathlib.Path:
    rows = [f"{20 + i % 40},{1000 + 37 * i % 500},{150 + i % 40},{50 + 7 * i % 40}"
            for i in range(40)]
    path = tmp_path / "body.csv"
    path.write_text("age,income,height,weight\n" + "\n".join(rows) + "\n")
    return path


def test_steps_parse_into_the_plan() -> None:
    assert parse_plan([STEP_1, STEP_2], [], None) == Plan([
        Microaggregate(["age", "income"], k=5, method="mdav"),
        Microaggregate(["height", "weight"], k=3)])
    assert parse_plan(None, ["-k"], None) is None


def test_a_schema_plan_runs_as_the_schema_own(tmp_path: pathlib.Path) -> None:
    (tmp_path / "s.toml").write_text(SCHEMA)
    schema = load_schema(tmp_path / "s.toml")
    assert parse_plan(None, [], schema) is None
    assert schema.plan == Plan([Microaggregate(["age", "income"], k=4)])
    with pytest.raises(UsageError, match=r"drop -k, -m/--method \(or the schema's"):
        parse_plan(None, ["-k", "-m/--method"], schema)
    with pytest.raises(UsageError, match="give the plan twice"):
        parse_plan([STEP_1], [], schema)


def test_a_bad_step_names_the_option_and_its_position() -> None:
    with pytest.raises(UsageError, match=r"--step: step 2 of the plan \(microaggregate\): "
                                         r"unknown option\(s\) 'kk'"):
        parse_plan([STEP_1, "microaggregate quasi-identifiers=height kk=3"], [], None)
    with pytest.raises(UsageError, match="--step: step 1 of the plan: unknown step 'swap'"):
        parse_plan(["swap k=3"], [], None)


def test_the_plan_goes_to_the_request_keywords_only_when_given() -> None:
    plan = Plan([Microaggregate(["age"], k=5)])
    options = {"quasi_identifiers": None, "sensitive": None, "identifiers": None, "k": None,
               "method": None, "method_params": {}, "hierarchies": None, "missing_codes": {},
               "plan": plan}
    keywords = request_keywords(options)
    assert keywords["plan"] is plan and keywords["k"] is None
    one_step = request_keywords({**options, "k": 5, "plan": None})
    assert "plan" not in one_step and one_step["k"] == 5


def test_the_plan_columns_are_spelled_as_the_table() -> None:
    names = {key: None for key in ("quasi_identifiers", "sensitive", "identifiers", "keep",
                                   "intruder_knows", "weights", "households", "strata",
                                   "hierarchies", "bounds", "dates", "rounding")}
    spelled = columns_as_spelled({**names, "plan": Plan([Microaggregate(["age"], k=5)])},
                                 [" age ", "income"])
    assert spelled["plan"].steps[0].quasi_identifiers == (" age ",)


@pytest.mark.parametrize(("extra", "named"), [
    (["-q", "age"], "--step and -q/--quasi-identifiers cannot be given together"),
    (["-k", "5"], "--step and -k cannot be given together"),
    (["-m", "mdav"], "--step and -m/--method cannot be given together"),
    (["--step", "microaggregate quasi-identifiers=height k=x"],
     "step 2 of the plan (microaggregate): The 'k' option"),
])
def test_step_with_one_step_options_is_refused_by_name(
        body: pathlib.Path, tmp_path: pathlib.Path, extra: list[str], named: str) -> None:
    out = tmp_path / "out.csv"
    done = _cli("anonymize", body, "--step", STEP_1, *extra, "-o", out)
    assert done.returncode == EXIT_USER_ERROR, done.stderr
    assert named in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_help_shows_the_step_option_with_an_example() -> None:
    done = _cli("anonymize", "--help")
    text = " ".join(re.sub(r"[│╭╮╰╯─]+", " ", done.stdout).split())  # borders out
    assert "--step" in text and "microaggregate quasi-identifiers=age,bmi k=5" in text
    assert "[[steps]]" in text


def test_step_with_a_schema_of_roles_runs_the_plan(body: pathlib.Path,
                                                   tmp_path: pathlib.Path) -> None:
    schema = tmp_path / "s.toml"
    schema.write_text("".join(f'[columns.{c}]\nrole = "quasi-identifier"\n'
                              for c in ("age", "income", "height", "weight")))
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    done = _cli("anonymize", body, "--schema", schema, "--step", STEP_1, "--step", STEP_2,
                "--random-state", "1", "-o", out, "--summary-json", summary)
    assert done.returncode == 0, done.stderr
    assert json.loads(summary.read_text())["params"]["plan"] == Plan.from_text(
        [STEP_1, STEP_2]).to_records()


def test_a_schema_plan_with_k_is_refused_by_name(body: pathlib.Path,
                                                 tmp_path: pathlib.Path) -> None:
    schema = tmp_path / "s.toml"
    schema.write_text(SCHEMA.replace('[[steps]]', '[columns.height]\nrole = "other"\n'
                                     '[columns.weight]\nrole = "other"\n\n[[steps]]', 1))
    done = _cli("anonymize", body, "--schema", schema, "-k", "5", "-o", tmp_path / "o.csv")
    assert done.returncode == EXIT_USER_ERROR
    assert "The schema's [[steps]] say each step's columns, k and method; drop -k" in \
        " ".join(done.stderr.split())
