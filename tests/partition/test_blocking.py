"""Blocking (issue 9): block trees, blocked partitions, the anonymize / CLI wrapper, and the
sampled DLD used on large files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import microagg._pipeline.measure
from microagg import anonymize
from microagg.exceptions import SchemaError
from microagg.metrics import dld_risk
from microagg.models import k_anonymity
from microagg.partition import mdav
from microagg.partition.blocking import (
    BLOCKINGS,
    blocked_partition,
    fit_block_tree,
    merge_small_blocks,
)


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(6000, 4))


@pytest.mark.parametrize("blocking", BLOCKINGS)
def test_block_tree_sizes_and_routing(data, blocking):
    tree, blocks = fit_block_tree(data, 500, blocking=blocking, min_size=5)
    sizes = np.bincount(blocks)
    assert sizes.max() <= 500 and sizes.min() >= 250
    assert tree.n_blocks == sizes.size
    # the fitted thresholds send the training rows where the fit put them
    assert np.array_equal(tree.route(data), blocks)
    # unseen rows go to the block of a nearby training row most of the time
    fresh = data[:300] + 1e-6
    assert np.mean(tree.route(fresh) == blocks[:300]) > 0.95


def test_block_tree_single_block_and_errors(data):
    tree, blocks = fit_block_tree(data[:100], 500)
    assert tree.n_blocks == 1 and set(blocks) == {0}
    assert set(tree.route(data[:10])) == {0}
    with pytest.raises(ValueError, match="Unknown blocking"):
        fit_block_tree(data, 500, blocking="grid")
    with pytest.raises(ValueError, match="block_size"):
        fit_block_tree(data, 1)
    with pytest.raises(ValueError, match="fitted on 4"):
        tree.route(np.zeros((2, 3)))


@pytest.mark.parametrize("method", ["mdav", "mdav1", "univariate-optimal", "top-down"])
def test_blocked_partition_keeps_the_contract(data, method):
    labels = blocked_partition(data, 5, method=method, block_size=800, n_jobs=1,
                               random_state=3)
    assert labels.shape == (6000,)
    assert np.bincount(labels).min() >= 5
    assert np.array_equal(np.unique(labels), np.arange(labels.max() + 1))
    again = blocked_partition(data, 5, method=method, block_size=800, n_jobs=2,
                              random_state=3)
    assert np.array_equal(labels, again)  # processes change nothing


def test_blocked_mdav_is_close_to_exact(data):
    def sse(labels):
        means = pd.DataFrame(data).groupby(labels).transform("mean").to_numpy()
        return float(((data - means) ** 2).sum())

    exact = sse(mdav(data, 5))
    blocked = sse(blocked_partition(data, 5, block_size=3000, n_jobs=1))
    assert blocked == pytest.approx(exact, rel=0.10)  # measured +2.0 %


def test_blocked_partition_bad_parameters(data):
    with pytest.raises(ValueError, match="2k=10"):
        blocked_partition(data, 5, block_size=9)
    with pytest.raises(ValueError, match="Unknown method"):
        blocked_partition(data, 5, method="nope")


def test_merge_small_blocks_joins_the_nearest():
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [5.3], [9.0]])
    merged = merge_small_blocks(X, [0, 0, 0, 1, 1, 1, 1, 2], 3)
    assert merged.tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    assert merge_small_blocks(X, [0] * 8, 3).tolist() == [0] * 8


def test_anonymize_with_blocking_records_and_verifies(data):
    df = pd.DataFrame(data, columns=list("abcd")).assign(other=np.arange(6000))
    release = anonymize(df, quasi_identifiers=list("abcd"), k=5, blocking="pca",
                        block_size=1000, n_jobs=1, random_state=0,
                        keep="other")  # a record number, published on purpose
    assert release.k >= 5
    assert dict(release.params["blocking"]) == {"blocking": "pca", "block_size": 1000}
    assert release.data["other"].tolist() == list(range(6000))
    assert k_anonymity(release.data[list("abcd")].to_numpy()) >= 5
    with pytest.raises(ValueError, match="block_size"):
        anonymize(df, quasi_identifiers=list("abcd"), k=5, blocking="kd", block_size=6,
                  keep="other")
    cat = df.assign(town=np.where(df["other"] % 2, "x", "y"))
    with pytest.raises(SchemaError, match="blocking applies to numeric"):
        anonymize(cat, quasi_identifiers=["a", "town"], k=5, blocking="kd", keep="other")


def test_attribute_groups_with_blocking(data):
    df = pd.DataFrame(data, columns=list("abcd"))
    with pytest.warns(microagg.exceptions.PrivacyLeakWarning):
        release = anonymize(df, quasi_identifiers=list("abcd"), k=5, blocking="kd",
                            block_size=1000, n_jobs=1, attribute_groups=[["a", "b"], ["c", "d"]],
                            random_state=0)
    for labels in release.attribute_partitions.values():
        assert np.bincount(labels).min() >= 5


def test_sampled_dld_estimates_the_exact_value(data):
    labels = mdav(data, 3)
    means = pd.DataFrame(data).groupby(labels).transform("mean").to_numpy()
    exact = dld_risk(data, means)
    estimates = [dld_risk(data, means, sample=2000, random_state=r) for r in range(5)]
    assert np.mean(estimates) == pytest.approx(exact, abs=0.02)
    assert dld_risk(data, means, sample=6000) == exact  # the whole file: the exact path
    with pytest.raises(ValueError, match="sample"):
        dld_risk(data, means, sample=0)


def test_large_files_report_the_dld_sample(monkeypatch, data):
    monkeypatch.setattr(microagg._pipeline.measure, "DLD_SAMPLE_ABOVE", 1000)
    monkeypatch.setattr(microagg._pipeline.measure, "DLD_SAMPLE", 500)
    df = pd.DataFrame(data, columns=list("abcd"))
    release = anonymize(df, quasi_identifiers=list("abcd"), k=5, random_state=0)
    assert release.metrics["dld_risk_sampled_records"] == 500
    assert 0.0 <= release.metrics["dld_risk"] <= 1.0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_blocked_partition_reports_block_by_block(data, n_jobs):
    from microagg._runtime.progress import reporting

    heard: list[tuple[int, int]] = []
    with reporting(lambda grouped, total: heard.append((grouped, total))):
        labels = blocked_partition(data, 5, block_size=800, n_jobs=n_jobs, random_state=3)
    _, blocks = fit_block_tree(data, 800, min_size=5)
    assert heard[0] == (0, 6000) and heard[-1] == (6000, 6000)
    assert len(heard) == 1 + int(blocks.max()) + 1  # the start, then one per block
    grouped = [g for g, _ in heard]
    assert grouped == sorted(grouped) and {t for _, t in heard} == {6000}
    assert np.array_equal(labels, blocked_partition(data, 5, block_size=800, n_jobs=n_jobs,
                                                    random_state=3))  # reports change nothing
