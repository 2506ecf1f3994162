"""The recoding steps' options: the CLI's text normalized, bad values refused by name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from microagg.steps.recode.options import Band, MultivariateTopCode, Recode, RecodeDate, TopCode


def test_text_options_are_normalized_as_python_values() -> None:
    assert Recode("r", groups='{"North": ["N1", "N2"], "S": "S1"}') == \
        Recode("r", groups={"North": ["N1", "N2"], "S": ["S1"]})
    assert Band("age", breaks="0, 18,65").breaks == (0.0, 18.0, 65.0)
    assert Band("age", breaks="[0, 18, 65]", labels='["young", "adult"]').labels == \
        ("young", "adult")
    assert Band("age", method="quantiles", bands="4").bands == 4
    assert TopCode("x", top="10", bottom_quantile="0.05").bottom_quantile == 0.05
    assert MultivariateTopCode("a,b", alpha="0.01").alpha == 0.01
    assert RecodeDate("d", "age", reference="2024-06-30T00:00").reference == "2024-06-30"


def test_options_are_frozen_and_their_record_is_json() -> None:
    step = Recode("r", groups={"North": ["N1", "N2"]})
    with pytest.raises(TypeError):
        step.groups["South"] = ("S1",)  # type: ignore[index]
    assert hash(Band("age", breaks=[0, 1])) == hash(Band("age", breaks="0,1"))
    record = Band("age", breaks=[0, 18, 65], closed="right").to_record()
    assert json.loads(json.dumps(record)) == {"step": "band", "column": "age",
                                              "breaks": [0.0, 18.0, 65.0], "closed": "right"}
    assert Recode("r", hierarchy="h.csv", level=2).to_record() == {
        "step": "recode", "column": "r", "hierarchy": "h.csv", "level": 2}


def test_columns_are_the_columns_changed() -> None:
    assert Recode("r", groups={"a": ["b"]}).columns == ("r",)
    assert TopCode("x", top=1).columns == ("x",)
    assert MultivariateTopCode(["a", "b"]).columns == ("a", "b")


@pytest.mark.parametrize(("build", "match"), [
    (lambda: Recode("r", groups={"A": ["x", "y"], "B": ["y"]}),
     r"value 'y' of column 'r' is in two groups, 'A' and 'B'"),
    (lambda: Recode("r"), r"exactly one of 'groups'"),
    (lambda: Recode("r", groups={"A": []}), r"group 'A' of column 'r' names no value"),
    (lambda: Recode("r", groups="{bad json"), r"'groups' option .* must be JSON"),
    (lambda: Recode("r", groups={"A": ["x"]}, level=-1), r"'level' .* int in \[0, inf\]. Got -1"),
    (lambda: Band("age", breaks=[0, 30, 20]), r"strictly increasing.* 30.0 is followed by 20.0"),
    (lambda: Band("age", breaks=[0, 10, 10]), r"without overlapping bands"),
    (lambda: Band("age", breaks=[0]), r"at least two numbers"),
    (lambda: Band("age", breaks="0,x"), r"'breaks' .* finite number in \(-inf, inf\). Got 'x'"),
    (lambda: Band("age", method="quantiles"), r"needs 'bands'"),
    (lambda: Band("age", method="equal_amount", bands=3), r"'method' .* one of 'breaks'"),
    (lambda: Band("age", breaks=[0, 1, 2], labels=["a"]), r"one label per band \(2\). Got 1"),
    (lambda: Band("age", breaks=[0, 1, 2], labels=["a", "a"]), r"names a label twice"),
    (lambda: Band("age", breaks=[0, 1], closed="both"), r"'closed' .* 'left', 'right'"),
    (lambda: RecodeDate("d", "age"), r"'reference' .* needed with precision='age'"),
    (lambda: RecodeDate("d", "year", reference="2020-01-01"), r"and only then"),
    (lambda: RecodeDate("d", "age", reference="30/06/2024"), r"ISO date .* '30/06/2024'"),
    (lambda: RecodeDate("d", "week"), r"'precision' .* 'month', 'year', 'age'"),
    (lambda: TopCode("x", top=5, bottom=10), r"top=5.0 is not above bottom=10.0"),
    (lambda: TopCode("x", top_quantile=0.2, bottom_quantile=0.9), r"top code must be above"),
    (lambda: TopCode("x", top_quantile=1.5), r"'top_quantile' .* in \(0, 1\). Got 1.5"),
    (lambda: TopCode("x", bottom_quantile="0"), r"'bottom_quantile' .* in \(0, 1\)"),
    (lambda: TopCode("x"), r"needs a code"),
    (lambda: TopCode("x", top=1, top_quantile=0.9), r"give 'top' or 'top_quantile', not both"),
    (lambda: TopCode("x", top=1, replacement="median"), r"'replacement' .* 'code', 'mean'"),
    (lambda: TopCode("x", top="inf"), r"'top' .* finite number"),
    (lambda: MultivariateTopCode("a,a"), r"each once"),
    (lambda: MultivariateTopCode("a,b", alpha=1), r"'alpha' .* in \(0, 1\). Got 1"),
])
def test_bad_options_name_the_option_the_value_and_the_range(build, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        build()


def test_the_options_module_imports_the_standard_library_only() -> None:
    code = ("import sys, json; import microagg.steps.recode.options; "
            "print(json.dumps(sorted({'numpy', 'pandas'} & set(sys.modules))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
