"""The release's disclosure risk before and after (issue 19): computed by the same measure on
the original and on the published table, with the weight and the household."""

from __future__ import annotations

import pytest

from microagg import anonymize
from microagg.datasets import load_dataset
from microagg.metrics.survey_risk import survey_risk

QI = ["age", "sex", "region"]
DROP = ["person_id", "name", "postcode", "income", "date_of_birth"]
"""The identifiers, and the columns that break k by themselves unless masked."""


@pytest.fixture(scope="module")
def survey():
    return load_dataset("survey").data


@pytest.fixture(scope="module")
def released(survey):
    return anonymize(survey, quasi_identifiers=QI, k=5, identifiers=DROP,
                     weights="weight", households="household_id", random_state=0,
                     keep="weight")  # every household its own weight: kept on purpose


def test_before_is_the_measure_on_the_original(survey, released):
    direct = survey_risk(survey, QI, weights="weight", households="household_id",
                         ks=(2, 3, 5)).summary()
    before = released.metrics["survey_risk"]["before"]
    for key in ("global_risk", "expected_reidentifications", "household_risk", "max_risk"):
        assert before[key] == pytest.approx(direct[key], rel=1e-12), key
    assert before["k_anonymity_violations"] == direct["k_anonymity_violations"]


def test_after_is_k_anonymous_and_lower(released):
    before = released.metrics["survey_risk"]["before"]
    after = released.metrics["survey_risk"]["after"]
    assert after["k_anonymity_violations"] == {"2": 0, "3": 0, "5": 0}  # a 5-anonymous file
    assert before["k_anonymity_violations"]["5"] > 0
    assert after["global_risk"] < before["global_risk"]
    assert after["household_risk"] < before["household_risk"]
    assert "household_id" not in released.data.columns  # dropped, yet its risk measured


def test_no_survey_role_no_survey_risk(survey):
    plain = anonymize(survey, quasi_identifiers=QI, k=5, random_state=0,
                      identifiers=[*DROP, "household_id", "weight"])
    assert "survey_risk" not in plain.metrics
