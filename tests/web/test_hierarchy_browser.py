"""The Hierarchies page in Chromium: on the bundled survey, the region column's groups typed
in the builder, previewed (records per group as the data has them) and saved; the saved
file downloaded is the ARX CSV of the same hierarchy built in Python.

Skipped (with the reason) where Playwright or Chromium is missing (see
:mod:`.test_browser`). Exhaustive (about 25 s on two cores): the default run builds, previews
and saves through the same routes in ``test_hierarchy_builder.py``.
"""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from microagg.hierarchy_builders import grouping_hierarchy

from .browser_flow import browser_missing
from .hierarchy_browser_flow import groups_flow

MISSING = browser_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
              pytest.mark.exhaustive]


def test_groups_typed_previewed_and_saved_in_chromium(tmp_path: pathlib.Path) -> None:
    seen = groups_flow(tmp_path)
    assert seen.preview_rows == len(seen.values)
    assert f"South ({seen.together:,})" in seen.last_row
    assert "saved as hierarchies/1.csv" in seen.status
    expected = grouping_hierarchy(seen.values, [{"South": seen.south}], column="region",
                                  keep_ungrouped=True)
    assert seen.saved == expected.to_csv()
