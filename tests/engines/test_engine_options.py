"""Every engine x every option: run, and the Release shows it, or refused before any work,
naming the option and the engines that run it; and one ``Release.params`` layout.

The table below gives every option of :data:`microagg.engines.REFUSABLE` a small valid
non-default value (with the options it needs) and how a release shows it; what each engine
should do comes from the registry (:data:`microagg.engines.ENGINES`, ``runs``). The in-memory
and file engines run in the default pass; the Dask engine runs one option there (an
in-process cluster) and the rest under ``exhaustive``; the stream engine runs none of them.
"""

from __future__ import annotations

import pathlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

from microagg import anonymize
from microagg._pipeline.request import Request
from microagg._pipeline.result import Release
from microagg._pipeline.rules import EngineRefusal
from microagg.engines import ENGINES, PARAMS, REFUSABLE, engines_running
from microagg.engines._reads_files import file_request
from microagg.hierarchy import Hierarchy
from microagg.schema.schema_file import load_schema
from microagg.steps import Microaggregate, Plan

N = 30
BASE: dict[str, Any] = {"quasi_identifiers": ["a", "b"], "k": 3, "random_state": 0}
TWO_STEPS = Plan([Microaggregate(["a"], k=3), Microaggregate(["b"], k=3)])


def _columns(release: Release) -> tuple[str, ...]:
    """The published columns, whether the table is in memory or in a file."""
    if release.data is not None:
        return tuple(map(str, release.data.columns))
    return tuple(release.columns or ())


def _frame(missing: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.normal(10, 2, N).round(2)
    if missing:
        a[4] = np.nan
    return pd.DataFrame({
        "a": a, "b": rng.normal(5, 1, N).round(2),
        "c": [("x", "y", "z")[i % 3] for i in range(N)],
        "s": [i % 3 for i in range(N)],
        "person_id": [f"P{i:04d}" for i in range(N)],
        "w": [1.0 + i % 2 for i in range(N)], "hh": [i // 2 for i in range(N)],
        "st": [i % 2 for i in range(N)],
        "d": pd.date_range("1980-01-01", periods=N, freq="37D").strftime("%Y-%m-%d"),
    })


def _schema(folder: pathlib.Path) -> Any:
    path = folder / "schema.toml"
    path.write_text('[columns.a]\nrole = "quasi-identifier"\nround = 1\n\n'
                    '[columns.b]\nrole = "quasi-identifier"\n')
    return load_schema(path)


@dataclass(frozen=True)
class Option:
    """One option's small valid non-default value, with what it needs, and its effect."""

    options: dict[str, Any]
    columns: tuple[str, ...]
    """The columns of :func:`_frame` it needs besides ``a`` and ``b``."""
    shows: Callable[[Release], bool]
    base: bool = True
    """Whether it takes the base roles (a plan or a schema brings its own)."""
    missing: bool = False
    """Whether the table has a missing quasi-identifier value."""
    extra: dict[str, Any] = field(default_factory=dict)


def _p(key: str, value: Any) -> Callable[[Release], bool]:
    return lambda r: r.params[key] == value


OPTIONS: dict[str, Option] = {
    "sensitive": Option({"sensitive": "s"}, ("s",), _p("sensitive", ("s",))),
    "identifiers": Option({"identifiers": ["person_id"]}, ("person_id",),
                          lambda r: "person_id" not in _columns(r)
                          and r.params["identifiers"] == ("person_id",)),
    "keep": Option({"keep": ["person_id"]}, ("person_id",),
                   lambda r: "person_id" in _columns(r) and r.params["keep"] == ("person_id",)),
    "method_params": Option({"method": "vmdav", "method_params": {"gamma": 0.5}}, (),
                            lambda r: r.params["method_params"]["gamma"] == 0.5),
    "aggregation": Option({"aggregation": "median"}, (), _p("aggregation", "median")),
    "aggregation_params": Option({"aggregation": "rho", "aggregation_params": {"rho": 0.5}}, (),
                                 lambda r: r.params["aggregation_params"]["rho"] == 0.5),
    "scaling": Option({"scaling": "minmax"}, (), _p("scaling", "minmax")),
    "epsilon": Option({"epsilon": 1.0, "bounds": {"a": (0, 20), "b": (0, 10)}}, (),
                      lambda r: r.params["epsilon"] == 1.0
                      and "differential_privacy" in r.checks),
    "bounds": Option({"epsilon": 1.0, "bounds": {"a": (0, 20), "b": (0, 10)}}, (),
                     lambda r: not any("computed from the data" in w for w in r.warnings)),
    "hierarchies": Option({"quasi_identifiers": ["a", "c"], "identifiers": ["b"],
                           "hierarchies": {"c": Hierarchy.flat(["x", "y", "z"])}},
                          ("c",), lambda r: "c" in r.params["hierarchies"]),
    "l": Option({"sensitive": "s", "l": 2}, ("s",),
                lambda r: r.params["l"] == 2 and r.checks["l_diversity"]["achieved"] >= 2),
    "diversity": Option({"sensitive": "s", "l": 2, "diversity": "entropy"}, ("s",),
                        _p("diversity", "entropy")),
    "diversity_c": Option({"sensitive": "s", "l": 2, "diversity": "recursive",
                           "diversity_c": 3.0}, ("s",),
                          lambda r: r.checks["l_diversity"]["c"] == 3.0),
    "t": Option({"sensitive": "s", "t": 0.9}, ("s",),
                lambda r: r.params["t"] == 0.9 and "t_closeness" in r.checks),
    "t_distance": Option({"sensitive": "s", "t": 0.9, "t_distance": "equal"}, ("s",),
                         lambda r: r.params["t_distance"]["s"] == "equal"),
    "intruder_knows": Option({"intruder_knows": ["a"]}, (),
                             lambda r: "dld_risk_known" in r.metrics),
    "attribute_groups": Option({"attribute_groups": "individual"}, (),
                               _p("attribute_groups", (("a",), ("b",)))),
    "n_attribute_groups": Option({"attribute_groups": "correlation", "n_attribute_groups": 1},
                                 (), lambda r: len(r.params["attribute_groups"]) == 1),
    "categorical_aggregation": Option({"quasi_identifiers": ["a", "c"], "identifiers": ["b"],
                                       "categorical_aggregation": "mode"}, ("c",),
                                      _p("categorical_aggregation", "mode")),
    "clustering_il": Option({"clustering_il": 2}, (), lambda r: "il_fuzzy_rand" in r.metrics),
    "refine": Option({"refine": 0.5}, (),
                     lambda r: r.params["method"] in ("mdav-ls", "mdav-scale")),
    "blocking": Option({"blocking": "pca"}, (),
                       lambda r: r.params["blocking"]["blocking"] == "pca"),
    "block_size": Option({"blocking": "kd", "block_size": 40}, (),
                         lambda r: r.params["blocking"]["block_size"] == 40),
    # worker processes change where the blocks run, not what is published (the same file:
    # tests/engines/file/test_file.py::test_worker_processes_give_the_same_file)
    "n_jobs": Option({"blocking": "kd", "block_size": 40, "n_jobs": 1}, (),
                     lambda r: r.k >= 3 and "n_jobs" not in r.params),
    "missing": Option({"missing": "impute:median"}, (),
                      lambda r: r.params["missing"]["strategy"] == "impute:median",
                      missing=True),
    "dates": Option({"quasi_identifiers": ["a", "d"], "identifiers": ["b"], "dates": ["d"]},
                    ("d",), lambda r: "d" in r.params["dates"]),
    "rounding": Option({"rounding": {"a": 1}}, (), lambda r: r.params["rounding"]["a"] == 1),
    "certify": Option({"certify": 0.2}, (), lambda r: "certified_gap" in r.metrics),
    "weights": Option({"weights": "w"}, ("w",),
                      lambda r: r.params["weight"] == "w" and "survey_risk" in r.metrics),
    "households": Option({"households": "hh"}, ("hh",),
                         lambda r: r.params["household"] == "hh"
                         and "hh" not in _columns(r)),
    "strata": Option({"strata": "st"}, ("st",),
                     lambda r: r.params["strata"] == "st" and "survey_risk" in r.metrics),
    "plan": Option({"plan": TWO_STEPS}, (), _p("plan", TWO_STEPS.to_records()), base=False,
                   extra={"random_state": 0}),
    "schema": Option({}, (), lambda r: r.params["rounding"]["a"] == 1, base=False,
                     extra={"k": 3, "random_state": 0}),
    "control": Option({"control": _frame().loc[:9, ["a", "b"]]}, (),
                      lambda r: r.metrics["attacks"]["compared_with"] == "held-out records"),
}


def test_the_table_covers_every_option_an_engine_may_refuse():
    assert sorted(OPTIONS) == sorted(REFUSABLE)


def _runs(engine: str, option: str) -> bool:
    runs = ENGINES[engine].runs
    return runs is None or option in runs


def _request_options(option: str, folder: pathlib.Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    spec = OPTIONS[option]
    frame = _frame(spec.missing).loc[:, ["a", "b", *spec.columns]]
    options = {**(BASE if spec.base else {}), **spec.extra, **spec.options}
    if option == "schema":
        options["schema"] = _schema(folder)
    return frame, options


def _build(engine: str, frame: pd.DataFrame, options: dict[str, Any],
           folder: pathlib.Path) -> Request:
    if ENGINES[engine].reads_files:
        source = folder / "in.csv"
        frame.to_csv(source, index=False)
        return file_request(source, engine=engine, **options)
    return Request.build(frame, engine=engine, **options)


CASES = [(engine, option) for engine in ENGINES for option in REFUSABLE
         if not _runs(engine, option)]


@pytest.mark.parametrize(("engine", "option"), CASES)
def test_an_option_an_engine_does_not_run_is_refused_by_name(tmp_path, engine, option):
    frame, options = _request_options(option, tmp_path)
    with pytest.raises(EngineRefusal) as refusal:
        _build(engine, frame, options, tmp_path)
    assert option in refusal.value.options
    runners = engines_running(refusal.value.options)
    assert refusal.value.runners == runners and engine not in runners
    message = str(refusal.value)
    assert message.startswith(f"The {engine} engine ")
    assert f"drop {', '.join(refusal.value.options)} (or use the " in message
    assert all(name in message for name in (option, *runners))


def _in_memory(option: str, folder: pathlib.Path) -> Release:
    frame, options = _request_options(option, folder)
    if option == "plan":
        options = {**OPTIONS[option].extra, **OPTIONS[option].options}
    return anonymize(frame, **options)


@pytest.mark.parametrize("option", REFUSABLE)
def test_the_memory_engine_runs_every_option_and_the_release_shows_it(tmp_path, option):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the privacy notes of noisy, DP or grouped releases
        release = _in_memory(option, tmp_path)
    assert OPTIONS[option].shows(release), dict(release.params)


def _on_file(engine: str, option: str, folder: pathlib.Path, **run: Any) -> Release:
    frame, options = _request_options(option, folder)
    request = _build(engine, frame, options, folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ENGINES[engine].run(request, folder / "in.csv", folder / "out.csv", **run)


@pytest.mark.parametrize("option", sorted(ENGINES["file"].runs or ()))
def test_the_file_engine_runs_its_options_and_the_release_shows_it(tmp_path, option):
    release = _on_file("file", option, tmp_path)
    assert release.engine == "file" and release.k >= 3
    assert OPTIONS[option].shows(release), dict(release.params)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """An in-process Dask cluster (threads: no worker processes to start)."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


_DASK = sorted(ENGINES["dask"].runs or ())


@pytest.mark.parametrize("option", [
    pytest.param(o, marks=() if o == "sensitive" else pytest.mark.exhaustive) for o in _DASK])
def test_the_dask_engine_runs_its_options_and_the_release_shows_it(tmp_path, option,
                                                                    scheduler):
    release = _on_file("dask", option, tmp_path, scheduler=scheduler)
    assert release.engine == "dask" and release.k >= 3
    assert OPTIONS[option].shows(release), dict(release.params)


def test_every_engine_writes_one_params_layout(tmp_path, scheduler):
    from microagg.engines.stream.csv_files import stream_csv

    frame = _frame().loc[:, ["a", "b"]]
    frame.to_csv(tmp_path / "in.csv", index=False)
    releases = {
        "memory": anonymize(frame, **BASE),
        "memory, blocked": anonymize(frame, **BASE, blocking="kd", block_size=40),
        "file": _on_file("file", "sensitive", tmp_path),
        "dask": _on_file("dask", "sensitive", tmp_path, scheduler=scheduler),
        "stream": stream_csv(tmp_path / "in.csv", tmp_path / "stream.csv", columns=["a", "b"],
                             k=3, delay=10, random_state=0),
    }
    layouts = {name: list(release.params) for name, release in releases.items()}
    assert all(keys == list(PARAMS) for keys in layouts.values()), layouts
    blocking = {name: dict(r.params["blocking"] or {}) for name, r in releases.items()}
    assert blocking == {
        "memory": {}, "memory, blocked": {"blocking": "kd", "block_size": 40},
        "file": {"blocking": "kd", "block_size": 10_000, "sample_size": 200_000},
        "dask": {"blocking": "kd", "block_size": 10_000, "sample_size": 200_000},
        "stream": {"blocking": "arrival", "delay": 10, "flush_age": 0}}
    assert {name: r.params["weight"] for name, r in releases.items()} == dict.fromkeys(
        releases)  # what does not apply is None


def test_the_engines_that_read_files_build_their_release_once(tmp_path, scheduler,
                                                               refuse_release_replace):
    file_release = _on_file("file", "sensitive", tmp_path)
    dask_release = _on_file("dask", "sensitive", tmp_path, scheduler=scheduler)
    assert dask_release.data is None and dask_release.output == tmp_path / "out.csv"
    assert {"k_anonymity", "group_k"} <= set(dask_release.checks)
    assert "write_and_verify" in dask_release.timings
    assert [r.verdict.status for r in (file_release, dask_release)] == ["protected"] * 2


def test_the_categorical_release_writes_the_same_layout():
    frame = _frame().loc[:, ["a", "c"]]
    release = anonymize(frame, quasi_identifiers=["a", "c"], k=3, random_state=0)
    assert list(release.params) == list(PARAMS)


def test_the_cli_names_every_option_an_engine_may_refuse():
    from microagg.cli._anonymize_run import FLAGS

    assert set(REFUSABLE) <= set(FLAGS)
