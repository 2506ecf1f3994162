"""anonymize(plan=...) runs: one run of steps -> publish -> verify -> measure -> Release."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pathlib
import pickle
import pkgutil

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg import anonymize
from microagg._pipeline.result import Release
from microagg.exceptions import PrivacyLeakWarning, SchemaError
from microagg.models import k_anonymity
from microagg.steps import Microaggregate, Plan

PIPELINE = pathlib.Path(microagg.__file__).parent / "_pipeline"


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 120
    return pd.DataFrame({"age": rng.normal(45, 12, n), "income": rng.normal(3e4, 8e3, n),
                         "height": rng.normal(170, 9, n), "weight": rng.normal(72, 11, n)})


TWO_STEPS = Plan([Microaggregate(["age", "income"], k=5, method="mdav"),
                  Microaggregate(["height", "weight"], k=3, method="mdav")])


def _two_step(df: pd.DataFrame, **options) -> Release:
    with pytest.warns(PrivacyLeakWarning, match="NOT 3-anonymous"):
        return anonymize(df, plan=TWO_STEPS, random_state=3, **options)


def test_two_steps_equal_step_one_then_step_two_by_hand(people):
    release = _two_step(people, rounding=False)
    first = anonymize(people, quasi_identifiers=["age", "income"], k=5, method="mdav",
                      sensitive=["height", "weight"], rounding=False, random_state=3)
    second = anonymize(first.data, quasi_identifiers=["height", "weight"], k=3,
                       method="mdav", sensitive=["age", "income"], rounding=False,
                       random_state=3)
    pd.testing.assert_frame_equal(release.data, second.data)
    assert release.params["plan"] == TWO_STEPS.to_records()


def test_each_step_k_is_verified_on_the_published_table_and_the_union_reported(people):
    release = _two_step(people)
    steps = release.checks["steps"]
    assert [s["required"] for s in steps] == [5, 3]
    for check, step in zip(steps, TWO_STEPS.steps, strict=True):
        achieved = k_anonymity(release.data.loc[:, list(step.quasi_identifiers)].to_numpy())
        assert check["achieved"] == achieved >= step.k
    union = release.checks["k_anonymity"]
    assert union["required"] is None
    assert union["achieved"] == k_anonymity(
        release.data.loc[:, ["age", "income", "height", "weight"]].to_numpy())
    assert set(release.attribute_partitions) == {"age+income", "height+weight"}
    assert release.verdict.protected is False


def test_step_records_say_what_each_step_did(people):
    release = _two_step(people)
    first, second = release.steps
    assert first.step == second.step == "microaggregate"
    assert dict(first.options) == TWO_STEPS.steps[0].to_record()
    assert first.before.information_loss == 0.0 and first.before.unique_share == 1.0
    assert first.before.k_anonymity == 1
    assert second.before == first.after  # the second starts where the first ended
    assert 0 < first.after.information_loss < second.after.information_loss
    assert second.after.unique_share < first.after.unique_share
    assert first.cells_changed == 2 * len(people)  # continuous values: every cell changes
    partitions = release.attribute_partitions
    assert first.groups == int(partitions["age+income"].max()) + 1
    assert first.smallest_group == int(np.bincount(partitions["age+income"]).min()) >= 5
    assert second.smallest_group >= 3
    assert pickle.loads(pickle.dumps(release)).steps == release.steps


def test_one_step_plan_is_the_shorthand_byte_for_byte():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"age": rng.integers(18, 90, 150), "income": rng.normal(3e4, 9e3, 150),
                       "diagnosis": rng.choice(["a", "b", "c"], 150)})
    shorthand = anonymize(df, quasi_identifiers=["age", "income"], k=4, method="mdav",
                          sensitive="diagnosis", random_state=5)
    planned = anonymize(df, plan=Plan([Microaggregate(["age", "income"], k=4, method="mdav")]),
                        sensitive="diagnosis", random_state=5)
    pd.testing.assert_frame_equal(planned.data, shorthand.data)
    assert planned.data.to_csv(index=False) == shorthand.data.to_csv(index=False)
    plain = {**shorthand.summary(), "timings": None}
    assert {**planned.summary(), "timings": None} == plain
    assert planned.steps == shorthand.steps and len(planned.steps) == 1
    assert shorthand.params["plan"] == [{"step": "microaggregate",
                                         "quasi_identifiers": ["age", "income"], "k": 4,
                                         "method": "mdav"}]


@pytest.mark.parametrize(("options", "named"), [
    ({"k": 5}, "k"), ({"method": "mdav"}, "method"), ({"quasi_identifiers": ["age"]},
                                                       "quasi_identifiers"),
    ({"scaling": "minmax"}, "scaling"), ({"refine": 1.0}, "refine"),
])
def test_plan_with_the_shorthands_options_is_refused_by_name(people, options, named):
    with pytest.raises(ValueError, match=f"do not pass {named}"):
        anonymize(people, plan=TWO_STEPS, **options)


@pytest.mark.parametrize(("options", "named"), [
    ({"l": 2}, "l"), ({"epsilon": 1.0}, "epsilon"),
    ({"attribute_groups": "individual"}, "attribute_groups"), ({"certify": True}, "certify"),
    ({"blocking": "kd"}, "blocking"),
])
def test_options_a_plan_of_several_steps_cannot_run_are_refused_by_name(people, options,
                                                                         named):
    with pytest.raises((SchemaError, ValueError), match=f"does not run {named}"):
        anonymize(people.assign(diagnosis=np.where(people.index % 2, "x", "y")),
                  plan=TWO_STEPS, sensitive="diagnosis", **options)


def test_overlapping_steps_noisy_steps_and_missing_keys_are_refused(people):
    overlapping = Plan([Microaggregate(["age", "income"], k=5),
                        Microaggregate(["income", "weight"], k=3)])
    with pytest.raises(SchemaError, match="'income', already masked by step 1"):
        anonymize(people, plan=overlapping, identifiers="height")
    noisy = Plan([Microaggregate(["age", "income"], k=5),
                  Microaggregate(["height", "weight"], k=3, aggregation="random-k")])
    with pytest.raises(SchemaError, match="step 2 of the plan: aggregation 'random-k'"):
        anonymize(people, plan=noisy)
    holes = people.assign(age=people["age"].where(people.index > 2))
    with pytest.raises(SchemaError, match="missing quasi-identifier values yet \\('age': 3"):
        anonymize(holes, plan=TWO_STEPS)
    with pytest.raises(TypeError, match="needs k"):
        anonymize(people, quasi_identifiers=["age"])


def test_without_last_step_reruns_the_plan_minus_its_last_step():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"age": rng.normal(45, 12, 100), "income": rng.normal(3e4, 8e3, 100),
                       "region": rng.integers(0, 4, 100).astype(float),
                       "sector": rng.integers(0, 4, 100).astype(float)})
    plan = Plan([Microaggregate(["age", "income"], k=5),
                 Microaggregate(["region", "sector"], k=3)])
    with pytest.warns(PrivacyLeakWarning):
        release = anonymize(df, plan=plan)  # a seed drawn, and recorded
    undone = release.without_last_step()
    alone = anonymize(df, quasi_identifiers=["age", "income"], k=5, random_state=release.seed)
    pd.testing.assert_frame_equal(undone.data, alone.data)
    assert undone.seed == release.seed and len(undone.steps) == 1
    first, again = release.steps[0], undone.steps[0]  # the first step did the same
    assert (again.options, again.cells_changed, again.groups, again.smallest_group) == \
        (first.options, first.cells_changed, first.groups, first.smallest_group)
    with pytest.raises(ValueError, match="one step"):
        undone.without_last_step()
    with pytest.raises(RuntimeError, match="does not hold its original table"):
        pickle.loads(pickle.dumps(release)).without_last_step()


def test_anonymize_takes_refine(people):
    release = anonymize(people, quasi_identifiers=["age", "income"], k=5, refine=0.5,
                        identifiers=["height", "weight"], random_state=0)
    assert release.params["method"] == "mdav-ls"
    assert release.params["method_params"]["time_limit"] == 0.5


PACKAGE = PIPELINE.parent


class _ReleaseCalls(ast.NodeVisitor):
    """The ``Release(...)`` calls of one module (by the name, or as an attribute:
    ``result.Release(...)``), each named by the function it is in."""

    def __init__(self) -> None:
        self.scopes, self.found = ["<module>"], []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scopes.append(node.name)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "Release") or (
                isinstance(func, ast.Attribute) and func.attr == "Release"):
            self.found.append(self.scopes[-1])
        self.generic_visit(node)


def _release_calls() -> list[str]:
    """``path:function`` of every ``Release(...)`` call in the package's modules."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        calls = _ReleaseCalls()
        calls.visit(ast.parse(path.read_text(encoding="utf-8")))
        found += [f"{path.relative_to(PACKAGE).as_posix()}:{name}" for name in calls.found]
    return found


def test_the_package_constructs_a_release_in_one_place():
    assert _release_calls() == ["_pipeline/result.py:of"]


def test_every_release_site_calls_the_one_constructor():
    sites = sorted({path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                    if "Release.of(" in path.read_text(encoding="utf-8")})
    assert {"_pipeline/assemble.py", "engines/file/engine.py", "engines/dask/engine.py",
            "engines/dask/file.py", "engines/stream/csv_files.py", "series/release.py",
            "semantic/release.py", "documents/release.py", "audit/assess.py"} <= set(sites)


def test_the_pipeline_never_replaces_fields_of_a_release(refuse_release_replace, people):
    for info in pkgutil.iter_modules([str(PIPELINE)]):
        importlib.import_module(f"microagg._pipeline.{info.name}")
    df = people.assign(age=people["age"].round(), w=np.where(people.index % 2, 1.0, 2.0),
                       diagnosis=np.where(people.index % 3, "x", "y"))
    release = anonymize(df, quasi_identifiers=["age", "income"], k=5, weights="w",
                        sensitive="diagnosis", identifiers=["height", "weight"],
                        random_state=0)
    assert "rounding" in release.checks and "survey_risk" in release.metrics
    mixed = anonymize(df.assign(region=np.where(people.index % 2, "north", "south")),
                      quasi_identifiers=["age", "region"], k=5, sensitive="diagnosis",
                      identifiers=["income", "height", "weight"], random_state=0)
    assert mixed.params["categorical_quasi_identifiers"] == ("region",)
    with pytest.raises(AssertionError, match=r"dataclasses\.replace of a Release"):
        dataclasses.replace(release, seed=1)  # the guard itself


def test_every_in_memory_release_records_its_one_step():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"age": rng.normal(45, 12, 90), "income": rng.normal(3e4, 8e3, 90),
                       "region": rng.choice(["north", "south", "east"], 90)})
    mixed = anonymize(df, quasi_identifiers=["age", "region"], k=5, sensitive="income",
                      random_state=0)
    (step,) = mixed.steps
    assert step.after.information_loss == pytest.approx(100 * mixed.metrics["ncp"])
    assert step.smallest_group == mixed.checks["group_k"]["achieved"]
    holes = df.assign(age=df["age"].where(df.index > 9))
    patterns = anonymize(holes, quasi_identifiers=["age", "income"], k=5,
                         identifiers="region", random_state=0)
    (step,) = patterns.steps
    assert step.before.k_anonymity == 1 and step.after.k_anonymity >= 5
    assert step.groups == int(patterns.labels.max()) + 1


def test_the_one_steps_figures_describe_the_published_table():
    rng = np.random.default_rng(7)
    # few distinct values: group means (30.33, 30.67, ...) round to the same whole numbers,
    # so the published classes are larger than the groups
    df = pd.DataFrame({"age": rng.integers(30, 33, 200), "hours": rng.integers(10, 13, 200)})
    release = anonymize(df, quasi_identifiers=["age", "hours"], k=3, random_state=0)
    assert release.params["rounding"]  # whole numbers: the means are published rounded
    (step,) = release.steps
    published_k = int(release.data.groupby(["age", "hours"]).size().min())
    assert published_k > step.smallest_group  # rounding merged groups
    assert step.after.k_anonymity == published_k == release.checks["k_anonymity"]["achieved"]
