"""A schema file's ``[[steps]]`` tables: read into ``Schema.plan``, every problem named by the
file, the step's position and the option; the plan's columns tied to the schema's roles."""

from __future__ import annotations

import pathlib

import pytest

from microagg.exceptions import SchemaError
from microagg.schema._steps import roles_from, schema_with_plan
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan

COLUMNS = """
[columns.id]
role = "identifier"

[columns.age]
role = "quasi-identifier"

[columns.income]
role = "quasi-identifier"

[columns.height]
role = "quasi-identifier"

[columns.weight]
role = "quasi-identifier"

[columns.disease]
role = "sensitive"
"""

TWO_STEPS = COLUMNS + """
[[steps]]
step = "microaggregate"
quasi_identifiers = ["age", "income"]
k = 5
method = "mdav"

[[steps]]
step = "microaggregate"
quasi_identifiers = ["height", "weight"]
k = 3
method_params = {}
"""


def _load(tmp_path: pathlib.Path, text: str):  # type: ignore[no-untyped-def]
    file = tmp_path / "s.toml"
    file.write_text(text, encoding="utf-8")
    return load_schema(file)


def test_steps_become_the_schema_plan(tmp_path: pathlib.Path) -> None:
    schema = _load(tmp_path, TWO_STEPS)
    assert schema.plan == Plan([Microaggregate(["age", "income"], k=5, method="mdav"),
                                Microaggregate(["height", "weight"], k=3)])
    assert schema.quasi_identifiers == ["age", "income", "height", "weight"]


def test_a_schema_without_steps_has_no_plan(tmp_path: pathlib.Path) -> None:
    assert _load(tmp_path, COLUMNS).plan is None


def test_plan_follows_the_table_spelling(tmp_path: pathlib.Path) -> None:
    schema = _load(tmp_path, TWO_STEPS).spelled_as(
        ["id", " age ", "income", "height", "weight", "disease"])
    assert schema.plan is not None
    assert schema.plan.steps[0].quasi_identifiers == (" age ", "income")
    assert schema.plan.steps[1].quasi_identifiers == ("height", "weight")


@pytest.mark.parametrize(("steps", "expected"), [
    ('[[steps]]\nstep = "no_such_step"\n', "step 1 of the plan: unknown step 'no_such_step'"),
    ('[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age", "income", "height", '
     '"weight"]\nk = 5\n[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age"]\n'
     'kk = 3\n', "step 2 of the plan (microaggregate): unknown option(s) 'kk'"),
    ('[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age"]\n',
     "step 1 of the plan (microaggregate) needs 'k'"),
    ('[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age"]\nk = "five"\n',
     "step 1 of the plan (microaggregate): The 'k' option"),
    ('[[steps]]\nquasi_identifiers = ["age"]\nk = 5\n',
     "step 1 of the plan does not say which step it is"),
    ("steps = 5\n", "steps must be an array of tables"),
])
def test_bad_steps_are_named(tmp_path: pathlib.Path, steps: str, expected: str) -> None:
    file = tmp_path / "s.toml"
    file.write_text(steps + COLUMNS, encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        load_schema(file)
    assert str(file) in str(caught.value)
    assert expected in str(caught.value)


def test_steps_on_columns_outside_the_schema_are_refused_by_name(
        tmp_path: pathlib.Path) -> None:
    text = COLUMNS + ('[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age", '
                      '"income", "zip"]\nk = 5\n[[steps]]\nstep = "microaggregate"\n'
                      'quasi_identifiers = ["height", "weight", "disease"]\nk = 3\n')
    with pytest.raises(SchemaError) as caught:
        _load(tmp_path, text)
    message = str(caught.value)
    assert "step 1 of the plan (microaggregate): quasi_identifiers 'zip' are not columns " \
           "of the schema" in message
    assert "step 2 of the plan (microaggregate): 'disease' has role 'sensitive'" in message
    assert "2 problem(s)" in message


def test_a_quasi_identifier_in_no_step_is_refused(tmp_path: pathlib.Path) -> None:
    text = COLUMNS + ('[[steps]]\nstep = "microaggregate"\nquasi_identifiers = ["age", '
                      '"income"]\nk = 5\n')
    with pytest.raises(SchemaError, match=r"quasi-identifier\(s\) 'height', 'weight' are "
                                          r"in no step: they would be published unmasked"):
        _load(tmp_path, text)


def test_other_top_level_keys_still_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(SchemaError, match=r"unknown top-level key\(s\) \['plan'\] \(only "
                                          r"\[columns.NAME\] and \[\[steps\]\] tables\)"):
        _load(tmp_path, "plan = 1\n" + COLUMNS)


def test_a_plan_given_with_a_schema_is_checked_against_its_roles(
        tmp_path: pathlib.Path) -> None:
    schema = _load(tmp_path, COLUMNS)
    plan = Plan([Microaggregate(["age", "income"], k=5),
                 Microaggregate(["height", "weight"], k=3)])
    assert schema_with_plan(schema, plan).plan == plan
    assert schema_with_plan(schema, None) is schema
    with pytest.raises(SchemaError, match="'disease' has role 'sensitive'"):
        schema_with_plan(schema, Plan([Microaggregate(["age", "income", "height",
                                                       "weight", "disease"], k=5)]))
    with pytest.raises(SchemaError, match="The plan is given twice"):
        schema_with_plan(_load(tmp_path, TWO_STEPS), plan)


def test_roles_of_a_schema_plan_are_the_schema_roles(tmp_path: pathlib.Path) -> None:
    schema = _load(tmp_path, TWO_STEPS)
    keys = ["age", "income", "height", "weight"]
    assert roles_from(schema, keys, None, None) == (keys, ["disease"], ["id"])
    with pytest.raises(SchemaError, match="not both"):  # other columns: still refused
        roles_from(schema, ["age"], None, None)
    with pytest.raises(SchemaError, match="not both"):
        roles_from(_load(tmp_path, COLUMNS), keys, None, None)
