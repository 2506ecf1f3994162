"""Time-series microaggregation (issue 22, part 3): MDAV on series, DTW, representatives,
the release and its checks."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from microagg.exceptions import PrivacyViolationError
from microagg.partition import PARTITIONERS, mdav
from microagg.series import anonymize_series, dtw_distance, series_mdav, series_representatives
from microagg.series import distance as series_distance

# Six short series, two obvious groups of three (worked by hand in the comments below).
SIX = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0],
                [9.0, 9.0, 9.0], [9.0, 8.0, 9.0], [8.0, 9.0, 9.0]])


def _frame(X: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(X, columns=[f"t{i}" for i in range(X.shape[1])])


def _walks(n: int, length: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, length)).cumsum(axis=1)


@pytest.mark.parametrize("distance", ["euclidean", "dtw"])
def test_worked_example_groups_means_and_loss(distance: str) -> None:
    release = anonymize_series(_frame(SIX), series_columns="t*", k=3, distance=distance,
                               representative="mean", random_state=0)
    labels = release.labels
    assert labels is not None
    assert labels[0] == labels[1] == labels[2] != labels[3] == labels[4] == labels[5]
    published = release.data.to_numpy()
    # group means by hand: (0, 1/3, 2/3) and (26/3, 26/3, 9)
    np.testing.assert_allclose(published[:3], [[0.0, 1 / 3, 2 / 3]] * 3)
    np.testing.assert_allclose(published[3:], [[26 / 3, 26 / 3, 9.0]] * 3)
    # SSE = 4/3 + 4/3 = 8/3; SST = 1020/9 + 105.5 + 3774/36 = 11652/36; IL = 100 SSE / SST
    assert release.metrics["information_loss"] == pytest.approx(100 * 96 / 11652)
    assert release.checks["k_anonymity"]["achieved"] == 3 and release.k == 3
    # every record's nearest published series is its own; 3 records share each
    assert release.metrics["linkage_risk"] == 1.0
    assert release.metrics["reidentification_risk"] == pytest.approx(1 / 3)
    assert release.params["distance"] == distance and release.seed == 0


@pytest.mark.parametrize("distance", ["euclidean", "dtw"])
@pytest.mark.parametrize(("n", "k"), [(7, 2), (23, 3), (41, 5), (64, 10)])
def test_every_group_has_at_least_k(distance: str, n: int, k: int) -> None:
    X = _walks(n, 16, seed=n)
    labels = series_mdav(X, k, distance=distance, band=None if distance == "euclidean" else 3)
    sizes = np.bincount(labels)
    assert labels.shape == (n,) and sizes.min() >= k and (sizes[:-1] == k).all()
    assert sizes[-1] < 2 * k


def test_euclidean_is_exact_mdav_on_the_matrix() -> None:
    X = _walks(120, 30)
    np.testing.assert_array_equal(series_mdav(X, 4), mdav(X, 4))
    np.testing.assert_array_equal(PARTITIONERS["series-mdav"](X, 4), mdav(X, 4))


def test_registered_with_its_parameters() -> None:
    entry = PARTITIONERS["series-mdav"]
    assert entry.params == {"distance": "euclidean", "band": None} and entry.fixed_size
    with pytest.raises(ValueError, match="'band' parameter of series-mdav"):
        entry(_walks(10, 5), 2, distance="dtw", band=-1)


@pytest.mark.parametrize("band", [None, 0, 2, 7])
def test_dtw_equals_tslearn(band: int | None) -> None:
    metrics = pytest.importorskip("tslearn.metrics")
    a, b = np.random.default_rng(3).standard_normal((2, 40))
    options = {} if band is None else {"global_constraint": "sakoe_chiba",
                                       "sakoe_chiba_radius": band}
    assert dtw_distance(a, b, band=band) == pytest.approx(metrics.dtw(a, b, **options))


def test_dtw_band_zero_is_euclidean_and_full_band_is_unconstrained() -> None:
    a, b = np.random.default_rng(4).standard_normal((2, 25))
    assert dtw_distance(a, b, band=0) == pytest.approx(float(np.linalg.norm(a - b)))
    assert dtw_distance(a, b, band=24) == pytest.approx(dtw_distance(a, b))


def test_dtw_mdav_never_builds_an_n_by_n_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 600
    X = _walks(n, 40, seed=5)
    calls: list[tuple[int, ...]] = []
    real = series_distance.distances_to

    def spy(query: np.ndarray, rows: np.ndarray, distance: str, band: int | None
            ) -> np.ndarray:
        calls.append((query.ndim, *rows.shape))
        out = real(query, rows, distance, band)
        assert out.shape == (rows.shape[0],)
        return out

    monkeypatch.setattr(series_distance, "distances_to", spy)
    series_mdav(X[:20], 3, distance="dtw", band=4)  # compile outside the measurement
    tracemalloc.start()
    labels = series_mdav(X, 3, distance="dtw", band=4)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert np.bincount(labels).min() >= 3
    assert all(c[0] == 1 and c[1] <= n for c in calls)  # one series against the rest
    assert peak < 8 * n * n / 4  # an n x n float64 matrix would take 2.9 MB; X is 0.19 MB


def test_deterministic_and_seed_recorded() -> None:
    df = _frame(_walks(50, 12, seed=6))
    one = anonymize_series(df, series_columns="t", k=4, distance="dtw", band=2,
                           representative="mean", random_state=11)
    two = anonymize_series(df, series_columns="t", k=4, distance="dtw", band=2,
                           representative="mean", random_state=11)
    pd.testing.assert_frame_equal(one.data, two.data)
    assert one.seed == two.seed == 11 and one.metrics == two.metrics
    drawn = anonymize_series(df, series_columns="t", k=4)
    assert isinstance(drawn.seed, int) and drawn.params["representative"] == "mean"


def test_identifiers_dropped_other_columns_kept_and_warned() -> None:
    df = _frame(SIX)
    df.insert(0, "name", list("abcdef"))
    df["region"] = [1, 1, 2, 2, 3, 3]
    release = anonymize_series(df, series_columns=["t0", "t1", "t2"], k=3,
                               identifiers="name", random_state=0)
    assert list(release.data.columns) == ["t0", "t1", "t2", "region"]
    assert release.data["region"].tolist() == [1, 1, 2, 2, 3, 3]
    assert "published unchanged" in release.warnings[0]


def test_published_series_are_k_anonymous_on_random_data() -> None:
    df = _frame(_walks(97, 20, seed=8))
    release = anonymize_series(df, series_columns="t*", k=6, random_state=0)
    counts = release.data.value_counts()
    assert counts.min() >= 6 and release.k == counts.min()
    assert release.checks["group_k"]["achieved"] >= 6


def test_shortfall_raises_privacy_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    from microagg.series import release as release_module

    def two_series(V: np.ndarray, labels: np.ndarray, method: str, band: object
                   ) -> np.ndarray:
        return V[[0, 1]]  # group 1 published as record 1's own series: still 3 + 3 alike

    monkeypatch.setattr(release_module, "group_centres", two_series)
    assert anonymize_series(_frame(SIX), series_columns="t", k=3).k == 3

    real = release_module.published_classes
    monkeypatch.setattr(release_module, "published_classes",  # one published row altered
                        lambda published, columns: np.array([*real(published, columns)[:5], 2]))
    with pytest.raises(PrivacyViolationError, match="only 1-anonymous, below the required k=3"):
        anonymize_series(_frame(SIX), series_columns="t", k=3)


def test_bad_inputs_are_named() -> None:
    df = _frame(SIX)
    with pytest.raises(ValueError, match="n_samples=6 should be >= k=7"):
        anonymize_series(df, series_columns="t", k=7)
    holes = df.copy()
    holes.loc[[1, 4], "t2"] = np.nan
    with pytest.raises(ValueError, match="'t2': 2 missing"):
        anonymize_series(holes, series_columns="t", k=3)
    text = df.astype(object)
    text.loc[0, "t1"], text.loc[5, "t1"], text.loc[2, "t0"] = "x", "?", "n/a"
    with pytest.raises(ValueError, match=r"'t0': 1 non-numeric; 't1': 2 non-numeric"):
        anonymize_series(text, series_columns="t", k=3)
    with pytest.raises(ValueError, match=r"'band' parameter of anonymize_series must be None "
                                         r"or an int >= 0\. Got -1"):
        anonymize_series(df, series_columns="t", k=3, distance="dtw", band=-1)
    with pytest.raises(ValueError, match="distance='dtw' only"):
        anonymize_series(df, series_columns="t", k=3, band=2)
    with pytest.raises(ValueError, match="'distance' parameter of anonymize_series must be one"):
        anonymize_series(df, series_columns="t", k=3, distance="cosine")
    with pytest.raises(ValueError, match=r"'x\*' matches no column .*glob pattern"):
        anonymize_series(df, series_columns="x*", k=3)
    with pytest.raises(ValueError, match="Series column\\(s\\) 'u9' not in the table"):
        anonymize_series(df, series_columns=["t0", "u9"], k=3)
    with pytest.raises(TypeError, match="'band' parameter of dtw_distance"):
        dtw_distance([1.0, 2.0], [1.0, 2.0], band=1.5)


def test_dba_representative_is_tslearn_barycentre() -> None:
    barycenters = pytest.importorskip("tslearn.barycenters")
    X = _walks(6, 30, seed=9)
    labels = np.array([0, 0, 0, 1, 1, 1])
    masked = series_representatives(X, labels, method="dba", band=3)
    expected = barycenters.dtw_barycenter_averaging(
        X[:3, :, None], barycenter_size=30, init_barycenter=X[:3].mean(axis=0)[:, None],
        max_iter=30, tol=1e-5,
        metric_params={"global_constraint": "sakoe_chiba", "sakoe_chiba_radius": 3})
    np.testing.assert_allclose(masked[0], expected.ravel())
    assert (masked[:3] == masked[0]).all() and (masked[3:] == masked[3]).all()


def test_trace_release_at_k5() -> None:
    datasets = pytest.importorskip("tslearn.datasets")
    train, _, test, _ = datasets.CachedDatasets().load_dataset("Trace")
    X = np.concatenate([train, test])[:, :, 0]
    assert X.shape == (200, 275)
    euclid = anonymize_series(_frame(X), series_columns="t", k=5, random_state=0)
    assert euclid.k >= 5 and 0.0 < euclid.metrics["information_loss"] < 20.0
    small = _frame(X[::5])  # 40 series with DBA: keeps the test short
    dtw = anonymize_series(small, series_columns="t", k=5, distance="dtw", band=10,
                           random_state=0)
    assert dtw.k >= 5 and dtw.params["representative"] == "dba"
    assert dtw.metrics["dtw_mean"] > 0.0


def test_euclidean_linkage_by_matrix_product_equals_one_row_at_a_time() -> None:
    from microagg.series.measure import nearest_series_linkage

    X = _walks(60, 12, seed=12)
    release = anonymize_series(_frame(X), series_columns="t", k=4, random_state=0)
    assert release.labels is not None
    published = release.data.to_numpy()
    by_product = nearest_series_linkage(X, published, release.labels, "euclidean", None)
    by_rows = nearest_series_linkage(X, published, release.labels, "dtw", 0)  # band 0: L2
    assert by_product == pytest.approx(by_rows)
    assert by_product == (release.metrics["linkage_risk"],
                          release.metrics["reidentification_risk"])


def test_integer_column_names_and_a_list_in_time_order() -> None:
    df = pd.DataFrame(SIX)  # columns 0, 1, 2
    release = anonymize_series(df, series_columns=["0", "1", "2"], k=3, random_state=0)
    assert list(release.data.columns) == ["0", "1", "2"] and release.k == 3
