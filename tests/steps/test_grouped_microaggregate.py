"""Microaggregation within classes and per household (``Microaggregate(within=...,
per_household=True)``), and the household walk that every output calls safe: household-level
size and weight microaggregated once per household within region, then the person-level keys
within the published household classes, so k holds on all of them together."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.exceptions import SchemaError
from microagg.steps import Microaggregate, Plan
from microagg.steps.household import relinking

from .test_household_step import survey

ROLES = {"weights": "weight", "households": "hid", "strata": "region"}
WALK = ["microaggregate quasi-identifiers=size,weight k=3 per-household=true within=region "
        "aggregation=median",
        "microaggregate quasi-identifiers=age,income k=3 within=region,size,weight"]
CLI = "import sys; from microagg.cli import main; sys.argv[0] = 'microagg'; main()"


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return survey().drop(columns=["sex"])


@pytest.fixture(scope="module")
def walk(raw: pd.DataFrame) -> microagg.Release:
    return microagg.anonymize(raw, plan=Plan.from_text(WALK), random_state=3, **ROLES)


def test_within_keeps_every_group_inside_one_class(raw):
    release = microagg.anonymize(raw, plan=Plan([
        Microaggregate("age,income", k=4, within="region")]), random_state=0, keep="weight",
        **ROLES)
    published = release.data
    assert (published["region"] == raw["region"]).all()  # the classes are not changed
    sizes = published.groupby(["region", "age", "income"]).size()
    assert sizes.min() >= 4  # recounted here: k with the within column
    labels = release.steps[0]
    assert labels.details["classes"] == raw["region"].nunique()
    assert release.checks["steps"][0]["holds"]
    # every published (age, income) pair belongs to one region only: groups never cross it
    assert published.groupby(["age", "income"])["region"].nunique().max() == 1


def test_per_household_gives_every_member_its_households_values(walk, raw):
    published = walk.data.assign(hid=raw["hid"].to_numpy())
    assert published.groupby("hid")[["size", "weight"]].nunique().max().max() == 1
    per_class = published.drop_duplicates("hid").groupby(["region", "size", "weight"]).size()
    assert per_class.min() >= 3  # at least 3 households share each published class
    first = walk.checks["steps"][0]
    assert first["holds"] and first["households_consistent"] and first["achieved"] >= 3
    assert walk.steps[0].details["units"] == "households"
    assert walk.steps[0].details["units_partitioned"] == raw["hid"].nunique()


def test_the_household_walk_is_protected_in_every_output(walk, raw, tmp_path):
    assert walk.verdict.protected, walk.verdict.headline
    k = walk.checks["k_anonymity"]
    assert k["required"] == 3 and set(k["columns"]) == {"age", "income", "region", "size",
                                                         "weight"}
    published = walk.data
    assert published.groupby(["region", "size", "weight", "age", "income"]).size().min() >= 3
    with_ids = published.assign(hid=raw["hid"].to_numpy())
    for column in ("weight", "size", "region"):
        assert relinking(with_ids, "hid", column).households_identified == 0
    assert "household_relinking" not in walk.checks
    source = tmp_path / "survey.csv"
    raw.to_csv(source, index=False)
    steps = [a for text in WALK for a in ("--step", text)]
    done = subprocess.run([sys.executable, "-c", CLI, "anonymize", str(source), "--weight",
                           "weight", "--household", "hid", "--strata", "region", *steps,
                           "--random-state", "3", "-o", str(tmp_path / "out.csv"),
                           "--summary-json", str(tmp_path / "s.json"), "--report",
                           str(tmp_path / "r.html")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["verdict"]["headline"] == walk.verdict.headline
    assert summary["verdict"]["protected"] is True
    report = pathlib.Path(tmp_path / "r.html").read_text()
    assert report.split("</h1>")[1].split("</p>")[0].count("Protected") == 1
    out = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_allclose(out["weight"].to_numpy(), published["weight"].to_numpy())
    assert out.assign(hid=raw["hid"].to_numpy()).groupby("hid")["weight"].nunique().max() == 1


def test_refusals_before_any_work(raw):
    with pytest.raises(SchemaError, match="runs per household: give the household id"):
        microagg.anonymize(raw, plan=Plan([Microaggregate("size", k=3, per_household=True),
                                           Microaggregate("age", k=3)]), random_state=0,
                           keep="weight")
    with pytest.raises(SchemaError, match="'age'"):  # varies within households
        microagg.anonymize(raw, plan=Plan([Microaggregate("age", k=3, per_household=True),
                                           Microaggregate("income", k=3)]), random_state=0,
                           keep="weight", **ROLES)
    with pytest.raises(SchemaError, match="fewer than k = 50"):
        microagg.anonymize(raw, plan=Plan([Microaggregate("age,income", k=50,
                                                          within="region,size")]),
                           random_state=0, keep="weight", **ROLES)
    with pytest.raises(ValueError, match=r"'within' option .* names 'age'"):
        Microaggregate("age,income", k=3, within="age")
