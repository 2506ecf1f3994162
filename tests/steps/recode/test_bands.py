"""The ``band`` step: hand-worked bands, an independent per-value loop on random data, R's
``cut`` conventions stated, bad input refused, and its verifier catching corruption."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.steps.recode.bands import apply_band
from microagg.steps.recode.options import Band
from microagg.steps.recode.verify import verify_band

RNG = np.random.default_rng(0)
AGES = pd.DataFrame({"age": [0.0, 17.0, 18.0, 64.5, 65.0, 120.0, np.nan],
                     "sex": list("mfmfmfm")})


def test_left_closed_bands_hand_worked() -> None:
    out, details = apply_band(AGES, Band("age", breaks=[0, 18, 65, 120]), RNG)
    assert out["age"].tolist()[:6] == ["[0, 18)", "[0, 18)", "[18, 65)", "[18, 65)",
                                       "[65, 120]", "[65, 120]"]
    assert pd.isna(out["age"].iloc[6])
    assert [b["count"] for b in details["bands"]] == [2, 2, 2]
    assert details["records_changed"] == 6 and details["missing"] == 1
    assert verify_band(Band("age", breaks=[0, 18, 65, 120]), AGES, out)["holds"]


def test_right_closed_bands_follow_r_cut_with_the_lowest_break_included() -> None:
    # R: cut(c(0,17,18,64.5,65,120), c(0,18,65,120), include.lowest=TRUE) gives
    # [0,18] [0,18] [0,18] (18,65] (18,65] (65,120]
    options = Band("age", breaks=[0, 18, 65, 120], closed="right", labels=["a", "b", "c"])
    out, _ = apply_band(AGES, options, RNG)
    assert out["age"].tolist()[:6] == ["a", "a", "a", "b", "b", "c"]
    assert verify_band(options, AGES, out)["holds"]


def test_equal_width_and_quantile_bands() -> None:
    values = pd.DataFrame({"x": np.arange(1.0, 11.0)})
    out, details = apply_band(values, Band("x", method="equal_width", bands=3), RNG)
    assert details["breaks"] == [1.0, 4.0, 7.0, 10.0]
    assert [b["count"] for b in details["bands"]] == [3, 3, 4]  # 10 falls in the last band
    assert out["x"].iloc[3] == "[4, 7)"
    out, details = apply_band(values, Band("x", method="quantiles", bands=2), RNG)
    assert details["breaks"] == [1.0, 5.5, 10.0]  # R: quantile(1:10, c(0, .5, 1))
    assert out["x"].tolist() == ["[1, 5.5)"] * 5 + ["[5.5, 10]"] * 5
    tied = pd.DataFrame({"x": [1.0] * 8 + [2.0, 3.0]})
    _, details = apply_band(tied, Band("x", method="quantiles", bands=4), RNG)
    # R: quantile(c(rep(1, 8), 2, 3)) is 1 1 1 1 3: the tied quantiles merge four bands
    assert details["breaks"] == [1.0, 3.0]
    assert details["bands"] == [{"label": "[1, 3]", "lower": 1.0, "upper": 3.0, "count": 10}]


def test_random_values_match_a_per_value_loop() -> None:
    rng = np.random.default_rng(7)
    values = np.round(rng.uniform(0, 100, 500), 0)
    values[rng.choice(500, 20, replace=False)] = np.nan
    breaks = [0, 10, 25, 25.5, 60, 100]
    for closed in ("left", "right"):
        options = Band("v", breaks=breaks, closed=closed)
        out, _ = apply_band(pd.DataFrame({"v": values}), options, rng)
        for value, label in zip(values, out["v"], strict=True):
            if np.isnan(value):
                assert label is None or pd.isna(label)
                continue
            hits = [i for i in range(5)
                    if (breaks[i] <= value < breaks[i + 1] if closed == "left"
                        else breaks[i] < value <= breaks[i + 1])
                    or (closed == "left" and i == 4 and value == 100)
                    or (closed == "right" and i == 0 and value == 0)]
            assert len(hits) == 1
            low, high = (str(breaks[hits[0]]).removesuffix(".0"),
                         str(breaks[hits[0] + 1]).removesuffix(".0"))
            assert label.strip("[]()") == f"{low}, {high}"


def test_values_outside_all_bands_are_counted_and_refused() -> None:
    with pytest.raises(SchemaError, match=r"3 value\(s\) of column 'age' lie outside all bands "
                                          r"\(from 64.5 to 120\); the bands cover \[0, 60\]"):
        apply_band(AGES, Band("age", breaks=[0, 18, 60]), RNG)


def test_banding_a_text_column_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"needs a numeric column; column 'sex' is "
                                          r"(object|str) \(e.g. 'm'\)"):
        apply_band(AGES, Band("sex", breaks=[0, 1]), RNG)


def test_quantile_labels_must_match_the_bands_found() -> None:
    tied = pd.DataFrame({"x": [1.0] * 8 + [2.0, 3.0]})
    with pytest.raises(SchemaError, match=r"1 band\(s\) at its quantiles \[1.0, 3.0\] .* 'labels' gives 4"):
        apply_band(tied, Band("x", method="quantiles", bands=4, labels="a,b,c,d"), RNG)


def test_the_verifier_catches_a_corrupted_output() -> None:
    options = Band("age", breaks=[0, 18, 65, 120])
    out, _ = apply_band(AGES, options, RNG)
    wrong = out.copy()
    wrong.loc[2, "age"] = "[0, 18)"  # 18 is in [18, 65), not [0, 18)
    check = verify_band(options, AGES, wrong)
    assert not check["holds"] and check["violations"] == 1
    unknown = out.copy()
    unknown.loc[0, "age"] = "[0, 20)"
    assert verify_band(options, AGES, unknown)["outside_domain"] == 1
    filled = out.copy()
    filled.loc[6, "age"] = "[0, 18)"  # a missing value published as a band
    assert not verify_band(options, AGES, filled)["holds"]
