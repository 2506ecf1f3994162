"""``Release.without_last_step`` of a release whose plan came from a schema's ``[[steps]]``
(or from ``plan=`` with a schema): the replay gives the shorter plan once."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.exceptions import PrivacyLeakWarning
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan

COLUMNS = """
[columns.age]
role = "quasi-identifier"
[columns.income]
role = "quasi-identifier"
[columns.region]
role = "quasi-identifier"
[columns.sector]
role = "quasi-identifier"
"""
STEPS = """
[[steps]]
step = "microaggregate"
quasi_identifiers = ["age", "income"]
k = 5
[[steps]]
step = "microaggregate"
quasi_identifiers = ["region", "sector"]
k = 3
"""
FIRST = Microaggregate(["age", "income"], k=5)


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame({"age": rng.normal(45, 12, 100), "income": rng.normal(3e4, 8e3, 100),
                         "region": rng.integers(0, 4, 100).astype(float),
                         "sector": rng.integers(0, 4, 100).astype(float)})


def _undone_equals_the_first_step_alone(release, table: pd.DataFrame) -> None:
    with pytest.warns(PrivacyLeakWarning, match="'region' \\(k = 1\\), 'sector'"):
        undone = release.without_last_step()
    with pytest.warns(PrivacyLeakWarning, match="'region' \\(k = 1\\), 'sector'"):
        alone = anonymize(table, plan=Plan([FIRST]), random_state=release.seed)
    pd.testing.assert_frame_equal(undone.data, alone.data)
    assert undone.params["plan"] == [FIRST.to_record()]
    assert undone.seed == release.seed and len(undone.steps) == 1
    assert (undone.steps[0].options, undone.steps[0].cells_changed) == \
        (release.steps[0].options, release.steps[0].cells_changed)
    # the last step's columns are published as they are, and the verdict says they break k
    pd.testing.assert_frame_equal(undone.data[["region", "sector"]],
                                  table[["region", "sector"]])
    assert dict(undone.checks["published_columns"]["columns"]) == {"region": 1, "sector": 1}
    assert not undone.verdict.protected


def test_undo_of_a_schema_plan_replays_the_shorter_plan(tmp_path: pathlib.Path,
                                                        table: pd.DataFrame) -> None:
    (tmp_path / "s.toml").write_text(COLUMNS + STEPS)
    with pytest.warns(PrivacyLeakWarning):
        release = anonymize(table, schema=load_schema(tmp_path / "s.toml"), random_state=4)
    _undone_equals_the_first_step_alone(release, table)


def test_undo_of_a_plan_given_with_a_schema(tmp_path: pathlib.Path,
                                            table: pd.DataFrame) -> None:
    (tmp_path / "s.toml").write_text(COLUMNS)
    schema = load_schema(tmp_path / "s.toml")
    with pytest.warns(PrivacyLeakWarning):
        release = anonymize(table, schema=schema, random_state=4, plan=Plan(
            [FIRST, Microaggregate(["region", "sector"], k=3)]))
    _undone_equals_the_first_step_alone(release, table)
