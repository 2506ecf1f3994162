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


def test_population_risk_is_population_summary_on_each_table(survey, released):
    """With a weight, k-map and the journalist / marketer risks of the published table are
    :func:`population_summary` on it (no fitted uniqueness models: releases stay fast)."""
    from microagg.metrics.population_risk import population_summary

    for side, table in (("before", survey), ("after", released.data)):
        got = released.metrics["survey_risk"][side]["population"]
        direct = population_summary(table, QI, weights="weight", ks=(2, 3, 5, 5),
                                    uniqueness=False)
        assert "uniqueness" not in got
        assert got["population_size"] == pytest.approx(direct["population_size"], rel=1e-12)
        for key in ("k_map", "journalist_max", "marketer", "prosecutor_max"):
            assert got["k_map"][key] == pytest.approx(direct["k_map"][key], rel=1e-12), key
        assert got["k_map"]["k_map_violations"] == direct["k_map"]["k_map_violations"]
    after = released.metrics["survey_risk"]["after"]["population"]["k_map"]
    before = released.metrics["survey_risk"]["before"]["population"]["k_map"]
    assert after["journalist_max"] == pytest.approx(1.0 / after["k_map"], rel=1e-12)
    assert after["k_map"] >= before["k_map"]  # merging classes only grows them
    assert after["prosecutor_max"] <= 1 / 5  # a 5-anonymous file


def test_population_risk_by_hand_on_a_small_weighted_file():
    """Hand-worked: two classes of published keys, weights summing to Fk = 30 and 70."""
    import pandas as pd

    from microagg._pipeline.request import Request
    from microagg._pipeline.survey_risk_step import survey_risk_figures

    df = pd.DataFrame({"a": [1, 1, 1, 2, 2, 2], "w": [10.0, 10.0, 10.0, 20.0, 25.0, 25.0]})
    request = Request.build(df, quasi_identifiers=["a"], k=3, weights="w")
    got = survey_risk_figures(df, request)["after"]["population"]["k_map"]
    assert got["k_map"] == 30.0
    assert got["journalist_max"] == pytest.approx(1 / 30)
    assert got["marketer"] == pytest.approx((3 / 30 + 3 / 70) / 6)


def test_no_weight_no_population_risk(survey):
    release = anonymize(survey, quasi_identifiers=QI, k=5, identifiers=[*DROP, "weight"],
                        households="household_id", random_state=0)
    assert "population" not in release.metrics["survey_risk"]["after"]


def test_loglinear_risk_is_the_main_effects_model_on_each_table(survey, released):
    """With a weight, each side's ``population["loglinear"]`` is :func:`loglinear_risk` of
    that table (main effects); masking merges classes, so the published file has no more
    sample uniques than the original."""
    from microagg.metrics.loglinear_risk import loglinear_risk

    for side, table in (("before", survey), ("after", released.data)):
        got = released.metrics["survey_risk"][side]["population"]["loglinear"]
        direct = loglinear_risk(table, QI, weights="weight").summary()
        for key in ("tau1", "tau2", "sample_uniques", "n_cells"):
            assert got[key] == pytest.approx(direct[key], rel=1e-12), (side, key)
        assert 0.0 <= got["tau1"] <= got["tau2"] <= got["sample_uniques"]
    before = released.metrics["survey_risk"]["before"]["population"]["loglinear"]
    after = released.metrics["survey_risk"]["after"]["population"]["loglinear"]
    assert after["sample_uniques"] <= before["sample_uniques"]


def test_loglinear_risk_skips_a_key_table_too_large_for_a_release():
    import numpy as np
    import pandas as pd

    from microagg._pipeline.request import Request
    from microagg._pipeline.survey_risk_step import LOGLINEAR_MAX_CELLS, survey_risk_figures

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": np.arange(300) % 150, "b": rng.normal(size=300),
                       "w": np.full(300, 10.0)})  # 150 x 300 cells
    request = Request.build(df, quasi_identifiers=["a", "b"], k=3, weights="w")
    got = survey_risk_figures(df, request)["before"]["population"]["loglinear"]
    assert got == {"skipped": f"the key table has 45,000 cells; the log-linear model is "
                              f"fitted to 2 to {LOGLINEAR_MAX_CELLS:,} (microagg risk "
                              "--loglinear fits larger ones)"}
