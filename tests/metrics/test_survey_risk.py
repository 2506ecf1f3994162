"""Tests of the survey disclosure risk (issue 19, part 1): frequencies, individual, global and
household risk, k-anonymity counts, against sdcMicro 5.8.1's figures on laeken's eusilc."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from microagg.datasets import load_dataset
from microagg.exceptions import ContinuousKeyWarning, SchemaError, SurveyWeightWarning
from microagg.metrics.survey_risk import (
    SurveyRisk,
    frequencies,
    household_risk,
    individual_risk,
    survey_risk,
)

KEYS5 = ["db040", "hsize", "rb090", "pb220a", "pl030"]
KEYS3 = ["db040", "age", "rb090"]


@pytest.fixture(scope="module")
def eusilc() -> pd.DataFrame:
    return load_dataset("eusilc").data


@pytest.fixture(scope="module")
def five_keys(eusilc: pd.DataFrame) -> SurveyRisk:
    # The sdcMicro 5.8.1 figures for these keys are reproduced, to every printed digit,
    # when the missing pl030 / pb220a of the children form a category of their own (as they
    # do in R when pb220a's empty fields are read as the string ""): with sdcMicro's wildcard
    # rule on NA, record 3 (a child) would count all 125 Tyrol/3/male records, not 25 (see
    # test_missing_any_on_eusilc_counts_every_compatible_record).
    return survey_risk(eusilc, KEYS5, weights="rb050", households="db030", threshold=0.01,
                       missing="category")


# --------------------------------------------------------------------------- sdcMicro figures


def test_eusilc_five_keys_global_risk(five_keys: SurveyRisk) -> None:
    s = five_keys.summary()
    # issue 19, sdcMicro 5.8.1 measure_risk(eusilc, keys, w="rb050", hid="db030"):
    assert s["global_risk"] == pytest.approx(0.0003871598, abs=5e-11)
    assert s["global_risk_pct"] == pytest.approx(0.038716, abs=5e-7)
    assert s["expected_reidentifications"] == pytest.approx(5.740419, abs=5e-7)
    assert float(five_keys.risk.sum()) == pytest.approx(5.74041856, abs=5e-9)
    assert s["max_risk"] == pytest.approx(0.01647208, abs=5e-9)
    assert s["n_above_threshold"] == 263  # sdcMicro: 263 records above 0.01
    assert s["share_above_threshold"] == pytest.approx(263 / 14827)
    assert int((five_keys.risk > 0.05).sum()) == 0  # sdcMicro: none above 0.05


def test_eusilc_five_keys_household_risk(five_keys: SurveyRisk) -> None:
    s = five_keys.summary()
    # issue 19, sdcMicro 5.8.1 hier_risk and hier_risk_ER:
    assert s["household_risk"] == pytest.approx(0.0015277506, abs=5e-11)
    assert s["expected_household_reidentifications"] == pytest.approx(22.651958, abs=5e-7)
    # sdcMicro gives each member its household's risk: constant within a household
    hh = load_dataset("eusilc").data["db030"].to_numpy()
    assert five_keys.household_risk is not None
    spread = pd.Series(five_keys.household_risk).groupby(hh).nunique()
    assert (spread == 1).all()


def test_eusilc_five_keys_first_rows(five_keys: SurveyRisk) -> None:
    # issue 19, sdcMicro 5.8.1 measure_risk(...)$Res[1:5, ] (risk, fk, Fk):
    expected = [(0.00008257, 25, 12614.241), (0.00196128, 2, 1009.139),
                (0.00008257, 25, 12614.241), (0.00006333, 33, 16281.618),
                (0.00002330, 88, 43417.647)]
    for i, (risk, fk, Fk) in enumerate(expected):
        assert five_keys.risk[i] == pytest.approx(risk, abs=5e-9)
        assert five_keys.fk[i] == fk
        assert five_keys.Fk[i] == pytest.approx(Fk, abs=5e-4)


def test_eusilc_five_keys_k_anonymity(five_keys: SurveyRisk) -> None:
    # issue 19, sdcMicro 5.8.1: fk < 2: 301, fk < 3: 679, fk < 5: 1,328
    assert five_keys.summary()["k_anonymity_violations"] == {"2": 301, "3": 679, "5": 1328}


def test_eusilc_three_keys_no_household(eusilc: pd.DataFrame) -> None:
    # db040, age, rb090 have no missing value: the default rule applies as in sdcMicro.
    res = survey_risk(eusilc, KEYS3, weights="rb050", threshold=0.01)
    s = res.summary()
    # issue 19, sdcMicro 5.8.1 measure_risk(eusilc, c("db040", "age", "rb090"), w="rb050"):
    assert s["global_risk"] == pytest.approx(0.0003099799, abs=5e-11)
    assert s["expected_reidentifications"] == pytest.approx(4.596072, abs=5e-7)
    assert s["n_above_threshold"] == 99
    assert s["k_anonymity_violations"] == {"2": 113, "3": 319, "5": 1168}
    assert "household_risk" not in s and res.household_risk is None


# --------------------------------------------------------------------------- missing values


def test_missing_any_matches_sdcmicro_method1() -> None:
    # sdcMicro tests/testthat/test_freqCalc.R, "method 1": a missing status counts for
    # every status, so the singles and the married count it (2 + 1) and it counts all 5.
    df = pd.DataFrame({"region": ["A"] * 5,
                       "status": ["single", "married", "married", "single", None],
                       "agegroup": ["5"] * 5})
    fk, Fk = frequencies(df, ["region", "status", "agegroup"])
    assert fk.tolist() == [3, 3, 3, 3, 5]
    assert Fk.tolist() == [3.0, 3.0, 3.0, 3.0, 5.0]  # no weights: Fk = fk
    fk, _ = frequencies(df, ["region", "status", "agegroup"], missing="category")
    assert fk.tolist() == [2, 2, 2, 2, 1]


def test_missing_any_all_missing_keys_rule() -> None:
    # Derived by hand from sdcMicro's freqCalc (alpha = 1), two keys:
    # (a, x) twice: 2 exact + (a, NA) matches on key 1 = 3; the all-missing record is not
    # counted for complete keys. (a, NA): 2 complete + itself + the all-missing one = 4.
    # (NA, NA): fk = n = 4, Fk = total weight.
    df = pd.DataFrame({"k1": ["a", "a", None, "a"], "k2": ["x", "x", None, None],
                       "w": [1.0, 2.0, 4.0, 8.0]})
    fk, Fk = frequencies(df, ["k1", "k2"], weights="w")
    assert fk.tolist() == [3, 3, 4, 4]
    assert Fk.tolist() == [11.0, 11.0, 15.0, 15.0]
    # one key: every record counts the missing ones (freqCalc's one-key branch)
    fk, Fk = frequencies(df, ["k1"], weights="w")
    assert fk.tolist() == [4, 4, 4, 4]
    assert Fk.tolist() == [15.0, 15.0, 15.0, 15.0]


def test_missing_any_on_eusilc_counts_every_compatible_record(eusilc: pd.DataFrame) -> None:
    fk, Fk = frequencies(eusilc, KEYS5, weights="rb050")
    # record 3 is a child (pb220a, pl030 missing): it matches every Tyrol / 3 / male record
    same = ((eusilc["db040"] == "Tyrol") & (eusilc["hsize"] == 3)
            & (eusilc["rb090"] == "male")).to_numpy()
    assert fk[2] == same.sum() == 125
    assert Fk[2] == pytest.approx(eusilc["rb050"].to_numpy()[same].sum())
    # record 1 (complete) also counts the Tyrol / 3 / female children
    child = ((eusilc["db040"] == "Tyrol") & (eusilc["hsize"] == 3)
             & (eusilc["rb090"] == "female") & eusilc["pl030"].isna()).to_numpy()
    exact = (eusilc[KEYS5] == eusilc.loc[0, KEYS5]).all(axis=1).to_numpy()
    assert fk[0] == exact.sum() + child.sum()


# --------------------------------------------------------------------------- formulas


def test_individual_risk_formulas_by_hand() -> None:
    # fk = 1, Fk = 10: p = 0.1, p/(1-p) log(1/p) = log(10) / 9
    # fk = 2, Fk = 10: p = 0.2, 0.25 - 0.0625 log 5
    # fk = 5, Fk = 50: p = 0.1, 0.1 / (5 - 0.9)
    # fk = Fk = 4: a population, 1/4
    risk = individual_risk([1, 2, 5, 4], [10.0, 10.0, 50.0, 4.0])
    assert risk[0] == pytest.approx(math.log(10) / 9, rel=1e-14)
    assert risk[1] == pytest.approx(0.25 - 0.0625 * math.log(5), rel=1e-14)
    assert risk[2] == pytest.approx(0.1 / 4.1, rel=1e-14)
    assert risk[3] == 0.25


def test_individual_risk_refuses_bad_counts() -> None:
    with pytest.raises(ValueError, match="same length"):
        individual_risk([1, 2], [3.0])
    with pytest.raises(ValueError, match=r"fk must hold finite counts >= 1: 1 of 2"):
        individual_risk([0, 2], [3.0, 4.0])


def test_unweighted_risk_is_one_over_fk() -> None:
    df = pd.DataFrame({"a": ["x", "x", "y", "z", "z", "z"]})
    res = survey_risk(df, ["a"])
    assert res.Fk.tolist() == res.fk.astype(float).tolist()
    np.testing.assert_allclose(res.risk, [0.5, 0.5, 1.0, 1 / 3, 1 / 3, 1 / 3])
    assert res.summary()["expected_reidentifications"] == pytest.approx(3.0)
    assert not res.weighted


def test_household_risk_by_hand() -> None:
    # household a: 1 - 0.5 * 0.5 = 0.75; b: 0.1
    assert household_risk([0.5, 0.5, 0.1], ["a", "a", "b"]).tolist() == [0.75, 0.75, 0.1]
    # a member with risk 1 makes the household certain (product path, no log of 0)
    np.testing.assert_allclose(household_risk([1.0, 0.2, 0.2], [7, 7, 3]), [1.0, 1.0, 0.2])
    with pytest.raises(ValueError, match="same length"):
        household_risk([0.1, 0.2], [1])


def test_summary_is_plain_json(five_keys: SurveyRisk) -> None:
    s = five_keys.summary()
    assert json.loads(json.dumps(s)) == s
    assert all(isinstance(v, (int, float, str, bool, list, dict)) for v in s.values())


def test_result_is_frozen_and_read_only(five_keys: SurveyRisk) -> None:
    with pytest.raises(AttributeError):
        five_keys.threshold = 0.5  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        five_keys.risk[0] = 1.0


def test_any_k_asked(eusilc: pd.DataFrame) -> None:
    res = survey_risk(eusilc, KEYS3, weights="rb050", ks=(7, 2))
    assert res.ks == (2, 7)
    assert res.summary()["k_anonymity_violations"]["7"] == int((res.fk < 7).sum())


# --------------------------------------------------------------------------- bad input


def _frame(**columns: object) -> pd.DataFrame:
    base: dict[str, object] = {"k": ["a", "b", "a", "b"], "w": [10.0, 10.0, 10.0, 10.0],
                               "h": [1, 1, 2, 2]}
    base.update(columns)
    return pd.DataFrame(base)


@pytest.mark.parametrize(("weights", "detail"), [
    ([10.0, np.nan, 10.0, np.nan], "2 of 4 rows do not (2 missing)"),
    ([10.0, 0.0, 10.0, 10.0], "1 of 4 rows do not (1 zero)"),
    ([10.0, -3.0, 10.0, 10.0], "1 of 4 rows do not (1 negative)"),
])
def test_bad_weights_name_column_count_and_range(weights: list[float], detail: str) -> None:
    with pytest.raises(SchemaError, match=r"Weight column 'w' .* \(allowed range \(0, inf\)\)") \
            as info:
        survey_risk(_frame(w=weights), ["k"], weights="w")
    assert detail in str(info.value)


def test_non_numeric_weights() -> None:
    with pytest.raises(SchemaError, match=r"Weight column 'w' .*must be numeric.*\(0, inf\).*"
                                          r"2 of 4 rows are not numbers"):
        survey_risk(_frame(w=["1", "x", "2", "y"]), ["k"], weights="w")


def test_unknown_weight_column() -> None:
    with pytest.raises(SchemaError, match=r"Unknown column 'nope'.*available: 'k', 'w', 'h'"):
        survey_risk(_frame(), ["k"], weights="nope")


def test_weights_below_sample_size_warn() -> None:
    with pytest.warns(SurveyWeightWarning, match=r"sum to 2, below the 4 records"):
        survey_risk(_frame(w=[0.5, 0.5, 0.5, 0.5]), ["k"], weights="w")


def test_missing_household_id() -> None:
    with pytest.raises(SchemaError, match=r"Household column 'h' .* missing on 1 of 4 rows"):
        survey_risk(_frame(h=[1, None, 2, 2]), ["k"], weights="w", households="h")


def test_continuous_key_warns() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"income": rng.normal(size=2000), "sex": ["f", "m"] * 1000})
    with pytest.warns(ContinuousKeyWarning, match=r"'income' .* 2000 distinct .* Group it"):
        survey_risk(df, ["income", "sex"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a small numeric key (age) is a key variable
        survey_risk(load_dataset("eusilc").data, KEYS3)


@pytest.mark.parametrize("threshold", [0, 0.0, -0.1, 1.5, float("nan")])
def test_threshold_outside_unit_interval(threshold: float) -> None:
    with pytest.raises(ValueError, match=r"'threshold' parameter of survey_risk must be a "
                                         r"float in \(0, 1\]"):
        survey_risk(_frame(), ["k"], threshold=threshold)


def test_threshold_type_and_one_is_allowed() -> None:
    with pytest.raises(TypeError, match=r"float in \(0, 1\]"):
        survey_risk(_frame(), ["k"], threshold="0.1")
    assert survey_risk(_frame(), ["k"], threshold=1).summary()["n_above_threshold"] == 0


@pytest.mark.parametrize(("keys", "error", "message"), [
    (["nope"], SchemaError, "unknown column.*'nope'.*Available: 'k', 'w', 'h'"),
    ([], SchemaError, "no key variable"),
    (["k", "k"], SchemaError, "a column named twice"),
    ("k", TypeError, "sequence of column names"),
])
def test_bad_keys(keys: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        survey_risk(_frame(), keys)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="'missing' parameter of survey_risk must be one of "
                                         "any, category"):
        survey_risk(_frame(), ["k"], missing="drop")
    with pytest.raises(ValueError, match=r"'ks' parameter .* ints >= 2. Got 1"):
        survey_risk(_frame(), ["k"], ks=(1, 3))
    with pytest.raises(ValueError, match="0 rows"):
        survey_risk(_frame().iloc[:0], ["k"])
    with pytest.raises(TypeError, match="pandas DataFrame"):
        survey_risk(np.zeros((3, 2)), ["k"])  # type: ignore[arg-type]
