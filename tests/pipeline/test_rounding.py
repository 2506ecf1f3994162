"""Rounding of published numbers (issue 18, item 7): integer-valued quasi-identifiers are
published as integers by default, per-column digits on request, and the final table is
verified again (``microagg._pipeline.publish``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.publish import round_numbers, rounding_for
from microagg._pipeline.request import Request
from microagg._pipeline.rules import EngineRefusal
from microagg._pipeline.verify import published_classes
from microagg.datasets import load_dataset
from microagg.exceptions import PrivacyLeakWarning, SchemaError
from microagg.schema.schema_file import load_schema

IDS = ["person_id", "name", "household_id"]
DROP = [*IDS, "postcode"]
"""The identifiers and the postcode (1,787 codes: it breaks k by itself)."""


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """The bundled survey without income (its missing values are another issue's) and without
    date_of_birth (unique on nearly every row of a sample: tests/pipeline/test_dates.py)."""
    return load_dataset("survey").data.drop(columns=["income", "date_of_birth"])


def _k(df: pd.DataFrame, qi: list[str]) -> int:
    return int(np.bincount(published_classes(df, qi)).min())


def test_default_rounds_integer_valued_columns_only() -> None:
    df = pd.DataFrame({"age": np.arange(10), "size": np.arange(10.0) % 4,
                       "bmi": np.linspace(18.5, 30.1, 10), "flag": [True, False] * 5})
    assert dict(rounding_for(df, ["age", "size", "bmi"], {}, {})) == {"age": 0, "size": 0}
    with pytest.raises(SchemaError, match=r"'flag' are not numeric"):
        rounding_for(df, ["flag"], {"flag": 0}, {})
    assert dict(rounding_for(df, ["age", "bmi"], {"age": None, "bmi": 1}, {})) == {"bmi": 1}
    assert dict(rounding_for(df, ["age", "size"], {}, {}, default=False)) == {}


def test_round_numbers_hand_computed() -> None:
    df = pd.DataFrame({"age": [29.285714285714285, 49.5, 50.5], "income": [1234.5, 1250.0,
                                                                           -1249.0]})
    out = round_numbers(df, {"age": 0, "income": -2})
    assert out["age"].tolist() == [29, 50, 50]  # half to even, as numpy
    assert out["age"].dtype == np.int64
    assert out["income"].tolist() == [1200, 1200, -1200]
    assert round_numbers(df, {"age": 1})["age"].tolist() == [29.3, 49.5, 50.5]
    with_nan = round_numbers(pd.DataFrame({"a": [1.4, np.nan]}), {"a": 0})["a"]
    assert with_nan.dtype == np.float64 and with_nan.tolist()[0] == 1.0  # missing stays float


def test_survey_ages_are_integers_and_k_is_verified_after_rounding(survey: pd.DataFrame
                                                                   ) -> None:
    qi = ["age", "household_size", "weight"]
    release = anonymize(survey, quasi_identifiers=qi, identifiers=DROP, k=5, random_state=0)
    assert release.data["age"].dtype == np.int64
    assert release.data["household_size"].dtype == np.int64
    assert release.data["weight"].dtype == np.float64  # 583.65: not integer-valued
    assert release.params["rounding"] == {"age": 0, "household_size": 0}
    check = release.checks["rounding"]
    assert check["k_after"] == release.k == _k(release.data, qi) >= 5
    assert check["k_after"] >= check["k_before"]  # a common representative only merges
    assert check["classes_after"] <= check["classes_before"]
    unrounded = anonymize(survey, quasi_identifiers=qi, identifiers=DROP, k=5, random_state=0,
                          rounding=False)
    assert unrounded.params["rounding"] == {} and "rounding" not in unrounded.checks
    assert check["classes_before"] == len(np.unique(published_classes(unrounded.data, qi)))
    np.testing.assert_array_equal(np.round(unrounded.data["age"].to_numpy()),
                                  release.data["age"].to_numpy())


def test_rounding_can_merge_classes_and_is_counted() -> None:
    # groups of 3 with means 10.2 and 9.8 become one class of 6 once rounded to integers
    df = pd.DataFrame({"x": [10.0, 10.0, 10.6, 9.0, 10.0, 10.4, 100.0, 100.0, 100.0]})
    release = anonymize(df, quasi_identifiers="x", k=3, random_state=0, rounding={"x": 0})
    check = release.checks["rounding"]
    assert check["classes_before"] == 3 and check["classes_after"] == 2
    assert check["k_before"] == 3 and check["k_after"] == release.k == 3
    assert sorted(release.data["x"].tolist()) == [10] * 6 + [100] * 3


def test_noisy_aggregation_k_is_reported_from_the_rounded_table(survey: pd.DataFrame) -> None:
    df = survey.iloc[:300]
    with pytest.warns(PrivacyLeakWarning, match="not k-anonymous"):
        release = anonymize(df, quasi_identifiers=["age", "weight"], identifiers=DROP, k=3,
                            sensitive="diagnosis", aggregation="rho", aggregation_params={"rho": 0.5},
                            random_state=0, rounding={"weight": -2})
    assert release.checks["k_anonymity"]["required"] is None  # reported, not promised
    assert release.k == _k(release.data, ["age", "weight"])
    assert release.checks["rounding"]["k_after"] == release.k
    assert (release.data["weight"] % 100 == 0).all()


def test_l_diversity_is_checked_again_on_the_rounded_classes(survey: pd.DataFrame) -> None:
    df = survey.iloc[:500]
    release = anonymize(df, quasi_identifiers=["age", "household_size"],
                        identifiers=[*DROP, "weight"], sensitive="diagnosis", l=2, k=4,
                        random_state=0)
    classes = published_classes(release.data, ["age", "household_size"])
    per_class = release.data.groupby(classes)["diagnosis"].nunique().min()
    assert release.checks["l_diversity"]["achieved"] == per_class >= 2


def test_dp_release_rounds_as_post_processing() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(18, 90, 200), "children": rng.integers(0, 5, 200)})
    release = anonymize(df, quasi_identifiers=["age", "children"], k=10, epsilon=1.0,
                        bounds={"age": (0, 120), "children": (0, 10)}, random_state=0)
    assert release.data["age"].dtype == np.int64
    assert release.checks["differential_privacy"]["holds"]
    assert release.k == _k(release.data, ["age", "children"])


def test_rounding_refusals_name_column_and_range(survey: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"rounding\['age'\] must be an int of digits in "
                                         r"\[-10, 15\].*Got 2\.5"):
        Request.build(survey, quasi_identifiers=["age"], identifiers=IDS, k=3,
                      rounding={"age": 2.5})
    with pytest.raises(SchemaError, match=r"'weight' are not quasi-identifiers"):
        Request.build(survey, quasi_identifiers=["age"], identifiers=IDS, k=3,
                      rounding={"weight": 0})
    with pytest.raises(SchemaError, match=r"'date_of_birth' are dates"):
        Request.build(load_dataset("survey").data.drop(columns="income"),
                      quasi_identifiers=["date_of_birth"], identifiers=IDS, k=3,
                      dates="date_of_birth", rounding={"date_of_birth": 0})
    with pytest.raises(EngineRefusal, match="drop rounding"):
        Request.build(survey.iloc[:20], quasi_identifiers=["age"], k=3, engine="file",
                      rounding={"age": 0})
    request = Request.build(survey.iloc[:20], quasi_identifiers=["age"], identifiers=IDS, k=3,
                            engine="file", rounding=False)  # the file engine does not round anyway
    assert dict(request.rounding) == {}


def test_schema_round_key(tmp_path) -> None:
    (tmp_path / "s.toml").write_text('[columns.age]\nrole = "quasi-identifier"\nround = -1\n'
                                     '[columns.w]\nrole = "quasi-identifier"\nround = "none"\n'
                                     '[columns.x]\nrole = "other"\nround = 0\n'
                                     '[columns.d]\nrole = "quasi-identifier"\ntype = "date"\n'
                                     'publish = "week"\nround = 1.5\n')
    with pytest.raises(SchemaError) as error:
        load_schema(tmp_path / "s.toml")
    message = str(error.value)
    assert "4 problem(s)" in message
    assert "[columns.x]: round applies to numeric quasi-identifiers only" in message
    assert "[columns.d]: publish must be one of day, month, year; got 'week'" in message
    assert "[columns.d]: round must be an integer number of digits in [-10, 15]" in message
    (tmp_path / "ok.toml").write_text('[columns.age]\nrole = "quasi-identifier"\nround = -1\n'
                                      '[columns.w]\nrole = "quasi-identifier"\n'
                                      'round = "none"\n')
    schema = load_schema(tmp_path / "ok.toml")
    assert schema.rounding == {"age": -1, "w": None}
    df = pd.DataFrame({"age": np.arange(20) + 20, "w": np.arange(20) % 5})
    release = anonymize(df, k=4, schema=schema, random_state=0)
    assert release.params["rounding"] == {"age": -1}  # w opted out of the integer default
    assert (release.data["age"] % 10 == 0).all()
    with pytest.raises(SchemaError, match=r"rounding \['age'\] repeat the schema"):
        anonymize(df, k=4, schema=schema, rounding={"age": 0})
