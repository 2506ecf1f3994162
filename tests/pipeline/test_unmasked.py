"""Columns published besides the masked ones (issue 18, items 1 and 3): identifiers are
refused unless kept on purpose, and a published column that breaks k is named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.unmasked import identifier_reason, published_column_checks
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
    from microagg.schema.schema_file import load_schema

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


def _people(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"ssn": [f"{100_000_000 + 7919 * i}" for i in range(n)],
                         "age": rng.integers(20, 70, n), "income": rng.normal(5e4, 1e4, n),
                         "region": rng.choice(["north", "south", "east"], n),
                         "disease": rng.choice(["a", "b", "c"], n)})


@pytest.mark.parametrize(("index", "reason"), [
    ("ssn", "index level 'ssn' (its name looks like an identifier)"),
    ("code", "the index (unique on 60 of 60 rows)"),  # unnamed: judged by its values
    ("record", "index level 'record' (consecutive whole numbers, one per row"),
])
def test_an_index_that_looks_like_an_identifier_is_refused(index: str, reason: str) -> None:
    df = _people()
    df["code"], df["record"] = df["ssn"], np.arange(1001, 1061)
    indexed = df.set_index(index).drop(columns=["ssn", "code", "record"], errors="ignore")
    if index == "code":
        indexed = indexed.rename_axis(None)
    with pytest.raises(SchemaError) as caught:
        anonymize(indexed, quasi_identifiers=["age", "income"], sensitive="disease", k=3,
                  identifiers="region")
    message = str(caught.value)
    assert reason in message
    assert "df.reset_index()" in message and "df.reset_index(drop=True)" in message


def test_the_release_is_indexed_by_row_position_never_by_the_input_labels() -> None:
    people = _people().drop(columns="ssn")
    for indexed in (people.set_index("region"),  # a category: dropped
                    people.set_index(["region", "disease"], drop=False),
                    people.sample(frac=1.0, random_state=0),  # pandas' row labels, shuffled
                    people.set_index(np.arange(60) * 7 + 3),
                    people.iloc[10:]):
        release = anonymize(indexed, quasi_identifiers=["age", "income"],
                            sensitive="disease", k=3, random_state=0)
        assert isinstance(release.data.index, pd.RangeIndex)
        assert release.data.index.tolist() == list(range(len(indexed)))
        written = [line.split(",")[0] for line in release.data.to_csv().splitlines()[1:]]
        assert written == [str(i) for i in range(len(indexed))]  # positions, no labels
        assert release.data["disease"].tolist() == indexed["disease"].tolist()


def test_a_role_naming_the_index_says_it_is_not_a_column() -> None:
    with pytest.raises(SchemaError, match=r"'age' named in a role is the DataFrame's index"):
        anonymize(_people().drop(columns="ssn").set_index("age"),
                  quasi_identifiers=["age", "income"], sensitive="disease", k=3)
