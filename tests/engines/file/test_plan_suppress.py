"""Recoding + local suppression over a file in two passes: the written file is byte for byte
the in-memory engine's (CSV), the same values in Parquet, k holds when recounted on it, and
what needs the whole column is refused by name."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from microagg.cli import app
from microagg.engines.file.plan_suppress import suppress_file, verify_file
from microagg.steps import Band, Recode, TopCode
from microagg.steps.suppress import SuppressToK

from ...steps.suppress._brute import sizes

KEYS = ("region", "age", "sex", "job")


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 13) ** 1.2
    return pd.DataFrame({
        "region": [f"R{v:02d}" for v in rng.choice(12, size=n, p=p / p.sum())],
        "age": rng.integers(0, 90, size=n),
        "sex": rng.choice(["F", "M"], size=n),
        "job": [f"J{v}" for v in rng.choice(6, size=n, p=[0.4, 0.3, 0.15, 0.1, 0.04, 0.01])],
        "income": np.round(rng.lognormal(9, 0.5, size=n), 2)})


def _steps(k: int) -> list:
    return [Band("age", breaks=[0, 20, 40, 60, 90]), Recode("job", groups={"J-rare": ["J4", "J5"]}),
            SuppressToK(KEYS, k=k)]


def test_csv_is_the_in_memory_engines_byte_for_byte(tmp_path: pathlib.Path) -> None:
    _table(1500, 1).to_csv(tmp_path / "in.csv", index=False)
    result = CliRunner().invoke(app, [
        "anonymize", str(tmp_path / "in.csv"), "-o", str(tmp_path / "memory.csv"), "-s",
        "income", "--step", "band column=age breaks=0,20,40,60,90", "--step",
        'recode column=job groups=\'{"J-rare": ["J4", "J5"]}\'', "--step",
        "suppress keys=region,age,sex,job k=4"])
    assert result.exit_code in (0, 4), result.output
    figures = suppress_file(tmp_path / "in.csv", tmp_path / "two.csv", _steps(4),
                            chunk_rows=200)
    memory = (tmp_path / "memory.csv").read_bytes()
    assert (tmp_path / "two.csv").read_bytes() == memory
    published = pd.read_csv(tmp_path / "two.csv", dtype=str)
    assert figures["cells_suppressed"] == int(published.loc[:, list(KEYS)].isna().sum().sum())
    assert figures["cells_suppressed"] > 0 and figures["check"]["holds"]


def test_parquet_values_and_k_recounted(tmp_path: pathlib.Path) -> None:
    table = _table(900, 2)
    table.to_parquet(tmp_path / "in.parquet", index=False)
    figures = suppress_file(tmp_path / "in.parquet", tmp_path / "out.parquet", _steps(3),
                            chunk_rows=128)
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert len(out) == 900 and out["income"].tolist() == table["income"].tolist()
    codes = np.column_stack([pd.factorize(out[key], sort=True)[0] for key in KEYS])
    assert sizes(codes, "any").min() >= 3  # pairwise, independent of the step's counter
    assert figures["check"]["subsets"][0]["achieved"] == int(sizes(codes, "any").min())
    kept = out["age"].notna()
    assert set(out.loc[kept, "age"]) <= {"[0, 20)", "[20, 40)", "[40, 60)", "[60, 90]"}


def test_verify_file_finds_a_small_class(tmp_path: pathlib.Path) -> None:
    table = pd.DataFrame({"a": ["x"] * 5 + ["y"], "b": ["1"] * 6})
    table.to_parquet(tmp_path / "t.parquet", index=False)
    check = verify_file(tmp_path / "t.parquet", SuppressToK(("a", "b"), k=2), chunk_rows=2)
    assert not check["holds"] and check["subsets"][0] == {
        "keys": ["a", "b"], "k": 2, "achieved": 1, "violating": 1}


@pytest.mark.parametrize("steps,words", [
    ([Band("age", bands=4, method="quantiles"), SuppressToK(KEYS, k=3)], "step 1 of the plan (band)"),
    ([TopCode("income", top_quantile=0.9), SuppressToK(KEYS, k=3)], "(topcode) needs the whole"),
    ([SuppressToK(KEYS, k=3, mode="exact")], "mode='exact'"),
    ([Band("age", breaks=[0, 50, 90])], "ends with one 'suppress'"),
])
def test_refuses_what_needs_the_whole_table(tmp_path: pathlib.Path, steps: list,
                                            words: str) -> None:
    _table(50, 3).to_parquet(tmp_path / "in.parquet", index=False)
    with pytest.raises(ValueError, match="(?i)" + words.replace("(", r"\(").replace(")", r"\)")):
        suppress_file(tmp_path / "in.parquet", tmp_path / "out.parquet", steps)
    assert not (tmp_path / "out.parquet").exists()


def test_a_chunk_without_the_grouped_values_is_recoded_as_the_whole_column() -> None:
    from microagg.engines.file.plan_suppress import _recoded, per_record_core
    from microagg.steps.recode import categories

    table = pd.DataFrame({"x": [1.0, 2.0, np.nan, 3.0, 7.0, 7.0, 1.0, 2.0]})
    options = Recode("x", groups={"low": ["1", "2"]})
    whole = categories.apply_recode(table, options, np.random.default_rng(0))[0]
    parts = pd.concat(list(_recoded(iter([table.iloc[:2], table.iloc[2:6], table.iloc[6:]]),
                                    [(options, per_record_core(options))])))
    assert whole["x"].astype(object).where(whole["x"].notna(), None).tolist() == \
        parts["x"].astype(object).where(parts["x"].notna(), None).tolist() == \
        ["low", "low", None, "3", "7", "7", "low", "low"]


def test_a_group_value_absent_from_the_whole_file_is_refused(tmp_path: pathlib.Path) -> None:
    _table(60, 4).to_parquet(tmp_path / "in.parquet", index=False)
    steps = [Recode("job", groups={"rare": ["J4", "J9"]}), SuppressToK(KEYS, k=2)]
    with pytest.raises(ValueError, match=r"names 1 value.*'J9'"):
        suppress_file(tmp_path / "in.parquet", tmp_path / "out.parquet", steps, chunk_rows=16)


def test_missing_input_keys_published_as_in_memory(tmp_path: pathlib.Path) -> None:
    import microagg
    from microagg.steps import Plan

    table = _table(1200, 9).drop(columns="income")
    rng = np.random.default_rng(9)
    table.loc[rng.random(1200) < 0.05, "region"] = None
    table["age"] = table["age"].astype(float).where(rng.random(1200) >= 0.05)
    table.to_parquet(tmp_path / "in.parquet", index=False)
    steps = [Band("age", breaks=[0, 30, 60, 90]), SuppressToK(KEYS, k=5)]
    figures = suppress_file(tmp_path / "in.parquet", tmp_path / "out.parquet", steps,
                            chunk_rows=250)
    memory = microagg.anonymize(table, plan=Plan(steps), random_state=0).data
    out = pd.read_parquet(tmp_path / "out.parquet")
    for key in KEYS:
        assert memory[key].astype(object).where(memory[key].notna(), None).tolist() == \
            out[key].astype(object).where(out[key].notna(), None).tolist()
    before = int(table.loc[:, list(KEYS)].isna().sum().sum())
    assert figures["cells_suppressed"] == int(out.loc[:, list(KEYS)].isna().sum().sum()) - before
    assert figures["check"]["holds"]
