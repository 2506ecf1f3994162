"""Noise addition: the variance ratio (a share of the variance, not of the SD), the
correlated noise's covariance, ROMM's exact moments, multiplicative zeros, over 200 seeds for
additive noise, and the verifier catching corrupted outputs. Bounds: Bonferroni at 1e-6."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microagg.steps.perturb import Noise, apply_noise, verify_noise


def _table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(50, 10, n)
    b = 0.8 * a + rng.normal(0, 6, n)
    c = rng.lognormal(8, 0.5, n)
    table = pd.DataFrame({"a": a, "b": b, "c": c, "name": ["p"] * n})
    table.loc[3, "a"] = np.nan
    return table


def test_additive_noise_variance_share_over_200_seeds():
    table = _table()
    options = Noise("a,b", noise=0.25)
    sums = np.zeros(2)
    for seed in range(200):
        out, details = apply_noise(table, options, np.random.default_rng(seed))
        assert verify_noise(options, table, out)["holds"]
        sums += [details["columns"][c]["noise_variance_ratio"] for c in "ab"]
    # 200 x 1499 noise draws per column: the pooled ratio is 0.25 to within 1 % (the
    # chi-square bound at 1e-6 / 2 is 0.25 * (1 +- 0.0145)); an SD-share reading would give
    # 0.0625 or 0.5
    assert np.all(np.abs(sums / 200 - 0.25) < 0.25 * 0.0145)


def test_missing_stays_missing_and_other_columns_unchanged():
    table = _table()
    out, _ = apply_noise(table, Noise("a,b"), np.random.default_rng(1))
    assert np.isnan(out.loc[3, "a"]) and out["a"].isna().sum() == 1
    assert out["c"].equals(table["c"]) and out["name"].equals(table["name"])
    assert out.index.equals(table.index)


def test_correlated_noise_follows_the_data_covariance():
    table = _table()
    options = Noise("a,b", method="correlated", noise=0.5)
    out, _ = apply_noise(table, options, np.random.default_rng(2))
    report = verify_noise(options, table, out)
    assert report["holds"] and report["max_noise_correlation_z"] <= report["correlation_z_bound"]
    # data correlation 0.8: the noise's must be close to it, not 0
    rows = table[["a", "b"]].notna().all(axis=1)
    noise = (out[["a", "b"]] - table[["a", "b"]])[rows]
    assert abs(noise.corr().iloc[0, 1] - table[["a", "b"]][rows].corr().iloc[0, 1]) < 0.1
    # independent noise of the same size fails the correlated model
    independent, _ = apply_noise(table, Noise("a,b", noise=0.5), np.random.default_rng(2))
    assert not verify_noise(options, table, independent)["holds"]


def test_romm_keeps_means_and_covariance_exactly():
    table = _table()
    options = Noise("a,b,c", method="romm", noise=0.05, block_size=50)
    out, details = apply_noise(table, options, np.random.default_rng(3))
    complete = table[["a", "b", "c"]].notna().all(axis=1)
    np.testing.assert_allclose(out[complete][["a", "b", "c"]].cov(),
                               table[complete][["a", "b", "c"]].cov(), rtol=1e-10)
    np.testing.assert_allclose(out[complete][["a", "b", "c"]].mean(),
                               table[complete][["a", "b", "c"]].mean(), rtol=1e-12)
    assert out.loc[3, "b"] == table.loc[3, "b"]  # an incomplete row is left as it is
    ratios = [details["columns"][c]["noise_variance_ratio"] for c in "abc"]
    assert all(0.03 < r < 0.07 for r in ratios)  # first-order calibration to 0.05
    assert verify_noise(options, table, out)["holds"]
    broken = out.copy()
    broken.loc[10, "a"] += 1.0
    assert not verify_noise(options, table, broken)["holds"]


def test_multiplicative_keeps_zeros_and_checks_the_factor():
    table = _table()
    table.loc[:9, "c"] = 0.0
    options = Noise("c", method="multiplicative", noise=0.01)
    out, _ = apply_noise(table, options, np.random.default_rng(4))
    assert (out.loc[:9, "c"] == 0).all()
    factor = out["c"][10:] / table["c"][10:] - 1
    n = factor.size
    bound = stats.chi2.isf(1e-6 / 4, n - 1) / (n - 1)
    assert factor.var() / 0.01 < bound
    assert verify_noise(options, table, out)["holds"]


def test_verifier_catches_too_much_noise():
    table = _table()
    out, _ = apply_noise(table, Noise("a", noise=0.2), np.random.default_rng(5))
    report = verify_noise(Noise("a", noise=0.1), table, out)
    assert not report["holds"]
    assert report["columns"]["a"]["ratio_to_promised"] > report["columns"]["a"]["ratio_bounds"][1]


def test_bad_columns_are_refused():
    table = _table()
    table["k"] = 7.0
    with pytest.raises(TypeError, match=r"numeric column; column 'name' has dtype"):
        apply_noise(table, Noise("a,name"), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"column 'k': it is constant \(7.0 in all 1500"):
        apply_noise(table, Noise("a,k"), np.random.default_rng(0))
