"""Every engine gives the same verdict for the same input: the in-memory, file and Dask
engines, through the Python API and the command line, record the same columns kept on
purpose (``params["keep"]``), the same published columns that break k
(``checks["published_columns"]``), the same verdict words and the same exit status."""

from __future__ import annotations

import json
import logging
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

from microagg import anonymize  # noqa: E402
from microagg.cli import EXIT_NOT_PROTECTED  # noqa: E402
from microagg.engines._reads_files import file_request  # noqa: E402
from microagg.engines.dask.engine import anonymize_dask  # noqa: E402
from microagg.engines.file.engine import run_file  # noqa: E402
from microagg.exceptions import PrivacyLeakWarning  # noqa: E402
from microagg.partition.blocking import run_block  # noqa: E402

MICROAGG = pathlib.Path(sys.executable).parent / "microagg"
QI = ["age", "income"]
K = 3
KEEP = ["name"]


def _table(breaking: bool) -> pd.DataFrame:
    """Twelve people in four tight groups of three on (age, income). ``name`` (kept on
    purpose) looks like an identifier; ``band`` is shared by whole groups (never breaks k);
    ``region``, where given, has every value on 6 rows but splits every group (k = 1 or 2
    with it)."""
    age = np.repeat([20, 40, 60, 80], 3) + np.tile([0, 1, 2], 4)
    frame = pd.DataFrame({"age": age, "income": age * 100,
                          "name": [f"person {i}" for i in range(12)],
                          "band": np.repeat(["a", "b", "a", "b"], 3)})
    if breaking:
        frame["region"] = ["N", "S", "N", "S", "N", "S", "N", "S", "S", "N", "N", "S"]
    return frame


def _warm() -> None:
    """Load (or compile) the MDAV kernels in this process."""
    run_block((np.random.default_rng(0).normal(size=(30, 2)), K, "mdav", {}, 0))


@pytest.fixture(scope="module")
def client():
    _warm()
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    c.run(_warm)
    yield c
    c.close()
    cluster.close()


def _facts(release) -> dict:
    """What every engine must agree on."""
    summary = json.loads(release.to_json())
    return {"keep": summary["params"]["keep"],
            "published_columns": summary["checks"].get("published_columns"),
            "verdict": summary["verdict"]}


def _api_releases(frame: pd.DataFrame, tmp_path: pathlib.Path, client) -> dict:
    """The same request by the three engines' Python faces, each with its warnings."""
    source = tmp_path / "in.csv"
    frame.to_csv(source, index=False)
    options = {"quasi_identifiers": QI, "k": K, "keep": KEEP, "random_state": 0}
    runs = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs["memory"] = anonymize(frame, **options)
        runs["file"] = run_file(file_request(source, engine="file", **options), source,
                                tmp_path / "file.csv", sample_size=100)
        ddf = dd.from_pandas(frame, npartitions=2)
        runs["dask"] = anonymize_dask(ddf, **options, client=client)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    return {"runs": runs, "leaks": leaks}


@pytest.mark.parametrize("breaking", [True, False])
def test_the_python_faces_agree(tmp_path, client, breaking):
    found = _api_releases(_table(breaking), tmp_path, client)
    facts = {engine: _facts(release) for engine, release in found["runs"].items()}
    assert facts["file"] == facts["memory"], facts
    assert facts["dask"] == facts["memory"], facts
    assert facts["memory"]["keep"] == KEEP
    assert facts["memory"]["verdict"]["status"] == "not protected"
    columns = facts["memory"]["published_columns"]["columns"]
    assert columns["name"] == 1
    assert "band" not in columns
    assert ("region" in columns) is breaking
    assert columns.get("region", 0) < K
    # every engine raises the one privacy warning, naming the same columns
    assert len(found["leaks"]) == 3
    assert len(set(found["leaks"])) == 1, found["leaks"]
    assert all(release.warnings[0] == found["leaks"][0]
               for release in found["runs"].values())


def _microagg(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MICROAGG), *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("other", [  # Dask's CLI start costs a minute on 2 cores
    "file", pytest.param("dask", marks=pytest.mark.exhaustive)])
def test_the_command_line_agrees(tmp_path, other):
    source = tmp_path / "in.csv"
    _table(breaking=True).to_csv(source, index=False)
    runs = {}
    for engine in ("local", other):
        summary = tmp_path / f"{engine}.json"
        run = _microagg("anonymize", source, "-q", ",".join(QI), "-k", K, "--keep",
                        ",".join(KEEP), "--engine", engine, "--random-state", "0",
                        "-o", tmp_path / f"{engine}.csv", "--summary-json", summary)
        assert run.returncode == EXIT_NOT_PROTECTED, (engine, run.stdout, run.stderr)
        runs[engine] = (run.stdout.strip().splitlines()[-1],
                        json.loads(summary.read_text()))
    local_line, local = runs["local"]
    assert local["params"]["keep"] == KEEP
    assert set(local["checks"]["published_columns"]["columns"]) == {"name", "region"}
    line, summary = runs[other]
    assert line == local_line
    assert summary["params"]["keep"] == local["params"]["keep"]
    assert summary["checks"]["published_columns"] == local["checks"]["published_columns"]
    assert summary["verdict"] == local["verdict"]
