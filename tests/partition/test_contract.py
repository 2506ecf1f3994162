"""The contract every registered partitioner keeps (STYLE.md, house convention 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from microagg.hierarchy import Hierarchy
from microagg.partition import ALIASES, PARTITIONERS, MixedData, get_partitioner, partition

# Methods too slow to run as plain Python are left out of the NUMBA_DISABLE_JIT pass.
_HEAVY = {"mdav-ls", "colgen"}
METHODS = [pytest.param(m, marks=pytest.mark.slow) if m in _HEAVY else m
           for m in sorted(PARTITIONERS)]


def skip_without_extra(method: str) -> None:
    """Skip the test when the partitioner needs an optional extra that is not installed
    (:attr:`~microagg.partition.Partitioner.extra`), instead of failing on its import."""
    entry = get_partitioner(method)
    if not entry.installed:
        pytest.skip(f"{entry.name} needs the {entry.extra} extra: "
                    f"pip install 'microagg[{entry.extra}]'")


@pytest.fixture(autouse=True)
def _needs_its_extra(request: pytest.FixtureRequest) -> None:
    """Every test of this suite run for one ``method`` skips when its extra is missing."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and "method" in callspec.params:
        skip_without_extra(callspec.params["method"])


def assert_valid_partition(labels: np.ndarray, n: int, k: int, fixed_size: bool) -> None:
    assert labels.shape == (n,)
    assert labels.dtype == np.intp
    counts = np.bincount(labels)
    assert labels.min() == 0
    assert (counts > 0).all(), "labels must be consecutive from 0"
    assert counts.min() >= k
    if fixed_size:
        # every group has k records except at most one of k..2k-1
        assert (counts != k).sum() <= 1
        assert counts.max() <= 2 * k - 1


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("n", "p", "k"), [(50, 3, 3), (97, 5, 4), (23, 1, 5), (10, 2, 10)])
def test_labels_cover_rows_and_groups_at_least_k(method, n, p, k, rng):
    X = rng.standard_normal((n, p))
    labels = PARTITIONERS[method](X, k)
    assert_valid_partition(labels, n, k, PARTITIONERS[method].fixed_size)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("p", [1, 3])
def test_input_is_never_modified(method, p, rng):
    X = rng.standard_normal((40, p))
    before = X.copy()
    partition(X, 3, method=method)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("method", METHODS)
def test_deterministic_under_seed(method, rng):
    X = rng.standard_normal((120, 4))
    a = partition(X, 4, method=method, random_state=7)
    b = partition(X, 4, method=method, random_state=7)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", METHODS)
def test_heavy_duplicates_and_ties(method, rng):
    # 6 distinct records, each repeated 25 times, in shuffled order; plus an all-equal file
    X = np.repeat(rng.integers(0, 3, size=(6, 3)).astype(float), 25, axis=0)
    X = X[rng.permutation(X.shape[0])]
    labels = partition(X, 4, method=method)
    assert_valid_partition(labels, X.shape[0], 4, PARTITIONERS[method].fixed_size)
    same = np.zeros((31, 2))
    assert_valid_partition(partition(same, 3, method=method), 31, 3,
                           PARTITIONERS[method].fixed_size)


@pytest.mark.parametrize("method", METHODS)
def test_n_below_k_names_both_numbers(method):
    with pytest.raises(ValueError, match=r"n_samples=5 should be >= k=10"):
        partition(np.zeros((5, 2)), 10, method=method)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("k", "exc", "msg"), [
    (1, ValueError, r"'k' parameter of .* must be an int >= 2. Got 1 instead"),
    (2.5, TypeError, r"'k' parameter of .* must be an int >= 2. Got 2.5"),
    (True, TypeError, r"'k' parameter"),
])
def test_bad_k(method, k, exc, msg):
    with pytest.raises(exc, match=msg):
        partition(np.zeros((5, 2)), k, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_non_finite_input_is_rejected_with_counts(method):
    X = np.ones((6, 3))
    X[1, 2] = np.nan
    X[4, 2] = np.inf
    with pytest.raises(ValueError, match=r"column 2: 2"):
        partition(X, 2, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_non_numeric_and_empty_input(method):
    with pytest.raises(TypeError, match="numeric"):
        partition(np.array([["a", "b"], ["c", "d"]]), 2, method=method)
    with pytest.raises(ValueError, match="empty"):
        partition(np.zeros((0, 3)), 2, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_k_equal_n_gives_one_group(method, rng):
    X = rng.standard_normal((7, 2))
    np.testing.assert_array_equal(partition(X, 7, method=method), np.zeros(7, dtype=np.intp))


def test_unknown_method_lists_valid_names():
    with pytest.raises(ValueError, match=r"Unknown method 'nope'. Valid: .*mdav"):
        get_partitioner("nope")


def test_unknown_parameter_is_an_error():
    with pytest.raises(TypeError, match=r"Unknown parameter\(s\) gama .*gamma"):
        partition(np.zeros((6, 1)), 2, method="vmdav", gama=0.3)


def test_aliases_point_to_registered_methods():
    for alias, name in ALIASES.items():
        assert get_partitioner(alias) is PARTITIONERS[name]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    X=arrays(np.float64, st.tuples(st.integers(2, 60), st.integers(1, 4)),
             elements=st.floats(-1e3, 1e3, allow_nan=False, width=32)),
    k=st.integers(2, 6),
    method=st.sampled_from(sorted(PARTITIONERS)),
)
def test_property_groups_rows_and_information_loss(X, k, method):
    from microagg.aggregate.aggregators import group_mean
    from microagg.metrics import information_loss

    if X.shape[0] < k:
        with pytest.raises(ValueError, match="should be >= k"):
            partition(X, k, method=method)
        return
    labels = partition(X, k, method=method, random_state=0)
    assert_valid_partition(labels, X.shape[0], k, PARTITIONERS[method].fixed_size)
    il = information_loss(X, group_mean(X, labels))
    assert 0.0 <= il <= 100.0 + 1e-9
    np.testing.assert_array_equal(labels, partition(X, k, method=method, random_state=0))


# Mixed data: the partitioners whose entry says ``mixed`` also take numeric + categorical
# quasi-identifiers with hierarchies (MixedData), and keep the same contract on them.

MIXED_METHODS = sorted(name for name, entry in PARTITIONERS.items() if entry.mixed)
WORK = Hierarchy.from_mapping(
    {"*": {"Gov": ["Federal", "State"], "Private": ["Inc", "Own"]}}, column="work")
SEX = Hierarchy.flat(["M", "F"], column="sex")


def mixed_table(rng: np.random.Generator, n: int, *, numeric: bool = True,
                distinct: int | None = None) -> MixedData:
    """``n`` records: two numeric columns (unless ``numeric=False``), a hierarchical and a
    flat categorical one; with ``distinct``, only that many distinct records, repeated."""
    m = n if distinct is None else distinct
    num = rng.standard_normal((m, 2)) * [10.0, 1.0] + [40.0, 0.0]
    codes = np.column_stack([rng.integers(0, len(WORK.tables().leaves), m),
                             rng.integers(0, 2, m)])
    if distinct is not None:
        pick = rng.integers(0, m, n)
        num, codes = num[pick], codes[pick]
    return MixedData.build(num if numeric else None, codes, [WORK.tables(), SEX.tables()])


def test_the_mixed_methods_are_registered():
    assert {"mage", "mdav-categorical", "cdt"} <= set(MIXED_METHODS)


@pytest.mark.parametrize("method", MIXED_METHODS)
@pytest.mark.parametrize(("n", "k"), [(40, 3), (23, 5), (10, 10)])
def test_mixed_labels_cover_rows_and_groups_at_least_k(method, n, k, rng):
    data = mixed_table(rng, n)
    numeric, codes = data.numeric.copy(), data.codes.copy()
    labels = PARTITIONERS[method](data, k, random_state=0)
    assert_valid_partition(labels, n, k, PARTITIONERS[method].fixed_size)
    np.testing.assert_array_equal(data.numeric, numeric)  # the input is never modified
    np.testing.assert_array_equal(data.codes, codes)


@pytest.mark.parametrize("method", MIXED_METHODS)
def test_mixed_categorical_only_and_heavy_duplicates(method, rng):
    for data in (mixed_table(rng, 30, numeric=False), mixed_table(rng, 60, distinct=5)):
        labels = PARTITIONERS[method](data, 4, random_state=0)
        assert_valid_partition(labels, data.n_samples, 4, PARTITIONERS[method].fixed_size)


@pytest.mark.parametrize("method", MIXED_METHODS)
def test_mixed_deterministic_under_seed(method, rng):
    data = mixed_table(rng, 60)
    a = PARTITIONERS[method](data, 4, random_state=7)
    np.testing.assert_array_equal(a, PARTITIONERS[method](data, 4, random_state=7))


@pytest.mark.parametrize("method", MIXED_METHODS)
def test_mixed_n_below_k_names_both_numbers(method, rng):
    with pytest.raises(ValueError, match=r"n_samples=5 should be >= k=10"):
        PARTITIONERS[method](mixed_table(rng, 5), 10)


# --- optional extras -------------------------------------------------------------------------

def test_a_partitioner_whose_extra_is_missing_is_skipped(monkeypatch):
    import microagg.partition._partitioner as registry

    assert PARTITIONERS["cdt"].extra == "cdt"
    assert {n for n, p in PARTITIONERS.items() if p.extra is not None} == {"cdt"}
    monkeypatch.setattr(registry, "extra_installed", lambda extra: extra != "cdt")
    assert not PARTITIONERS["cdt"].installed
    assert PARTITIONERS["mdav"].installed  # no extra: always installed
    with pytest.raises(pytest.skip.Exception, match=r"cdt needs the cdt extra: pip install "
                                                    r"'microagg\[cdt\]'"):
        skip_without_extra("cdt")
    skip_without_extra("mdav")  # returns: nothing to skip


def test_the_suite_skips_cdt_without_its_extra_instead_of_failing():
    # a fresh interpreter in which kmedoids cannot be imported (a None entry in sys.modules)
    import pathlib
    import subprocess
    import sys

    code = ("import sys; sys.modules['kmedoids'] = None; import pytest; "
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-k', 'cdt and not extra',"
            f" {__file__!r}]))")
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, check=False, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert "skipped" in summary and "passed" not in summary and "failed" not in summary, summary
