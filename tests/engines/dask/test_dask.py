"""The Dask backend on a real two-process LocalCluster: guarantees, agreement with the local
blocked engine, input errors, column roles, and recovery from a killed worker."""

from __future__ import annotations

import logging
import os
import signal
import time

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

import dask  # noqa: E402

from microagg._base.scaling import apply_scaler, fit_scaler  # noqa: E402
from microagg.aggregate.aggregators import group_mean  # noqa: E402
from microagg.engines.dask import _run as backend  # noqa: E402
from microagg.engines.dask._tasks import BlockJob, divisions, merge_blocks, partition_blocks  # noqa: E402
from microagg.engines.dask.engine import anonymize_dask  # noqa: E402
from microagg.exceptions import ConstantColumnWarning, SchemaError  # noqa: E402
from microagg.partition.blocking import blocked_partition, run_block  # noqa: E402

QI = [f"x{j}" for j in range(5)]
N = 20_000
K = 5
BLOCK = 2_000


def _warm() -> None:
    """Load (or compile) the MDAV kernels in this process."""
    A = np.random.default_rng(0).normal(size=(3_000, 5))
    run_block((A, K, "mdav", {}, 0))


@pytest.fixture(scope="module")
def client():
    _warm()  # compile here first: the worker processes then load numba's cache
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    c.run(_warm)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(42)
    df = pd.DataFrame(rng.normal(size=(N, 5)) * [1.0, 10.0, 0.1, 3.0, 100.0] + 50.0,
                      columns=QI)
    df["person"] = [f"p{i:05d}" for i in range(N)]
    df["income"] = rng.integers(0, 10**6, N)
    df["region"] = rng.choice(["north", "south", "east"], N)
    df.index = pd.Index(rng.permutation(N) * 3 + 11, name="rid")
    return df


@pytest.fixture(scope="module")
def release(client, frame):
    ddf = dd.from_pandas(frame, npartitions=8)
    return anonymize_dask(ddf, quasi_identifiers=QI, identifiers="person", k=K,
                          block_size=BLOCK, random_state=7, client=client)


def _by_label(release, ddf) -> pd.DataFrame:
    """The published rows under the labels of ``ddf``'s index: the release is indexed by row
    position (never the input's index), and ``sort_index`` puts it in the input's order."""
    out = release.data.compute().sort_index()
    assert out.index.tolist() == list(range(len(out)))
    out.index = ddf.index.compute()
    return out


def _local_blocked(frame: pd.DataFrame) -> tuple[np.ndarray, float]:
    X = frame[QI].to_numpy()
    A = apply_scaler(X, fit_scaler(X, "standard"))
    labels = blocked_partition(A, K, block_size=BLOCK, n_jobs=1, random_state=7)
    published = group_mean(X, labels)
    il = 100.0 * float((((X - published) / X.std(axis=0, ddof=1)) ** 2).sum()) \
        / float(((A - A.mean(axis=0)) ** 2).sum())
    return published, il


def test_guarantees_and_metrics(release):
    assert release.checks["k_anonymity"]["required"] == K
    assert release.checks["k_anonymity"]["achieved"] >= K
    assert release.checks["group_k"]["achieved"] >= K
    assert release.metrics["group_size_min"] >= K
    assert release.checks["rows"] == {"input": N, "published": N}
    out = release.data.compute()
    assert out.groupby(QI).size().min() >= K  # recounted here, not trusted
    assert 0 < release.metrics["information_loss"] < 20
    assert release.metrics["sst"] == pytest.approx((N - 1) * 5)
    assert release.summary()["rows"] == N
    assert "achieved_k" in repr(release)


def test_same_blocks_as_local_engine_when_the_sample_is_the_file(release, frame):
    # sample_size >= n: the tree is fitted on every row, so the blocks, their row order and
    # hence every published value equal the local blocked engine's
    published, il_local = _local_blocked(frame)
    out = _by_label(release, dd.from_pandas(frame, npartitions=8)).loc[frame.index]
    np.testing.assert_allclose(out[QI].to_numpy(), published, rtol=1e-12, atol=1e-9)
    il_dask = release.metrics["information_loss"]
    assert abs(il_dask - il_local) / il_local < 1e-9
    print(f"\nIL local blocked={il_local:.4f} dask={il_dask:.4f} "
          f"achieved k={release.k} blocks={release.metrics['n_blocks']}")


def test_sampled_tree_within_two_percent_of_local(client, frame):
    _, il_local = _local_blocked(frame)
    ddf = dd.from_pandas(frame, npartitions=8)
    sampled = anonymize_dask(ddf, quasi_identifiers=QI, identifiers="person", k=K,
                             block_size=BLOCK, sample_size=4_000, random_state=7,
                             client=client)
    il_dask = sampled.metrics["information_loss"]
    print(f"\nIL local blocked={il_local:.4f} dask (4,000-row sample)={il_dask:.4f} "
          f"rel={(il_dask - il_local) / il_local:+.3%} achieved k={sampled.k} "
          f"blocks={sampled.metrics['n_blocks']} ({sampled.metrics['block_size_min']}.."
          f"{sampled.metrics['block_size_max']} rows)")
    assert sampled.k >= K and sampled.metrics["group_size_min"] >= K
    assert abs(il_dask - il_local) / il_local < 0.02
    assert sampled.metrics["sample_rows"] < N
    assert sampled.metrics["block_size_max"] <= 4 * BLOCK


def test_columns_index_and_identifiers(release, frame):
    out = release.data.compute()
    given = dd.from_pandas(frame, npartitions=8).compute()  # as Dask holds it (string dtype)
    assert "person" not in out.columns
    assert list(out.columns) == [*QI, "income", "region"]
    # indexed by input position, never by the input's labels ("rid")
    assert out.index.name is None and sorted(out.index) == list(range(N))
    assert "rid" not in out.to_csv().splitlines()[0]
    aligned = out.sort_index().set_axis(given.index)
    pd.testing.assert_series_equal(aligned["income"], given["income"])
    pd.testing.assert_series_equal(aligned["region"], given["region"])
    assert release.params["identifiers"] == ("person",)


def test_an_index_named_like_an_identifier_is_refused_as_in_memory(client, frame):
    ddf = dd.from_pandas(frame.rename_axis("person_id"), npartitions=4)
    with pytest.raises(SchemaError, match=r"index level 'person_id' \(its name looks like an "
                                          r"identifier\).*df\.reset_index\(\)"):
        anonymize_dask(ddf, quasi_identifiers=QI, identifiers="person", k=K, client=client)


def test_missing_values_are_counted(client, frame):
    bad = frame.copy()
    bad.iloc[[3, 50, 900], 0] = np.nan
    bad.iloc[[7], 2] = np.inf
    with pytest.raises(SchemaError, match=r"'x0': 3 missing, 0 infinite; 'x2': 0 missing, 1 infinite"):
        anonymize_dask(dd.from_pandas(bad, npartitions=4), quasi_identifiers=QI, k=K,
                       client=client)


def test_non_numeric_and_unknown_columns(client, frame):
    ddf = dd.from_pandas(frame, npartitions=4)
    with pytest.raises(SchemaError, match=r"'region' \(dtype"):
        anonymize_dask(ddf, quasi_identifiers=[*QI, "region"], k=K, client=client)
    with pytest.raises(SchemaError, match="Unknown column 'nope'"):
        anonymize_dask(ddf, quasi_identifiers=["nope"], k=K, client=client)
    with pytest.raises(SchemaError, match="both in quasi_identifiers and in identifiers"):
        anonymize_dask(ddf, quasi_identifiers=QI, identifiers="x0", k=K, client=client)


def test_bad_parameters(client, frame):
    small = dd.from_pandas(frame.iloc[:30], npartitions=2)
    with pytest.raises(ValueError, match="n_samples=30 should be >= k=31"):
        anonymize_dask(small, quasi_identifiers=QI, k=31, block_size=100, client=client)
    with pytest.raises(ValueError, match=r"'block_size'.*2k=10"):
        anonymize_dask(small, quasi_identifiers=QI, k=K, block_size=9, client=client)
    with pytest.raises(ValueError, match="'k' parameter"):
        anonymize_dask(small, quasi_identifiers=QI, k=1, client=client)
    with pytest.raises(TypeError, match=r"dask\.dataframe"):
        anonymize_dask(frame, quasi_identifiers=QI, k=K, client=client)
    with pytest.raises(TypeError, match="Unknown parameter"):
        anonymize_dask(small, quasi_identifiers=QI, k=K, client=client, gamma=0.1)


def test_constant_column_and_small_file(client):
    """Also the default-client path: ``client`` is the active client of this module."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.normal(size=23), "b": 4.0, "c": rng.integers(0, 3, 23)})
    ddf = dd.from_pandas(df, npartitions=3)
    with pytest.warns(ConstantColumnWarning, match="'b'"):  # no client=: the active one
        rel = anonymize_dask(ddf, quasi_identifiers=["a", "b", "c"], k=4, block_size=8,
                             random_state=0, sample_size=10)
    assert distributed.futures_of(rel.data)  # persisted on the cluster
    out = _by_label(rel, ddf).loc[df.index]
    assert (out["b"] == 4.0).all()
    assert rel.k >= 4
    assert rel.metrics["sst"] == pytest.approx(22 * 2)


def test_merge_small_blocks_and_divisions():
    centroids = np.array([[0.0], [1.0], [10.0], [10.5], [20.0]])
    counts = np.array([100, 3, 100, 9, 100])
    final = merge_blocks(centroids, counts, 10)
    # block 1 (3 rows) joins block 0, block 3 (9 rows) joins block 2
    assert final.tolist() == [0, 0, 1, 1, 2]
    assert merge_blocks(np.zeros((2, 1)), np.array([2, 3]), 10).tolist() == [0, 0]
    assert divisions(np.array([10, 10, 10, 10]), 2) == [0, 2, 3]
    assert divisions(np.array([100, 1, 1, 1]), 3) == [0, 1, 3]
    assert divisions(np.array([7]), 4) == [0, 0]


def test_oversized_block_is_blocked_again():
    rng = np.random.default_rng(1)
    V = rng.normal(size=(1_000, 3))
    blocks = np.zeros(1_000, dtype=np.int64)
    published = np.empty_like(V)
    group = np.empty(1_000, dtype=np.int64)
    partition_blocks(V, blocks, published, group,
                     BlockJob(qi=("a", "b", "c"), centre=np.zeros(3), spread=np.ones(3), k=K,
                              method="mdav", params={}, seed=0, blocking="kd", block_size=50))
    expected = blocked_partition(V, K, block_size=50, n_jobs=1, random_state=0)
    assert np.array_equal(np.unique(group, return_inverse=True)[1].ravel(), expected)
    assert np.bincount(expected).min() >= K


def test_killed_worker_gives_the_same_release(client, frame, monkeypatch):
    """A worker killed while the blocks are being microaggregated: Dask recomputes the lost
    tasks (pure, seeded by block) and the release equals a run without failure."""
    data = frame.iloc[:12_000]
    kwargs = dict(quasi_identifiers=QI, identifiers="person", k=K, block_size=1_000,
                  sample_size=3_000, random_state=11)
    with dask.config.set(scheduler="sync"):  # the reference: in this process, no failure
        expected = anonymize_dask(dd.from_pandas(data, npartitions=12), **kwargs)
        reference = _by_label(expected, dd.from_pandas(data, npartitions=12)).loc[data.index]

    state: dict[str, object] = {}
    original_wait = backend._wait

    def wait_and_kill(collection, active):
        futures = distributed.futures_of(collection)
        first = next(iter(distributed.as_completed(futures)))
        holder = next(iter(active.who_has([first])[first.key]))
        pids = active.run(os.getpid)
        state["done_at_kill"] = sum(f.done() for f in futures)
        state["tasks"] = len(futures)
        os.kill(pids[holder], signal.SIGKILL)
        state["killed"] = holder
        original_wait(collection, active)

    monkeypatch.setattr(backend, "_wait", wait_and_kill)
    t = time.perf_counter()
    survived = anonymize_dask(dd.from_pandas(data, npartitions=12), client=client, **kwargs)
    published = _by_label(survived, dd.from_pandas(data, npartitions=12)).loc[data.index]
    elapsed = time.perf_counter() - t
    print(f"\nkilled {state['killed']} with {state['done_at_kill']}/{state['tasks']} block "
          f"partitions done; recovered in {elapsed:.1f} s")
    assert "killed" in state
    pd.testing.assert_frame_equal(published, reference)
    assert survived.k >= K
    assert survived.metrics["information_loss"] == pytest.approx(
        expected.metrics["information_loss"], rel=1e-12)
    client.wait_for_workers(2, timeout=60)


def test_cli_dask_engine_writes_the_input_order(tmp_path):
    import json

    from typer.testing import CliRunner

    from microagg.cli import EXIT_NOT_PROTECTED, app

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(3000, 3)), columns=["a", "b", "c"]).assign(
        note=rng.choice(["x", "y"], 3000), id=np.arange(3000))
    frame.to_csv(tmp_path / "in.csv", index=False)
    result = CliRunner().invoke(app, [
        "anonymize", str(tmp_path / "in.csv"), "-q", "a,b,c", "--drop", "id", "-k", "4",
        "--engine", "dask", "--block-size", "500", "-o", str(tmp_path / "out.csv"),
        "--summary-json", str(tmp_path / "s.json"), "--random-state", "0"])
    # 'note' (x or y at random) splits the groups: not protected, as in memory
    assert result.exit_code == EXIT_NOT_PROTECTED, result.output
    out = pd.read_csv(tmp_path / "out.csv")
    assert out["note"].tolist() == frame["note"].tolist()
    assert out.groupby(["a", "b", "c"]).size().min() >= 4
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["engine"] == "dask"  # Release.engine, not a parameter
    assert summary["checks"]["published_columns"]["columns"] == {
        "note": int(out.groupby(["a", "b", "c", "note"]).size().min())}


def test_quality_mode_refines_across_blocks_and_equals_one_process(client, frame,
                                                                   monkeypatch):
    """refine: mdav-scale in the blocks, then the second pass across their borders
    (:mod:`microagg.engines.dask._regroup`); the same release on 2 workers as in one
    process, and a lower loss than without the second pass."""
    data = frame.iloc[:12_000]
    kwargs = dict(quasi_identifiers=QI, identifiers="person", k=K, block_size=1_000,
                  sample_size=3_000, random_state=3, refine=30.0)
    monkeypatch.setattr(backend, "REGROUP_BLOCK", 10**9)
    with dask.config.set(scheduler="sync"):
        first_only = anonymize_dask(dd.from_pandas(data, npartitions=6), **kwargs)
    monkeypatch.setattr(backend, "REGROUP_BLOCK", 3_000)
    with dask.config.set(scheduler="sync"):
        alone = anonymize_dask(dd.from_pandas(data, npartitions=6), **kwargs)
        reference = _by_label(alone, dd.from_pandas(data, npartitions=6)).loc[data.index]
    clustered = anonymize_dask(dd.from_pandas(data, npartitions=6), client=client, **kwargs)
    published = _by_label(clustered, dd.from_pandas(data, npartitions=6)).loc[data.index]
    assert alone.params["method"] == "mdav-scale"
    assert "refinement_across_blocks" in clustered.timings
    assert "refinement_across_blocks" not in first_only.timings
    pd.testing.assert_frame_equal(published, reference)
    assert clustered.metrics["information_loss"] == pytest.approx(
        alone.metrics["information_loss"], rel=1e-12)
    assert alone.metrics["information_loss"] < 0.99 * first_only.metrics["information_loss"]
    assert clustered.k >= K and published.groupby(QI).size().min() >= K


def test_the_file_face_refuses_a_plan_of_two_steps_before_any_cluster_starts(tmp_path, frame):
    from microagg._pipeline.rules import EngineRefusal
    from microagg.engines.dask.file import anonymize_dask_file
    from microagg.steps import Microaggregate, Plan

    frame.to_csv(tmp_path / "in.csv", index=False)
    two = Plan([Microaggregate(QI[:2], k=4), Microaggregate(QI[2:], k=4)])
    with pytest.raises(EngineRefusal, match=r"The dask engine .* drop plan \(or use the memory "
                                            r"engine, which runs it\)"):
        anonymize_dask_file(tmp_path / "in.csv", tmp_path / "out.csv", plan=two)
    assert not (tmp_path / "out.csv").exists()
