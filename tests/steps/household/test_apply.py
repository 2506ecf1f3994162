"""The household step: the weight treated once per household (microaggregated within
strata against a brute-force optimum, or rounded), the loss in weighted totals, the
household-level columns made consistent, and the verifier catching corrupted outputs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import SchemaError
from microagg.steps.household import (
    Household,
    apply_household,
    microaggregate_weight,
    relinking,
    verify_household,
)

RNG = np.random.default_rng(0)
ROLES = {"households": "hid", "weights": "weight", "strata": "region"}


def _partitions(items: list[int], k: int):
    """Every partition of ``items`` into groups of at least ``k``."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for size in range(k - 1, len(rest) + 1):
        for mates in itertools.combinations(rest, size):
            left = [i for i in rest if i not in mates]
            for tail in _partitions(left, k):
                yield [[first, *mates], *tail]


def test_microaggregated_weights_are_the_brute_force_optimum() -> None:
    w = np.array([3.0, 11.0, 4.0, 30.0, 12.0, 29.0, 5.5])
    best = min(_partitions(list(range(w.size)), 2),
               key=lambda p: sum(((w[g] - w[g].mean()) ** 2).sum() for g in p))
    expected = np.empty_like(w)
    for group in best:
        expected[group] = w[group].mean()
    got = microaggregate_weight(pd.Series(w), pd.Series(np.ones(w.size)), None, 2, column="w")
    np.testing.assert_allclose(got.to_numpy(), expected)


def test_the_group_weight_keeps_the_weighted_count_of_persons() -> None:
    w, n = pd.Series([10.0, 20.0, 100.0, 110.0]), pd.Series([1, 3, 2, 2])
    got = microaggregate_weight(w, n, None, 2, column="w")
    assert got.tolist() == [17.5, 17.5, 105.0, 105.0]  # (10 + 60) / 4, (200 + 220) / 4
    assert (got * n).sum() == (w * n).sum()


def test_microaggregation_within_strata(households: pd.DataFrame) -> None:
    out, details = apply_household(households, Household(k=3), RNG, **ROLES)
    assert out.index.equals(households.index)
    pd.testing.assert_frame_equal(out.drop(columns="weight"), households.drop(columns="weight"))
    sharing = out.groupby(["region", "weight"])["hid"].nunique()
    assert sharing.min() >= 3  # every published weight: >= 3 households of its stratum
    assert relinking(out, "hid", "weight").households_identified == 0
    assert details["relinking"]["weight"]["before"]["share"] == 1.0
    assert details["relinking"]["weight"]["after"]["share"] == 0.0
    loss = details["weight"]["loss"]
    for stratum in loss["strata"]:
        rows = households["region"] == stratum["stratum"]
        assert stratum["count"]["before"] == pytest.approx(households.loc[rows, "weight"].sum())
        assert abs(stratum["count"]["relative_change"]) < 1e-12  # kept by construction
    assert details["household_level_columns"] == ["weight", "region", "size"]
    assert verify_household(Household(k=3), households, out, **ROLES)["holds"]


def test_rounding_reports_the_loss_in_weighted_totals(households: pd.DataFrame) -> None:
    step = Household(weight="round", precision="10", total="income")
    out, details = apply_household(households, step, RNG, **ROLES)
    expected = np.round(households["weight"] / 10) * 10
    np.testing.assert_array_equal(out["weight"].to_numpy(), expected.to_numpy())
    overall = details["weight"]["loss"]["overall"]
    assert overall["count"]["after"] == pytest.approx(expected.sum())
    before = (households["weight"] * households["income"]).sum()
    after = (expected * households["income"]).sum()
    assert overall["total"]["relative_change"] == pytest.approx((after - before) / before)
    assert verify_household(step, households, out, **ROLES)["holds"]


def test_round_writes_no_float_noise() -> None:
    table = pd.DataFrame({"hid": [1, 2], "weight": [589.55399, 0.349]})
    out, _ = apply_household(table, Household(weight="round", precision=0.1), RNG,
                             households="hid", weights="weight")
    assert [repr(w) for w in out["weight"]] == ["589.6", "0.3"]


def test_a_value_suppressed_for_one_member_is_suppressed_for_all(households: pd.DataFrame
                                                                 ) -> None:
    table = households.copy()
    big = table.loc[table["size"] == 4, "hid"].iloc[0]
    table.loc[table.index[table["hid"] == big][0], "region"] = None
    step = Household(household_columns="region,size", weight="keep")
    out, details = apply_household(table, step, RNG, households="hid", weights="weight")
    assert out.loc[out["hid"] == big, "region"].isna().all()
    assert details["cells_made_missing"] == {"region": 3}
    assert out["region"].isna().sum() == 4
    assert verify_household(step, table, out, households="hid", weights="weight")["holds"]


def test_two_values_within_a_household_are_refused(households: pd.DataFrame) -> None:
    table = households.copy()
    big = table.loc[table["size"] == 4, "hid"].iloc[0]
    table.loc[table.index[table["hid"] == big][0], "region"] = "west"
    with pytest.raises(SchemaError, match=rf"'region' .* varies within 1 of the 300 households "
                                          rf"\(e\.g\. household {big}\)"):
        apply_household(table, Household("region"), RNG, households="hid")


def test_a_stratum_smaller_than_k_is_refused_before_anything_changes() -> None:
    table = pd.DataFrame({"hid": [1, 2, 3, 4], "region": ["a", "a", "a", "b"],
                          "weight": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(SchemaError, match=r"k = 3 households per group in stratum 'b': it has "
                                          r"1 household\(s\) \(allowed: at least 3\)"):
        apply_household(table, Household(k=3), RNG, households="hid", weights="weight",
                        strata="region")
    assert table["weight"].tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("corrupt", ["one_member", "unique_weight", "count"])
def test_the_verifier_catches_a_corrupted_output(households: pd.DataFrame, corrupt: str
                                                 ) -> None:
    out, _ = apply_household(households, Household(k=3), RNG, **ROLES)
    bad = out.copy()
    big = bad.loc[bad["size"] >= 2, "hid"].iloc[0]
    rows = bad.index[bad["hid"] == big]
    if corrupt == "one_member":  # housemates disagree
        bad.loc[rows[0], "weight"] += 1.0
    elif corrupt == "unique_weight":  # the household's weight is its own again
        bad.loc[rows, "weight"] = 12345.678
    else:  # every weight scaled: shared as before, but the weighted counts lost
        bad["weight"] *= 1.01
    verdict = verify_household(Household(k=3), households, bad, **ROLES)
    assert not verdict["holds"]
    if corrupt == "one_member":
        assert verdict["inconsistent"]["weight"] == 1
    elif corrupt == "unique_weight":
        assert verdict["weight"]["fewest_households_per_weight"] == 1
        assert verdict["relinking"]["weight"]["households_identified"] == 1
    else:
        assert verdict["weight"]["largest_stratum_count_change"] == pytest.approx(0.01)


def test_the_verifier_catches_a_rounded_weight_off_the_grid(households: pd.DataFrame) -> None:
    step = Household(weight="round", precision=5)
    out, _ = apply_household(households, step, RNG, **ROLES)
    bad = out.copy()
    bad.loc[bad["hid"] == bad["hid"].iloc[0], "weight"] += 2.5
    verdict = verify_household(step, households, bad, **ROLES)
    assert not verdict["holds"] and verdict["weight"]["off_grid"] >= 1


@pytest.mark.parametrize(("options", "message"), [
    ({"weight": "shuffle"}, r"'weight' option .* one of microaggregate, round, keep"),
    ({"k": "1"}, r"'k' option .* int in \[2, inf\]. Got 1"),
    ({"weight": "round"}, r"needs the 'precision' option"),
    ({"weight": "round", "precision": "-1"}, r"'precision' .* number in \(0, inf\)"),
])
def test_options_are_checked(options: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        Household(**options)


def test_options_from_text() -> None:
    step = Household(household_columns="region, size", k="5", precision="0.5", weight="round")
    assert (step.columns, step.k, step.precision) == (("region", "size"), 5, 0.5)
    assert hash(step) == hash(Household(("region", "size"), "round", 5, 0.5))
