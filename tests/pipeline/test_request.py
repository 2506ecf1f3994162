"""The Request: built once from a face's arguments, every option checked there, frozen
(issue 17, item 1)."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.request import Request
from microagg.exceptions import SchemaError
from microagg.schema.schema_file import load_schema


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "id": np.arange(60),
        "age": rng.integers(18, 90, 60),
        "income": rng.normal(3000, 900, 60).round(2),
        "region": rng.choice(["north", "south", "east"], 60),
        "diagnosis": rng.choice(["flu", "cold", "asthma", "none"], 60),
    })


def test_a_request_is_frozen_and_says_which_stage_runs_it(people):
    request = Request.build(people, quasi_identifiers=["age", "income"], k=4,
                            identifiers="id")
    assert request.kind == "numeric" and request.partitioner.name == "mdav"
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.k = 2  # type: ignore[misc]
    kinds = {
        "mixed": Request.build(people, quasi_identifiers=["age", "region"], k=4,
                               identifiers="id", sensitive="income").kind,
        "dp": Request.build(people.drop(columns=["region", "diagnosis"]),
                            quasi_identifiers=["age", "income"], identifiers="id", k=4,
                            epsilon=1.0, bounds={"age": (0, 100), "income": (0, 9000)}).kind,
        "attribute-groups": Request.build(people, quasi_identifiers=["age", "income"], k=4,
                                          identifiers="id", attribute_groups="individual").kind,
        "generalizing method": Request.build(people, quasi_identifiers=["age", "income"], k=4,
                                             identifiers="id", method="cdt",
                                             sensitive="diagnosis").kind,
    }
    assert kinds == {"mixed": "mixed", "dp": "dp", "attribute-groups": "attribute-groups",
                     "generalizing method": "mixed"}


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"scaling": "zscore"}, ValueError, r"Unknown scaling 'zscore'. Valid: standard"),
    ({"aggregation": "average"}, ValueError, r"Unknown aggregation 'average'"),
    ({"bounds": {"age": (0, 100)}}, ValueError, r"bounds are used only with epsilon"),
    ({"l": 2, "aggregation": "rho"}, SchemaError, r"l-diversity and t-closeness are checked"),
    ({"method": "top-down", "scaling": "minmax",
      "method_params": {"normalize": "minmax"}}, ValueError,
     r"Method 'top-down' applies its own normalization \(normalize='minmax'\) and "
     r"scaling='minmax' was given too"),
    ({"n_attribute_groups": 2}, ValueError, r"n_attribute_groups needs attribute_groups"),
    ({"blocking": "kd", "epsilon": 1.0}, SchemaError, r"blocking applies to numeric"),
])
def test_every_refusal_comes_from_the_request_before_any_work(people, options, error,
                                                             message):
    with pytest.raises(error, match=message):
        Request.build(people, quasi_identifiers=["age", "income"], k=4, sensitive="diagnosis",
                      identifiers="id", **options)


def test_explicit_scaling_switches_off_a_methods_own_normalization(people):
    request = Request.build(people, quasi_identifiers=["age", "income"], k=4,
                            identifiers="id", method="top-down", scaling="standard")
    assert request.method_params["normalize"] == "none"  # the caller's scaling is used
    default = Request.build(people, quasi_identifiers=["age", "income"], k=4,
                            identifiers="id", method="top-down")
    assert "normalize" not in default.method_params  # the method's own, as in its paper


def test_anonymize_takes_a_schema(people, tmp_path: pathlib.Path):
    schema_file = tmp_path / "schema.toml"
    schema_file.write_text(
        '[columns.id]\nrole = "identifier"\n'
        '[columns.age]\nrole = "quasi-identifier"\ntype = "numeric"\n'
        '[columns.income]\nrole = "quasi-identifier"\ntype = "numeric"\n'
        '[columns.region]\nrole = "other"\n'
        '[columns.diagnosis]\nrole = "sensitive"\ntype = "categorical"\n')
    schema = load_schema(schema_file)
    by_schema = anonymize(people, schema=schema, k=4, random_state=0)
    by_options = anonymize(people, quasi_identifiers=["age", "income"], identifiers="id",
                           sensitive="diagnosis", k=4, random_state=0)
    assert by_schema.params["quasi_identifiers"] == ("age", "income")
    assert by_schema.params["identifiers"] == ("id",)
    assert "id" not in by_schema.data.columns
    pd.testing.assert_frame_equal(by_schema.data, by_options.data)
    with pytest.raises(SchemaError, match="either in the schema or as options"):
        anonymize(people, schema=schema, quasi_identifiers=["age"], k=4)


def test_missing_values_choose_the_stage_or_are_refused_when_the_request_is_built(people):
    holes = people.assign(age=people["age"].where(people.index > 4))
    options = {"quasi_identifiers": ["age", "income"], "k": 4, "identifiers": "id",
               "sensitive": ["region", "diagnosis"]}
    assert Request.build(holes, **options).kind == "patterns"
    assert Request.build(holes, **options, missing="impute:median").kind == "numeric"
    with pytest.raises(SchemaError, match="in 60 rows \\('age': 5 missing\\)"):
        Request.build(holes, **options, missing="refuse")
    with pytest.raises(SchemaError, match="attribute groups does not run missing='pattern'"):
        Request.build(holes, **options, attribute_groups="individual")
    with pytest.raises(SchemaError, match="certify needs complete quasi-identifiers: 5 of 60"):
        Request.build(holes, **options, certify=1.0)
