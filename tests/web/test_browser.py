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
import shlex
import shutil
import subprocess
import sys

import pandas as pd
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from .browser_flow import QUASI_IDENTIFIERS, ROLES, browser_missing, run_all
from .conftest import shown_figures

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


def _api(folder: pathlib.Path, records: list[dict[str, object]],
         roles: dict[str, str]) -> object:
    """The API's release of ``records`` on the uploaded survey with ``roles`` (a schema
    written here, not the workbench's), seed 0."""
    import microagg
    from microagg.io import read_table
    from microagg.schema import load_schema
    from microagg.steps import Plan

    (folder / "api.toml").write_text("".join(
        f'[columns.{column}]\nrole = "{role}"\n' for column, role in roles.items()),
        encoding="utf-8")
    return microagg.anonymize(read_table(folder / "survey.csv"),
                              schema=load_schema(folder / "api.toml"),
                              plan=Plan.from_records(records), random_state=0)




def _cli(cwd: pathlib.Path, command: str) -> bytes:
    """``command`` (``microagg anonymize ... -o out.csv``) run in ``cwd``; out.csv."""
    (cwd / "out.csv").unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *shlex.split(command)[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)
    assert (cwd / "out.csv").exists(), done.stderr
    return (cwd / "out.csv").read_bytes()


def _check_risk_page(risk: dict[str, object], survey: pd.DataFrame) -> None:
    """The Risk page on the keys chosen apart (age unticked), against the classes counted
    here: without a weight (an identifier in these roles) a record's risk is 1 / fk."""
    from .plan_browser_flow import RISK_KEYS

    keys = list(RISK_KEYS)
    assert risk["keys"] == keys
    fk = survey.groupby(keys, dropna=False)[keys[0]].transform("size").to_numpy()
    assert risk["k"] == str(fk.min())
    order = sorted(range(len(survey)), key=lambda i: (fk[i], i))[:20]
    assert risk["riskiest"] == [[str(i + 1), *map(str, survey.loc[i, keys]), str(fk[i]),
                                 f"{100 / fk[i]:.4g} %"] for i in order]


def _check_result_sample(shown: dict[str, object], api: object, survey: pd.DataFrame
                         ) -> None:
    """The Result page's headline risk is the API's; its published rows beside the original
    are the API's published rows, the changed cells marked where they differ from the
    uploaded file's, and no identifier is shown."""
    from microagg.metrics.headline import headline_risk

    from .plan_browser_flow import PLAN_ROLES

    found = headline_risk(api.metrics)  # type: ignore[attr-defined]
    assert shown["risk"] == (f"{found[0].short} {found[1]:.2f} %" if found else "-")
    published = api.data  # type: ignore[attr-defined]
    assert shown["columns"] == list(published.columns)
    assert not {c for c, role in PLAN_ROLES.items() if role == "identifier"} \
        & set(shown["columns"])  # type: ignore[arg-type]
    rows = shown["beside"]
    assert len(rows) == 10  # type: ignore[arg-type]
    for row, *cells in rows:  # type: ignore[attr-defined]
        i = int(row) - 1
        for column, (changed, text) in zip(shown["columns"], cells, strict=True):  # type: ignore[call-overload]
            after, before = published[column].iloc[i], survey[column].iloc[i]
            if pd.isna(after):
                assert text == "" and changed == (not pd.isna(before)), (row, column)
            elif isinstance(after, (int, float)) and not isinstance(after, bool):
                assert float(text) == pytest.approx(float(after), rel=1e-9), (row, column)
                assert changed == (float(before) != float(after)), (row, column)
            else:
                assert (text, changed) == (str(after), str(before) != str(after)), (row, column)


def test_a_three_step_plan_in_chromium_matches_the_api_and_the_cli(
        tmp_path: pathlib.Path) -> None:
    from .plan_browser_flow import PLAN_ROLES, STEPS, three_step_flow

    seen = three_step_flow(tmp_path)
    # offered: what applies to numeric and text keys without a household id or a date key
    from microagg.steps import STEPS as REGISTERED

    assert set(seen["offered"]) == set(REGISTERED) - {"household", "recode_date",
                                                      "swap_households"}
    # the risk and utility shown after each step are the API's for the same plan and seed
    api = _api(tmp_path, STEPS, PLAN_ROLES)
    rows = seen["plan"]["rows"]
    assert len(rows) == 3
    for row, record in zip(rows, api.steps, strict=True):  # type: ignore[attr-defined]
        assert {key: row[key] for key in shown_figures(record)} == shown_figures(record)
    assert rows[1]["cells"] != "0"  # the suppression blanked cells (classes of 15 to 18)
    # one verdict, the API's words, on the Result and the Export pages
    headline = api.verdict.headline  # type: ignore[attr-defined]
    assert seen["plan"]["verdict"] == headline == seen["export"]["verdict"]
    # undone: the two steps kept give the API's two-step plan, age published as it was
    undone = _api(tmp_path, STEPS[:2], {**PLAN_ROLES, "age": "other"})
    assert len(seen["undone"]["rows"]) == 2
    for row, record in zip(seen["undone"]["rows"], undone.steps,  # type: ignore[attr-defined]
                           strict=True):
        assert {key: row[key] for key in shown_figures(record)} == shown_figures(record)
    assert seen["again"] == seen["plan"]  # added back: the same release
    _check_risk_page(seen["risk"], pd.read_csv(tmp_path / "survey.csv"))
    _check_result_sample(seen["plan"], api, pd.read_csv(tmp_path / "survey.csv"))
    # the export: refused without the confirmation, then the API's table, byte for byte the
    # CLI's for the --step command shown (plan.toml's command: test_plan_form.py, which
    # runs both)
    export = seen["export"]
    assert export["unconfirmed"] == 409 and not api.verdict.protected  # type: ignore[attr-defined]
    published = pd.read_csv(io.BytesIO(export["csv"]))
    assert len(published) == 5000
    assert published["age"].tolist() == api.data["age"].tolist()  # type: ignore[attr-defined]
    folder = tmp_path / "export"
    shutil.copy(tmp_path / "survey.csv", folder / "survey.csv")
    assert "--step" in export["command"] and export["plan_command"].count("plan.toml") == 1
    assert _cli(folder, export["command"]) == export["csv"], export["command"]
