"""Columns without a role that break k by themselves (exact dates of birth, near-unique
numbers): refused when the Request is built like an identifier, unless kept on purpose."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.request import Request
from microagg._pipeline.roleless import RareValues, rare_values
from microagg.datasets import load_dataset
from microagg.exceptions import SchemaError
from microagg.report._text import status_line
from microagg.schema.schema_file import load_schema

N = 40


@pytest.fixture
def people() -> pd.DataFrame:
    """Ages 5-anonymous by themselves; text dates of birth (34 distinct, 6 of them on two
    rows: too few to look like an identifier) and a spend unique on each row; a sex and a
    diagnosis each value of which at least 5 rows share."""
    rng = np.random.default_rng(3)
    born = pd.date_range("1950-01-01", periods=34, freq="53D").strftime("%Y-%m-%d")
    return pd.DataFrame({
        "age": np.repeat([30, 40, 50, 60], N // 4),
        "dob": rng.permutation(np.concatenate([born, born[:6]])),
        "spend": rng.permutation(np.arange(N)) * 13.5 + 200.0,
        "sex": ["f", "m"] * (N // 2),
        "diagnosis": rng.choice(["flu", "none"], N),
    })


def test_roleless_columns_that_break_k_are_refused_before_any_work(people) -> None:
    with pytest.raises(SchemaError) as caught:
        Request.build(people, quasi_identifiers=["age"], k=5)
    message = str(caught.value)
    assert message.startswith("2 column(s) without a role break 5-anonymity by themselves")
    assert "'dob': 34 of its 34 distinct values occur on fewer than 5 rows (28 on one row " \
           "only), on 40 of the 40 rows with a value" in message
    assert "'spend': 40 of its 40 distinct values" in message
    assert "'sex'" not in message and "'diagnosis'" not in message
    assert "add it to -q" in message and 'role = "quasi-identifier"' in message
    assert "--drop dob,spend" in message and "--keep dob,spend" in message


def test_a_role_or_a_smaller_k_releases_them(people) -> None:
    released = anonymize(people, quasi_identifiers=["age", "spend"], k=5, identifiers="dob",
                         sensitive="diagnosis", random_state=0)
    assert "dob" not in released.data.columns
    assert released.params["keep"] == ()
    # a value on 2 rows breaks k = 3, not k = 2
    doubled = people.assign(dob=np.repeat(people["dob"].unique()[:N // 2], 2))
    anonymize(doubled, quasi_identifiers=["age"], k=2, identifiers="spend", random_state=0)
    with pytest.raises(SchemaError, match=r"'dob': 20 of its 20 distinct values occur on "
                                          r"fewer than 3 rows \(0 on one row only\)"):
        anonymize(doubled, quasi_identifiers=["age"], k=3, identifiers="spend")


def test_missing_values_are_no_value() -> None:
    """A column whose every value 5 rows share is not refused for its missing cells."""
    df = pd.DataFrame({"age": np.repeat([30, 40], 10),
                       "code": ["a"] * 6 + [None] * 3 + ["b"] * 5 + [None] * 6})
    released = anonymize(df, quasi_identifiers=["age"], k=5, random_state=0)
    assert released.data["code"].isna().sum() == 9
    assert rare_values(df["code"], 5) is None
    assert rare_values(df["code"], 6) == RareValues(values=1, unique=0, rows=5, distinct=2,
                                                   observed=11)


def test_keep_publishes_them_on_purpose_recorded_and_reported(people) -> None:
    released = anonymize(people, quasi_identifiers=["age"], k=5, keep=["dob", "spend"],
                         random_state=0)
    assert released.params["keep"] == ("dob", "spend")
    assert released.data["dob"].equals(people["dob"])
    assert released.data["spend"].equals(people["spend"])
    broken = released.checks["published_columns"]["columns"]
    assert broken["dob"] == 1 and broken["spend"] == 1  # and the warning names them
    assert not status_line(released).startswith("Protected")
    assert "dob" in status_line(released)


def test_a_schema_other_role_keeps_them_on_purpose(people, tmp_path) -> None:
    file = tmp_path / "s.toml"
    file.write_text('[columns.age]\nrole = "quasi-identifier"\ntype = "numeric"\n'
                    '[columns.dob]\nrole = "other"\n[columns.spend]\nrole = "identifier"\n'
                    '[columns.sex]\nrole = "quasi-identifier"\ntype = "categorical"\n'
                    '[columns.diagnosis]\nrole = "sensitive"\n')
    released = anonymize(people, k=5, schema=load_schema(file), random_state=0)
    assert released.params["keep"] == ("dob",)
    assert released.data["dob"].equals(people["dob"])


def test_weight_and_sensitive_roles_are_not_refused(people) -> None:
    """The sampling weight is published unchanged by its role (its effect on k is the
    published-column check's); what must not be learnt is sensitive, not roleless."""
    released = anonymize(people.assign(w=people["spend"]), quasi_identifiers=["age"], k=5,
                         sensitive=["spend"], identifiers="dob", weights="w", random_state=0)
    assert released.params["keep"] == ()
    assert released.params["weight"] == "w"


def test_the_tutorials_first_try_is_refused_for_exact_dates_and_the_weight() -> None:
    survey = load_dataset("survey").data
    with pytest.raises(SchemaError) as caught:
        Request.build(survey, quasi_identifiers=["age", "sex", "region", "income"], k=5,
                      identifiers=["person_id", "name", "household_id", "postcode"])
    message = str(caught.value)
    assert "'date_of_birth': 4,515 of its 4,515 distinct values occur on fewer than 5 rows " \
           "(4,070 on one row only)" in message
    assert "'weight': " in message
    for column in ("household_size", "education", "occupation", "diagnosis"):
        assert repr(column) not in message


def test_unhashable_cells_are_compared_as_text() -> None:
    cells = pd.Series([[1, 2], [1, 2], [3]], dtype=object)
    assert rare_values(cells, 2) == RareValues(values=1, unique=1, rows=1, distinct=2,
                                               observed=3)
