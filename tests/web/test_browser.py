"""The workbench end to end in a real browser (issue 20): ``microagg serve`` started as a
user starts it, Debian's Chromium driven by Playwright through upload, roles, risk,
protection, result and export, and the downloaded file checked to be k-anonymous.

Skipped (with the reason) where Playwright or Chromium is missing; ``.ci/run`` installs
Chromium and the dev extra Playwright, so CI runs it. Playwright drives the system Chromium
(no browser download); ``browser_flow.py`` holds the steps, shared with
``benchmarks/workbench_screenshots.py``.
"""

from __future__ import annotations

import io
import pathlib

import pandas as pd
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from .browser_flow import QUASI_IDENTIFIERS, ROLES, browser_missing, run_all

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
K = 5


def test_upload_to_export_in_chromium_gives_a_k_anonymous_file(tmp_path: pathlib.Path
                                                                ) -> None:
    outcome = run_all(tmp_path, k=K)
    assert outcome.k_before < K <= outcome.k_achieved
    assert outcome.published.suffix == ".csv", outcome.published.name
    published = pd.read_csv(outcome.published)
    # the identifiers are not published; the quasi-identifiers are, for every record
    dropped = {column for column, role in ROLES.items() if role == "identifier"}
    assert not dropped & set(published.columns)
    assert set(QUASI_IDENTIFIERS) <= set(published.columns) and len(published) == 5000
    # k-anonymous: every combination of the quasi-identifiers (missing included) >= K times
    sizes = published.groupby(list(QUASI_IDENTIFIERS), dropna=False).size()
    assert sizes.min() >= K, sizes.nsmallest(3)
    # Ctrl-C stopped the server cleanly and removed its work folder
    assert outcome.server_status == 0
    assert outcome.work_folders_left == []
    # and its worker processes (releases run in them) are gone with it
    assert outcome.workers_before_stop and outcome.workers_left == []


def test_a_plan_is_built_undone_and_added_back_in_chromium(tmp_path: pathlib.Path) -> None:
    from .browser_flow import plan_flow

    seen = plan_flow(tmp_path, k=K)
    assert len(seen["plan"]) == 2 and len(seen["undone"]) == 1
    # the step kept: the same step and options (its figures are on the plan's keys, which
    # lost household_size), and the same published ages (below)
    assert seen["undone"][0].split("\t")[:3] == seen["plan"][0].split("\t")[:3]
    assert seen["again"] == seen["plan"]  # added back: the same release, byte for byte
    assert seen["again-csv"] == seen["plan-csv"] != seen["undone-csv"]
    # the undone step's column is published as it was; the kept step's is not
    original = pd.read_csv(tmp_path / "survey.csv")
    undone = pd.read_csv(io.BytesIO(seen["undone-csv"]))
    assert undone["household_size"].equals(original["household_size"])
    assert not undone["age"].equals(original["age"])
    assert undone["age"].equals(pd.read_csv(io.BytesIO(seen["plan-csv"]))["age"])
    assert undone.groupby("age").size().min() >= K
