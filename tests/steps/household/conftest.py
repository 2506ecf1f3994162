"""A household file of the kind the issue describes, built here: 300 households of 1-6
persons, household-level region, size and a household-unique weight."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def household_file(n_households: int = 300, seed: int = 47) -> pd.DataFrame:
    """Persons in households (ids 1000..), region and size and weight constant within each
    household (every household its own weight, 3 decimals), age and income per person."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=n_households)
    ids = np.repeat(np.arange(1000, 1000 + n_households), sizes)
    region = np.repeat(rng.choice(["north", "south", "east"], size=n_households), sizes)
    weight = np.repeat(np.round(rng.uniform(50, 900, size=n_households), 3), sizes)
    n = ids.size
    return pd.DataFrame({
        "hid": ids, "region": region.astype(object),
        "size": np.repeat(sizes, sizes).astype(np.float64),
        "age": rng.integers(0, 90, size=n).astype(np.float64),
        "income": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(10, 0.5, size=n)),
        "weight": weight}, index=pd.RangeIndex(n) + 10)  # an index that is not 0..n-1


@pytest.fixture
def households() -> pd.DataFrame:
    return household_file()
