"""A published weight that re-links households: refused at Request.build with the
treatments offered; kept on purpose, published, and the verdict and the warning say that the
household id is effectively published; treated by the household step, it re-links none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.exceptions import PrivacyLeakWarning, SchemaError
from microagg.steps.household import Household, apply_household, relinking

from ..steps.household.conftest import household_file

QI = ["age", "income"]


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    """300 households of 1-6 persons: region, size and a household-unique weight constant
    within each household; income without missing values (the release's default stage)."""
    table = household_file().reset_index(drop=True)
    table["income"] = table["income"].fillna(table["income"].median())
    return table


def test_a_household_unique_weight_is_refused_with_the_treatments(survey: pd.DataFrame
                                                                 ) -> None:
    with pytest.raises(SchemaError) as refused:
        anonymize(survey, quasi_identifiers=QI, k=3, weights="weight", households="hid",
                  random_state=0)
    message = str(refused.value)
    assert "'weight' identifies 300 of the 300 households (100.0%)" in message
    linked = int((survey.groupby("hid")["hid"].transform("size") >= 2).sum())
    assert f"({linked:,} records can be grouped with a housemate" in message
    assert "effectively publishes the household id" in message
    for remedy in ("microaggregate it within strata", "round it to a stated precision",
                   "--keep weight"):
        assert remedy in message


def test_kept_on_purpose_it_is_published_and_the_verdict_says_so(survey: pd.DataFrame
                                                                ) -> None:
    with pytest.warns(PrivacyLeakWarning, match="The household id is effectively published"):
        released = anonymize(survey, quasi_identifiers=QI, k=3, weights="weight",
                             households="hid", keep="weight", random_state=0)
    np.testing.assert_array_equal(released.data["weight"].to_numpy(),
                                  survey["weight"].to_numpy())
    assert "weight" in released.params["keep"]
    check = released.checks["household_relinking"]["columns"]["weight"]
    on_output = relinking(released.data.assign(hid=survey["hid"].to_numpy()), "hid", "weight")
    assert check["households_identified"] == on_output.households_identified == 300
    verdict = released.verdict
    assert not verdict.protected
    assert ("published column(s) that re-link households (the household id is effectively "
            "published): weight (300 of 300 households)") in verdict.headline


def test_a_weight_treated_once_per_household_is_accepted(survey: pd.DataFrame) -> None:
    treated, details = apply_household(survey, Household(k=3), np.random.default_rng(0),
                                       households="hid", weights="weight", strata="region")
    assert details["relinking"]["weight"]["after"]["households_identified"] == 0
    released = anonymize(treated, quasi_identifiers=QI, k=3, weights="weight",
                         households="hid", strata="region", random_state=0)
    assert "household_relinking" not in released.checks
    assert "weight" not in released.params["keep"]
    on_output = relinking(released.data.assign(hid=survey["hid"].to_numpy()), "hid", "weight")
    assert on_output.households_identified == 0
