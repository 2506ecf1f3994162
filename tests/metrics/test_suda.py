"""SUDA2 minimal sample uniques, SUDA / DIS-SUDA scores and attribute contributions
(:mod:`microagg.metrics.suda`): sdcMicro's reference values on eusilc, a hand-checked
table, a brute-force enumeration of MSUs on random tables, and every bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microagg.datasets import load_dataset
from microagg.exceptions import SchemaError
from microagg.metrics.suda import suda2

EUSILC_KEYS = ["db040", "hsize", "rb090", "pb220a", "pl030"]


@pytest.fixture(scope="module")
def eusilc() -> pd.DataFrame:
    return load_dataset("eusilc").data


def test_eusilc_matches_sdcmicro(eusilc: pd.DataFrame) -> None:
    # Reference: sdcMicro 5.8.1 on R 4.2.2, suda2(eusilc, variables=c("db040", "hsize",
    # "rb090", "pb220a", "pl030"), missing=NA) (DisFraction 0.01, the default); eusilc from
    # laeken. Values as printed by R (7-9 significant digits).
    result = suda2(eusilc, EUSILC_KEYS)
    summary = result.summary()
    assert summary["dis_score_sum"] == pytest.approx(3.02001175, abs=5e-9)  # sdcMicro sum(disScore)
    assert summary["dis_score_max"] == pytest.approx(0.05787113, abs=5e-9)  # sdcMicro max(disScore)
    assert summary["score_sum"] == 433  # sdcMicro sum(score)
    assert summary["score_max"] == 7  # sdcMicro max(score)
    sdcmicro_contributions = {  # sdcMicro attribute_contributions$contribution
        "db040": 86.37413, "hsize": 87.75982, "rb090": 45.03464, "pb220a": 68.82217,
        "pl030": 86.83603,
    }
    for key, expected in sdcmicro_contributions.items():
        assert result.attribute_contributions[key] == pytest.approx(expected, abs=5e-6), key


def test_eusilc_summary_is_plain_numbers(eusilc: pd.DataFrame) -> None:
    summary = suda2(eusilc, EUSILC_KEYS).summary()
    for value in summary.values():
        assert type(value) in (int, float, str, dict)
    assert all(type(v) is int for v in summary["msus_by_size"].values())
    assert summary["n_msus"] == sum(summary["msus_by_size"].values())


# Hand-checked table. Rows (a, b, c): r0 (1, x, 0), r1 (1, y, 0), r2 (2, x, 0), r3 (2, x, 1).
# Value sets: a=1 {0,1}, a=2 {2,3}, b=x {0,2,3}, b=y {1}, c=0 {0,1,2}, c=1 {3}.
# r0: {a=1, b=x} = {0} unique; a=1 and b=x are shared -> one MSU of size 2
#     ({a=1, c=0} = {0,1} and {b=x, c=0} = {0,2} are shared).
# r1: {b=y} unique -> one MSU of size 1 (every larger set holding b=y is not minimal;
#     {a=1, c=0} = {0,1} is shared).
# r2: {a=2, c=0} = {2} unique; a=2, c=0 shared -> one MSU of size 2.
# r3: {c=1} unique -> one MSU of size 1 ({a=2, b=x} = {2,3} is shared).
# K = M = 3: an MSU of size s weighs prod_{i=s}^{2} (3 - i): size 1 -> 2, size 2 -> 1.
TOY = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "x"], "c": [0, 0, 0, 1]})


def test_hand_checked_msus() -> None:
    result = suda2(TOY, ["a", "b", "c"])
    assert result.msu_counts.tolist() == [[0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
    assert result.score.tolist() == [1.0, 2.0, 1.0, 2.0]
    # r0's MSU {a, b}: half of its score each for a and b; r2's {a, c}.
    assert result.contribution_share.tolist() == [
        [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    # contributions: a in 2 of the 6 score points, b in 3, c in 3.
    assert result.attribute_contributions == pytest.approx(
        {"a": 100 * 2 / 6, "b": 100 * 3 / 6, "c": 100 * 3 / 6})
    # No pair of identical records: DIS-SUDA is 1 for every scored record.
    assert result.dis_score.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_max_size_limits_search_and_weights() -> None:
    # max_size=1: only r1 {b=y} and r3 {c=1}; weight prod_{i=1}^{0} = 1.
    result = suda2(TOY, ["a", "b", "c"], max_size=1)
    assert result.msu_counts.tolist() == [[0], [1], [0], [1]]
    assert result.score.tolist() == [0.0, 1.0, 0.0, 1.0]


def test_missing_modes() -> None:
    # r0, r1 missing on b; a=1 {0,2}, a=2 {1,3}; b=x {2}, b=y {3} (r2, r3: one 1-MSU each).
    # "na": missing is a category, {b=NA} = {0,1}: {a=1, b=NA} = {0} and {a=2, b=NA} = {1}
    # are MSUs of size 2. "ignore": missing never forms an MSU, r0 and r1 have none.
    df = pd.DataFrame({"a": [1, 2, 1, 2], "b": [None, None, "x", "y"]})
    na = suda2(df, ["a", "b"])
    ignore = suda2(df, ["a", "b"], missing="ignore")
    assert na.msu_counts.tolist() == [[0, 1], [0, 1], [1, 0], [1, 0]]
    assert ignore.msu_counts.tolist() == [[0, 0], [0, 0], [1, 0], [1, 0]]


def test_items_with_identical_records_count_once() -> None:
    # b=NA and c=NA cover the same rows {0, 1} (as pb220a and pl030 in eusilc): one item,
    # counted for b (the earlier variable), as sdcMicro does.
    df = pd.DataFrame({"a": [1, 2, 1, 2], "b": [None, None, "x", "x"], "c": [None, None, 0, 1]})
    result = suda2(df, ["a", "b", "c"])
    assert result.msu_counts[:2].tolist() == [[0, 1, 0], [0, 1, 0]]
    assert result.contribution_share[0].tolist() == [1.0, 1.0, 0.0]


def _brute_force(df: pd.DataFrame, keys: list[str], max_size: int, missing: str) -> list[list[int]]:
    """MSU counts by enumerating every item set of every record (no lattice, no bits)."""
    rows = [tuple("<NA>" if pd.isna(v) else v for v in row) for row in df[keys].itertuples(False)]
    n, k = len(rows), len(keys)

    def support(items: tuple[tuple[int, object], ...]) -> frozenset[int]:
        return frozenset(i for i in range(n) if all(rows[i][v] == val for v, val in items))

    counts = []
    for r, row in enumerate(rows):
        items = [(v, row[v]) for v in range(k) if missing == "na" or row[v] != "<NA>"]
        kept = [it for it in items
                if not any(u < it[0] and len(support((it,))) >= 2
                           and support(((u, val),)) == support((it,)) for u, val in items)]
        per_size = [0] * max_size
        for size in range(1, max_size + 1):
            for combo in itertools.combinations(kept, size):
                if support(combo) == frozenset({r}) and all(
                        len(support(sub)) >= 2
                        for sub in itertools.combinations(combo, size - 1) if sub):
                    per_size[size - 1] += 1
        counts.append(per_size)
    return counts


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 14), k=st.integers(1, 4),
       missing=st.sampled_from(["na", "ignore"]), data=st.data())
def test_kernel_matches_brute_force(seed: int, n: int, k: int, missing: str,
                                    data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    columns = {}
    for v in range(k):
        values = rng.integers(0, int(rng.integers(1, 4)), size=n).astype(object)
        values[rng.random(n) < 0.2] = None
        columns[f"k{v}"] = values
    df = pd.DataFrame(columns)
    keys = list(columns)
    max_size = data.draw(st.integers(1, k))
    result = suda2(df, keys, max_size=max_size, missing=missing)
    assert result.msu_counts.tolist() == _brute_force(df, keys, max_size, missing)


def test_dis_suda_formula_on_pairs() -> None:
    # Rows: a pair of identical records (P = 2) and two unique ones with score s.
    # DIS = 1 / (1 + P (1 - f) / f / (s**Q * sum s_j**-Q)), Q = 1 + (8 - 2) / 20.
    df = pd.DataFrame({"a": [1, 1, 2, 3], "b": [0, 0, 0, 0]})
    result = suda2(df, ["a", "b"], dis_fraction=0.5)
    q = 1 + 6 / 20
    scored = [s for s in result.score if s > 0]
    adjustment = sum(s ** -q for s in scored)
    expected = [0.0 if s == 0 else 1 / (1 + 2 * 0.5 / 0.5 / (s ** q * adjustment))
                for s in result.score]
    assert result.dis_score.tolist() == pytest.approx(expected, rel=1e-6)
    assert math.isclose(result.score.sum(), 2.0)


@pytest.mark.parametrize(("keys", "match"), [
    ([], "no key variable"),
    (["a", "zzz"], "unknown column"),
    (["a", "a"], "named twice"),
])
def test_bad_keys(keys: list[str], match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        suda2(TOY, keys)


@pytest.mark.parametrize("max_size", [0, 4, -1, 2.5, True])
def test_bad_max_size(max_size: object) -> None:
    with pytest.raises(ValueError, match=r"'max_size' parameter of suda2 must be an int in \[1, 3\]"):
        suda2(TOY, ["a", "b", "c"], max_size=max_size)  # type: ignore[arg-type]


@pytest.mark.parametrize("dis_fraction", [0, 1, -0.1, 1.5, float("nan"), "0.1"])
def test_bad_dis_fraction(dis_fraction: object) -> None:
    with pytest.raises(ValueError, match=r"'dis_fraction' parameter of suda2 must be a float in \(0, 1\)"):
        suda2(TOY, ["a"], dis_fraction=dis_fraction)  # type: ignore[arg-type]


def test_bad_missing_and_frame() -> None:
    with pytest.raises(ValueError, match="'missing' parameter of suda2 must be one of 'na', 'ignore'"):
        suda2(TOY, ["a"], missing="drop")
    with pytest.raises(TypeError, match="'df' parameter of suda2 must be a pandas DataFrame"):
        suda2(TOY.to_numpy(), ["a"])
    with pytest.raises(ValueError, match="0 rows"):
        suda2(TOY.iloc[:0], ["a"])


def test_result_is_frozen() -> None:
    result = suda2(TOY, ["a", "b", "c"])
    with pytest.raises(AttributeError):
        result.max_size = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        result.score[0] = 5.0
