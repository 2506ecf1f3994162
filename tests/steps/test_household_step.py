"""The household step as a registered step of a plan, and the household walk: a survey of
our own making (400 households of 1-6 persons, household-level region, size and a
household-unique weight; person-level age, sex, income) from the raw table to a release
whose household step and person-level microaggregation hold, with no column re-linking
households, the same from the API, a schema's ``[[steps]]`` and the CLI's ``--step``."""

from __future__ import annotations

import html
import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.cli._anonymize_run import whole_numbers_as_integers
from microagg.exceptions import SchemaError
from microagg.io.tables import read_table, write_table
from microagg.schema.schema_file import load_schema
from microagg.steps import STEPS, Household, Microaggregate, Plan, RankSwap
from microagg.steps.household import relinking

STEPS_TEXT = ["household weight=microaggregate k=3 total=income",
              "microaggregate quasi-identifiers=age,income k=3",
              "pram variables=sex pd=0.8"]
SCHEMA = """
[columns.hid]
role = "household"
[columns.weight]
role = "weight"
[columns.region]
role = "strata"
[columns.sex]
role = "quasi-identifier"
[columns.age]
role = "quasi-identifier"
[columns.income]
role = "quasi-identifier"
[columns.size]
role = "other"

[[steps]]
step = "household"
weight = "microaggregate"
k = 3
total = "income"

[[steps]]
step = "microaggregate"
quasi_identifiers = ["age", "income"]
k = 3

[[steps]]
step = "pram"
variables = ["sex"]
pd = 0.8
"""
CLI = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"
ROLES = {"weights": "weight", "households": "hid", "strata": "region"}


def survey(n_households: int = 400, seed: int = 5) -> pd.DataFrame:
    """400 households of 1-6 persons: region, size and a weight of its own per household
    (3 decimals), age, sex and income per person."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=n_households)
    n = int(sizes.sum())
    return pd.DataFrame({
        "hid": np.repeat(np.arange(1, n_households + 1), sizes),
        "region": np.repeat(rng.choice(["north", "south", "east", "west"], n_households),
                            sizes).astype(object),
        "size": np.repeat(sizes, sizes).astype(np.float64),
        "weight": np.repeat(np.round(rng.uniform(50, 900, n_households), 3), sizes),
        "age": rng.integers(0, 90, n).astype(np.float64),
        "sex": rng.choice(["f", "m"], n).astype(object),
        "income": rng.lognormal(10, 0.6, n).round(2)})


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return survey()


@pytest.fixture(scope="module")
def walk(raw: pd.DataFrame) -> microagg.Release:
    return microagg.anonymize(raw, plan=Plan.from_text(STEPS_TEXT), random_state=3, **ROLES)


def test_the_step_is_registered_per_household():
    entry = STEPS["household"]
    assert entry.options is Household and entry.per_household and not entry.randomized
    assert Household().treats_weight and not Household(weight="keep").treats_weight


def test_the_raw_weight_is_refused_and_the_plan_that_treats_it_is_not(raw, walk):
    with pytest.raises(SchemaError, match="'weight' identifies 400 of the 400 households"):
        microagg.anonymize(raw, plan=Plan([Microaggregate("age,income", k=3)]), sensitive="sex",
                           random_state=3, **ROLES)
    assert [c["holds"] for c in walk.checks["steps"]] == [True, True, True]


def test_the_walk_treats_the_weight_and_nothing_re_links_households(raw, walk):
    record = walk.steps[0]
    weight = record.details["weight"]
    assert weight["treatment"] == "microaggregate" and weight["distinct_before"] == 400
    assert record.details["relinking"]["weight"]["before"]["households_identified"] == 400
    assert record.details["relinking"]["weight"]["after"]["households_identified"] == 0
    published = walk.data.assign(hid=raw["hid"].to_numpy())
    for column in ("weight", "region", "size"):  # re-derived here, on the published table
        assert relinking(published, "hid", column).households_identified == 0
        assert published.groupby("hid")[column].nunique().max() == 1  # one value per household
    assert "household_relinking" not in walk.checks
    assert "hid" not in walk.data.columns and len(walk.data) == len(raw)
    check = walk.checks["steps"][0]["weight"]
    assert check["fewest_households_per_weight"] >= 3
    assert check["largest_stratum_count_change"] < 1e-9  # weighted persons kept per region
    by_region = walk.data.groupby("region")["weight"].sum() / raw.groupby("region")[
        "weight"].sum()
    assert np.allclose(by_region, 1.0, rtol=1e-9)
    mic = walk.checks["steps"][1]
    assert mic["achieved"] >= 3 and mic["required"] == 3
    groups = walk.data.groupby(["age", "income"]).size()
    assert int(groups.min()) >= 3  # k on the person-level keys, counted here
    # k is promised on age and income only: the household-level columns, published as they
    # are, split its classes (test_grouped_microaggregate.py's walk nests them and is
    # Protected)
    assert walk.verdict.status == "not protected"
    assert set(walk.checks["published_columns"]["columns"]) == {"region", "size", "weight"}


def test_same_bytes_from_the_api_a_schema_and_the_cli(raw, walk, tmp_path: pathlib.Path):
    table, schema_file = tmp_path / "survey.csv", tmp_path / "survey.toml"
    raw.to_csv(table, index=False)
    schema_file.write_text(SCHEMA, encoding="utf-8")
    api = microagg.anonymize(read_table(table), plan=Plan.from_text(STEPS_TEXT),
                             random_state=3, **ROLES)
    by_schema = microagg.anonymize(read_table(table), schema=load_schema(schema_file),
                                   random_state=3)
    assert api.data.to_csv(index=False) == walk.data.to_csv(index=False)
    assert by_schema.params["plan"] == api.params["plan"]
    outputs = {}
    steps = [arg for text in STEPS_TEXT for arg in ("--step", text)]
    for face, args in (("cli", ("--weight", "weight", "--household", "hid", "--strata",
                                "region", *steps)),
                       ("file", ("--schema", schema_file))):
        out, summary, report = (tmp_path / f"{face}.csv", tmp_path / f"{face}.json",
                                tmp_path / f"{face}.html")
        done = subprocess.run([sys.executable, "-c", CLI, "anonymize", str(table),
                               *map(str, args), "--random-state", "3", "-o", str(out),
                               "--summary-json", str(summary), "--report", str(report)],
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 4, done.stderr  # not protected, files written
        outputs[face] = out.read_bytes()
        assert json.loads(summary.read_text())["verdict"] == api.verdict.summary()
        page = report.read_text(encoding="utf-8")
        assert f"{api.verdict.label}:</b> {html.escape(api.verdict.detail)}" in page
    write_table(whole_numbers_as_integers(api.data, api.params.get("rounding") or {}),
                tmp_path / "api.csv")  # as the CLI writes a CSV
    assert outputs["cli"] == outputs["file"] == (tmp_path / "api.csv").read_bytes()
    written = pd.read_csv(tmp_path / "cli.csv").assign(hid=raw["hid"].to_numpy())
    assert relinking(written, "hid", "weight").households_identified == 0  # treated, as written


def test_a_household_step_without_a_household_role_is_refused(raw):
    with pytest.raises(SchemaError, match=r"Step 1 of the plan \(household\) treats one row "
                                          r"per household: give the household id"):
        microagg.anonymize(raw.drop(columns="hid"),
                           plan=Plan([Household(weight="keep"), RankSwap("income")]),
                           sensitive=["sex", "age"], keep=["weight", "region", "size"])
