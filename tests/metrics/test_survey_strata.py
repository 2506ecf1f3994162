"""The strata of the survey risk (sdcMicro's ``strataVar``): fk and Fk counted within each
stratum, and every risk from them, pinned against a hand-computed table and against
sdcMicro's eusilc figures with the stratum as one more key."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg.datasets import load_dataset
from microagg.exceptions import SchemaError
from microagg.metrics.survey_risk import frequencies, survey_risk


def _toy() -> pd.DataFrame:
    return pd.DataFrame({"sex": list("fffmmm"), "region": ["n", "n", "s", "s", "s", "n"],
                         "w": [10.0, 20.0, 30.0, 40.0, 10.0, 50.0], "h": [1, 1, 2, 2, 3, 3]})


def _risk_fk1(F: float) -> float:  # p/(1-p) log(1/p), p = 1/F
    p = 1.0 / F
    return p / (1 - p) * math.log(1 / p)


def _risk_fk2(F: float) -> float:  # p/(1-p) - (p/(1-p))^2 log(1/p), p = 2/F
    p = 2.0 / F
    odds = p / (1 - p)
    return odds - odds**2 * math.log(1 / p)


def test_frequencies_and_risks_are_counted_within_each_stratum() -> None:
    res = survey_risk(_toy(), ["sex"], weights="w", households="h", strata="region")
    # by hand: (f, n) rows 0, 1: fk 2, Fk 30; (f, s) row 2: 1, 30; (m, s) rows 3, 4: 2, 50;
    # (m, n) row 5: 1, 50. Without strata every record would have fk = 3.
    assert res.fk.tolist() == [2, 2, 1, 2, 2, 1]
    assert res.Fk.tolist() == [30.0, 30.0, 30.0, 50.0, 50.0, 50.0]
    risk = [_risk_fk2(30), _risk_fk2(30), _risk_fk1(30), _risk_fk2(50), _risk_fk2(50),
            _risk_fk1(50)]
    assert res.risk == pytest.approx(risk, rel=1e-12)
    s = res.summary()
    assert s["strata"] == "region"
    assert s["expected_reidentifications"] == pytest.approx(sum(risk), rel=1e-12)
    assert s["global_risk"] == pytest.approx(sum(risk) / 6, rel=1e-12)
    assert s["k_anonymity_violations"] == {"2": 2, "3": 6, "5": 6}
    households = [1 - (1 - risk[0]) * (1 - risk[1]), 1 - (1 - risk[2]) * (1 - risk[3]),
                  1 - (1 - risk[4]) * (1 - risk[5])]
    assert s["expected_household_reidentifications"] == pytest.approx(
        2 * sum(households), rel=1e-12)
    plain = survey_risk(_toy(), ["sex"], weights="w").summary()
    assert "strata" not in plain and plain["k_anonymity_violations"]["2"] == 0


def test_missing_keys_match_within_their_stratum_only() -> None:
    df = pd.DataFrame({"a": ["x", "x", None, "y", None, "x"], "b": [1, 2, 1, 1, None, 2],
                       "st": ["p", "p", "p", "q", "q", "q"]})
    fk, _ = frequencies(df, ["a", "b"], strata="st")
    # by hand, within p: (x,1) matches (None,1); (x,2) alone; (None,1) matches (x,1).
    # within q: (y,1) matches (None,None)? two keys, complete records do not count an
    # all-missing one (freqCalc); (None,None) counts its whole stratum: 3; (x,2) alone.
    assert fk.tolist() == [2, 1, 2, 1, 3, 1]
    for stratum, rows in df.groupby("st").groups.items():  # same as each stratum alone
        alone, _ = frequencies(df.loc[rows].reset_index(drop=True), ["a", "b"])
        assert fk[np.asarray(rows)].tolist() == alone.tolist(), stratum


def test_eusilc_region_as_strata_equals_sdcmicro_with_region_as_a_key() -> None:
    """sdcMicro 5.8.1's measure_risk figures for keys db040, hsize, rb090, pb220a, pl030
    (tests/metrics/test_survey_risk.py): with db040 (the region, never missing) as the
    strata and the four others as keys, the counts on keys + stratum are the same."""
    data = load_dataset("eusilc").data
    s = survey_risk(data, ["hsize", "rb090", "pb220a", "pl030"], weights="rb050",
                    households="db030", strata="db040", missing="category").summary()
    assert s["global_risk"] == pytest.approx(0.0003871598, abs=5e-11)
    assert s["expected_reidentifications"] == pytest.approx(5.740419, abs=5e-7)
    assert s["household_risk"] == pytest.approx(0.0015277506, abs=5e-11)
    assert s["k_anonymity_violations"] == {"2": 301, "3": 679, "5": 1328}


def test_bad_strata_name_the_column_and_the_rows() -> None:
    gaps = _toy().astype({"region": object})
    gaps.loc[[1, 4], "region"] = None
    with pytest.raises(SchemaError, match=r"Strata column 'region' of survey_risk is missing "
                                          r"on 2 of 6 rows \(first rows: 1, 4\)"):
        survey_risk(gaps, ["sex"], strata="region")
    with pytest.raises(SchemaError, match=r"'sex' of survey_risk is also a key variable"):
        survey_risk(_toy(), ["sex"], strata="sex")
    with pytest.raises(SchemaError, match=r"Unknown column 'zone' in the 'strata' parameter"):
        survey_risk(_toy(), ["sex"], strata="zone")
