"""The survey roles (issue 19): the sampling weight and the household id, checked when the
Request is built; each bad input a clear error or a named warning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.exceptions import SchemaError, SurveyWeightWarning
from microagg.schema.schema_file import load_schema


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(19)
    households = np.repeat(np.arange(20), 3)
    return pd.DataFrame({
        "age": rng.integers(18, 90, 60),
        "income": rng.normal(3000, 900, 60).round(2),
        "hid": [f"H{h:03d}" for h in households],
        "w": np.repeat(rng.uniform(50, 500, 20), 3).round(2),
    })


def _release(df: pd.DataFrame, **options):
    return anonymize(df, quasi_identifiers=["age", "income"], k=3, random_state=0, **options)


def test_weight_published_household_dropped_and_recorded(people):
    # every household its own weight: it re-links households, published on purpose only
    released = _release(people, weights="w", households="hid", keep="w")
    assert released.params["weight"] == "w" and released.params["household"] == "hid"
    assert "hid" not in released.data.columns  # an identifier unless kept
    assert released.data["w"].equals(people["w"])  # published unchanged
    kept = _release(people, weights="w", households="hid", keep=["hid", "w"])
    assert kept.data["hid"].equals(people["hid"])


@pytest.mark.parametrize(("values", "message"), [
    ([np.nan] + [1.0] * 59, r"1 of 60 rows do not \(1 missing\)"),
    ([0.0, -2.0] + [1.0] * 58, r"2 of 60 rows do not \(1 zero, 1 negative\)"),
    ([np.inf] + [1.0] * 59, r"1 of 60 rows do not \(1 infinite\)"),
    (["a"] * 60, r"must be numeric.* it has dtype"),
])
def test_bad_weights_name_the_column_and_the_rows(people, values, message):
    with pytest.raises(SchemaError, match=rf"Weight column 'w' of anonymize .*{message}"):
        _release(people.assign(w=values), weights="w")


def test_weights_below_the_sample_size_warn(people):
    with pytest.warns(SurveyWeightWarning, match=r"sum to 0\.6, below the 60 records"):
        _release(people.assign(w=0.01), weights="w")


def test_a_household_id_missing_on_some_rows_is_refused(people):
    gaps = people.astype({"hid": object})
    gaps.loc[[4, 9], "hid"] = None
    with pytest.raises(SchemaError, match=r"'hid' of anonymize is missing on 2 of 60 rows \(first rows: 4, 9\)"):
        _release(gaps, households="hid")


@pytest.mark.parametrize(("options", "message"), [
    ({"weights": "nope"}, r"Unknown column 'nope' in weights"),
    ({"weights": "age"}, r"'age' is both the weight and in quasi_identifiers"),
    ({"weights": "w", "households": "w"}, r"cannot be both the weight and the household"),
    ({"weights": ["w"]}, r"weights names one column"),
])
def test_role_conflicts(people, options, message):
    with pytest.raises((SchemaError, TypeError), match=message):
        _release(people, **options)


def test_schema_roles_and_their_conflicts(people, tmp_path):
    file = tmp_path / "s.toml"
    file.write_text('[columns.age]\nrole = "quasi-identifier"\n'
                    '[columns.income]\nrole = "quasi-identifier"\n'
                    '[columns.hid]\nrole = "household"\n[columns.w]\nrole = "weight"\n')
    schema = load_schema(file)
    assert (schema.weight, schema.household) == ("w", "hid")
    released = anonymize(people, k=3, schema=schema, random_state=0,
                         keep="w")  # a household's own weight: kept on purpose
    assert released.params["weight"] == "w" and "hid" not in released.data.columns
    with pytest.raises(SchemaError, match=r"either in the schema or as options.*weights"):
        anonymize(people, k=3, schema=schema, weights="w")
    two = tmp_path / "two.toml"
    two.write_text(file.read_text().replace('[columns.hid]\nrole = "household"',
                                            '[columns.hid]\nrole = "weight"'))
    with pytest.raises(SchemaError, match=r"2 columns have role = \"weight\".*at most one"):
        load_schema(two)


# ------------------------------------------------------------------------------- strata

def _with_region(people: pd.DataFrame) -> pd.DataFrame:
    return people.assign(region=np.repeat(["north", "south", "east"], 20))  # 20 rows each


def test_strata_published_unchanged_and_the_risk_counted_within_them(people):
    from microagg.metrics.survey_risk import survey_risk

    df = _with_region(people)
    released = _release(df, weights="w", households="hid", strata="region",
                        keep="w")  # a household's own weight: kept on purpose
    assert released.params["strata"] == "region"
    assert released.data["region"].equals(df["region"])  # published as read
    before = released.metrics["survey_risk"]["before"]
    assert before["strata"] == "region"
    expected = survey_risk(df, ["age", "income"], weights="w", households="hid",
                           strata="region").summary()
    assert before["expected_reidentifications"] == expected["expected_reidentifications"]
    # the published table's classes, split by region: fk within each stratum
    after = released.metrics["survey_risk"]["after"]
    assert after["strata"] == "region"
    within = released.data.groupby(["age", "income", "region"])["age"].transform("size")
    assert after["k_anonymity_violations"]["3"] == int((within < 3).sum()) > 0
    assert released.metrics["survey_risk"]["after"]["k_anonymity_violations"]["3"] > \
        survey_risk(released.data, ["age", "income"]).summary()["k_anonymity_violations"]["3"]


def test_strata_is_a_key_of_the_published_columns_check(people):
    """Published unchanged, the stratum is a key an intruder may know: a release whose
    classes it splits below k is said so (and the verdict is not protected)."""
    released = _release(_with_region(people), households="hid", strata="region")
    assert "region" in released.checks["published_columns"]["columns"]
    assert not released.verdict.protected


def test_strata_run_the_risk_step_without_weights(people):
    released = _release(_with_region(people), households="hid", strata="region")
    assert released.metrics["survey_risk"]["before"]["weighted"] is False
    assert released.metrics["survey_risk"]["before"]["strata"] == "region"


@pytest.mark.parametrize(("options", "message"), [
    ({"strata": "nope"}, r"Unknown column 'nope' in strata"),
    ({"strata": "age"}, r"'age' is both the strata and in quasi_identifiers"),
    ({"weights": "w", "strata": "w"}, r"'w' cannot be both the weight and the strata"),
    ({"households": "hid", "strata": "hid"}, r"cannot be both the household id and the strata"),
])
def test_strata_conflicts(people, options, message):
    with pytest.raises(SchemaError, match=message):
        _release(_with_region(people), **options)


def test_strata_missing_on_some_rows_is_refused(people):
    gaps = _with_region(people).astype({"region": object})
    gaps.loc[[3, 7, 8], "region"] = None
    with pytest.raises(SchemaError, match=r"Strata column 'region' of anonymize is missing on "
                                          r"3 of 60 rows \(first rows: 3, 7, 8\)"):
        _release(gaps, strata="region")


def test_schema_strata_role(people, tmp_path):
    file = tmp_path / "s.toml"
    file.write_text('[columns.age]\nrole = "quasi-identifier"\n'
                    '[columns.income]\nrole = "quasi-identifier"\n'
                    '[columns.hid]\nrole = "household"\n[columns.w]\nrole = "weight"\n'
                    '[columns.region]\nrole = "strata"\n')
    schema = load_schema(file)
    assert schema.strata == "region"
    released = anonymize(_with_region(people), k=3, schema=schema, random_state=0,
                         keep="w")  # a household's own weight: kept on purpose
    assert released.params["strata"] == "region"
    assert released.metrics["survey_risk"]["before"]["strata"] == "region"
    with pytest.raises(SchemaError, match=r"either in the schema or as options.*strata"):
        anonymize(_with_region(people), k=3, schema=schema, strata="region")
    two = tmp_path / "two.toml"
    two.write_text(file.read_text().replace('[columns.w]\nrole = "weight"',
                                            '[columns.w]\nrole = "strata"'))
    with pytest.raises(SchemaError, match=r"2 columns have role = \"strata\".*at most one"):
        load_schema(two)
