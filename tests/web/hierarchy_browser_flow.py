"""The Hierarchies page driven in Chromium: on the bundled survey, the region column's last
two values grouped as "South" at level 1, previewed and saved in the session.

Used by ``tests/web/test_hierarchy_browser.py`` and ``benchmarks/workbench_screenshots.py``
(``workbench-hierarchies.png``); the browser and the server come from :mod:`.browser_flow`.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import pandas as pd

from .browser_flow import Flow, launch, serve, survey_csv

__all__ = ["GroupsOutcome", "groups_flow"]


@dataclass(frozen=True)
class GroupsOutcome:
    """What the flow typed and what the server saved."""

    values: list[str]
    """The region's values, in the page's (sorted) order."""
    south: list[str]
    """The values grouped as "South"."""
    together: int
    """The records of the "South" group, as the data has them."""
    preview_rows: int
    """The rows of the preview table."""
    last_row: str
    """The preview's last row, as shown."""
    status: str
    """The page's status line after saving."""
    saved: str
    """The saved file, downloaded."""


def groups_flow(tmp: pathlib.Path, shots: pathlib.Path | None = None) -> GroupsOutcome:
    """Upload, open the builder for region, type one group, preview, save, download."""
    from playwright.sync_api import expect

    table = survey_csv(tmp)
    region = pd.read_csv(table)["region"]
    values = sorted(region.dropna().unique())
    south = values[-2:]
    with serve(tmp / "tmp") as server, launch() as page:
        flow = Flow(page, shots)
        flow.data(server.url, table, len(region))
        base = server.url.split("?")[0]
        page.goto(base + "hierarchies")
        page.get_by_label("Column", exact=True).select_option("region")
        page.get_by_role("button", name="Open the builder").click()
        for value in south:
            page.get_by_label(f"group of {value} at level 1", exact=True).fill("South")
        page.get_by_role("button", name="Preview").click()
        preview = page.locator("#hierarchy-preview tbody tr")
        expect(preview).to_have_count(len(values))
        flow.shot("hierarchies", full_page=True)
        last_row = preview.nth(len(values) - 1).inner_text()
        page.get_by_role("button", name="Save in this session").click()
        status = page.get_by_role("status").inner_text()
        saved = page.request.get(base + "hierarchies/download/1.csv").text()
    return GroupsOutcome(values, south, int(region.isin(south).sum()), len(values), last_row,
                         status, saved)
