"""``microagg check``, ``microagg report`` and ``microagg sweep`` with a schema that has
``[[steps]]``: the review judges a file by the plan as the release did (the plan's keys,
each step's k, the release's verdict), and the sweep refuses a plan of several steps."""

from __future__ import annotations

import contextlib
import json
import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg import anonymize
from microagg.audit.assess import assess_release
from microagg.cli import EXIT_NOT_PROTECTED, EXIT_USER_ERROR, app
from microagg.exceptions import PrivacyLeakWarning
from microagg.schema.schema_file import load_schema

COLUMNS = "".join(f'[columns.{c}]\nrole = "quasi-identifier"\n'
                  for c in ("age", "income", "height", "weight"))
STEP = '[[steps]]\nstep = "microaggregate"\nquasi_identifiers = [{}]\nk = {}\n'
TWO_STEPS = COLUMNS + STEP.format('"age", "income"', 5) + STEP.format('"height", "weight"', 3)
ONE_STEP = COLUMNS + STEP.format('"age", "income", "height", "weight"', 4)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 90
    return pd.DataFrame({"age": rng.normal(45, 12, n).round(1) + 0.05,
                         "income": rng.normal(3e4, 8e3, n).round(1) + 0.05,
                         "height": rng.normal(170, 9, n).round(1) + 0.05,
                         "weight": rng.normal(72, 11, n).round(1) + 0.05})


def _files(tmp_path: pathlib.Path, schema_text: str):
    """The schema, the original and the published file of its release, and the release."""
    schema = tmp_path / "s.toml"
    schema.write_text(schema_text)
    original = _table()
    several = schema_text == TWO_STEPS  # the attribute groups' warning
    with pytest.warns(PrivacyLeakWarning, match="2 attribute groups") if several \
            else contextlib.nullcontext():
        release = anonymize(original, schema=load_schema(schema), random_state=2)
    original.to_csv(tmp_path / "original.csv", index=False)
    release.data.to_csv(tmp_path / "published.csv", index=False)
    return schema, tmp_path / "original.csv", tmp_path / "published.csv", release


def _check(published: pathlib.Path, schema: pathlib.Path, tmp_path: pathlib.Path):
    out = tmp_path / "check.json"
    result = CliRunner().invoke(app, ["check", str(published), "--schema", str(schema),
                                      "--summary-json", str(out)])
    return result, json.loads(out.read_text())


def _tampered(published: pathlib.Path) -> pathlib.Path:
    """The published file with one record's age made its own: step 1 (k = 5 on age and
    income) no longer holds; the other step still does."""
    table = pd.read_csv(published)
    table.loc[0, "age"] = 999.5
    path = published.with_name("tampered.csv")
    table.to_csv(path, index=False)
    return path


def test_check_judges_each_step_of_the_schema_plan(tmp_path: pathlib.Path) -> None:
    schema, _, published, release = _files(tmp_path, TWO_STEPS)
    result, figures = _check(published, schema, tmp_path)
    assert result.exit_code == 0, result.output
    assert figures["verdict"]["headline"] == release.verdict.headline
    assert [(s["step"], s["required"], s["achieved"], s["holds"]) for s in figures["steps"]] \
        == [(s["step"], s["required"], s["achieved"], s["holds"])
            for s in release.checks["steps"]] == [(1, 5, 5, True), (2, 3, 3, True)]
    result, figures = _check(_tampered(published), schema, tmp_path)
    assert result.exit_code == EXIT_NOT_PROTECTED
    assert figures["verdict"]["headline"].startswith(
        "Not protected: step 1 of the plan (microaggregate): k-anonymity of the step's")
    assert [(s["achieved"], s["holds"]) for s in figures["steps"]] == [(1, False), (3, True)]
    assert "1 (required 5: does NOT hold)" in result.output


def test_check_of_a_one_step_plan_requires_its_k(tmp_path: pathlib.Path) -> None:
    schema, _, published, release = _files(tmp_path, ONE_STEP)
    result, figures = _check(published, schema, tmp_path)
    assert result.exit_code == 0, result.output
    assert release.verdict.headline == "Protected: k = 4 required and reached on the " \
                                       "published file."
    assert figures["verdict"]["headline"] == release.verdict.headline
    assert "steps" not in figures


def test_report_judges_the_schema_plan_as_the_release(tmp_path: pathlib.Path) -> None:
    schema, original, published, release = _files(tmp_path, TWO_STEPS)
    loaded = load_schema(schema)
    assessed = assess_release(pd.read_csv(original), pd.read_csv(published),
                              quasi_identifiers=["age", "income", "height", "weight"],
                              schema=loaded)
    assert assessed.verdict.headline == release.verdict.headline
    assert [dict(s) for s in assessed.checks["steps"]] == \
        [dict(s) for s in release.checks["steps"]]  # each step's own verifier, the same
    assert assessed.params["plan"] == release.params["plan"]
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(original), str(_tampered(published)),
                                      "-o", str(out), "--schema", str(schema)])
    assert result.exit_code == EXIT_NOT_PROTECTED
    assert "Not protected: step 1 of the plan (microaggregate)" in result.output
    assert "required" not in result.output.splitlines()[-1]  # no k over the keys required


def test_report_of_a_one_step_plan_requires_its_k(tmp_path: pathlib.Path) -> None:
    schema, original, published, release = _files(tmp_path, ONE_STEP)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(original), str(published), "-o",
                                      str(out), "--schema", str(schema)])
    assert result.exit_code == 0, result.output
    assert release.verdict.headline in " ".join(result.output.split())
    assert f"(k = {release.k}, required 4: reached" in result.output


def test_sweep_refuses_a_plan_of_several_steps(tmp_path: pathlib.Path) -> None:
    schema, original, _, _ = _files(tmp_path, TWO_STEPS)
    result = CliRunner().invoke(app, ["sweep", str(original), "--schema", str(schema),
                                      "-k", "3", "-o", str(tmp_path / "sweep.csv")])
    assert result.exit_code == EXIT_USER_ERROR
    text = " ".join(result.output.split())
    assert "has a plan of 2 step(s)" in text
    assert "microaggregate (age, income), microaggregate (height, weight)" in text


def test_sweep_of_a_one_step_plan_sweeps_its_columns(tmp_path: pathlib.Path) -> None:
    schema, original, _, _ = _files(tmp_path, ONE_STEP)
    out = tmp_path / "sweep.csv"
    result = CliRunner().invoke(app, ["sweep", str(original), "--schema", str(schema),
                                      "-k", "3,6", "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out, keep_default_na=False)
    assert table["error"].tolist() == ["", ""]
    assert table["k"].tolist() == [3, 6]
    assert (table["achieved_k"] >= table["k"]).all()
    assert set(table["quasi_identifiers"]) == {"age,income,height,weight"}
