"""Top and bottom coding (``topcode``) and robust multivariate top coding
(``mvtopcode``): hand-worked codes, sdcMicro's algorithm recomputed independently, bad input
refused, and the verifiers catching a corrupted output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import mahalanobis
from scipy.stats import chi2
from sklearn.covariance import MinCovDet

from microagg.exceptions import SchemaError
from microagg.steps.recode.options import MultivariateTopCode, TopCode
from microagg.steps.recode.topcode import MCD_SEED, apply_mvtopcode, apply_topcode
from microagg.steps.recode.verify import verify_mvtopcode, verify_topcode

RNG = np.random.default_rng(0)
TEN = pd.DataFrame({"x": [*np.arange(1.0, 11.0), np.nan], "s": list("abcdefghijk")})


def test_a_top_quantile_hand_worked() -> None:
    options = TopCode("x", top_quantile=0.9)
    out, details = apply_topcode(TEN, options, RNG)
    # R: quantile(1:10, 0.9) = 9.1 (type 7); only 10 lies above it
    assert details["top"] == pytest.approx(9.1)
    assert out["x"].tolist()[:10] == [*np.arange(1.0, 10.0), pytest.approx(9.1)]
    assert np.isnan(out["x"].iloc[10])
    assert details["records_changed"] == 1 and details["top_coded"] == 1
    assert details["share_changed"] == pytest.approx(0.1) and details["missing"] == 1
    assert verify_topcode(options, TEN, out)["holds"]


def test_codes_and_the_mean_replacement_hand_worked() -> None:
    out, details = apply_topcode(TEN, TopCode("x", top=7, bottom=3), RNG)
    assert out["x"].tolist()[:10] == [3, 3, 3, 4, 5, 6, 7, 7, 7, 7]
    assert details["records_changed"] == 5  # 1, 2 up to 3; 8, 9, 10 down to 7
    options = TopCode("x", top=7, bottom=3, replacement="mean")
    out, details = apply_topcode(TEN, options, RNG)
    assert out["x"].tolist()[:10] == [1.5, 1.5, 3, 4, 5, 6, 7, 9, 9, 9]
    assert (details["top_replacement"], details["bottom_replacement"]) == (9.0, 1.5)
    assert verify_topcode(options, TEN, out)["holds"]


def test_bad_codes_and_columns_are_refused_before_anything_changes() -> None:
    with pytest.raises(SchemaError, match=r"top code of column 'x' \(2\) is below its bottom "
                                          r"code \(5.5\)"):
        apply_topcode(TEN, TopCode("x", top=2, bottom_quantile=0.5), RNG)
    with pytest.raises(SchemaError, match=r"needs a numeric column; column 's'"):
        apply_topcode(TEN, TopCode("s", top=2), RNG)
    infinite = TEN.assign(x=[np.inf, *TEN["x"].iloc[1:]])
    with pytest.raises(SchemaError, match=r"column 'x' has 1 infinite value"):
        apply_topcode(infinite, TopCode("x", top=2), RNG)


def test_the_topcode_verifier_catches_a_corrupted_output() -> None:
    options = TopCode("x", top=7, bottom=3)
    out, _ = apply_topcode(TEN, options, RNG)
    above = out.copy()
    above.loc[9, "x"] = 10.0  # a value left above the top code
    assert verify_topcode(options, TEN, above)["violations"] == 1
    moved = out.copy()
    moved.loc[4, "x"] = 4.5  # an uncoded value changed
    assert not verify_topcode(options, TEN, moved)["holds"]
    mean = TopCode("x", top=7, replacement="mean")
    out, _ = apply_topcode(TEN, mean, RNG)
    out.loc[7, "x"] = 8.0  # not the mean (9) of the values coded
    assert verify_topcode(mean, TEN, out)["violations"] == 1


def sample(n: int = 200, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.multivariate_normal([5.0, 5.0, 2.0], [[1, 0.9, 0.2], [0.9, 1, 0.1],
                                                  [0.2, 0.1, 1]], size=n)
    x[0] = [3.0, 6.0, 2.0]  # off the correlation, as sdcMicro's example plants it
    x[1] = [15.0, 15.0, 9.0]
    return pd.DataFrame(x, columns=["a", "b", "c"])


def test_mvtopcode_matches_an_independent_computation_of_sdcmicros_algorithm() -> None:
    table = sample()
    options = MultivariateTopCode("a,b,c")
    out, details = apply_mvtopcode(table, options, RNG)
    x = table.to_numpy()
    mcd = MinCovDet(random_state=MCD_SEED).fit(x)
    inverse = np.linalg.inv(mcd.covariance_)
    d = chi2.ppf(0.975, 3)  # sdcMicro: qchisq(1 - alpha, df = p)
    expected = x.copy()
    for i, row in enumerate(x):
        distance = mahalanobis(row, mcd.location_, inverse) ** 2
        if distance > d:  # x * a + (1 - a) * centre, a = sqrt(d / maha)
            a = np.sqrt(d / distance)
            expected[i] = row * a + (1 - a) * mcd.location_
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    changed = int((expected != x).any(axis=1).sum())
    assert details["records_changed"] == changed >= 2
    assert (out.iloc[0] != table.iloc[0]).all() and (out.iloc[1] != table.iloc[1]).all()
    assert details["boundary"] == pytest.approx(d)
    check = verify_mvtopcode(options, table, out)
    assert check["holds"] and check["largest_distance"] == pytest.approx(d)


def test_mvtopcode_leaves_incomplete_records_and_other_columns_alone() -> None:
    table = sample().assign(label=list("xy") * 100)
    table.loc[1, "c"] = np.nan  # the far record, now incomplete
    out, details = apply_mvtopcode(table, MultivariateTopCode(["a", "b", "c"]), RNG)
    assert out.loc[1, ["a", "b"]].tolist() == [15.0, 15.0]
    assert details["records_incomplete"] == 1
    assert out["label"].equals(table["label"])
    assert verify_mvtopcode(MultivariateTopCode(["a", "b", "c"]), table, out)["holds"]


def test_mvtopcode_refuses_a_constant_column_and_too_few_records() -> None:
    table = sample().assign(c=1.0)
    with pytest.raises(SchemaError, match=r"robust covariance of columns \['a', 'b', 'c'\] is "
                                          r"singular"):
        apply_mvtopcode(table, MultivariateTopCode("a,b,c"), RNG)
    with pytest.raises(SchemaError, match=r"needs more complete records than columns plus one "
                                          r"\(4\); there are 3"):
        apply_mvtopcode(sample().head(3), MultivariateTopCode("a,b,c"), RNG)


def test_the_mvtopcode_verifier_catches_a_corrupted_output() -> None:
    table = sample()
    options = MultivariateTopCode("a,b,c")
    out, _ = apply_mvtopcode(table, options, RNG)
    left = out.copy()
    left.iloc[1] = table.iloc[1]  # the far record published as it was
    assert not verify_mvtopcode(options, table, left)["holds"]
    nudged = out.copy()
    nudged.iloc[5, 0] += 0.01  # a record inside the ellipsoid changed
    assert verify_mvtopcode(options, table, nudged)["violations"] == 1
    sideways = out.copy()
    sideways.iloc[0, 2] -= 0.05  # on no ray from the centre
    assert not verify_mvtopcode(options, table, sideways)["holds"]
