"""PRAM, noise, rank swapping and shuffling as registered steps of a plan: they run from the
API with ``Plan([...])``, record their core's details, their verifier holds in
``checks["steps"]`` (PRAM's with the matrices the step drew), a wrong column type is refused
before any work, a plan mixing a microaggregate step and a perturbative one runs and its
published CSV round-trips, and the same random_state gives the same bytes."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.exceptions import SchemaError
from microagg.steps import STEPS, Microaggregate, Noise, Plan, Pram, RankSwap, Shuffle


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 400
    return pd.DataFrame({
        "sex": rng.choice(["f", "m"], n).astype(object),
        "edu": rng.choice(["low", "mid", "high"], n, p=[0.3, 0.5, 0.2]).astype(object),
        "age": rng.integers(18, 90, n).astype(np.float64),
        "height": rng.normal(170, 10, n).round(1),
        "income": rng.lognormal(10, 0.5, n).round(2)})


def _run(people: pd.DataFrame, plan: Plan, seed: int = 1) -> microagg.Release:
    changed = {c for step in plan.steps for c in step.columns}
    return microagg.anonymize(people, plan=plan, random_state=seed,
                              sensitive=[c for c in people.columns if c not in changed])


def test_the_steps_are_registered_with_their_references_and_randomized():
    for name, options in (("pram", Pram), ("noise", Noise), ("rank_swap", RankSwap),
                          ("shuffle", Shuffle)):
        entry = STEPS[name]
        assert entry.options is options and entry.randomized and not entry.per_household
        assert "differential privacy" in entry.promises
    assert "Gouweleeuw" in STEPS["pram"].reference and "Moore" in STEPS["rank_swap"].reference


def test_pram_records_the_drawn_matrices_and_its_verifier_holds_with_them(people):
    release = _run(people, Plan([Pram("sex,edu", pd=0.7)]))
    (record,) = release.steps
    details = record.details["columns"]["edu"]
    matrix = np.asarray(details["matrices"]["all"])
    assert matrix.shape == (3, 3) and np.allclose(matrix.sum(axis=1), 1.0)
    base = np.asarray(details["base_matrix"])
    assert np.all(np.diag(base) >= 0.7) and np.all(np.diag(base) <= 1.0)  # random in [pd, 1]
    changed = int((people["edu"] != release.data["edu"]).sum())
    assert details["records_changed"] == changed > 0
    assert record.cells_changed == changed + int((people["sex"] != release.data["sex"]).sum())
    (check,) = release.checks["steps"]
    assert check["name"] == "pram" and check["holds"] is True
    assert check["quasi_identifiers"] == ("sex", "edu")
    assert check["columns"]["edu"]["forbidden_transitions"] == 0
    assert "matrix" not in check["columns"]["edu"]  # the recorded matrix was used, not "not recorded"
    assert json.loads(release.to_json())["steps"][0]["details"]["columns"]["edu"][
        "records_changed"] == changed
    assert release.params["plan"] == [{"step": "pram", "variables": ["sex", "edu"], "pd": 0.7}]


@pytest.mark.parametrize("step", [Noise("income,height", noise=0.2),
                                  RankSwap("income,age", p=10),
                                  Shuffle("income", given="age")])
def test_numeric_steps_run_and_their_verifier_holds(people, step):
    release = _run(people, Plan([step]))
    (record,) = release.steps
    assert record.step == step.name and record.cells_changed > 0
    (check,) = release.checks["steps"]
    assert check["holds"] is True and check["name"] == step.name
    for column in step.columns:
        assert not np.array_equal(release.data[column].to_numpy(), people[column].to_numpy())
    if isinstance(step, (RankSwap, Shuffle)):  # a permutation of each column's values
        for column in step.columns:
            assert sorted(release.data[column]) == sorted(people[column])
    assert release.data["sex"].tolist() == people["sex"].tolist()  # rows in order


def test_same_random_state_same_bytes_another_one_other_bytes(people):
    plan = Plan([Pram("edu"), RankSwap("income", p=5)])
    first, again, other = (_run(people, plan, s).data.to_csv(index=False) for s in (4, 4, 5))
    assert first == again and first != other


def test_wrong_column_types_are_refused_before_any_work(people):
    with pytest.raises(SchemaError, match=r"Step 1 of the plan \(pram\) perturbs categorical "
                                          r"columns only; 'age' \(dtype float64\)"):
        _run(people, Plan([Pram("age")]))
    with pytest.raises(SchemaError, match=r"Step 2 of the plan \(noise\) needs numeric columns "
                                          r"in 'variables'; 'sex' \(dtype "):
        _run(people, Plan([Pram("edu"), Noise("sex")]))
    with pytest.raises(SchemaError, match=r"\(shuffle\) needs numeric columns in 'given'"):
        _run(people, Plan([Shuffle("income", given="edu")]))


def test_a_failing_perturbative_check_names_its_step_in_the_verdict(people, monkeypatch):
    from microagg.steps.perturb import step as adapters

    monkeypatch.setattr(adapters.swap, "verify_rank_swap",
                        lambda *a, **k: {"model": "rank swap window", "holds": False})
    release = _run(people, Plan([Pram("edu"), RankSwap("income")]))
    assert release.verdict.status == "not protected"
    assert "step 2 of the plan (rank_swap): rank swap window does not hold" in \
        release.verdict.headline


def test_microaggregate_and_pram_on_other_columns_run_and_the_csv_round_trips(people):
    plan = Plan([Microaggregate("age,height", k=4), Pram("sex,edu")])
    release = _run(people, plan)
    assert [c["holds"] for c in release.checks["steps"]] == [True, True]
    assert release.checks["steps"][0]["achieved"] >= 4
    # the microaggregate step's k is promised over its columns; PRAM's columns are its own
    # check's (perturbed, not counted against that k)
    k = release.checks["k_anonymity"]
    assert k["required"] == 4 and k["columns"] == ("age", "height") and k["achieved"] >= 4
    sizes = release.data.groupby(["age", "height"]).size()
    assert int(sizes.min()) >= 4
    text = release.data.to_csv(index=False)
    back = pd.read_csv(io.StringIO(text))
    assert back.shape == people.shape and list(back.columns) == list(people.columns)
    assert back.to_csv(index=False) == text
    assert back["income"].tolist() == people["income"].tolist()  # sensitive, unchanged
