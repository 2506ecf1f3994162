"""Utility by analysis: weighted estimates with linearised standard errors, regression
coefficients with Karr et al.'s interval overlap, pMSE and classification accuracy, each
against a hand-worked value or a brute-force computation written here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microagg.metrics.analysis_estimates import Design, linearised
from microagg.metrics.analysis_learning import pmse
from microagg.metrics.analysis_models import ci_overlap, fit_linear, parse_formula
from microagg.metrics.analysis_utility import Analyses, utility_by_analysis


def _brute_variance(z, psu, strata=None):
    """The with-replacement variance of a total written as loops: PSU totals, then per
    stratum m/(m-1) times the squared deviations from the stratum's mean PSU total."""
    strata = np.zeros(len(z), dtype=int) if strata is None else strata
    total = 0.0
    for h in sorted(set(strata)):
        units = sorted({p for p, s in zip(psu, strata, strict=True) if s == h})
        sums = [sum(zi for zi, p in zip(z, psu, strict=True) if p == u) for u in units]
        m = len(sums)
        if m > 1:
            mean = sum(sums) / m
            total += m / (m - 1) * sum((t - mean) ** 2 for t in sums)
    return total


def test_mean_se_with_equal_weights_is_s_over_root_n():
    # hand-worked: y = 1, 2, 3, 4, 10 (mean 4, s^2 = (9+4+1+0+36)/4 = 12.5, s/sqrt(5))
    y = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    mean, se = linearised(y, Design(np.ones(5), np.arange(5)), np.ones(5))
    assert mean == pytest.approx(4.0)
    assert se == pytest.approx(math.sqrt(12.5 / 5))


def test_total_ratio_and_strata_match_brute_force():
    rng = np.random.default_rng(3)
    n = 40
    y, x = rng.gamma(2.0, 3.0, n), rng.uniform(1, 4, n)
    w = rng.uniform(1, 9, n)
    psu = np.repeat(np.arange(n // 4), 4)  # households of four
    strata = (np.arange(n // 4) % 3)[psu]
    d = Design(w, psu, strata.astype(np.intp))
    total, se = linearised(y, d)
    assert total == pytest.approx(float(sum(w * y)))
    assert se ** 2 == pytest.approx(_brute_variance(list(w * y), list(psu), list(strata)))
    ratio, se_ratio = linearised(y, d, x)
    r = sum(w * y) / sum(w * x)
    assert ratio == pytest.approx(r)
    z = [wi * (yi - r * xi) / sum(w * x) for wi, yi, xi in zip(w, y, x, strict=True)]
    assert se_ratio ** 2 == pytest.approx(_brute_variance(z, list(psu), list(strata)))


def _survey(n=600, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(10, 2, n), "region": rng.choice(["n", "s", "e"], n),
                       "w": rng.uniform(1, 5, n), "hh": np.repeat(np.arange(n // 3), 3)})
    df["y"] = 3 + 2 * df["x"] + (df["region"] == "s") * 4 + rng.normal(0, 1, n)
    df["sex"] = rng.choice(["f", "m"], n)
    return df


def test_domain_estimates_and_tables_against_subsets():
    df = _survey()
    rel = df.assign(x=df["x"] + 0.5)  # every released x is 0.5 higher
    out = utility_by_analysis(df, rel, Analyses(columns=("x",), tables=("sex",), by="region",
                                                pmse=False), weights="w", households="hh")
    found = {(e["statistic"], e["column"], e["level"]): e for e in out["estimates"]}
    south = df[df["region"] == "s"]
    mean_s = found[("mean", "x", "s")]
    assert mean_s["original"] == pytest.approx(np.average(south["x"], weights=south["w"]))
    assert mean_s["released"] == pytest.approx(mean_s["original"] + 0.5)
    assert mean_s["relative_difference"] == pytest.approx(0.5 / mean_s["original"])
    # a domain mean's linearised variable is 0 outside the domain (Sarndal et al. 10.3)
    ind = (df["region"] == "s").to_numpy()
    z = np.where(ind, df["w"] * (df["x"] - mean_s["original"]), 0.0) / south["w"].sum()
    assert mean_s["se"] ** 2 == pytest.approx(_brute_variance(list(z), list(df["hh"])))
    lo, hi = mean_s["ci"]
    assert hi - lo == pytest.approx(2 * 1.959964 * mean_s["se"], rel=1e-6)
    assert mean_s["inside_ci"] == (lo <= mean_s["released"] <= hi)
    count = found[("count", "sex = f", "s")]
    assert count["original"] == pytest.approx(south.loc[south["sex"] == "f", "w"].sum())
    assert count["released"] == count["original"] and count["inside_ci"]
    total = found[("total", "x", None)]
    assert total["original"] == pytest.approx(float((df["w"] * df["x"]).sum()))
    assert out["estimates_summary"]["n_estimates"] == len(out["estimates"])
    assert "households as primary sampling units" in out["variance"]


def test_ols_hand_worked_example():
    # x = 0..3, y = 1, 3, 2, 5: slope Sxy / Sxx = 5.5 / 5 = 1.1, intercept 2.75 - 1.65 = 1.1,
    # RSS = 0.01 + 0.64 + 1.69 + 0.36 = 2.7, s^2 = 1.35, se(slope) = sqrt(1.35 / 5)
    X = np.column_stack([np.ones(4), np.arange(4.0)])
    beta, se = fit_linear(X, np.array([1.0, 3.0, 2.0, 5.0]))
    assert beta == pytest.approx([1.1, 1.1])
    assert se[1] == pytest.approx(math.sqrt(1.35 / 5))
    assert se[0] == pytest.approx(math.sqrt(1.35 * (1 / 4 + 1.5 ** 2 / 5)))


def test_weighted_fit_matches_lstsq_and_sandwich_by_loops():
    rng = np.random.default_rng(5)
    n = 30
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    y = 1 + 2 * X[:, 1] + rng.normal(size=n)
    w = rng.uniform(1, 3, n)
    psu = np.repeat(np.arange(10), 3)
    beta, se = fit_linear(X, y, w, psu)
    ref = np.linalg.lstsq(X * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    assert beta == pytest.approx(ref)
    e = y - X @ ref
    a_inv = np.linalg.inv(X.T @ np.diag(w) @ X)
    scores = [sum(w[i] * e[i] * X[i] for i in range(n) if psu[i] == u) for u in range(10)]
    centred = [s - np.mean(scores, axis=0) for s in scores]
    meat = 10 / 9 * sum(np.outer(c, c) for c in centred)
    assert se == pytest.approx(np.sqrt(np.diag(a_inv @ meat @ a_inv)))


def test_ci_overlap_hand_worked():
    assert ci_overlap((0.0, 2.0), (1.0, 5.0)) == pytest.approx(0.5 * (1 / 2 + 1 / 4))
    assert ci_overlap((0.0, 1.0), (2.0, 3.0)) == pytest.approx(-1.0)  # disjoint, 1 width away
    assert ci_overlap((0.0, 1.0), (0.0, 1.0)) == 1.0


def test_regression_overlap_properties():
    df = _survey()
    same = utility_by_analysis(df, df, Analyses(models=("y ~ x + region",), pmse=False),
                               weights="w", households="hh")["models"]["y ~ x + region"]
    assert [c["overlap"] for c in same["coefficients"]] == pytest.approx([1.0] * 4)
    noise = df.assign(y=np.random.default_rng(9).normal(df["y"].mean(), df["y"].std(),
                                                        len(df)))
    moved = utility_by_analysis(df, noise, Analyses(models=("y ~ x + C(region)",),
                                                    pmse=False))["models"]
    slope = next(c for c in moved["y ~ x + C(region)"]["coefficients"] if c["term"] == "x")
    assert slope["original"] == pytest.approx(2.0, abs=0.1)
    assert slope["overlap"] < 0.0  # independent noise: the intervals do not even meet
    terms = [c["term"] for c in moved["y ~ x + C(region)"]["coefficients"]]
    assert terms == ["(intercept)", "x", "region[n]", "region[s]"]  # "e" the reference


def test_pmse_zero_for_identical_and_high_for_shift():
    df = _survey()
    assert utility_by_analysis(df, df, random_state=0)["pmse"]["pmse"] == pytest.approx(
        0.0, abs=1e-12)
    shifted = df.assign(x=df["x"] + 2 * df["x"].std())
    out = utility_by_analysis(df, shifted, random_state=0)["pmse"]
    assert out["pmse"] > 0.05 and out["ratio"] > 100


def test_pmse_binary_feature_matches_cell_shares():
    # one binary column: the unpenalised logistic model is saturated, p = the released share
    # of each value's rows (counted here)
    a = np.array([1.0] * 30 + [0.0] * 70)[:, None]
    b = np.array([1.0] * 60 + [0.0] * 40)[:, None]
    p1, p0 = 60 / 90, 40 / 110
    expected = (90 * (p1 - 0.5) ** 2 + 110 * (p0 - 0.5) ** 2) / 200
    got = pmse(a, b)
    assert got.pmse == pytest.approx(expected, rel=1e-4)
    assert got.null == pytest.approx(1 * 0.25 * 0.5 / 200)


def test_pmse_ratio_near_one_for_same_distribution():
    # the ratio is about chi2(k - 1) / (k - 1); k - 1 = 4 here: the 0.1 % tail is above 4.6
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=(2000, 4)), rng.normal(size=(2000, 4))
    assert pmse(a, b).ratio < 4.6


def test_classification_accuracy_properties():
    df = _survey()
    df["high"] = np.where(df["y"] > df["y"].median(), "yes", "no")
    a = Analyses(target="high", features=("x", "region"), pmse=False)
    same = utility_by_analysis(df, df, a, random_state=1)["classification"]
    assert same["released"] == same["original"] > 0.8
    shuffled = df.assign(high=np.random.default_rng(2).permutation(df["high"].to_numpy()))
    out = utility_by_analysis(df, shuffled, a, random_state=1)["classification"]
    assert out["original"] == same["original"]  # same split, same model on the original
    assert out["released"] < 0.65 < out["original"]
    assert out["n_test"] == 180 and out["n_train"] == 420


@pytest.mark.parametrize(("analyses", "kwargs", "match"), [
    (Analyses(models=("y ~ x + nope",)), {}, r"'model'.*'nope'.*available"),
    (Analyses(target="const"), {}, r"'target'.*'const'.*1 distinct.*allowed: 2 to 50"),
    (Analyses(columns=("x",), by="many"), {}, r"'by'.*'many'.*60 distinct.*1 to 50"),
    (Analyses(columns=("nope",)), {}, r"'columns'.*'nope'.*available"),
    (Analyses(columns=("region",)), {}, r"'columns'.*'region'.*numeric"),
    (Analyses(), {"weights": "bad_w"}, r"'bad_w'.*\(0, inf\).*1 missing, 1 negative"),
])
def test_bad_input_names_parameter_value_and_range(analyses, kwargs, match):
    df = _survey(120).assign(const="a", many=np.arange(120) % 60)
    df["bad_w"] = df["w"]
    df.loc[0, "bad_w"], df.loc[1, "bad_w"] = np.nan, -1.0
    with pytest.raises(ValueError, match=match):
        utility_by_analysis(df, df, analyses, **kwargs)


def test_formula_parse_refuses_malformed():
    with pytest.raises(ValueError, match="one '~'"):
        parse_formula("y = x", ["y", "x"])
    with pytest.raises(ValueError, match="empty or unreadable term"):
        parse_formula("y ~ x +", ["y", "x"])


def test_logistic_fit_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    from microagg.metrics.analysis_learning import logistic_fit

    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 3))
    y = (rng.uniform(size=500) < 1 / (1 + np.exp(-(0.5 + X @ [1.0, -2.0, 0.3])))).astype(float)
    ours = logistic_fit(X, y)
    theirs = LogisticRegression(C=np.inf, max_iter=1000, tol=1e-10).fit(X, y)
    assert ours == pytest.approx(theirs.predict_proba(X)[:, 1], abs=1e-5)


def test_a_level_the_release_lacks_gets_no_coefficient():
    df = _survey()
    rel = df.assign(region=df["region"].replace({"s": "n"}))  # "s" recoded away
    out = utility_by_analysis(df, rel, Analyses(models=("y ~ x + region",), pmse=False))
    south = next(c for c in out["models"]["y ~ x + region"]["coefficients"]
                 if c["term"] == "region[s]")
    assert math.isnan(south["released"]) and math.isnan(south["overlap"])
    assert not math.isnan(out["models"]["y ~ x + region"]["mean_overlap"])
