"""The release pipeline: roles, order, verification, determinism and every kind of bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import (
    ConstantColumnWarning,
    MicroAggregator,
    PrivacyViolationError,
    Release,
    SchemaError,
    anonymize,
)


@pytest.fixture
def people(rng) -> pd.DataFrame:
    n = 60
    return pd.DataFrame({
        "name": [f"person {i}" for i in range(n)],
        "age": rng.integers(18, 90, n),
        "income": rng.normal(30_000, 8_000, n).round(2),
        "children": rng.integers(0, 4, n),
        "diagnosis": rng.choice(["flu", "asthma", "none"], n),
        "weight": rng.uniform(0.5, 2.0, n),
    }, index=pd.RangeIndex(100, 100 + n))


def run(df: pd.DataFrame, **kw) -> Release:
    args = {"quasi_identifiers": ["age", "income", "children"], "k": 4, "identifiers": "name",
            "sensitive": "diagnosis", "random_state": 0,
            "keep": "weight"}  # unique on every row: published unchanged on purpose
    args.update(kw)
    return anonymize(df, **args)


def test_roles_order_and_passthrough(people):
    release = run(people)
    out = release.data
    assert list(out.columns) == ["age", "income", "children", "diagnosis", "weight"]
    assert "name" not in out.columns  # identifiers are dropped
    # the input's row order, indexed by row position (the input's labels, 100.., never)
    assert out.index.equals(pd.RangeIndex(len(people)))
    pd.testing.assert_series_equal(out["diagnosis"], people["diagnosis"].reset_index(drop=True))
    pd.testing.assert_series_equal(out["weight"], people["weight"].reset_index(drop=True))
    # each group's quasi-identifiers are its mean on the original scale
    for g in np.unique(release.labels):
        rows = release.labels == g
        np.testing.assert_allclose(out.loc[rows, "income"], people.loc[rows, "income"].mean())
    assert release.k >= 4
    assert release.checks["k_anonymity"]["required"] == 4
    assert release.metrics["group_size_min"] >= 4
    assert 0 < release.metrics["information_loss"] < 100
    assert 0 <= release.metrics["dld_risk"] <= 1
    assert set(release.timings) >= {"partition", "aggregate", "verify", "measure", "total"}


def test_input_is_not_modified(people):
    before = people.copy()
    run(people)
    pd.testing.assert_frame_equal(people, before)


def test_seed_is_recorded_and_reproduces(people):
    a = run(people, random_state=None)
    b = run(people, random_state=a.seed)
    assert isinstance(a.seed, int)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.data.to_csv().encode() == b.data.to_csv().encode()  # byte-identical output
    assert a.summary()["seed"] == a.seed


def test_summary_is_json(people):
    import json

    summary = json.loads(run(people).to_json())
    assert summary["checks"]["k_anonymity"]["achieved"] >= 4
    assert summary["params"]["method"] == "mdav"
    assert summary["rows"] == len(people)


def test_release_is_frozen(people):
    release = run(people)
    with pytest.raises(AttributeError):
        release.seed = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        release.params["k"] = 1  # type: ignore[index]


def test_release_pickles_and_stays_read_only(people):
    """The workbench hands releases from its worker process (pickled): nothing is lost and
    the read-only mappings stay read-only."""
    import pickle

    release = run(people, l=2)
    again = pickle.loads(pickle.dumps(release))
    assert again.to_json() == release.to_json()
    pd.testing.assert_frame_equal(again.data, release.data)
    np.testing.assert_array_equal(again.labels, release.labels)
    with pytest.raises(TypeError):
        again.params["k"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        again.checks["k_anonymity"]["achieved"] = 1  # type: ignore[index]


@pytest.mark.parametrize("method", ["mdav", "mdav1", "md", "cbfs", "vmdav"])
@pytest.mark.parametrize("aggregation", ["mean", "median", "mode"])
def test_every_method_and_aggregation_is_verified(people, method, aggregation):
    release = run(people, method=method, aggregation=aggregation)
    assert release.k >= 4
    assert release.params["method"] == method


def test_method_params_are_passed_and_recorded(people):
    release = run(people, method="vmdav", method_params={"gamma": 1.1})
    assert release.params["method_params"]["gamma"] == 1.1


def test_nan_in_quasi_identifier_names_column_and_count(people):
    people.loc[[100, 103, 107], "income"] = np.nan
    with pytest.raises(SchemaError, match=r"'income': 3 missing\)"):
        run(people, missing="refuse")  # the default, "pattern", releases them


def test_inf_in_quasi_identifier(people):
    people["income"] = people["income"].astype(float)
    people.loc[101, "income"] = np.inf
    with pytest.raises(SchemaError, match=r"'income': 0 missing, 1 infinite"):
        run(people)


def test_non_numeric_quasi_identifier_names_dtype(people):
    with pytest.raises(SchemaError, match=r"'diagnosis' \(dtype (str|object), hierarchy: flat\)"):
        run(people, quasi_identifiers=["age", "diagnosis"], sensitive=(), method="mdav")


def test_unknown_column_lists_available(people):
    with pytest.raises(SchemaError, match=r"Unknown column 'agee' in quasi_identifiers.*"
                                          r"Available columns: 'name', 'age'"):
        run(people, quasi_identifiers=["agee"])


def test_role_conflict_and_duplicates(people):
    with pytest.raises(SchemaError, match=r"'age' is both in quasi_identifiers and in sensitive"):
        run(people, sensitive=["age"])
    with pytest.raises(SchemaError, match=r"lists 'age' more than once"):
        run(people, quasi_identifiers=["age", "age"])
    with pytest.raises(SchemaError, match="No quasi-identifiers"):
        run(people, quasi_identifiers=[])


@pytest.mark.parametrize(("k", "exc", "msg"), [
    (1, ValueError, r"must be an int >= 2. Got 1 instead"),
    (61, ValueError, r"n_samples=60 should be >= k=61"),
    ("5", TypeError, r"must be an int >= 2. Got '5'"),
    (4.0, TypeError, r"Got 4.0 of type float"),
])
def test_bad_k(people, k, exc, msg):
    with pytest.raises(exc, match=msg):
        run(people, k=k)


def test_empty_table():
    df = pd.DataFrame({"age": pd.Series([], dtype=float)})
    with pytest.raises(SchemaError, match="no rows"):
        anonymize(df, quasi_identifiers="age", k=2)


def test_not_a_dataframe():
    with pytest.raises(TypeError, match=r"expects a pandas DataFrame\. Got ndarray"):
        anonymize(np.zeros((4, 2)), quasi_identifiers="a", k=2)  # type: ignore[arg-type]


def test_bad_scaling_and_aggregation(people):
    with pytest.raises(ValueError, match=r"Unknown scaling 'log'. Valid: standard"):
        run(people, scaling="log")
    with pytest.raises(ValueError, match=r"Unknown aggregation 'avg'"):
        run(people, aggregation="avg")
    with pytest.raises(ValueError, match=r"Unknown method 'mdavv'"):
        run(people, method="mdavv")


def test_constant_column_excluded_with_warning_never_nan(people):
    people["country"] = 7
    with pytest.warns(ConstantColumnWarning, match=r"'country' are constant"):
        release = run(people, quasi_identifiers=["age", "income", "country"])
    assert (release.data["country"] == 7).all()
    assert not release.data.isna().any().any()
    assert any("constant" in w for w in release.warnings)
    assert np.isfinite(release.metrics["information_loss"])


def test_all_constant_quasi_identifiers(people):
    people["a"] = 1.0
    people["b"] = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantColumnWarning)
        release = run(people, quasi_identifiers=["a", "b"], identifiers=["name", "age", "income"])
    assert release.k == len(people)
    assert release.metrics["information_loss"] == 0.0


def test_duplicates_and_heavy_ties():
    df = pd.DataFrame({"x": [1, 1, 1, 1, 2, 2, 2, 2, 2] * 5, "y": [0, 0, 0, 0, 0, 5, 5, 5, 5] * 5})
    for method in ("mdav", "md", "cbfs", "mdav1", "vmdav"):
        release = anonymize(df, quasi_identifiers=["x", "y"], k=3, method=method)
        assert release.k >= 3


def test_minmax_and_no_scaling(people):
    for scaling in ("minmax", "none"):
        assert run(people, scaling=scaling).k >= 4


def test_shortfall_raises_privacy_violation(people, monkeypatch):
    # a broken partitioner: labels that claim groups of 4 but the groups' means are unique per
    # row cannot happen; instead fake the aggregation returning the raw values.
    import microagg._pipeline.numeric as release_module  # where the stages aggregate

    monkeypatch.setattr(release_module, "aggregate",
                        lambda values, labels, **kw: np.asarray(values, dtype=float))
    with pytest.raises(PrivacyViolationError, match="below the required k=4"):
        run(people)


def test_microaggregator_sklearn_face(rng):
    from sklearn.base import clone

    X = rng.standard_normal((50, 3)) * [1, 100, 10000]
    est = MicroAggregator(k=5)
    labels = est.fit_predict(X)
    assert np.bincount(labels).min() >= 5
    np.testing.assert_array_equal(labels, est.labels_)
    assert est.n_groups_ == labels.max() + 1
    masked = clone(est).fit_transform(X)
    assert masked.shape == X.shape
    assert clone(est).get_params()["k"] == 5
    with pytest.raises(ValueError, match="'scaling' parameter of MicroAggregator"):
        MicroAggregator(k=5, scaling="weird").fit(X)


def test_random_state_forms(people):
    assert run(people, random_state=np.random.default_rng(3)).seed >= 0
    with pytest.raises(ValueError, match="'random_state' parameter must be None, an int >= 0"):
        run(people, random_state=-1)
    with pytest.raises(TypeError, match="'random_state' parameter"):
        run(people, random_state="seed")


def test_registry_reachable_from_the_package():
    import microagg

    assert "mdav" in microagg.partition.PARTITIONERS
    assert microagg.PARTITIONERS is microagg.partition.PARTITIONERS
    labels = microagg.partition.partition(np.zeros((6, 1)), 3, method="mdav")
    assert np.bincount(labels).min() >= 3


def test_invalid_partition_from_a_method_is_an_internal_error(people, monkeypatch):
    from microagg import InternalError
    from microagg.partition import PARTITIONERS, Partitioner

    broken = Partitioner("broken", lambda X, k, random_state=None: np.arange(X.shape[0]),
                         "groups of one", "none", fixed_size=False)
    monkeypatch.setattr("microagg.engines.blocked.get_partitioner", lambda name: broken)
    with pytest.raises(InternalError, match=r"'broken' returned an invalid partition"):
        run(people)
    assert "broken" not in PARTITIONERS


def test_column_losses_average_to_the_headline_loss():
    """SSE/SST on z-scores is the mean of the columns' own SSE/SST (each column's sum of
    squares is n after standardizing), so the per-column figures the summary names the
    worst of add up to the headline."""
    from microagg.datasets import load_dataset

    census = load_dataset("census")
    release = anonymize(census.data, quasi_identifiers=census.quasi_identifiers, k=5,
                        random_state=0, rounding=False)
    losses = dict(release.metrics["column_loss"])
    assert set(losses) == set(census.quasi_identifiers)
    assert np.mean(list(losses.values())) == pytest.approx(
        release.metrics["information_loss"], rel=1e-3)


def test_numeric_release_reports_sdcmicros_measures():
    """Issue 19: a numeric release carries sdcMicro's interval disclosure, IL1s (as its sum)
    and eigenvalue measure; on Census, 7 columns, mdav k = 3, seed 0, unrounded means, they
    equal sdcMicro 5.8.1's figures in the issue (dRisk at k = 0.01 / 0.05 / 0.10, IL1s,
    eigen)."""
    from microagg.datasets import load_dataset

    cols = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC"]
    release = anonymize(load_dataset("census").data[cols], quasi_identifiers=cols, k=3,
                        method="mdav", random_state=0, rounding=False)
    m = release.metrics
    assert dict(m["interval_disclosure"]) == pytest.approx(
        {"p = 0.01": 0.0, "p = 0.05": 0.00092593, "p = 0.1": 0.01203704}, abs=5e-9)
    assert m["il1s_total"] == pytest.approx(772.197617, abs=5e-7)
    assert m["eigenvalue_utility"] == pytest.approx(1.05454534, abs=5e-9)


def test_the_one_constructor_lays_out_every_release():
    from types import MappingProxyType

    from microagg._pipeline.result import DOMAIN_PARAMS
    from microagg.engines import PARAMS

    checks = {"k_anonymity": {"required": 2, "achieved": 2, "model": "classes"}}
    table = Release.of(data=None, labels=None, params={"k": 2, "method": "mdav"}, seed=0,
                       checks=checks, metrics={}, warnings=iter(["a", "b"]), rows=4,
                       columns=["x"])
    assert list(table.params) == list(PARAMS) and table.params["epsilon"] is None
    assert isinstance(table.checks, MappingProxyType) and table.warnings == ("a", "b")
    assert table.columns == ("x",) and table.steps == () and table.verdict.status == "protected"
    checks["k_anonymity"] = {"required": 2, "achieved": 1, "model": "classes"}
    assert table.k == 2  # a copy: the caller's dict changes nothing
    with pytest.raises(KeyError, match=r"no key\(s\) 'distance'.*bug in microagg"):
        Release.of(data=None, labels=None, params={"distance": "dtw"}, seed=0, checks=checks,
                   metrics={})
    series = dict.fromkeys(DOMAIN_PARAMS["series"], None)
    laid = Release.of(data=None, labels=None, params=dict(reversed(series.items())),
                      layout="series", seed=0, checks=checks, metrics={})
    assert list(laid.params) == list(DOMAIN_PARAMS["series"])
    with pytest.raises(KeyError, match=r"The series Release.params have the keys .*, not"):
        Release.of(data=None, labels=None, params={**series, "extra": 1}, layout="series",
                   seed=0, checks=checks, metrics={})
    with pytest.raises(KeyError, match=r"no layout 'tables'; its layouts are 'table', "):
        Release.of(data=None, labels=None, params={}, layout="tables", seed=0, checks=checks,
                   metrics={})
    assessed = Release.of(data=None, labels=None, params={"anything": 1}, layout="assessed",
                          seed=0, checks=checks, metrics={})
    assert dict(assessed.params) == {"anything": 1}
