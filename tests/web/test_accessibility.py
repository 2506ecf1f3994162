"""Accessibility of every workbench page, checked by axe-core in Chromium (issue 51, item 7):
no violation of impact "serious" or "critical" (labels, contrast, names of links and
buttons, landmarks, ARIA) on the Data, Roles, Risk, Protect (with a plan of three steps),
Result, Export and Sweep pages, and the keyboard's first stop is the skip link, which
moves the focus to the page's heading.

axe-core is the npm package (Deque's rule engine, the one Lighthouse's accessibility audit
runs); ``.ci/run`` installs it with ``npm install axe-core`` and names its ``axe.min.js`` in
``MICROAGG_AXE_JS``. Skipped, saying why, without it, Playwright or Chromium.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from .browser_flow import ROLES, Flow, browser_missing, launch, serve, survey_csv

AXE = os.environ.get("MICROAGG_AXE_JS", "")
MISSING = browser_missing() or (
    None if AXE and pathlib.Path(AXE).is_file() else
    "axe-core is not installed (npm install axe-core; MICROAGG_AXE_JS=.../axe.min.js)")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
BLOCKING = ("serious", "critical")
"""The impacts that fail the test (axe's "minor" and "moderate" are reported, not failed)."""


def violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is (WCAG 2.1 A and AA rules and axe's best
    practices): each rule's id, impact, help and the elements it names."""
    page.add_script_tag(path=AXE)
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
           .map(v => ({id: v.id, impact: v.impact, help: v.help,
                       nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))""")
    return found


def _plan_of_three(page: Any) -> None:
    """Three steps added on the Protect form (nothing run)."""
    from playwright.sync_api import expect

    for number, kind in enumerate(("microaggregate", "noise", "microaggregate"), start=1):
        page.select_option("#add_step", kind)
        page.click("#add-step")
        expect(page.locator(f"#plan-step-{number}")).to_be_visible()


def test_no_serious_accessibility_violation_on_any_page(tmp_path: pathlib.Path) -> None:
    table = survey_csv(tmp_path)
    seen: dict[str, list[dict[str, Any]]] = {}
    with serve(tmp_path / "tmp") as server, launch(bypass_csp=True) as page:
        flow = Flow(page)
        flow.data(server.url, table, rows=5000)
        seen["data"] = violations(page)
        # the keyboard: the first Tab reaches the skip link, Enter moves to the heading
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip-link"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "content"
        flow.roles(ROLES)
        seen["roles"] = violations(page)
        flow.risk()
        seen["risk"] = violations(page)
        flow.sweep("3 5", pick=5)
        page.go_back()
        seen["sweep"] = violations(page)
        flow.protect(5)
        seen["result"] = violations(page)
        flow.step("Export")
        seen["export"] = violations(page)
        flow.step("Protect")
        _plan_of_three(page)
        seen["protect"] = violations(page)
    blocking = {name: [v for v in found if v["impact"] in BLOCKING]
                for name, found in seen.items()}
    assert blocking == {name: [] for name in seen}, blocking
