"""Targeted record swapping of households (``swap_households``, after sdcMicro
``recordSwap``): a hand-worked swap whose only donor is forced, the counts at risk against a
brute-force count, the swap rate achieved over seeds, the verifier catching a household
split and a swap across profiles, each bad input refused before any step runs, and the same
random_state giving the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import microagg
from microagg.exceptions import SchemaError
from microagg.steps import STEPS, Plan, SwapHouseholds
from microagg.steps.record_swap import apply_record_swap, verify_record_swap

HIERARCHY = "region,district,mun"


def census(n_households: int, seed: int) -> pd.DataFrame:
    """Households of 1-6 persons in 4 regions > 5 districts each > 8 municipalities each
    (codes unique in the file), with age and sex per person."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 7, n_households)
    region = rng.integers(0, 4, n_households)
    district = region * 10 + rng.integers(0, 5, n_households)
    mun = district * 100 + rng.integers(0, 8, n_households)
    n = int(size.sum())
    return pd.DataFrame({
        "hid": np.repeat(np.arange(n_households), size),
        "region": np.repeat(region, size).astype(str).astype(object),
        "district": np.repeat(district, size).astype(np.float64),
        "mun": np.repeat(mun, size).astype(np.float64),
        "hsize": np.repeat(size, size).astype(np.float64),
        "age": (rng.integers(0, 90, n) // 30 * 30).astype(np.float64),
        "sex": rng.choice(["f", "m"], n).astype(object)})


def tiny() -> pd.DataFrame:
    """Region A: h1 (one woman), h3 and h4 (two men each); region B: h2 (one man), h5 (two
    women). On sex within regions, h1 (the only woman of A) and h2 (the only man of B) are
    below k = 2; each is the other's only donor of household size 1 in another region."""
    hid = ["h1", "h3", "h3", "h4", "h4", "h2", "h5", "h5"]
    region = ["A"] * 5 + ["B"] * 3
    sex = ["f", "m", "m", "m", "m", "m", "f", "f"]
    size = [1, 2, 2, 2, 2, 1, 2, 2]
    return pd.DataFrame({"hid": hid, "region": region, "mun": [r + "1" for r in region],
                         "hsize": np.asarray(size, dtype=np.float64), "sex": sex})


TINY = SwapHouseholds(hierarchy="region,mun", similar="hsize", risk_variables="sex", k=2,
                      swaprate=0.0)


def test_the_step_is_registered_per_household_and_randomized():
    entry = STEPS["swap_households"]
    assert entry.options is SwapHouseholds and entry.randomized and entry.per_household
    assert "recordSwap" in entry.reference and "differential privacy" in entry.promises
    assert SwapHouseholds(HIERARCHY, "hsize", "age,sex", carry_along="x").columns == (
        "region", "district", "mun", "x")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_only_donor_is_taken_and_the_risk_drops_to_zero(seed):
    table = tiny()
    published, details = apply_record_swap(table, TINY, np.random.default_rng(seed),
                                           households="hid")
    # hand-worked: h1 and h2 exchange region and municipality, nobody else moves
    assert published["region"].tolist() == ["B", "A", "A", "A", "A", "A", "B", "B"]
    assert published["mun"].tolist() == ["B1", "A1", "A1", "A1", "A1", "A1", "B1", "B1"]
    assert published[["hid", "hsize", "sex"]].equals(table[["hid", "hsize", "sex"]])
    assert details["swapped_households"] == 2 and details["records_swapped"] == 2
    region = details["levels"]["region"]
    assert region["targeted_households"] == 2 and region["swapped_households"] == 2
    assert (region["risky_records_before"], region["risky_records_after"]) == (2, 0)
    check = verify_record_swap(TINY, table, published, households="hid", details=details)
    assert check["holds"] and check["levels"]["region"]["moved_households"] == 2


def test_records_at_risk_match_a_brute_force_count():
    table = census(600, seed=4)
    options = SwapHouseholds(HIERARCHY, "hsize", "age,sex", k=3, swaprate=0.05)
    _, details = apply_record_swap(table, options, np.random.default_rng(0), households="hid")
    for column in HIERARCHY.split(","):
        counts = table.groupby([column, "age", "sex"])["hid"].transform("size")
        assert details["levels"][column]["risky_records_before"] == int((counts < 3).sum())
        risky_households = table.loc[counts < 3, "hid"].nunique()
        assert details["levels"][column]["risky_households_before"] == risky_households
    coarsest = table.groupby(["region", "age", "sex"])["hid"].transform("size") < 3
    assert details["targeted_households"] >= table.loc[coarsest, "hid"].nunique()


def test_the_swap_rate_is_achieved_over_seeds():
    """Untargeted (k = 0): the draws add up to swaprate * H / 2, rounded at random, and each
    swap moves two households, so the achieved rate is within 2 / H of the target."""
    table = census(3000, seed=7)
    options = SwapHouseholds(HIERARCHY, "hsize", k=0, swaprate=0.1)
    for seed in range(20):
        published, details = apply_record_swap(table, options, np.random.default_rng(seed),
                                                households="hid")
        assert abs(details["achieved_swaprate"] - 0.1) <= 2 / 3000
        check = verify_record_swap(options, table, published, households="hid",
                                   details=details)
        assert check["holds"] and check["achieved_swaprate"] == details["achieved_swaprate"]


def test_same_random_state_same_table_and_every_member_moves_with_its_household():
    table = census(800, seed=2)
    options = SwapHouseholds(HIERARCHY, "hsize", "age,sex", k=2, swaprate=0.1)
    a, _ = apply_record_swap(table, options, np.random.default_rng(5), households="hid")
    b, _ = apply_record_swap(table, options, np.random.default_rng(5), households="hid")
    c, _ = apply_record_swap(table, options, np.random.default_rng(6), households="hid")
    assert a.equals(b) and not a.equals(c)
    assert (a.groupby("hid")[["region", "district", "mun"]].nunique() == 1).all().all()
    # every household's new geography belongs to an original household of its size
    before = set(map(tuple, table.drop_duplicates("hid")[["hsize", "region", "mun"]].values))
    after = set(map(tuple, a.drop_duplicates("hid")[["hsize", "region", "mun"]].values))
    assert after <= before


def test_the_verifier_catches_a_split_household_and_a_swap_across_profiles():
    table = census(500, seed=3)
    options = SwapHouseholds(HIERARCHY, "hsize", "age,sex", k=2, swaprate=0.1)
    published, _ = apply_record_swap(table, options, np.random.default_rng(1),
                                     households="hid")
    split = published.copy()
    row = int(np.flatnonzero(split["hsize"].to_numpy() >= 2)[0])
    other = split["mun"].iloc[int(np.flatnonzero(split["region"] != split["region"].iloc[row])[0])]
    split.iloc[row, split.columns.get_loc("mun")] = other
    check = verify_record_swap(options, table, split, households="hid")
    assert not check["holds"] and check["households_split"] == 1
    assert not check["hierarchy_nested"]
    crossed = published.copy()  # a one-person and a two-person household trade places
    one = crossed.index[crossed["hsize"] == 1][0]
    two = crossed.index[(crossed["hsize"] == 2) & (crossed["mun"] != crossed.at[one, "mun"])]
    geo = ["region", "district", "mun"]
    first, members = crossed.loc[one, geo].copy(), crossed["hid"] == crossed.at[two[0], "hid"]
    crossed.loc[one, geo] = crossed.loc[two[0], geo].to_numpy()
    crossed.loc[members, geo] = first.to_numpy()
    check = verify_record_swap(options, table, crossed, households="hid")
    assert not check["holds"] and not check["profiles_kept"] and check["households_split"] == 0


def test_runs_from_the_plan_text_with_the_household_role():
    table = census(400, seed=9)
    plan = Plan.from_text([f"swap_households hierarchy={HIERARCHY} similar=hsize "
                           "risk_variables=age,sex k=2 swaprate=0.1"])
    release = microagg.anonymize(table, plan=plan, households="hid", random_state=4,
                                 sensitive=["age", "sex", "hsize"])
    (record,) = release.steps
    (check,) = release.checks["steps"]
    assert check["holds"] and check["name"] == "swap_households"
    assert check["swapped_households"] == record.details["swapped_households"] > 0
    assert release.params["plan"][0]["swaprate"] == 0.1
    assert len(release.data) == len(table)


def _refused(table: pd.DataFrame, options: SwapHouseholds, *needles: str) -> None:
    with pytest.raises(SchemaError) as error:
        microagg.anonymize(table, plan=Plan([options]), households="hid",
                           sensitive=["sex"], random_state=1)
    for needle in needles:
        assert needle in str(error.value)


def test_a_district_in_two_regions_is_refused():
    table = tiny()
    table.loc[table["hid"] == "h2", "mun"] = "A1"
    _refused(table, TINY, "not a hierarchy", "'A1'", "'mun'", "'region'")


def test_a_household_whose_geography_varies_is_refused():
    table = tiny()
    table.loc[2, "mun"] = "A2"
    _refused(table, TINY, "'mun'", "varies within household 'h3'")


def test_households_at_risk_without_donor_are_counted_and_refused():
    table = tiny()
    table.loc[table["hid"] == "h2", "hsize"] = 3.0  # h1 now has no one-person donor
    _refused(table, TINY, "2 households at risk have no donor", "hsize", "'h1'")


def test_no_household_role_is_refused():
    with pytest.raises(SchemaError, match="household id"):
        microagg.anonymize(tiny(), plan=Plan([TINY]), sensitive=["sex", "hsize"],
                           random_state=1)


@pytest.mark.parametrize("rate", ["1.5", -0.1])
def test_a_swap_rate_outside_0_1_is_refused(rate):
    with pytest.raises(ValueError, match=r"'swaprate'.*number in \[0, 1\]"):
        SwapHouseholds(HIERARCHY, "hsize", "age", swaprate=rate)


def test_a_column_in_two_roles_and_k_without_risk_variables_are_refused():
    with pytest.raises(ValueError, match="'hsize' in both 'similar' and 'risk_variables'"):
        SwapHouseholds(HIERARCHY, "hsize", "hsize,age")
    with pytest.raises(ValueError, match="'risk_variables'"):
        SwapHouseholds(HIERARCHY, "hsize", k=3)
