"""Rank swapping against a plain reference implementation of Moore's rule, its window and
exact marginals; data shuffling's exact marginals and kept rank correlation; both verifiers
catching corrupted outputs."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from microagg.steps.perturb import (
    RankSwap,
    Shuffle,
    apply_rank_swap,
    apply_shuffle,
    verify_rank_swap,
    verify_shuffle,
)
from microagg.steps.perturb.swap import _swap_partners


def _reference_partners(n, window, u):
    """Moore's rule written plainly: up the ranks, swap with a uniform choice among the
    not-yet-swapped ranks in (i, i + window]."""
    partner = list(range(n))
    free = [True] * n
    for i in range(n):
        if not free[i]:
            continue
        free[i] = False
        candidates = [j for j in range(i + 1, min(n, i + window + 1)) if free[j]]
        if not candidates:
            continue
        j = candidates[min(int(u[i] * len(candidates)), len(candidates) - 1)]
        free[j] = False
        partner[i], partner[j] = j, i
    return partner


@pytest.mark.parametrize(("n", "window"), [(1, 0), (2, 1), (17, 3), (50, 7), (200, 200)])
def test_kernel_matches_the_reference(n, window):
    u = np.random.default_rng(n).random(n)
    assert _swap_partners(n, window, u).tolist() == _reference_partners(n, window, u)


def _table(n=800, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)  # ties
    income = np.exp(rng.normal(10, 0.6, n)) + 100 * age
    table = pd.DataFrame({"age": age, "income": income,
                          "region": rng.choice(["n", "s"], n)})
    table.loc[[0, 1], "income"] = np.nan
    return table


def test_rank_swap_keeps_marginals_and_window_per_stratum():
    table = _table()
    options = RankSwap("age,income", p=5)
    out, details = apply_rank_swap(table, options, np.random.default_rng(1), strata="region")
    for column in ("age", "income"):
        for region in ("n", "s"):
            rows = table["region"] == region
            assert np.array_equal(np.sort(table.loc[rows, column].dropna()),
                                  np.sort(out.loc[rows, column].dropna()))
    assert out.loc[[0, 1], "income"].isna().all()
    assert details["columns"]["income"]["share_changed"] > 0.5
    windows = details["columns"]["income"]["window"]
    assert windows == {r: int(5 * table[(table.region == r)]["income"].notna().sum() / 100)
                       for r in ("n", "s")}
    assert details["columns"]["income"]["max_rank_distance"] <= max(windows.values())
    assert verify_rank_swap(options, table, out, strata="region")["holds"]


def test_rank_swap_verifier_catches_a_far_swap_and_a_new_value():
    table = _table()
    options = RankSwap("income", p=2)
    out, _ = apply_rank_swap(table, options, np.random.default_rng(2))
    far = out.copy()
    low, high = table["income"].idxmin(), table["income"].idxmax()
    far.loc[low, "income"], far.loc[high, "income"] = (out.loc[high, "income"],
                                                       out.loc[low, "income"])
    report = verify_rank_swap(options, table, far)
    assert not report["holds"] and report["columns"]["income"]["marginal_kept"]
    new = out.copy()
    new.loc[5, "income"] += 0.5
    assert not verify_rank_swap(options, table, new)["columns"]["income"]["marginal_kept"]


def test_shuffle_keeps_marginals_and_rank_correlation_with_given():
    rng = np.random.default_rng(3)
    n = 2000
    age = rng.normal(45, 12, n)
    income = np.exp(9 + 0.03 * age + rng.normal(0, 0.3, n))
    table = pd.DataFrame({"age": age, "income": income})
    table.loc[7, "age"] = np.nan
    options = Shuffle("income", given="age")
    out, details = apply_shuffle(table, options, np.random.default_rng(4))
    assert np.array_equal(np.sort(out["income"]), np.sort(table["income"]))
    assert out["age"].equals(table["age"]) and out.loc[7, "income"] == table.loc[7, "income"]
    assert details["columns"]["income"]["share_changed"] > 0.9
    rows = table["age"].notna()
    before = stats.spearmanr(table["age"][rows], table["income"][rows])[0]
    after = stats.spearmanr(out["age"][rows], out["income"][rows])[0]
    # normal-copula shuffling keeps the rank correlation (0.7 here) within sampling error:
    # the SD of a Spearman coefficient at n = 2000 is below 0.02; 0.1 is 5 SDs
    assert before > 0.6 and abs(after - before) < 0.1
    report = verify_shuffle(options, table, out)
    assert report["holds"]
    broken = out.copy()
    broken.loc[9, "income"] = 1.0
    assert not verify_shuffle(options, table, broken)["holds"]
    moved = out.copy()
    moved.loc[9, "age"] += 1
    assert not verify_shuffle(options, table, moved)["holds"]
