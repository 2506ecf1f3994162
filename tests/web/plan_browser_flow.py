"""The three-step plan driven in Chromium (issue 51): on the bundled survey, a recode of
region, a local suppression of region, sex and education, and a microaggregation of age,
built on the Protect page step by step (the Risk page measured first on the suppression's
keys); the last step undone and added back; the Result page's figures, verdict, headline
risk and published rows beside the original read; the published CSV downloaded through the confirmation form
(the verdict does not call this release protected) with the schema, the plan and the
command the Export page shows.

Used by ``tests/web/test_browser.py``; the browser and the server come from
:mod:`.browser_flow`.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from .browser_flow import PROTECT_MS, ROLES, Flow, launch, serve, survey_csv

__all__ = ["PLAN_ROLES", "RISK_KEYS", "STEPS", "three_step_flow"]

PLAN_ROLES = {**ROLES, "region": "quasi-identifier", "sex": "quasi-identifier",
              "education": "quasi-identifier", "age": "quasi-identifier",
              "income": "sensitive", "household_size": "other", "occupation": "other",
              "weight": "identifier", "household_id": "identifier"}
"""The roles of the flow: the three text keys and age the quasi-identifiers; the household
weight (which re-links households) and the household id dropped."""
GROUPS = {"Islands": ["Coast", "Highlands"]}
STEPS: list[dict[str, Any]] = [
    {"step": "recode", "column": "region", "groups": GROUPS},
    {"step": "suppress", "keys": ["region", "sex", "education"], "k": 20},
    {"step": "microaggregate", "quasi_identifiers": ["age"], "k": 5},
]
"""The plan as the API takes it (the same options typed into the form below)."""
_TYPED = [("recode", {"column": "region", "groups": json.dumps(GROUPS)}),
          ("suppress", {"keys": "region,sex,education", "k": "20"}),
          ("microaggregate", {"quasi_identifiers": "age", "k": "5"})]
_ROWS = ("rows => rows.map(r => Object.fromEntries([...r.querySelectorAll('td[class]')]"
         ".map(td => [td.className, td.textContent.trim()])))")


_CURRENT_RISK = ("table => { const names = [...table.querySelectorAll('thead th')]"
                 ".map(th => th.textContent.trim()); const row = table.querySelector("
                 "'tbody tr[aria-current=\"true\"]'); return row.children["
                 "names.indexOf('risk')].textContent.trim(); }")
_BESIDE = ("rows => rows.map(r => [r.id.split('-')[1], ...[...r.querySelectorAll('td')]"
           ".slice(1).map(td => [td.classList.contains('changed'), "
           "(td.querySelector('mark') || td).textContent.trim()])])")
RISK_KEYS = ("sex", "region", "education")
"""The key variables chosen on the Risk page (the suppression's keys; age unticked)."""
_AGE = 2
"""The survey's column index of age (its checkbox is ``#key-2``)."""


def _risk(page: Any, flow: Flow) -> dict[str, Any]:
    """The Risk page with age unticked: the keys it measured on, k before and the riskiest
    records (their cells as text)."""
    from playwright.sync_api import expect

    flow.step("Risk")
    page.uncheck(f"#key-{_AGE}")
    page.click("#measure-keys")
    expect(page.locator("#riskiest")).to_be_visible(timeout=PROTECT_MS)
    return {"keys": page.locator("#risk-keys").inner_text().split(", "),
            "k": page.locator("#k-before").inner_text(),
            "riskiest": page.eval_on_selector_all(
                "#riskiest tbody tr", "rows => rows.map(r => [...r.children]"
                ".map(c => c.textContent.trim()))")}


def _released(page: Any) -> dict[str, Any]:
    """What the Result page shows once the release is made: the verdict's text, each plan
    row's cells by class, the current attempt's headline risk and the published rows shown
    beside the original ones (row, then per column: changed, the published text)."""
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Result", exact=True)).to_be_visible(
        timeout=PROTECT_MS)
    return {"verdict": page.locator("#verdict").inner_text().strip(),
            "rows": page.eval_on_selector_all("#plan tbody tr", _ROWS),
            "risk": page.eval_on_selector("#attempts", _CURRENT_RISK),
            "columns": page.eval_on_selector_all(
                "#beside thead th", "cells => cells.map(c => c.textContent.trim())")[2:],
            "beside": page.eval_on_selector_all("#beside tr.published", _BESIDE)}


def _export(page: Any, base: str, folder: pathlib.Path) -> dict[str, Any]:
    """The Export page: its verdict, the command, the schema and plan files, and the CSV
    downloaded after ticking the confirmation box."""
    page.goto(base + "export")
    seen: dict[str, Any] = {"verdict": page.locator("#verdict").inner_text().strip(),
                            "plan_command": page.locator("#plan-command").inner_text(),
                            "command": page.locator("#command").inner_text()}
    for name in ("schema.toml", "plan.toml"):
        (folder / name).write_bytes(page.request.get(f"{base}export/{name}").body())
    seen["unconfirmed"] = page.request.get(f"{base}export/published.csv").status
    page.check("#confirm")
    with page.expect_download() as download:
        page.click("#download-csv")
    seen["csv"] = pathlib.Path(download.value.path()).read_bytes()
    return seen


def three_step_flow(tmp: pathlib.Path, shots: pathlib.Path | None = None) -> dict[str, Any]:
    """Build the plan of :data:`STEPS` on the Protect page, protect, undo the last step,
    add it back, protect again, export; what each page showed (``tmp/survey.csv`` is the
    upload, ``tmp/export`` holds schema.toml and plan.toml). With ``shots``, the plan's
    pages are saved there (``workbench-plan-*.png``: the builder, the result, the undone
    step, the export)."""
    from playwright.sync_api import expect

    table = survey_csv(tmp)
    folder = tmp / "export"
    folder.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Any] = {}
    with serve(tmp / "tmp") as server, launch() as page:
        base = server.url.split("?")[0]
        flow = Flow(page)
        flow.data(server.url, table, rows=5000)
        flow.roles(PLAN_ROLES)
        seen["risk"] = _risk(page, flow)
        flow.shots = shots  # the plan's pages (the one-step flow has the others)
        flow.step("Protect")
        seen["offered"] = page.eval_on_selector_all(
            "#add_step option", "options => options.map(o => o.value)")
        for number, (kind, values) in enumerate(_TYPED, start=1):
            page.select_option("#add_step", kind)
            page.click("#add-step")
            expect(page.locator(f"#plan-step-{number}")).to_be_visible()
            for option, text in values.items():
                page.fill(f"#plan-{number}-{option}", text)
        page.fill("#random_state", "0")
        flow.shot("plan-builder", element="#plan")
        page.click("#protect")
        seen["plan"] = _released(page)
        flow.shot("plan-result")
        page.click("#undo")
        seen["undone"] = _released(page)
        expect(page.locator("#undone")).to_be_visible()
        flow.shot("plan-undone")
        page.click("#add-back")
        expect(page.locator("#plan-3-quasi_identifiers")).to_have_value("age")
        page.click("#protect")
        seen["again"] = _released(page)
        seen["export"] = _export(page, base, folder)
        page.goto(base + "export")
        flow.shot("plan-export", full_page=True)
    return seen
