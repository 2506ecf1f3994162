"""The suppression steps through their public cores: options, semantics, combs, strata,
households, bad input, details and the verifiers catching a corrupted output."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from microagg.steps.suppress import (
    SuppressRisk,
    SuppressToK,
    apply_suppress,
    apply_suppress_risk,
    verify_suppress,
    verify_suppress_risk,
)
from microagg.steps.suppress.counts import encode

from ._brute import sizes

RNG = np.random.default_rng(0)


def _table(n: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice(["N", "S", "E", "W"], n),
        "sex": rng.choice(["f", "m"], n),
        "edu": rng.choice(["low", "mid", "high"], n),
        "age": rng.choice([f"a{i}" for i in range(6)], n).astype(object),
        "home": np.arange(n) // 3,
        "w": rng.uniform(50, 150, n)}, index=np.arange(100, 100 + n))


def test_options_parse_text_and_refuse_bad_values() -> None:
    o = SuppressToK("region,sex", k="3,2", combs="2,1", importance="sex,region")
    assert o.k == (3, 2) and o.combs == (2, 1) and o.importance == ("sex", "region")
    assert len(o.requirements) == 3 and o.columns == ("region", "sex")
    assert o.to_record() == {"step": "suppress", "keys": ["region", "sex"], "k": [3, 2],
                             "importance": ["sex", "region"], "combs": [2, 1]}
    with pytest.raises(ValueError, match=r"'importance'.*\['job'\]"):
        SuppressToK("region,sex", k=3, importance="job,region")
    with pytest.raises(ValueError, match=r"'k'.*ints >= 2. Got 1"):
        SuppressToK("region", k=1)
    with pytest.raises(ValueError, match=r"'combs'.*\[1, 2\]"):
        SuppressToK("region,sex", k=2, combs=3)
    with pytest.raises(ValueError, match=r"'threshold'.*\(0, 1\)"):
        SuppressRisk("region", threshold=1.5)


@pytest.mark.parametrize("missing", ["any", "category"])
@pytest.mark.parametrize("mode", ["heuristic", "exact"])
def test_k_holds_by_independent_recount_and_rows_kept(missing: str, mode: str) -> None:
    df = _table(36)
    o = SuppressToK(["region", "sex", "edu"], k=3, missing=missing, mode=mode,
                    time_limit=20)
    out, details = apply_suppress(df, o, RNG)
    assert out.index.equals(df.index) and list(out.columns) == list(df.columns)
    assert out[["home", "w"]].equals(df[["home", "w"]])
    codes = encode(out, o.keys)
    assert sizes(codes, missing).min() >= 3
    blanked = int((out[list(o.keys)].isna() & df[list(o.keys)].notna()).sum().sum())
    assert details["cells_suppressed"] == blanked
    assert sum(c["cells_suppressed"] for c in details["columns"].values()) == blanked
    assert verify_suppress(o, df, out)["holds"]


def test_exact_never_above_heuristic_and_certified() -> None:
    df = _table(40, seed=5)
    keys = ["region", "sex", "edu"]
    heuristic = apply_suppress(df, SuppressToK(keys, k=3), RNG)[1]
    exact = apply_suppress(df, SuppressToK(keys, k=3, mode="exact", time_limit=20), RNG)[1]
    assert exact["exact"]["optimal"]
    assert exact["cells_suppressed"] == exact["exact"]["lower_bound"]
    assert exact["cells_suppressed"] <= heuristic["cells_suppressed"]


def test_combs_recounted_on_every_subset() -> None:
    df = _table(48, seed=8)
    o = SuppressToK(["region", "sex", "edu", "age"], k=(2, 4), combs=(3, 2))
    out, _ = apply_suppress(df, o, RNG)
    codes = encode(out, o.keys)
    for size, k in ((3, 2), (2, 4)):
        for subset in combinations(range(4), size):
            assert sizes(codes[:, list(subset)], "any").min() >= k, subset
    report = verify_suppress(o, df, out)
    assert report["holds"] and len(report["subsets"]) == 4 + 6


def test_strata_are_anonymized_separately_and_k_above_a_stratum_refused() -> None:
    df = _table(60, seed=2)
    df["zone"] = np.where(np.arange(60) < 30, "A", "B")
    o = SuppressToK(["region", "sex", "edu"], k=3)
    out, _ = apply_suppress(df, o, RNG, strata="zone")
    for zone in ("A", "B"):
        part = out[out["zone"] == zone]
        assert sizes(encode(part, o.keys), "any").min() >= 3
    assert verify_suppress(o, df, out, strata="zone")["holds"]
    small = df.iloc[:32].copy()
    with pytest.raises(ValueError, match=r"k=3 is larger than stratum 'B' of 'zone'.*2 rec"):
        apply_suppress(small, o, RNG, strata="zone")


def test_household_key_blanked_for_every_member_and_varying_key_refused() -> None:
    df = _table(60, seed=4)
    df["region"] = df.groupby("home")["region"].transform("first")
    o = SuppressToK(["region", "sex", "edu"], k=3, household_keys="region")
    out, _ = apply_suppress(df, o, RNG, households="home")
    assert (out.groupby("home")["region"].nunique(dropna=False) == 1).all()
    assert verify_suppress(o, df, out, households="home")["holds"]
    bad = _table(60, seed=4)
    with pytest.raises(ValueError, match=r"'region'.*varies within \d+ household"):
        apply_suppress(bad, o, RNG, households="home")


def test_importance_order_protects_the_most_important_key() -> None:
    df = _table(40, seed=9)
    keys = ["region", "sex", "edu"]
    out, details = apply_suppress(df, SuppressToK(keys, k=3, importance="edu,sex,region"),
                                  RNG)
    cols = details["columns"]
    assert cols["edu"]["cells_suppressed"] <= cols["region"]["cells_suppressed"]
    assert sizes(encode(out, tuple(keys)), "any").min() >= 3


def test_verifier_catches_a_corrupted_output() -> None:
    df = _table(36)
    o = SuppressToK(["region", "sex", "edu"], k=3)
    out, _ = apply_suppress(df, o, RNG)
    broken = out.copy()
    broken.iloc[0, 0], broken.iloc[0, 1], broken.iloc[0, 2] = "Z", "f", "low"  # a unique
    report = verify_suppress(o, df, broken)
    assert not report["holds"]
    assert report["records_changed_otherwise"] == 1
    restored = df.copy()  # the original is not 3-anonymous on these keys
    assert not verify_suppress(o, df, restored)["holds"]


def test_missingness_association_reported_as_a_number() -> None:
    df = _table(60, seed=3)
    _, details = apply_suppress(df, SuppressToK(["region", "sex", "edu", "age"], k=3), RNG)
    for column in details["columns"].values():
        for stats in column["association"].values():
            assert 0.0 <= stats["p_value"] <= 1.0 and 0.0 <= stats["cramers_v"] <= 1.0


def test_risk_threshold_suppression_meets_threshold() -> None:
    df = _table(60, seed=6)
    o = SuppressRisk(["region", "sex", "edu", "age"], threshold=0.4)
    out, details = apply_suppress_risk(df, o, RNG)
    assert details["risk_before"]["above"] > 0 and details["risk_after"]["above"] == 0
    assert out.index.equals(df.index)
    report = verify_suppress_risk(o, df, out)
    assert report["holds"] and report["max_risk"] <= 0.4
    assert not verify_suppress_risk(o, df, df)["holds"]
