"""Log-linear risk of the key table (sdcMicro's modRisk; Skinner & Holmes 1998, Skinner &
Shlomo 2008): sdcMicro's own test figures, the closed forms of the main-effects and the
(ab)(c) models, the paper's formulas written out record by record, and the properties the
measures must have."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg.metrics.loglinear_risk import (
    METHODS,
    fit_poisson,
    key_table,
    loglinear_risk,
    parse_formula,
)

# sdcMicro's tests/testthat/test_modRisks.R (sdcTools/sdcMicro, commit 8bddc76): the data
# made by set.seed(123); round(runif(10, 1, 3)), round(runif(10, 1, 2)), round(runif(10, 1, 5))
# and weights 100, written out here (R's first 30 uniform draws under seed 123).
SDC = pd.DataFrame({"Var1": [2, 3, 2, 3, 3, 1, 2, 3, 2, 2],
                    "Var2": [2, 1, 2, 2, 1, 2, 1, 1, 1, 2],
                    "Var3": [5, 4, 4, 5, 4, 4, 3, 3, 2, 2], "weights": 100.0})
SDC_KEYS = ["Var1", "Var2", "Var3"]


@pytest.mark.parametrize(("method", "risk1", "risk2"), [
    ("default", 0.553, 0.705), ("CE", 0.542, 0.699), ("PML", 0.553, 0.705),
    ("weightedLLM", 0.408, 0.613)])
def test_sdcmicro_test_figures(method, risk1, risk2):
    # expect_true(round(fr[1], 3) == ...) in test_modRisks.R, "bound = no" block
    s = loglinear_risk(SDC, SDC_KEYS, weights="weights", method=method).summary()
    assert round(s["sdcmicro_risk1"], 3) == risk1
    assert round(s["sdcmicro_risk2"], 3) == risk2
    assert s["n_cells"] == 24 and s["n_nonempty_cells"] == 9 and s["sample_uniques"] == 8


@pytest.mark.parametrize(("method", "fitted"), [
    ("default", [0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.2, 0.1, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 1.0,
                 0.5, 0.4, 0.4, 0.8, 0.4, 0.4, 0.4, 0.8, 0.4]),
    ("CE", [0.10, 0.10, 0.20, 0.10, 0.10, 0.10, 0.21, 0.10, 0.52, 0.52, 0.95, 0.47, 0.52, 0.47,
            1.03, 0.52, 0.39, 0.43, 0.85, 0.39, 0.38, 0.38, 0.76, 0.42]),
    ("weightedLLM", [0.03, 0.05, 0.01, 0.02, 0.06, 0.13, 0.63, 0.06, 0.53, 1.07, 0.01, 0.02,
                     1.34, 0.13, 0.65, 1.25, 0.01, 0.55, 2.68, 0.01, 0.03, 0.07, 0.02, 0.63])])
def test_sdcmicro_fitted_values(method, fitted):
    # round(fr[7], 2) in test_modRisks.R: the fitted values, cells in sdcMicro's order (the
    # keys' sorted levels, the last key fastest)
    r = loglinear_risk(SDC, SDC_KEYS, weights="weights", method=method)
    assert np.round(r.fitted, 2).tolist() == fitted


# A 2 x 3 key table with unequal weights, worked by hand.
SMALL = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "y", "y"],
                      "b": ["p", "q", "q", "p", "r", "q", "p"],
                      "w": [10.0, 4.0, 6.0, 20.0, 50.0, 5.0, 30.0]})


def test_main_effects_closed_form_and_paper_formulas():
    r = loglinear_risk(SMALL, ["a", "b"], weights="w")
    # main effects: mu_ij = row_i * col_j / n, rows x: 3, y: 4; columns p: 3, q: 3, r: 1
    rows, cols, n = {"x": 3, "y": 4}, {"p": 3, "q": 3, "r": 1}, 7
    expected = [rows[i] * cols[j] / n for i in "xy" for j in "pqr"]
    np.testing.assert_allclose(r.fitted, expected, rtol=1e-9)
    # sample uniques: (x, p) with w = 10, (y, q) with w = 5 and (y, r) with w = 50;
    # pi = 1 / w, lambda = mu w
    tau1 = tau2 = 0.0
    for mu, w in ((3 * 3 / 7, 10.0), (4 * 3 / 7, 5.0), (4 * 1 / 7, 50.0)):
        v = (1 - 1 / w) * mu * w  # (1 - pi) lambda
        tau1 += math.exp(-v)
        tau2 += (1 - math.exp(-v)) / v
    s = r.summary()
    assert s["sample_uniques"] == 3
    assert s["tau1"] == pytest.approx(tau1, rel=1e-9)
    assert s["tau2"] == pytest.approx(tau2, rel=1e-9)
    assert s["population_size"] == 125.0


def test_interaction_closed_form():
    # the model (ab)(c): mu_ijk = f_ij. * f_..k / n (Bishop, Fienberg & Holland 1975, 3.4)
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.integers(0, 2, 200),
                       "c": rng.integers(0, 4, 200)})
    r = loglinear_risk(df, ["a", "b", "c"], population_size=2000.0, formula="a*b + c")
    f = np.zeros((3, 2, 4))
    np.add.at(f, (df["a"], df["b"], df["c"]), 1.0)
    expected = f.sum(axis=2)[:, :, None] * f.sum(axis=(0, 1))[None, None, :] / 200
    np.testing.assert_allclose(r.fitted, expected.ravel(), rtol=1e-7)
    assert r.terms == (("a",), ("b",), ("c",), ("a", "b"))


def test_saturated_model_reproduces_the_counts():
    # a*b is saturated on a two-key table: the fit is the table itself, so with N = n (every
    # weight 1, a census) each sample unique is a population unique: tau1 = tau2 = uniques
    df = SMALL.assign(w=1.0)
    r = loglinear_risk(df, ["a", "b"], weights="w", formula="a*b")
    np.testing.assert_allclose(r.fitted, r.table.counts, atol=1e-6)
    s = r.summary()
    assert s["tau1"] == pytest.approx(3.0) and s["tau2"] == pytest.approx(3.0)


def test_properties_tau1_below_tau2_below_uniques_and_falling_with_the_weights():
    # exp(-v) <= (1 - exp(-v)) / v <= 1 for v >= 0 (e^v - 1 >= v), so
    # tau1 <= tau2 <= sample uniques; larger weights (a smaller fraction) give a larger
    # (1 - pi) lambda = mu (w - 1) for the same fitted mu, so tau1 falls; with every weight 1
    # (pi = 1) v = 0 and tau1 = tau2 = sample uniques
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": rng.integers(0, 4, 300), "b": rng.integers(0, 5, 300),
                       "c": rng.integers(0, 6, 300), "w": rng.uniform(1, 40, 300)})
    keys = ["a", "b", "c"]
    last = None
    for scale in (1.0, 2.0, 10.0):
        s = loglinear_risk(df.assign(w=df["w"] * scale), keys, weights="w").summary()
        assert 0.0 <= s["tau1"] <= s["tau2"] <= s["sample_uniques"]
        if last is not None:
            assert s["tau1"] < last
        last = s["tau1"]
    census = loglinear_risk(df.assign(w=1.0), keys, weights="w").summary()
    assert census["tau1"] == pytest.approx(census["sample_uniques"])
    assert census["tau2"] == pytest.approx(census["sample_uniques"])


def test_pml_equals_default_with_equal_weights_and_population_size_without_weights():
    # equal weights: the weighted counts scaled to n are the counts; without weights and with
    # N, every pi is n / N, the same as weights N / n
    a = loglinear_risk(SDC, SDC_KEYS, weights="weights").summary()
    b = loglinear_risk(SDC, SDC_KEYS, weights="weights", method="PML").summary()
    c = loglinear_risk(SDC.drop(columns="weights"), SDC_KEYS,
                       population_size=1000.0).summary()
    for key in ("tau1", "tau2", "sdcmicro_risk1"):
        assert a[key] == pytest.approx(b[key]) == pytest.approx(c[key])


def test_records_with_a_missing_key_are_left_out():
    df = SMALL.copy()
    df.loc[6, "b"] = None
    t = key_table(df, ["a", "b"], weights="w")
    assert t.n_records == 6 and t.counts.sum() == 6 and t.population_size == 95.0


def test_fit_poisson_matches_the_independence_closed_form_on_a_3_way_table():
    y = np.array([3, 0, 2, 5, 1, 4, 2, 2, 0, 1, 6, 3], dtype=float)
    grid = np.indices((2, 3, 2)).reshape(3, -1).T
    X = np.column_stack([np.ones(12)] + [(grid[:, j] == lv).astype(float)
                                         for j, size in enumerate((2, 3, 2))
                                         for lv in range(1, size)])
    mu, _, converged = fit_poisson(X, y)
    f = y.reshape(2, 3, 2)
    n = f.sum()
    expected = (f.sum(axis=(1, 2))[:, None, None] * f.sum(axis=(0, 2))[None, :, None]
                * f.sum(axis=(0, 1))[None, None, :] / n ** 2)
    assert converged
    np.testing.assert_allclose(mu, expected.ravel(), rtol=1e-8)


def test_parse_formula():
    keys = ("a", "b", "c")
    assert parse_formula(None, keys) == (("a",), ("b",), ("c",))
    assert parse_formula("a:b:c", keys)[-1] == ("a", "b", "c")
    assert len(parse_formula("a*b*c", keys)) == 7
    assert parse_formula("~ b*a + c", keys) == (("a",), ("b",), ("c",), ("a", "b"))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "CE", "population_size": 100.0}, r"method='CE'\) needs sampling weights"),
    ({}, r"needs sampling weights .*or give population_size"),
    ({"weights": "w", "method": "IPF"}, r"'method' parameter .* one of \['CE', 'PML'"),
    ({"weights": "w", "formula": "a*z"}, r"names 'z', which is not a key; the keys are"),
    ({"weights": "w", "formula": "a"}, r"must name every key; \['b'\]"),
    ({"weights": "w", "formula": "a + * b"}, r"terms joined by '\+'"),
    ({"population_size": 3.0}, r"'population_size' .* >= the number of records \(7\)"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        loglinear_risk(SMALL, ["a", "b"], **kwargs)


def test_weights_below_one_and_one_cell():
    with pytest.raises(ValueError, match=r"column 'w' must be finite and >= 1.*row 2 holds 0.5"):
        loglinear_risk(SMALL.assign(w=[2.0, 3.0, 0.5, 1.0, 1.0, 1.0, 1.0]), ["a"], weights="w")
    with pytest.raises(ValueError, match=r"has 1 cell; a model needs at least 2"):
        loglinear_risk(SMALL.assign(a="x"), ["a"], weights="w")
    with pytest.raises(KeyError, match="no column 'zz'"):
        loglinear_risk(SMALL, ["zz"], weights="w")


def test_every_method_is_documented_with_its_reference():
    for entry in METHODS.values():
        assert entry.reference and entry.assumption
