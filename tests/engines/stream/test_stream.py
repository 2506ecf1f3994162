"""Stream microaggregation (issue 8): k, delay, exactly-once, fixed representatives, CSV."""

from __future__ import annotations

import io
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microagg.engines.stream._buffer as stream_engine
import microagg.engines.stream.engine as stream_module
from microagg._base.groups import group_means
from microagg.engines.stream.check import StreamChecker, check_stream
from microagg.engines.stream.csv_files import stream_csv
from microagg.engines.stream.engine import Published, anonymize_stream
from microagg.exceptions import PrivacyViolationError, SchemaError
from microagg.partition import mdav


def independent_check(X: np.ndarray, out: list[Published], k: int, delay: int) -> None:
    """The guarantees, re-derived without StreamChecker."""
    n = X.shape[0]
    arrivals = [r.arrival for r in out]
    assert sorted(arrivals) == list(range(n))  # every record exactly once
    times = [r.arrival + r.delay for r in out]
    assert all(0 <= r.delay <= delay for r in out)
    assert times == sorted(times)  # output in publication order
    assert all(t <= n - 1 for t in times)
    by_cluster: dict[int, list[Published]] = {}
    for r in out:
        by_cluster.setdefault(r.cluster, []).append(r)
    for members in by_cluster.values():
        assert len({m.values for m in members}) == 1  # one representative, never changed
        first_time = members[0].arrival + members[0].delay
        fresh = [m for m in members if m.arrival + m.delay == first_time]
        assert len(fresh) >= k  # >= k when first published
        # the representative is the mean of the records first published with it
        mean = X[[m.arrival for m in fresh]].mean(axis=0)
        np.testing.assert_allclose(members[0].values, mean, rtol=1e-12, atol=1e-12)
        # later members (the stream's tail) are fewer than k and come last
        late = [m for m in members if m.arrival + m.delay != first_time]
        assert len(late) < k
        assert all(m.arrival + m.delay == n - 1 for m in late)
    counts: dict[tuple[float, ...], int] = {}
    for r in out:
        counts[r.values] = counts.get(r.values, 0) + 1
    assert min(counts.values(), default=k) >= k


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(0, 160),
    p=st.integers(1, 3),
    k=st.integers(2, 6),
    extra=st.integers(0, 30),
    age_fraction=st.floats(0, 1),
    duplicates=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_guarantees_on_random_streams(n, p, k, extra, age_fraction, duplicates, seed):
    delay = k - 1 + extra
    flush_age = int(age_fraction * delay)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if duplicates:
        X = np.round(X)  # heavy ties
    if 0 < n < k:
        with pytest.raises(ValueError, match=f"n_samples={n} should be >= k={k}"):
            list(anonymize_stream(X.tolist(), k, delay=delay, flush_age=flush_age))
        return
    out = list(anonymize_stream(X.tolist(), k, delay=delay, flush_age=flush_age))
    independent_check(X, out, k, delay)
    check = check_stream(out, k=k, delay=delay, n_samples=n)
    assert check.n_samples == n
    assert check.max_delay <= delay
    if n:
        assert check.k >= k


def test_full_window_equals_batch_mdav_on_the_same_scale():
    # one window of delay + 1 records: batch MDAV on the records scaled by their own
    # standard deviations (ddof=0), an independent path to the same groups and means
    rng = np.random.default_rng(3)
    X = rng.normal(size=(41, 3)) * [1.0, 10.0, 100.0]
    out = list(anonymize_stream(X, 4, delay=40))
    labels = mdav(X / X.std(axis=0), 4)
    expected = group_means(X, labels)[labels]
    got = np.empty_like(X)
    for r in out:
        got[r.arrival] = r.values
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert sorted(r.delay for r in out) == list(range(41))


def test_delay_k_minus_1_publishes_consecutive_groups_of_k():
    X = np.arange(20, dtype=float).reshape(-1, 1)
    out = list(anonymize_stream(X, 5, delay=4))
    assert [r.arrival for r in out] == list(range(20))
    assert [r.values[0] for r in out] == [v for v in (2.0, 7.0, 12.0, 17.0) for _ in range(5)]
    assert [r.delay for r in out] == [4, 3, 2, 1, 0] * 4
    assert check_stream(out, k=5, delay=4).k == 5


def test_tail_under_k_reuses_the_nearest_recent_cluster():
    # windows of 6: [0..5] -> two clusters of 3; tail [6, 7] < k joins the nearest
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2], [10.05], [0.05]])
    out = list(anonymize_stream(X, 3, delay=5))
    by_arrival = {r.arrival: r for r in out}
    assert by_arrival[6].cluster == by_arrival[3].cluster
    assert by_arrival[7].cluster == by_arrival[0].cluster
    assert by_arrival[6].values == pytest.approx((10.1,))
    assert by_arrival[6].delay == 1 and by_arrival[7].delay == 0
    check = check_stream(out, k=3, delay=5)
    assert check.n_reused == 2 and check.n_clusters == 2 and check.k == 3


def test_delay_under_k_minus_1_is_refused():
    with pytest.raises(ValueError, match=r"'delay' parameter of anonymize_stream must be an "
                                         r"int >= k - 1 = 4.*Got 3 instead"):
        anonymize_stream([[1.0]] * 10, 5, delay=3)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"k": 1, "delay": 5}, ValueError, "'k' parameter .* >= 2. Got 1"),
    ({"k": 2.5, "delay": 5}, TypeError, "'k' parameter"),
    ({"k": True, "delay": 5}, TypeError, "'k' parameter"),
    ({"k": 3, "delay": "9"}, TypeError, "'delay' parameter"),
    ({"k": 3, "delay": 9, "flush_age": 10}, ValueError, r"'flush_age' .* \[0, 9\]. Got 10"),
    ({"k": 3, "delay": 9, "flush_age": -1}, ValueError, "'flush_age'"),
    ({"k": 3, "delay": 9, "scale": "minmax"}, ValueError, "'scale' parameter"),
    ({"k": 3, "delay": 9, "scale": [1.0, 0.0]}, ValueError, "'scale' parameter"),
    ({"k": 3, "delay": 9, "method": "nope"}, ValueError, "Unknown method 'nope'. Valid"),
])
def test_bad_parameters_fail_at_the_call(kwargs, error, match):
    with pytest.raises(error, match=match):
        anonymize_stream([[1.0, 2.0]] * 10, **kwargs)


def test_k_larger_than_the_stream():
    gen = anonymize_stream([[1.0], [2.0], [3.0]], 5, delay=10)
    with pytest.raises(ValueError, match="n_samples=3 should be >= k=5"):
        next(gen)


def test_empty_stream_publishes_nothing():
    assert list(anonymize_stream([], 3, delay=5)) == []
    assert list(anonymize_stream(iter([pd.DataFrame({"a": []})]), 3, delay=5)) == []
    assert check_stream([], k=3, delay=5).n_samples == 0


@pytest.mark.parametrize(("rows", "error", "match"), [
    ([[1.0, 2.0]] * 7 + [[1.0]], ValueError, "Record 7 has 1 values; expected 2"),
    ([[1.0, 2.0]] * 3 + [[1.0, math.nan]], ValueError, "Record 3, column 1: nan is not finite"),
    ([[1.0, 2.0]] * 2 + [["a", 2.0]], TypeError, "Record 2, column 0: 'a' of type str"),
    ([[1.0, 2.0], [None, 2.0]], TypeError, "Record 1, column 0: None"),
    ([[1.0, 2.0], [1.0, math.inf]], ValueError, "Record 1, column 1: inf is not finite"),
    ([[1.0, 2.0], 5.0], TypeError, "Record 1 must be a sequence of numbers"),
    ([[1.0, 2.0], "ab"], TypeError, "Record 1 must be a sequence of numbers"),
    ([[]], ValueError, "Record 0 is empty"),
])
def test_bad_records_name_arrival_and_column(rows, error, match):
    with pytest.raises(error, match=match):
        list(anonymize_stream(rows, 2, delay=100))


def test_bad_record_after_published_windows_stops_the_stream():
    rows = [[float(i)] for i in range(12)] + [[math.nan]] + [[1.0]] * 5
    gen = anonymize_stream(rows, 2, delay=3)
    got = []
    with pytest.raises(ValueError, match="Record 12, column 0"):
        for r in gen:
            got.append(r)
    assert sorted(r.arrival for r in got) == list(range(12))  # three windows of 4


def test_bad_chunks():
    good = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    with pytest.raises(ValueError, match=r"Record 3, column 'b': nan is not finite"):
        list(anonymize_stream([good, pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, np.nan]})],
                              2, delay=5))
    with pytest.raises(TypeError, match=r"Record 2, column 'b': 'x' of type str"):
        list(anonymize_stream([good, pd.DataFrame({"a": [1.0], "b": ["x"]})], 2, delay=5))
    with pytest.raises(SchemaError, match=r"chunk starting at record 2 has columns \['a', 'c'\]"):
        list(anonymize_stream([good, good.rename(columns={"b": "c"})], 2, delay=5))
    with pytest.raises(ValueError, match="chunk starting at record 2 has 3 columns; expected 2"):
        list(anonymize_stream([np.ones((2, 2)), np.ones((2, 3))], 2, delay=5))
    with pytest.raises(TypeError, match="chunk starting at record 2 is a list"):
        list(anonymize_stream([np.ones((2, 2)), [1.0, 2.0]], 2, delay=5))


def test_inputs_of_every_shape_give_the_same_output():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(503, 4))
    ref = list(anonymize_stream(X.tolist(), 3, delay=50))
    frame = pd.DataFrame(X, columns=list("abcd"))
    chunks = [frame.iloc[i:i + 37] for i in range(0, 503, 37)]
    assert list(anonymize_stream(X, 3, delay=50)) == ref
    assert list(anonymize_stream(list(X), 3, delay=50)) == ref
    assert list(anonymize_stream((tuple(r) for r in X.tolist()), 3, delay=50)) == ref
    assert list(anonymize_stream(frame, 3, delay=50)) == ref
    assert list(anonymize_stream(iter(chunks), 3, delay=50)) == ref
    # deterministic, a randomized method included under a seed
    assert list(anonymize_stream(X, 3, delay=50, method="mdav1")) == \
        list(anonymize_stream(X, 3, delay=50, method="mdav1"))
    a = list(anonymize_stream(X, 3, delay=50, method="top-down", random_state=5))
    assert a == list(anonymize_stream(X, 3, delay=50, method="top-down", random_state=5))
    independent_check(X, a, 3, 50)


def test_published_output_never_depends_on_later_records():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    Y = X.copy()
    Y[150:] *= 1000.0  # later records on another scale entirely
    for flush_age in (0, 20, 60):
        a = list(anonymize_stream(X, 4, delay=60, flush_age=flush_age))
        b = list(anonymize_stream(Y, 4, delay=60, flush_age=flush_age))
        before = [r for r in a if r.arrival + r.delay < 150]
        assert before and before == b[:len(before)]


def test_scale_options():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 2)) * [1.0, 1000.0]
    for scale in ("none", [1.0, 1000.0], np.array([2.0, 5.0])):
        out = list(anonymize_stream(X, 3, delay=30, scale=scale))
        independent_check(X, out, 3, 30)
    # fixed scales equal to the true ones group like the running ones, roughly; 'none'
    # groups on the large column only
    none = list(anonymize_stream(X, 3, delay=30, scale="none"))
    fixed = list(anonymize_stream(X, 3, delay=30, scale=[1.0, 1000.0]))
    assert none != fixed
    with pytest.raises(ValueError, match="'scale' parameter has 3 entries but the records "
                                         "have 2 columns"):
        list(anonymize_stream(X, 3, delay=30, scale=[1.0, 1.0, 1.0]))


def test_flush_age_keeps_young_groups_but_every_guarantee_holds():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 3))
    for flush_age in (0, 10, 50, 99, 100):
        out = list(anonymize_stream(X, 5, delay=100, flush_age=flush_age))
        independent_check(X, out, 5, 100)
    tumbling = list(anonymize_stream(X, 5, delay=100))
    assert {r.arrival + r.delay for r in tumbling} == {100, 201, 302, 403, 504, 605, 706, 807,
                                                       908, 999}


def test_group_under_k_from_the_partitioner_is_never_published(monkeypatch):
    real = stream_module.get_partitioner

    class Broken:
        name = "broken"

        def __call__(self, X, k, *, random_state=None):
            return np.arange(X.shape[0])  # singletons

    for module in (stream_module, stream_engine):  # the face checks the name, the engine runs it
        monkeypatch.setattr(module, "get_partitioner",
                            lambda method: Broken() if method == "broken" else real(method))
    gen = anonymize_stream(np.ones((10, 2)), 3, delay=4, method="broken")
    with pytest.raises(PrivacyViolationError, match="group of 1 < k=3"):
        next(gen)
    batch = stream_engine.Batch(index=np.array([0, 1]), cluster=np.array([0, 0]),
                                values=np.zeros((2, 1)), delay=np.array([1, 0]),
                                payload=None, reps={0: (0.0,)})
    with pytest.raises(PrivacyViolationError, match=r"Cluster 0 .* 2 < k=3"):
        stream_engine.checked_records(batch, 3)


@pytest.mark.parametrize(("out", "match"), [
    ([Published(0, (1.0,), 0, 0), Published(0, (1.0,), 0, 0)], "published twice"),
    ([Published(0, (1.0,), 0, 1), Published(2, (1.0,), 0, 0)], "1 missing"),
    ([Published(0, (1.0,), 0, 3), Published(1, (1.0,), 0, 2)], "delay 3, outside"),
    ([Published(0, (1.0,), 0, 1), Published(1, (2.0,), 0, 0)], "changed its representative"),
    ([Published(0, (1.0,), 0, 0), Published(1, (1.0,), 1, 0)], "first published with fewer"),
    ([Published(1, (1.0,), 0, 1), Published(0, (1.0,), 0, 1)], "not in publication order"),
    ([Published(0, (1.0,), 0, 2), Published(1, (1.0,), 0, 0)], "not in publication order"),
])
def test_check_stream_catches_violations(out, match):
    with pytest.raises(PrivacyViolationError, match=match):
        check_stream(out, k=2, delay=2)


def test_check_stream_counts_classes_when_they_appear():
    # two clusters with the same value published at once form one class of 4; published
    # at different times, the class had only the first cluster's records when it appeared
    out = [Published(0, (1.0,), 0, 3), Published(1, (1.0,), 0, 2),
           Published(2, (1.0,), 1, 1), Published(3, (1.0,), 1, 0)]
    assert check_stream(out, k=2, delay=3).k == 4
    later = [*out[:2], Published(2, (1.0,), 1, 2), Published(3, (1.0,), 1, 1),
             Published(4, (1.0,), 1, 0)]
    assert check_stream(later, k=2, delay=3).k == 2  # the class had 2 when it appeared
    with pytest.raises(PrivacyViolationError, match="1 missing"):
        check_stream(out, k=2, delay=3, n_samples=5)
    with pytest.raises(PrivacyViolationError, match="beyond its end"):
        check_stream(out, k=2, delay=3, n_samples=3)
    checker = StreamChecker(k=2, delay=3)
    for r in out:
        checker.update(r)
    assert checker.result().n_clusters == 2


def test_published_is_an_immutable_record():
    out = list(anonymize_stream([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], 3, delay=2))
    r = out[0]
    arrival, values, cluster, delay = r
    assert (arrival, values, cluster, delay) == (0, (3.0, 4.0), 0, 2)
    assert r._fields == ("arrival", "values", "cluster", "delay")
    with pytest.raises(AttributeError):
        r.values = (0.0, 0.0)  # type: ignore[misc]
    assert out[1].values is out[0].values  # one tuple per cluster


# ------------------------------------------------------------------------------------------
# CSV


@pytest.fixture
def csv_source(tmp_path):
    rng = np.random.default_rng(9)
    n = 257
    frame = pd.DataFrame({
        "id": [f"person{i}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "income": np.round(rng.lognormal(10, 1, n), 2),
        "diagnosis": rng.choice(["flu", "", "cold, mild"], n),
        "height": rng.normal(170, 10, n),
    })
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_stream_csv_round_trip(tmp_path, csv_source):
    src, frame = csv_source
    dst = tmp_path / "out.csv"
    check = stream_csv(src, dst, columns=["age", "income", "height"], keep=["diagnosis"],
                       k=4, delay=30, chunk_rows=50, index_column="arrival",
                       cluster_column="cluster", delay_column="delay")
    out = pd.read_csv(dst, keep_default_na=False)
    assert list(out.columns) == ["arrival", "age", "income", "height", "diagnosis",
                                 "cluster", "delay"]
    assert sorted(out["arrival"]) == list(range(len(frame)))
    assert check.n_rows == len(frame) and check.k >= 4
    assert check.checks["delay"]["achieved"] <= 30 and check.engine == "stream"
    # kept columns copied verbatim, joined back by arrival index
    back = out.set_index("arrival").sort_index()
    assert back["diagnosis"].tolist() == frame["diagnosis"].tolist()
    # the same values as the iterator on the same data
    X = frame[["age", "income", "height"]].to_numpy(dtype=float)
    ref = list(anonymize_stream(X, 4, delay=30))
    assert out["arrival"].tolist() == [r.arrival for r in ref]
    np.testing.assert_array_equal(out[["age", "income", "height"]].to_numpy(),
                                  np.array([r.values for r in ref]))
    assert out["cluster"].tolist() == [r.cluster for r in ref]
    assert out["delay"].tolist() == [r.delay for r in ref]
    assert "id" not in out.columns


def test_stream_csv_without_index_shuffles_within_clusters(tmp_path, csv_source):
    src, frame = csv_source
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    stream_csv(src, a, columns=["age", "height"], keep=["diagnosis"], k=4, delay=30,
               cluster_column="cluster", random_state=1)
    stream_csv(src, b, columns=["age", "height"], keep=["diagnosis"], k=4, delay=30,
               cluster_column="cluster", random_state=1)
    assert a.read_bytes() == b.read_bytes()  # deterministic under a seed
    out = pd.read_csv(a, keep_default_na=False)
    assert list(out.columns) == ["age", "height", "diagnosis", "cluster"]
    ref = list(anonymize_stream(frame[["age", "height"]], 4, delay=30))
    # same clusters in the same order, same members (kept values), order inside shuffled
    assert out["cluster"].tolist() == [r.cluster for r in ref]
    for c, rows in out.groupby("cluster", sort=False):
        members = [r.arrival for r in ref if r.cluster == c]
        assert sorted(rows["diagnosis"]) == sorted(frame["diagnosis"].iloc[members])
    assert out["diagnosis"].tolist() != [frame["diagnosis"].iloc[r.arrival] for r in ref]


def test_stream_csv_gzip_and_handles(tmp_path, csv_source, monkeypatch, capsys):
    src, frame = csv_source
    dst = tmp_path / "out.csv.gz"
    stream_csv(src, dst, columns=["age", "height"], k=3, delay=20, index_column="i")
    gz = pd.read_csv(dst)
    assert list(gz.columns) == ["i", "age", "height"] and len(gz) == len(frame)
    # stdin to stdout
    monkeypatch.setattr("sys.stdin", io.StringIO(src.read_text()))
    stream_csv("-", "-", columns=["age", "height"], k=3, delay=20, index_column="i")
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    pd.testing.assert_frame_equal(printed, gz)
    # a text handle
    handle = io.StringIO()
    stream_csv(io.StringIO(src.read_text()), handle, columns=["age", "height"], k=3, delay=20,
               index_column="i")
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(handle.getvalue())), gz)


def test_stream_csv_is_atomic(tmp_path, csv_source):
    _, frame = csv_source
    bad = frame.copy()
    bad["age"] = bad["age"].astype(object)
    bad.loc[200, "age"] = "unknown"
    bad_path = tmp_path / "bad.csv"
    bad.to_csv(bad_path, index=False)
    dst = tmp_path / "out.csv"
    dst.write_text("previous content\n")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(TypeError, match="Record 200, column 'age': 'unknown'"):
        stream_csv(bad_path, dst, columns=["age", "height"], k=3, delay=20, chunk_rows=64)
    assert dst.read_text() == "previous content\n"
    assert sorted(os.listdir(tmp_path)) == before  # no temporary file left
    missing = tmp_path / "new.csv"
    with pytest.raises(ValueError, match="Record 3, column 'height': missing value"):
        empty_cell = frame.astype({"height": object})
        empty_cell.loc[3, "height"] = ""
        empty_cell.to_csv(bad_path, index=False)
        stream_csv(bad_path, missing, columns=["age", "height"], k=3, delay=20)
    assert not missing.exists()


def test_stream_csv_schema_errors(tmp_path, csv_source):
    src, _ = csv_source
    dst = tmp_path / "out.csv"
    with pytest.raises(SchemaError, match="'weight' are not in the header"):
        stream_csv(src, dst, columns=["age", "weight"], k=3, delay=20)
    with pytest.raises(SchemaError, match="'age' appear twice"):
        stream_csv(src, dst, columns=["age"], keep=["age"], k=3, delay=20)
    with pytest.raises(ValueError, match="never overwrites its input"):
        stream_csv(src, src, columns=["age"], k=3, delay=20)
    assert not dst.exists()
    # a header-only file publishes nothing and writes the header
    head = tmp_path / "head.csv"
    head.write_text("age,height\n")
    assert stream_csv(head, dst, columns=["age"], k=3, delay=20).n_rows == 0
    assert dst.read_text() == "age\n"


def test_stream_csv_builds_a_request_from_its_first_rows(tmp_path):
    # the stream engine takes a Request like every engine (issue 17): roles, column types and
    # the method are checked by Request.build, with the engines' one message for a method
    # it cannot run
    from microagg._pipeline.rules import EngineRefusal

    source = tmp_path / "in.csv"
    pd.DataFrame(np.random.default_rng(0).normal(size=(20, 2)), columns=["a", "b"]).to_csv(
        source, index=False)
    with pytest.raises(EngineRefusal, match="The stream engine runs numeric microaggregation"):
        stream_csv(source, tmp_path / "out.csv", columns=["a", "b"], k=2, delay=3,
                   method="cdt")
    assert not (tmp_path / "out.csv").exists()
