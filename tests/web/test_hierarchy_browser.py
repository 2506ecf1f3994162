"""The Hierarchies page in Chromium: on the bundled survey, the region column's groups typed
in the builder, previewed (records per group as the data has them) and saved; the saved
file downloaded is the ARX CSV of the same hierarchy built in Python.

Skipped (with the reason) where Playwright or Chromium is missing (see
:mod:`.test_browser`). Exhaustive (about 25 s on two cores): the default run builds, previews
and saves through the same routes in ``test_hierarchy_builder.py``.
"""

from __future__ import annotations

import pathlib

import pandas as pd
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from microagg.hierarchy_builders import grouping_hierarchy

from .browser_flow import Flow, browser_missing, launch, serve, survey_csv

MISSING = browser_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
              pytest.mark.exhaustive]


def test_groups_typed_previewed_and_saved_in_chromium(tmp_path: pathlib.Path) -> None:
    from playwright.sync_api import expect

    table = survey_csv(tmp_path)
    region = pd.read_csv(table)["region"]
    values = sorted(region.dropna().unique())
    south = values[-2:]  # the last two values in the page's (sorted) order: one group
    with serve(tmp_path / "tmp") as server, launch() as page:
        Flow(page).data(server.url, table, len(region))
        base = server.url.split("?")[0]
        page.goto(base + "hierarchies")
        page.get_by_label("Column", exact=True).select_option("region")
        page.get_by_role("button", name="Open the builder").click()
        for value in south:
            page.get_by_label(f"group of {value} at level 1", exact=True).fill("South")
        page.get_by_role("button", name="Preview").click()
        preview = page.locator("#hierarchy-preview tbody tr")
        expect(preview).to_have_count(len(values))
        together = int(region.isin(south).sum())
        expect(preview.nth(len(values) - 1)).to_contain_text(f"South ({together:,})")
        page.get_by_role("button", name="Save in this session").click()
        expect(page.get_by_role("status")).to_contain_text("saved as hierarchies/1.csv")
        saved = page.request.get(base + "hierarchies/download/1.csv").text()
    expected = grouping_hierarchy(values, [{"South": south}], column="region",
                                  keep_ungrouped=True)
    assert saved == expected.to_csv()
