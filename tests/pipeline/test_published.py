"""Columns published besides the masked ones (issue 18, items 1 and 3): identifiers are
refused unless kept on purpose, and a published column that breaks k is named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.published import identifier_reason, published_column_checks
from microagg.datasets import load_dataset
from microagg.exceptions import PrivacyLeakWarning, SchemaError

SURVEY_QI = ["age", "household_size"]


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """The bundled survey without the columns other issues handle (missing income, dates)."""
    return load_dataset("survey").data.drop(columns=["income", "date_of_birth"])


def test_survey_identifiers_are_refused_all_at_once(survey: pd.DataFrame) -> None:
    with pytest.raises(SchemaError) as caught:
        anonymize(survey, quasi_identifiers=SURVEY_QI, k=5, random_state=0)
    message = str(caught.value)
    for column in ("person_id", "name", "household_id"):  # named like identifiers
        assert repr(column) in message
    # measurements, codes repeated within households, and categories are not identifiers
    for column in ("postcode", "weight", "region", "diagnosis"):
        assert repr(column) not in message
    assert "--drop person_id,name,household_id" in message
    assert "--keep person_id,name,household_id" in message


@pytest.mark.parametrize(("values", "name", "expected"), [
    ([f"X{i:03d}" for i in range(40)], "code", "unique on 40 of 40 rows"),
    ([f"X{i:03d}" for i in range(39)] + ["X000"], "code", "unique on 39 of 40 rows"),
    ([f"X{i % 30:03d}" for i in range(40)], "code", None),  # 30 of 40: 75 %, a category
    (list(range(7, 47)), "row", "consecutive whole numbers, one per row: a record number"),
    ([2 * i for i in range(40)], "row", None),  # distinct whole numbers: a measurement
    ([i + 0.5 for i in range(40)], "income", None),
    ([1, 1, 2], "E-mail", "its name looks like an identifier"),
    (list("abcde"), "letter", None),  # five labels in five rows say nothing
    ([1.0] * 40, "customer_name", "its name looks like an identifier"),
    ([1.0] * 40, "identity_score", None),  # 'id' only as a whole word
])
def test_identifier_reasons(values: list, name: str, expected: str | None) -> None:
    assert identifier_reason(pd.Series(values), name) == expected


def test_dropped_masked_or_kept_identifiers_are_released(survey: pd.DataFrame) -> None:
    released = anonymize(survey, quasi_identifiers=SURVEY_QI, k=5, random_state=0,
                         identifiers=["person_id", "name", "postcode"], keep="household_id",
                         weights="weight")  # postcode and weight break k by themselves
    assert released.params["keep"] == ("household_id",)
    assert "person_id" not in released.data.columns
    assert released.data["household_id"].equals(survey["household_id"])


def test_kept_columns_must_exist_and_have_no_role(survey: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match=r"keep names unknown column.*'nope'"):
        anonymize(survey, quasi_identifiers=SURVEY_QI, k=5, keep=["nope"])
    with pytest.raises(SchemaError, match=r"keep lists column.*'name' \(identifiers\)"):
        anonymize(survey, quasi_identifiers=SURVEY_QI, k=5, identifiers=["name"],
                  keep=["name"])


def test_a_schema_other_role_counts_as_kept(tmp_path) -> None:
    from microagg.schema import load_schema

    file = tmp_path / "s.toml"
    file.write_text('[columns.age]\nrole = "quasi-identifier"\ntype = "numeric"\n'
                    '[columns.person_id]\nrole = "other"\n')
    df = pd.DataFrame({"age": np.arange(30) % 7 + 20, "person_id": [f"P{i}" for i in range(30)]})
    released = anonymize(df, k=3, schema=load_schema(file), random_state=0)
    assert released.params["keep"] == ("person_id",)


def test_a_weight_shared_within_households_is_named() -> None:
    """Four households of five with one weight each: 5-anonymous on age alone, but the
    weight splits every class (the issue's 'real k of the file from 5 to 1')."""
    rng = np.random.default_rng(0)
    age = np.repeat([30, 40, 50, 60], 5).astype(float)
    weight = np.concatenate([rng.permutation(np.arange(5) + 100.5 * h) for h in range(4)])
    df = pd.DataFrame({"age": age, "weight": weight, "sex": list("fmfmf") * 4})
    with pytest.warns(PrivacyLeakWarning, match=r"'weight' \(k = 1\)"):
        released = anonymize(df, quasi_identifiers=["age"], k=5, random_state=0,
                             keep="weight")  # on purpose: without it, refused
    check = released.checks["published_columns"]
    assert dict(check["columns"]) == {"weight": 1, "sex": 2}  # f, m, f, m, f in each class
    assert released.warnings[0].startswith("Published unchanged")


def test_published_column_check_counts_on_the_published_table() -> None:
    out = pd.DataFrame({"a": [1.0] * 6, "b": ["x", "x", "x", "y", "y", "y"], "c": range(6)})
    check = published_column_checks(out, ["a"], ["b", "c"], 3)
    assert dict(check["columns"]) == {"c": 1}  # b leaves classes of 3: k holds
    assert published_column_checks(out, ["a"], ["b"], 3) is None
