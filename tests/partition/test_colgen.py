"""colgen: the quality mode by column generation and the integer master (issue 23)."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.bounds import lower_bound
from microagg.bounds._integer import integer_master
from microagg.bounds._master import ColumnPool
from microagg.bounds._pricing import brute_force_columns
from microagg.metrics import sse
from microagg.partition import partition
from microagg.partition.colgen import colgen, default_colgen_time


def best_partition_sse(X: np.ndarray, k: int) -> float:
    """The optimum by recursion over the group of the lowest row left (tiny n only)."""
    from itertools import combinations

    def best(rest: tuple[int, ...]) -> float:
        if not rest:
            return 0.0
        if len(rest) < k:
            return np.inf
        first, others = rest[0], rest[1:]
        value = np.inf
        for size in range(k - 1, 2 * k - 1):
            for mates in combinations(others, size):
                group = np.array((first, *mates))
                left = tuple(r for r in others if r not in mates)
                value = min(value, sse(X[group], np.zeros(group.size, dtype=np.intp))
                            + best(left))
        return value

    return best(tuple(range(X.shape[0])))


@pytest.mark.parametrize(("seed", "n", "k"), [(0, 9, 2), (1, 10, 3), (2, 8, 2)])
def test_integer_master_over_every_column_is_the_optimum(seed: int, n: int, k: int) -> None:
    X = np.random.default_rng(seed).normal(size=(n, 2))
    pool = ColumnPool(X)
    for group in brute_force_columns(n, k):
        pool.add(np.asarray(group))
    labels = integer_master(pool, 10.0)
    assert labels is not None
    assert np.bincount(labels).min() >= k
    assert sse(X, labels) == pytest.approx(best_partition_sse(X, k), rel=1e-9)


def test_integer_master_without_a_partition_in_the_pool() -> None:
    X = np.arange(6, dtype=float).reshape(-1, 1)
    pool = ColumnPool(X)
    for group in ([0, 1, 2], [2, 3, 4], [1, 4, 5]):  # every two of them overlap
        pool.add(np.asarray(group))
    assert integer_master(pool, 5.0) is None


def test_integer_master_from_a_start() -> None:
    """A start whose groups are columns is HiGHS's first incumbent: the answer is a
    partition at or below it (here the optimum over every column); a start with a group
    outside the pool is refused, naming what is wrong."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 2))
    pool = ColumnPool(X)
    for group in brute_force_columns(9, 3):
        pool.add(np.asarray(group))
    start = np.repeat(np.arange(3), 3)  # rows in their order: a poor partition
    labels = integer_master(pool, 10.0, start)
    assert labels is not None
    assert sse(X, labels) == pytest.approx(best_partition_sse(X, 3), rel=1e-9)
    assert sse(X, labels) <= sse(X, start)
    small = ColumnPool(X)
    small.add_partition(np.repeat(np.arange(3), 3))
    with pytest.raises(ValueError, match="every group of the start must be a column"):
        integer_master(small, 5.0, np.array([0, 0, 0, 0, 1, 1, 1, 2, 2]))


@pytest.mark.parametrize("k", [2, 3, 5])
def test_never_above_its_mdav_ls_start_and_above_the_bound(k: int) -> None:
    rng = np.random.default_rng(k)
    X = rng.normal(size=(120, 3)) * rng.uniform(0.5, 2, size=3)
    labels = colgen(X, k, random_state=0, time_limit=20)
    start = partition(X, k, method="mdav-ls", random_state=0, time_limit=5)
    assert np.bincount(labels).min() >= k
    assert sse(X, labels) <= sse(X, start) * (1 + 1e-9)
    assert lower_bound(X, k, random_state=0, time_limit=2).bound <= sse(X, labels) * (1 + 1e-9)


def test_parts_of_whole_groups_join_into_a_better_partition() -> None:
    """More records than part_size: several parts, several rounds, still a k-partition
    no worse than the start (the start's groups are columns of every part)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 2))
    labels = colgen(X, 3, part_size=90, random_state=1, time_limit=15)
    assert labels.shape == (400,)
    assert np.bincount(labels).min() >= 3
    start = partition(X, 3, method="mdav-ls", random_state=1, time_limit=15 * 0.25)
    assert sse(X, labels) <= sse(X, start) * (1 + 1e-9)
    assert sse(X, labels) < sse(X, partition(X, 3, method="mdav"))


def test_gains_on_a_case_mdav_ls_leaves() -> None:
    """On random 2-D points the LP's groups beat mdav-ls's local optimum (measured: 150 x 2,
    k = 3, 8.756 against 9.083)."""
    X = np.random.default_rng(0).normal(size=(150, 2))
    labels = colgen(X, 3, random_state=0)
    assert sse(X, labels) < 0.99 * sse(X, partition(X, 3, method="mdav-ls", random_state=0))


@pytest.mark.parametrize(("params", "error", "match"), [
    ({"part_size": 1}, ValueError, r"'part_size' parameter of colgen must be an int >= 2. "
                                   r"Got 1"),
    ({"part_size": 2.5}, TypeError, r"'part_size' parameter of colgen"),
    ({"time_limit": 0}, ValueError, r"'time_limit' parameter of colgen .*Got 0"),
    ({"time_limit": "fast"}, ValueError, r"'time_limit' parameter of colgen .*'auto'"),
])
def test_bad_parameters_name_the_parameter(params: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        colgen(np.zeros((10, 2)), 2, **params)


def test_default_budget_grows_with_the_file_and_stops_at_ten_minutes() -> None:
    assert default_colgen_time(1_080) == pytest.approx(94.8)
    assert default_colgen_time(4_092) == pytest.approx(275.52)
    assert default_colgen_time(10**6) == 600.0


def test_a_release_and_the_cli_run_colgen_with_its_budget(tmp_path) -> None:
    """The pipeline runs it like any method: k verified, the budget recorded, --refine
    setting colgen's own budget; and its gap is certified lower than mdav-ls's."""
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from microagg import anonymize
    from microagg.cli import app

    rng = np.random.default_rng(5)
    people = pd.DataFrame({"age": rng.normal(40, 12, 90), "income": rng.lognormal(10, 0.5, 90)})
    release = anonymize(people, quasi_identifiers=["age", "income"], k=3, method="colgen",
                        method_params={"time_limit": 20.0}, random_state=0, certify=5,
                        rounding=False)
    assert release.params["method"] == "colgen"
    assert release.checks["k_anonymity"]["achieved"] >= 3
    assert release.params["time_budget"]["seconds"] == 20.0
    ls = anonymize(people, quasi_identifiers=["age", "income"], k=3, method="mdav-ls",
                   random_state=0, certify=5, rounding=False)
    assert release.metrics["certified_gap"] <= ls.metrics["certified_gap"] + 1e-9
    source = tmp_path / "people.csv"
    people.to_csv(source, index=False)
    result = CliRunner().invoke(app, ["anonymize", str(source), "-q", "age", "-q", "income",
                                      "-k", "3", "--method", "colgen", "--refine", "7",
                                      "-o", str(tmp_path / "out.csv"), "--summary-json",
                                      str(tmp_path / "summary.json")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["params"]["method"] == "colgen"
    assert summary["params"]["method_params"]["time_limit"] == 7.0
