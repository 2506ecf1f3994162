"""A plan that undoes a per-household promise is refused before any step runs: a household
step (or a per-household microaggregation) makes columns the same for every member of a
household, and a later step that changes one of them per person is refused, naming both
steps, the column and what to do; a later step that is itself per household on the column,
or the steps in the other order, run and every step holds."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.exceptions import SchemaError
from microagg.steps import Household, Microaggregate, Plan, SuppressToK

SIZES = [1, 2, 2, 3, 3, 4, 1, 2, 3, 4, 2, 1]
"""Twelve households of 28 persons; household_size is each household's member count."""


def _households() -> pd.DataFrame:
    hh = np.repeat(np.arange(len(SIZES)), SIZES)
    return pd.DataFrame({"household_id": [f"H{h:02d}" for h in hh],
                         "household_size": np.repeat(SIZES, SIZES).astype(float),
                         "region": np.repeat(list("ABABABABABAB"), SIZES),
                         "weight": np.repeat(np.linspace(100, 320, len(SIZES)), SIZES)})


def _run(plan: Plan):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the release's own warnings: not judged here
        return anonymize(_households(), plan=plan, households="household_id",
                         weights="weight", random_state=0)


@pytest.mark.parametrize(("later", "column", "advice"), [
    (Microaggregate(["household_size"], k=2), "household_size", "(per_household=true)"),
    (SuppressToK("region", k=3), "region", "(household_keys=region)"),
])
def test_a_later_per_person_step_on_a_household_column_is_refused(later, column, advice):
    message = (f"Step 2 of the plan ({later.name}) changes '{column}' per person, which step 1 "
               "(household) makes the same for every member of a household")
    with pytest.raises(SchemaError) as refused:
        _run(Plan([Household(), later]))
    text = str(refused.value)
    assert text.startswith(message)
    assert f"Make step 2 per household on it {advice}, or put it before step 1" in text


def test_a_per_household_microaggregation_keeps_its_within_column():
    first = Microaggregate(["weight"], k=2, within="region", per_household=True)
    with pytest.raises(SchemaError, match="Step 2 of the plan \\(suppress\\) changes 'region' "
                                          "per person, which step 1 \\(microaggregate\\)"):
        _run(Plan([first, SuppressToK("region", k=3)]))


@pytest.mark.parametrize("plan", [
    Plan([Household(), Microaggregate(["household_size"], k=2, per_household=True)]),
    Plan([Household(), SuppressToK("region", k=3, household_keys="region")]),
    Plan([Microaggregate(["household_size"], k=2, per_household=True), Household()]),
], ids=["per-household-after", "household-keys-after", "household-step-last"])
def test_the_legitimate_orders_run_and_every_step_holds(plan):
    release = _run(plan)
    assert [s["holds"] for s in release.checks["steps"]] == [True, True]
    published = release.data.assign(household_id=_households()["household_id"])
    for column in ("household_size", "region", "weight"):  # the same within households
        assert published.groupby("household_id")[column].nunique(dropna=False).max() == 1
    # household_size per household with k = 2: every published value shared by >= 2
    # households (brute force over the 12 households)
    per_household = published.drop_duplicates("household_id")
    assert per_household.groupby("household_size").size().min() >= 2 or \
        plan.steps[1].name == "suppress"
