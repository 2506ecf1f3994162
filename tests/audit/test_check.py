"""microagg.audit.check: the figures of a published file, against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg.audit.check import check_table, equivalence_classes
from microagg.exceptions import SchemaError
from microagg.models import k_anonymity


def test_classes_match_a_groupby():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 5, 500), "b": rng.choice(["x", "y", None], 500),
                       "c": rng.integers(0, 3, 500).astype(float)})
    classes = equivalence_classes(df, ["a", "b", "c"])
    sizes = df.groupby(["a", "b", "c"], dropna=False).size()
    assert np.bincount(classes).min() == sizes.min()
    assert classes.max() + 1 == len(sizes)


def test_check_agrees_with_the_release(tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300),
                       "s": rng.choice(["a", "b", "c"], 300)})
    release = anonymize(df, quasi_identifiers=["x", "y"], sensitive="s", k=4, random_state=0)
    result = check_table(release.data, quasi_identifiers=["x", "y"], sensitive=["s"])
    assert result.k == release.k == k_anonymity(release.data[["x", "y"]].to_numpy())
    assert result.risk["max"] == pytest.approx(1 / result.k)
    assert result.l_diversity["s"]["distinct"] == release.metrics["distinct_l"]["s"]


def test_check_errors():
    df = pd.DataFrame({"a": [1, 2], "s": ["x", None]})
    with pytest.raises(SchemaError, match="'zz'"):
        check_table(df, quasi_identifiers=["zz"])
    with pytest.raises(SchemaError, match="1 missing values"):
        check_table(df, quasi_identifiers=["a"], sensitive=["s"])
    with pytest.raises(SchemaError, match="no rows"):
        check_table(df.iloc[:0], quasi_identifiers=["a"])
    with pytest.raises(SchemaError, match="both"):
        check_table(df, quasi_identifiers=["a"], sensitive=["a"])
