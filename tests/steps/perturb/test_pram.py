"""PRAM: the matrix construction against hand-worked values, the documented properties over
200 seeds (transition frequencies within binomial bounds, invariance of the marginals in
expectation), per stratum, and the verifier catching corrupted outputs.

Every statistical bound below is Bonferroni at a total false-alarm rate of 1e-6 over all
the checks of its test, with fixed seeds: a correct implementation fails with probability
below 1e-6, and the outcome is the same on every run.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microagg.steps.perturb import Pram, apply_pram, verify_pram
from microagg.steps.perturb.pram import pram_matrix

SEEDS = 200
FALSE_ALARM = 1e-6


def _table(n_per_stratum=(360, 180, 60)):
    """Two strata; three categories with frequencies 360/180/60 in stratum 'a' and reversed
    in 'b'; two missing cells."""
    a = ["x"] * n_per_stratum[0] + ["y"] * n_per_stratum[1] + ["z"] * n_per_stratum[2]
    values = a + a[::-1]
    strata = ["a"] * len(a) + ["b"] * len(a)
    table = pd.DataFrame({"c": pd.Series(values, dtype=object), "s": strata})
    table.loc[[5, 700], "c"] = None
    return table


def test_invariant_matrix_by_hand():
    # P for L = 2, pd = 0.8 fixed: [[.8, .2], [.2, .8]]; counts (3, 1).
    # s = (3 * .8 + .2, 3 * .2 + .8) = (2.6, 1.4); Q = [[2.4, .2] / 2.6, [.6, .8] / 1.4];
    # R = P Q: R00 = .8 * 2.4 / 2.6 + .2 * .6 / 1.4 = 0.8241758...,
    #          R01 = .8 * .2 / 2.6 + .2 * .8 / 1.4 = 0.1758241...,
    #          R10 = .2 * 2.4 / 2.6 + .8 * .6 / 1.4 = 0.5274725...,
    #          R11 = .2 * .2 / 2.6 + .8 * .8 / 1.4 = 0.4725274...
    P = np.array([[0.8, 0.2], [0.2, 0.8]])
    R = pram_matrix(P, np.array([3.0, 1.0]), alpha=1.0, invariant=True)
    expected = np.array([[0.8 * 2.4 / 2.6 + 0.2 * 0.6 / 1.4, 0.8 * 0.2 / 2.6 + 0.2 * 0.8 / 1.4],
                         [0.2 * 2.4 / 2.6 + 0.8 * 0.6 / 1.4, 0.2 * 0.2 / 2.6 + 0.8 * 0.8 / 1.4]])
    np.testing.assert_allclose(R, expected, rtol=1e-12)
    np.testing.assert_allclose(np.array([3.0, 1.0]) @ R, [3.0, 1.0], rtol=1e-12)
    half = pram_matrix(P, np.array([3.0, 1.0]), alpha=0.5, invariant=True)
    np.testing.assert_allclose(half, 0.5 * expected + 0.5 * np.eye(2), rtol=1e-12)
    assert expected[1, 1] < 0.8  # sdcMicro's issue 347: pd bounds P, not the applied matrix


def test_table_shape_missing_and_dtype_are_kept():
    table = _table()
    table["k"] = table["c"].astype("category")
    out, details = apply_pram(table, Pram("c,k"), np.random.default_rng(0), strata="s")
    assert out.index.equals(table.index) and list(out.columns) == list(table.columns)
    assert out["c"].isna().sum() == 2 and out.loc[[5, 700], "c"].isna().all()
    assert isinstance(out["k"].dtype, pd.CategoricalDtype)
    assert out["s"].equals(table["s"])
    entry = details["columns"]["c"]
    assert entry["categories"] == ["x", "y", "z"] and set(entry["matrices"]) == {"a", "b"}
    assert entry["missing"] == 2
    assert entry["records_changed"] == int((out["c"] != table["c"])[table["c"].notna()].sum())
    again, _ = apply_pram(table, Pram("c,k"), np.random.default_rng(0), strata="s")
    assert again.equals(out)


def _pooled(table, options, strata):
    """Transition counts per stratum pooled over the seeds, the per-seed verdicts, and the
    matrices (fixed: the diagonal is not random)."""
    codes = {"x": 0, "y": 1, "z": 2}
    before = table["c"].map(codes).to_numpy()
    stratum = (table["s"] == "b").to_numpy().astype(int)
    pooled = np.zeros((2, 3, 3))
    holds = []
    for seed in range(SEEDS):
        out, details = apply_pram(table, options, np.random.default_rng(seed), strata=strata)
        after = out["c"].map(codes).to_numpy()
        ok = ~np.isnan(before)
        np.add.at(pooled, (stratum[ok], before[ok].astype(int), after[ok].astype(int)), 1)
        holds.append(verify_pram(options, table, out, strata=strata,
                                 details=details)["holds"])
    matrices = [np.array(details["columns"]["c"]["matrices"][s]) for s in ("a", "b")]
    return pooled, holds, matrices


def test_transition_frequencies_and_invariance_over_200_seeds():
    table = _table()
    options = Pram("c", pd=0.7, alpha=0.8, random_diagonal=False)
    pooled, holds, matrices = _pooled(table, options, "s")
    assert all(holds)
    checks = 2 * 9 + 2 * 3
    level = FALSE_ALARM / checks
    for s in range(2):
        trials = pooled[s].sum(axis=1, keepdims=True)
        M = matrices[s]
        low = stats.binom.ppf(level / 2, trials, M)
        high = stats.binom.isf(level / 2, trials, M)
        assert ((pooled[s] >= low) & (pooled[s] <= high)).all()
        # invariance: the expected published counts equal the original ones
        original = trials[:, 0]
        np.testing.assert_allclose(original @ M, original, rtol=1e-12)
        variance = (trials * M * (1 - M)).sum(axis=0)
        z = np.abs(pooled[s].sum(axis=0) - original) / np.sqrt(variance)
        assert (z <= stats.norm.isf(level / 2)).all()


def test_without_invariance_the_marginals_drift_and_the_test_sees_it():
    # The power of the invariance check: plain P moves mass from x (60 %) to the rare z,
    # by 360 * 0.15 - 60 * 0.3 ... per stratum: far beyond the bound over 200 seeds.
    table = _table()
    options = Pram("c", pd=0.7, invariant=False, random_diagonal=False)
    pooled, holds, matrices = _pooled(table, options, "s")
    assert all(holds)  # the verifier checks the non-invariant matrix it was given
    trials = pooled[0].sum(axis=1)
    variance = (trials[:, None] * matrices[0] * (1 - matrices[0])).sum(axis=0)
    z = np.abs(pooled[0].sum(axis=0) - trials) / np.sqrt(variance)
    assert z.max() > stats.norm.isf(FALSE_ALARM / 2) * 10


def test_random_diagonal_follows_sdcmicro():
    table = _table()
    _, details = apply_pram(table, Pram("c", pd=0.6), np.random.default_rng(3))
    P = np.array(details["columns"]["c"]["base_matrix"])
    diagonal = np.diag(P)
    assert ((diagonal >= 0.6) & (diagonal <= 1)).all() and len(set(diagonal)) == 3
    off = P[~np.eye(3, dtype=bool)].reshape(3, 2)
    np.testing.assert_allclose(off, np.repeat(((1 - diagonal) / 2)[:, None], 2, axis=1))


def test_user_matrix_and_forbidden_transition_is_caught():
    table = _table()
    matrix = {"c": {"x": {"x": 0.9, "y": 0.1}, "y": {"x": 0.1, "y": 0.9}, "z": {"z": 1}}}
    options = Pram("c", matrix=matrix, invariant=False)
    out, details = apply_pram(table, options, np.random.default_rng(1))
    assert (out["c"][table["c"] == "z"] == "z").all()
    assert verify_pram(options, table, out)["holds"]  # re-derived: nothing random in it
    broken = out.copy()
    broken.loc[broken.index[table["c"] == "z"][:1], "c"] = "x"
    report = verify_pram(options, table, broken, details=details)
    assert not report["holds"] and report["columns"]["c"]["forbidden_transitions"] == 1


def test_verifier_catches_a_biased_output():
    table = _table()
    options = Pram("c", pd=0.8, random_diagonal=False)
    out, details = apply_pram(table, options, np.random.default_rng(2), strata="s")
    assert verify_pram(options, table, out, strata="s", details=details)["holds"]
    broken = out.copy()
    rows = broken.index[(out["c"] == "x") & (table["s"] == "a")][:100]
    broken.loc[rows, "c"] = "z"  # 100 extra x -> z transitions
    report = verify_pram(options, table, broken, strata="s", details=details)
    assert not report["holds"]
    assert report["columns"]["c"]["min_transition_p_value"] < 1e-12
    moved = out.copy()
    moved.loc[5, "c"] = "x"  # a missing cell filled in
    assert not verify_pram(options, table, moved, strata="s")["holds"]


def test_bad_columns_are_refused_before_anything_changes():
    table = pd.DataFrame({"age": [1.0, 2.0, 3.0], "c": ["a", "b", "a"]})
    with pytest.raises(TypeError, match=r"column 'age' has dtype float64"):
        apply_pram(table, Pram("c,age"), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"column\(s\) \['nope'\] that are not in the table"):
        apply_pram(table, Pram("nope"), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"for column 'c' has no row for category \['b'\]"):
        apply_pram(table, Pram("c", matrix={"c": {"a": {"a": 1}}}), np.random.default_rng(0))
