"""The contract every metric of :mod:`microagg.metrics` keeps (STYLE.md, convention 9).

One case per exported metric, run on the same small scenes (a typical release, an untouched
one, and one with a constant column and a single class): each result is a Python ``float``
(or a dict of them; counts are Python ints), never a numpy scalar, never NaN, and within the
metric's documented bounds. A metric added to ``microagg.metrics.__all__`` without a case
here fails :func:`test_every_metric_has_a_case`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg.metrics as metrics
from microagg.aggregate.generalize import generalize
from microagg.hierarchy import Hierarchy, HierarchyTables

WORK = Hierarchy.from_mapping(
    {"*": {"Gov": ["Federal", "State"], "Private": ["Inc", "Own"]}}, column="work")
SEX = Hierarchy.flat(["M", "F"], column="sex")
INF = math.inf


@dataclass(frozen=True)
class Scene:
    """A small release: original and masked numeric tables, classes, and the generalized
    view (intervals and hierarchy nodes) of the same classes."""

    original: np.ndarray
    masked: np.ndarray
    labels: np.ndarray
    codes: np.ndarray
    tables: tuple[HierarchyTables, ...]
    low: np.ndarray
    high: np.ndarray
    nodes: np.ndarray
    ranges: np.ndarray
    sensitive: tuple[np.ndarray, ...]


def _scene(kind: str) -> Scene:
    rng = np.random.default_rng(17)
    n = 24
    original = rng.normal(50.0, 10.0, size=(n, 3))
    codes = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 2, n)])
    sensitive = (rng.choice(np.array(["a", "b", "c"]), n), rng.integers(0, 5, n).astype(str))
    if kind == "typical":  # groups of 4 along the first column
        labels = np.argsort(np.argsort(original[:, 0], kind="stable")) // 4
    elif kind == "untouched":  # every record its own class: nothing masked
        labels = np.arange(n)
    else:  # "constant": one constant column, equal categories, a single class
        original[:, 1] = 7.0
        codes[:] = 0
        sensitive = (np.full(n, "a"), sensitive[1])
        labels = np.zeros(n, dtype=np.intp)
    labels = labels.astype(np.intp)
    sums = np.zeros((int(labels.max()) + 1, original.shape[1]))
    np.add.at(sums, labels, original)
    masked = (sums / np.bincount(labels)[:, None])[labels]
    tables = (WORK.tables(), SEX.tables())
    gen = generalize(original, codes, tables, labels, numeric_mode="interval")
    return Scene(original, masked, labels, codes, tables, gen.low, gen.high, gen.nodes,
                 original.max(axis=0) - original.min(axis=0), sensitive)


@dataclass(frozen=True)
class Case:
    """How to call one metric on a scene, and the bounds of each value it returns
    (``"*"``: every key of a dict result without bounds of its own)."""

    call: Callable[[Scene], Any]
    bounds: dict[str, tuple[float, float]]


def _p_q(s: Scene) -> float:
    return metrics.privacy_of_quasi_identifiers(s.labels)


def _p_s(s: Scene) -> float:
    return metrics.privacy_of_sensitive(s.labels, s.sensitive)


def _pmse(s: Scene) -> dict[str, float]:
    """The pMSE figures of :func:`~microagg.metrics.utility_by_analysis` (the analyses named
    by the user are tested in ``test_analysis_utility.py``)."""
    columns = [f"x{j}" for j in range(s.original.shape[1])]
    result = metrics.utility_by_analysis(pd.DataFrame(s.original, columns=columns),
                                         pd.DataFrame(s.masked, columns=columns),
                                         random_state=0)["pmse"]
    return {key: result[key] for key in ("pmse", "null", "ratio")}


OPTIONS = {"Analyses"}
"""The options classes :mod:`microagg.metrics` exports beside its metrics."""

CASES: dict[str, Case] = {
    "clustering_information_loss": Case(
        lambda s: metrics.clustering_information_loss(s.original, s.masked, n_clusters=3),
        {"il_rand": (0, 1), "il_jaccard": (0, 1), "il_ari": (0, 2)}),
    "dld_risk": Case(lambda s: metrics.dld_risk(s.original, s.masked, s.labels), {"*": (0, 1)}),
    "fuzzy_clustering_information_loss": Case(
        lambda s: metrics.fuzzy_clustering_information_loss(s.original, s.masked, n_clusters=3),
        {"*": (-0.1, 1)}),  # slightly negative when the masked partition is crisper
    "fuzzy_rand_index": Case(
        lambda s: metrics.fuzzy_rand_index(np.eye(3)[s.labels % 3],
                                           np.full((s.labels.size, 3), 1 / 3)), {"*": (0, 1)}),
    "group_size_summary": Case(lambda s: metrics.group_size_summary(s.labels),
                               {"*": (1, 24)}),
    "homogeneity": Case(lambda s: metrics.homogeneity(s.labels, s.sensitive[0]),
                        {"*": (0, 24), "homogeneous_share": (0, 1)}),
    "il1s": Case(lambda s: metrics.il1s(s.original, s.masked), {"*": (0, INF)}),
    "il_omega": Case(lambda s: metrics.il_omega(s.low, s.high, s.ranges, s.nodes, s.tables,
                                                normalized=True), {"*": (0, 1)}),
    "information_loss": Case(lambda s: metrics.information_loss(s.original, s.masked, s.labels),
                             {"*": (0, 100)}),
    "intersection_attack": Case(lambda s: metrics.intersection_attack(s.original, s.masked),
                                {"*": (0, 1), "mean_candidates": (0, 24)}),
    "moment_changes": Case(lambda s: metrics.moment_changes(s.original, s.masked),
                           {"*": (0, INF), "correlation_change": (0, 2)}),
    "normalized_certainty_penalty": Case(
        lambda s: metrics.normalized_certainty_penalty(s.low, s.high, s.ranges, s.nodes,
                                                       s.tables), {"*": (0, 1)}),
    "privacy_of_quasi_identifiers": Case(_p_q, {"*": (0, 1)}),
    "privacy_of_release": Case(lambda s: metrics.privacy_of_release(_p_q(s), _p_s(s)),
                               {"*": (0, 1)}),
    "privacy_of_sensitive": Case(_p_s, {"*": (0, 1)}),
    "query_answering": Case(
        lambda s: metrics.query_answering(s.original, s.low, s.high, s.codes, s.nodes, s.tables,
                                          n_queries=50, k=4, random_state=1),
        {"*": (0, 1), "queries": (50, 50), "mean_original": (0, 24),
         "mean_anonymized": (0, 24), "small_queries": (0, 50)}),
    "sse": Case(lambda s: metrics.sse(s.original, s.labels), {"*": (0, INF)}),
    "sst": Case(lambda s: metrics.sst(s.original), {"*": (0, INF)}),
    "utility_by_analysis": Case(_pmse, {"pmse": (0, 0.25), "null": (0, 0.25),
                                        "ratio": (0, INF)}),
    "utility_loss": Case(lambda s: metrics.utility_loss(s.labels, s.original,
                                                        [s.codes[:, 0], s.codes[:, 1]]),
                         {"*": (0, 1)}),
}

SCENES = ("typical", "untouched", "constant")


def _values(result: Any) -> dict[str, Any]:
    return dict(result) if isinstance(result, dict) else {"*": result}


def test_every_metric_has_a_case() -> None:
    assert set(CASES) | OPTIONS == set(metrics.__all__)


# one class gives k-means a single distinct point to cluster: expected, not a failure
@pytest.mark.filterwarnings("ignore:Number of distinct clusters")
@pytest.mark.parametrize("scene", SCENES)
@pytest.mark.parametrize("metric", sorted(CASES))
def test_metric_returns_bounded_python_floats(metric: str, scene: str) -> None:
    case = CASES[metric]
    values = _values(case.call(_scene(scene)))
    assert values, f"{metric} returned nothing"
    for key, value in values.items():
        where = f"{metric}[{key}] on the {scene} scene"
        assert type(value) in (float, int), f"{where} is a {type(value).__name__}, not a float"
        assert not math.isnan(value), f"{where} is NaN"
        lo, hi = case.bounds.get(key, case.bounds.get("*", (-INF, INF)))
        assert lo - 1e-9 <= value <= hi + 1e-9, f"{where} = {value} is outside [{lo}, {hi}]"


@pytest.mark.parametrize("metric", ["information_loss", "il1s", "dld_risk"])
def test_untouched_release_has_no_loss_or_full_risk(metric: str) -> None:
    s = _scene("untouched")
    expected = {"information_loss": 0.0, "il1s": 0.0, "dld_risk": 1.0}[metric]
    assert CASES[metric].call(s) == expected


def test_sse_is_at_most_sst() -> None:
    for scene in SCENES:
        s = _scene(scene)
        assert metrics.sse(s.original, s.labels) <= metrics.sst(s.original) * (1 + 1e-12)
