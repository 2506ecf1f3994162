"""Missing values in quasi-identifiers and sensitive columns (issue 18, item 4)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.patterns import plan_patterns
from microagg._pipeline.verify import published_classes
from microagg.exceptions import PrivacyLeakWarning, SchemaError


def _quiet(df: pd.DataFrame, **options: object):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return anonymize(df, random_state=0, **options)  # type: ignore[arg-type]


def _frame() -> pd.DataFrame:
    """6 complete records, 3 missing 'a', 1 missing 'b' (a pattern below k=3)."""
    return pd.DataFrame({
        "a": [1.0, 2, 3, 4, 5, 6, 7, 8, np.nan, np.nan, np.nan, 20],
        "b": [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, np.nan]})


def test_pattern_groups_hold_k_and_missing_stays_missing() -> None:
    release = _quiet(_frame(), quasi_identifiers=["a", "b"], k=3)
    data = release.data
    assert data["a"].isna().tolist()[8:11] == [True, True, True]  # missing stays missing
    assert np.isnan(data.loc[11, "b"])
    sizes = np.bincount(published_classes(data, ["a", "b"]))
    assert sizes.min() >= 3 and release.checks["k_anonymity"]["achieved"] >= 3
    missing = release.params["missing"]
    assert missing["strategy"] == "pattern"
    assert dict(missing["missing_cells"]) == {"a": 3, "b": 1}
    # the lone record missing 'b' borrows its 2 nearest complete records (a = 7, 8):
    assert dict(missing["suppressed_cells"]) == {"b": 2}
    assert data.loc[[6, 7, 11], "b"].isna().all() and abs(data.loc[6, "a"] - 35 / 3) <= 0.5  # publish may round
    assert any("blanked" in w for w in release.warnings)


def test_small_pattern_joins_its_superset() -> None:
    m = np.array([[0, 0]] * 4 + [[0, 1]] * 2 + [[1, 1]] * 3, dtype=bool)
    plan = plan_patterns(m, 3, np.zeros((9, 2)), names=("a", "b"))
    # the 2 records missing 'b' join the 3 missing both: their 'a' cells blanked
    assert plan.pattern.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert plan.suppressed.sum() == 2 and plan.suppressed[4:6, 0].all()


def test_small_patterns_pool_then_borrow() -> None:
    m = np.array([[0, 0]] * 6 + [[1, 0]] + [[0, 1]], dtype=bool)
    scaled = np.column_stack([np.arange(8.0), np.arange(8.0)])
    plan = plan_patterns(m, 3, scaled, names=("a", "b"))
    # {a} and {b} have no superset: pooled (missing a and b), then 1 record borrowed
    assert plan.missing.tolist() == [[False, False], [True, True]]
    assert np.bincount(plan.pattern).tolist() == [5, 3]
    assert int(plan.suppressed.sum()) == 2 + 2  # 1 cell each for the pool, 2 for the borrowed


def test_all_small_ends_in_one_pattern() -> None:
    m = np.array([[0, 0], [0, 0], [1, 0], [0, 1]], dtype=bool)
    plan = plan_patterns(m, 3, np.zeros((4, 2)), names=("a", "b"))
    assert np.bincount(plan.pattern).min() >= 3
    assert len(plan.missing) == 1 and plan.missing[0].all()  # every cell blanked


def test_impute_records_values_and_warns() -> None:
    with pytest.warns(PrivacyLeakWarning, match="non-respondents"):
        release = anonymize(_frame(), quasi_identifiers=["a", "b"], k=3, random_state=0,
                            missing="impute:median")
    imputed = release.params["missing"]["imputed"]
    assert imputed["a"]["cells"] == 3 and imputed["a"]["value"] == pytest.approx(5.0)
    assert imputed["b"]["value"] == pytest.approx(6.0)
    assert not release.data[["a", "b"]].isna().any().any()
    assert release.checks["k_anonymity"]["achieved"] >= 3


def test_refuse_names_columns_counts_and_strategies() -> None:
    with pytest.raises(SchemaError, match=r"'a': 3 missing.*missing='pattern'"):
        anonymize(_frame(), quasi_identifiers=["a", "b"], k=3, missing="refuse")


def test_unknown_strategy_lists_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"'missing' parameter.*'impute:median'.*Got 'drop'"):
        anonymize(_frame(), quasi_identifiers=["a", "b"], k=3, missing="drop")


def test_category_groups_missing_and_publishes_it_missing() -> None:
    df = pd.DataFrame({"x": [1.0, 2, 3, 10, 11, 12, 20, 21, 22],
                       "c": ["u", "u", "u", None, None, None, "v", "v", "v"]})
    release = _quiet(df, quasi_identifiers=["x", "c"], k=3, missing="category")
    assert release.params["missing"]["category"] == ("c",)
    published = release.data["c"]
    assert published.isna().tolist() == [False] * 3 + [True] * 3 + [False] * 3
    assert MISSING not in set(published.dropna())
    assert release.checks["k_anonymity"]["achieved"] >= 3


MISSING = "(missing)"


def test_mixed_pattern_keeps_missing_numeric() -> None:
    df = pd.DataFrame({"x": [1.0, 2, 3, 4, 5, 6, np.nan, np.nan, np.nan],
                       "c": list("uuvvuuvvu")})
    release = _quiet(df, quasi_identifiers=["x", "c"], k=3)
    assert release.data["x"].isna().sum() == 3
    assert release.checks["k_anonymity"]["achieved"] >= 3


def test_l_diversity_counts_observed_sensitive_values_only() -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=40), "s": rng.choice(["p", "q", "r"], 40)})
    df.loc[::3, "s"] = None
    release = _quiet(df, quasi_identifiers="x", sensitive="s", k=3, l=2)
    classes = published_classes(release.data, ["x"])
    for cls in np.unique(classes):
        observed = release.data.loc[classes == cls, "s"].dropna()
        assert observed.nunique() >= 2
    assert release.params["missing"]["sensitive_missing"]["s"] == 14


def test_l_feasibility_uses_observed_values() -> None:
    df = pd.DataFrame({"x": np.arange(10.0), "s": ["p"] * 5 + [None] * 5})
    with pytest.raises(SchemaError, match="5 missing values never count"):
        anonymize(df, quasi_identifiers="x", sensitive="s", k=2, l=2)


def test_dp_refuses_missing_quasi_identifiers() -> None:
    with pytest.raises(SchemaError, match="impute:median"):
        _quiet(_frame(), quasi_identifiers=["a", "b"], k=3, epsilon=1.0,
               bounds={"a": (0, 30), "b": (0, 30)})


def test_blocking_runs_per_pattern() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    df.loc[rng.choice(200, 30, replace=False), "a"] = np.nan
    release = _quiet(df, quasi_identifiers=["a", "b"], k=4, blocking="kd", block_size=40)
    assert release.data["a"].isna().sum() >= 30
    assert release.checks["k_anonymity"]["achieved"] >= 4


@pytest.mark.parametrize("qi", [["age", "income", "household_size"],
                                ["age", "sex", "region", "income"]])
def test_survey_end_to_end(qi: list[str]) -> None:
    from microagg.datasets import load_dataset

    df = load_dataset("survey").data
    release = _quiet(df, quasi_identifiers=qi, k=5,  # and what breaks k by itself
                     identifiers=["person_id", "name", "household_id", "postcode",
                                  "date_of_birth", "weight"])
    assert release.checks["k_anonymity"]["achieved"] >= 5
    assert release.data["income"].isna().sum() == df["income"].isna().sum() == 412
    assert release.params["missing"]["patterns"]["published"] == 2
    assert np.isfinite(release.metrics["information_loss"])
