"""The workbench's finish (issue 51, items 6 and 7) without a browser: every control of
every page has a label, the skip link and the favicon, every error of a form at once, no
path of the server's work folder in any message, the sweep's labels that do not overlap and
no "use this" on a refused run, the time left priced from each method's measured runs, and
an Excel upload exported as Excel."""

from __future__ import annotations

import html
import html.parser
import io
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("starlette")

from starlette.testclient import TestClient

from microagg.web import eta, job_pages
from microagg.web.jobs import Job
from microagg.web.map_labels import CHAR_WIDTH, LINE_HEIGHT, Box, place_labels
from microagg.web.pages import WORK_FILE, without_paths

from .conftest import csrf, open_census, post_protect, settled, upload


class _Controls(html.parser.HTMLParser):
    """The form controls of a page and what labels them: ``<label for>``, a ``<label>``
    around them, ``aria-label`` or ``aria-labelledby``."""

    def __init__(self) -> None:
        super().__init__()
        self.controls: list[dict[str, str]] = []
        self.label_for: set[str] = set()
        self.ids: set[str] = set()
        self.open_labels = 0
        self.buttons: list[str] = []
        self._button: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if "id" in found:
            self.ids.add(found["id"])
        if tag == "label":
            self.open_labels += 1
            if found.get("for"):
                self.label_for.add(found["for"])
        elif tag in ("input", "select", "textarea") and found.get("type") != "hidden":
            self.controls.append({**found, "tag": tag, "wrapped": str(self.open_labels > 0)})
        elif tag == "button":
            self._button = [found.get("aria-label", "")]

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.open_labels -= 1
        elif tag == "button" and self._button is not None:
            self.buttons.append("".join(self._button).strip())
            self._button = None

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button.append(data)


def unlabelled(page: str) -> list[str]:
    """The controls of ``page`` that no label names (as ``tag#id``), and the buttons
    without text."""
    parsed = _Controls()
    parsed.feed(page)
    missing = [f"{c['tag']}#{c.get('id', '?')} name={c.get('name')}" for c in parsed.controls
               if not (c.get("id") in parsed.label_for or c["wrapped"] == "True"
                       or c.get("aria-label") or c.get("aria-labelledby"))]
    return missing + [f"a button without text ({n})" for n, text in
                      enumerate(parsed.buttons) if not text]


def _pages(client: TestClient) -> dict[str, str]:
    """Every page of the workbench in use: the census open, a three-step plan on the
    Protect form, a release, its Result and Export pages, a sweep."""
    pages = {"/data (empty)": client.get("/data").text}
    open_census(client)
    for path in ("/data", "/roles", "/risk", "/protect"):
        pages[path] = client.get(path).text
    plan: dict[str, str] = {}
    for kind in ("microaggregate", "noise", "microaggregate"):
        response = post_protect(client, action="add", add_step=kind, **plan)
        plan = {name: value for name, value in re.findall(
            r'<input type="hidden" name="(plan-\d+-step)" value="([^"]+)"', response.text)}
    assert len(plan) == 3
    pages["/protect (a plan of three steps)"] = response.text
    assert post_protect(client, k="5").status_code == 200
    for path in ("/result", "/export"):
        pages[path] = client.get(path).text
    sweep = settled(client, client.post("/sweep", data={
        "k": "3 5", "method-mdav": "on", "random_state": "0",
        "csrf_token": csrf(client, "/sweep")}))
    pages["/sweep (a map)"] = sweep.text
    return pages


def test_every_control_of_every_page_has_a_label(client: TestClient) -> None:
    pages = _pages(client)
    assert 'id="plan-step-3"' in pages["/protect (a plan of three steps)"]
    assert 'id="sweep-map"' in pages["/sweep (a map)"]
    for path, page in pages.items():
        assert unlabelled(page) == [], path
        # the skip link leads to the page's heading, which takes the focus
        assert '<a class="skip-link" href="#content">' in page, path
        assert '<h1 id="content" tabindex="-1">' in page, path
        assert '<link rel="icon" href="/favicon.ico"' in page, path


def test_the_label_check_sees_a_control_without_one() -> None:
    page = ('<label for="a">A</label><input id="a"><label>B <input id="b"></label>'
            '<input id="c" aria-label="C"><input type="hidden" name="h"><select id="d">'
            '</select><button type="submit"> </button><button>Go</button>')
    assert unlabelled(page) == ["select#d name=None", "a button without text (0)"]


def test_the_stylesheet_shows_the_focus_and_the_favicon_is_served(client: TestClient
                                                                   ) -> None:
    css = client.get("/static/workbench.css").text
    assert ":focus-visible" in css and ".skip-link:focus" in css
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert ET.fromstring(icon.content).tag == "{http://www.w3.org/2000/svg}svg"


# ------------------------------------------------------------------ every error at once

def test_the_protect_form_shows_every_error_at_once(client: TestClient) -> None:
    open_census(client)
    response = post_protect(client, k="five", l="x", t="", bounds="age", params="gamma",
                            random_state="1.5")
    assert response.status_code == 400
    text = html.unescape(response.text)
    alert = text[text.index('role="alert"'):text.index("</div>", text.index('role="alert"'))]
    assert alert.count("<li>") == 5, alert
    for message in ("k must be a whole number; got 'five'.", "l must be a number; got 'x'.",
                    "random_state must be a whole number; got '1.5'.", "--bounds",
                    "--param must look like name=value. Got 'gamma' instead."):
        assert message in alert
    assert 'value="five"' in text  # what was typed is kept


def test_the_sweep_form_shows_every_error_at_once(client: TestClient) -> None:
    open_census(client)
    response = settled(client, client.post("/sweep", data={
        "k": "1", "t": "2", "random_state": "-1", "csrf_token": csrf(client, "/sweep")}))
    assert response.status_code == 400
    text = html.unescape(response.text)
    alert = text[text.index('role="alert"'):text.index("</div>", text.index('role="alert"'))]
    assert alert.count("<li>") == 4, alert
    for message in ("got '1' in '1'", "t must be numbers in [0, 1]",
                    "Choose at least one method", "random_state must be a whole number"):
        assert message in alert


# ------------------------------------------------------------ no server path in a message

def test_without_paths_hides_the_work_folder(tmp_path: Any) -> None:
    root = tmp_path / "microagg-serve-x"
    text = f"cannot open {root}/ab12/upload-99.parquet, nor '{root}/cd/x.csv'"
    assert without_paths(text, [root]) == f"cannot open {WORK_FILE}, nor '{WORK_FILE}'"
    assert without_paths("no path here", [root]) == "no path here"


@pytest.mark.parametrize("name", ["broken.parquet", "broken.xlsx", "broken.sav",
                                  "broken.dta", "broken.csv"])
def test_a_refused_upload_names_no_server_path(client: TestClient, name: str) -> None:
    root = str(client.app.state.store.root)  # type: ignore[attr-defined]
    content = b"\x00\x01 not a table \xff" * 10 if not name.endswith(".csv") else b""
    response = upload(client, name, content)
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert 'role="alert"' in text
    assert root not in text and "upload-" not in text and "microagg-serve-" not in text


def test_a_release_with_a_hierarchy_shows_no_server_path(client: TestClient) -> None:
    from .test_sweep_export import HIERARCHY, _city_table, _hierarchy

    _city_table(client)
    assert _hierarchy(client, "city", HIERARCHY).status_code == 200
    assert post_protect(client, k="3", method="mdav-categorical").status_code == 200
    root = client.app.state.store.root  # type: ignore[attr-defined]
    for path in ("/result", "/export", "/export/summary.json", "/export/report.html",
                 "/result/report.html", "/export/schema.toml", "/export/reproduce.txt"):
        text = client.get(path).text
        assert str(root) not in text and "microagg-serve-" not in text, path
    # the hierarchy named as the schema names it, next to schema.toml
    assert "hierarchies/1.csv" in client.get("/export/summary.json").text
    assert 'hierarchy = "hierarchies/1.csv"' in client.get("/export/schema.toml").text


# ------------------------------------------------------------------------- the sweep map

def test_labels_never_overlap_a_point_or_each_other() -> None:
    rng = np.random.default_rng(0)
    points = [(float(x), float(y), 5.0) for x, y in rng.uniform(20, 180, size=(40, 2))]
    texts = [f"k={k}" for k in rng.integers(2, 60, size=40)]
    frame = Box(0, 0, 200, 200)
    placed = place_labels(points, texts, frame)
    boxes = [label.box for label in placed if label is not None]
    assert len(boxes) >= 10  # a crowded plot still labels many of its points
    for number, box in enumerate(boxes):  # brute force over every pair
        assert box.inside(frame)
        assert not any(box.overlaps(other) for other in boxes[number + 1:])
        assert not any(box.overlaps(Box(x - r, y - r, x + r, y + r)) for x, y, r in points)
    # a label's box is as wide as its text and one line high
    first = next(label for label in placed if label is not None)
    assert first.box.bottom - first.box.top == LINE_HEIGHT
    assert math.isclose(first.box.right - first.box.left, CHAR_WIDTH * len(texts[0]))


def test_the_sweep_map_labels_do_not_overlap_and_refused_runs_are_not_offered(
        client: TestClient) -> None:
    open_census(client)
    page = html.unescape(settled(client, client.post("/sweep", data={
        "k": "3 4 5 6 7 8", "l": "2", "method-mdav": "on", "method-md": "on",
        "random_state": "0", "csrf_token": csrf(client, "/sweep")})).text)
    texts = re.findall(r'<text class="point-label" x="([\d.-]+)" y="([\d.-]+)" '
                       r'text-anchor="(start|end|middle)">(k=\d+)</text>', page)
    assert len(texts) >= 6
    boxes = []
    for x, y, anchor, text in texts:
        width = CHAR_WIDTH * len(text)
        left = float(x) - {"start": 0, "end": width, "middle": width / 2}[anchor]
        boxes.append(Box(left, float(y) + 2 - LINE_HEIGHT, left + width, float(y) + 2))
    for number, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[number + 1:])
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page[page.index('<table id="runs">'):],
                      flags=re.S)
    refused = [row for row in rows if "refused: " in row]
    assert len(refused) == 12  # l = 2 without a sensitive column, for every run
    assert all("use this" not in row for row in refused)
    assert sum("use this" in row for row in rows) == 12


# ---------------------------------------------------------------------------- time left

def test_seconds_left_prices_each_method_at_its_own_rate() -> None:
    # the sweep of the issue: three fast runs measured (1 s each), three slow ones left
    fast = {"md": [1.0, 1.0, 1.0]}
    assert math.isnan(eta.seconds_left(fast, ["cdt", "cdt", "cdt"]))  # not "about 3 s"
    measured = {**fast, "cdt": [21.0]}
    assert eta.seconds_left(measured, ["cdt", "cdt"], running=5.0) == 16.0 + 21.0
    assert eta.seconds_left(measured, []) == 0.0


def _job(**fields: Any) -> Job:
    job = Job(id="j", kind="sweep", label="sweep of 6 runs", total=6, unit="runs done")
    for name, value in fields.items():
        setattr(job, name, value)
    return job


def test_the_progress_page_says_the_time_left_only_once_it_is_measured() -> None:
    import time

    job = _job(done=3, left=math.nan)
    job.started -= 3.0  # three fast runs in 3 s: a rate per run would say "about 3 s"
    figures = job_pages.progress_text(job)
    assert figures["left"] is None and "once each method" in figures["note"]
    job = _job(done=4, left=130.0, left_at=time.monotonic() - 10.0)
    assert job_pages.progress_text(job)["left"] == "about 2 min"  # 120 s from now
    job = _job(done=4, left=5.0, left_at=time.monotonic() - 10.0)
    late = job_pages.progress_text(job)
    assert late["left"] is None and "longer than" in late["note"]
    # a job that does not price itself: the runs' own rate, as before
    plain = _job(done=2, left=None)
    plain.started -= 10.0
    assert job_pages.progress_text(plain)["left"] == "about 20 s"


def test_the_sweep_job_reports_the_time_left_it_measured(tmp_path: Any) -> None:
    from microagg.datasets import load_dataset
    from microagg.web import roles
    from microagg.web.sweep_page import parse_sweep_form, sweep_job

    df = load_dataset("census").data.iloc[:150]
    schema, _ = roles.propose(df)
    heard: list[tuple[Any, ...]] = []
    sweep_job(df, schema, tmp_path, parse_sweep_form(
        {"k": "3 5", "method-mdav": "on", "method-md": "on"}),
        progress=lambda *a: heard.append(a))
    done = [(a[0], a[1], a[2]) for a in heard]
    assert done == [(0, 4, "runs done"), (1, 4, "runs done"), (2, 4, "runs done"),
                    (3, 4, "runs done"), (4, 4, "runs done"), (4, 4, "runs done")]
    left = [a[3] for a in heard]
    # md (runs 3 and 4) is not measured before its first run has ended
    assert all(math.isnan(value) for value in left[:3])
    assert 0 <= left[3] < 60 and left[4:] == [0.0, 0.0]


# ----------------------------------------------------------------- export in its format

def test_an_excel_upload_is_offered_and_exported_as_excel(client: TestClient,
                                                          tmp_path: Any) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 60), "income": rng.normal(3e4, 5e3, 60)
                          .round(2), "note": [f"n{i}" for i in range(60)]})
    source = tmp_path / "people.xlsx"
    frame.to_excel(source, index=False)
    assert upload(client, source.name, source.read_bytes()).status_code == 200
    client.get("/roles")
    assert "Roles saved" in client.post("/roles", data={
        "csrf_token": csrf(client, "/roles"), "role-0": "quasi-identifier",
        "type-0": "numeric", "role-1": "quasi-identifier", "type-1": "numeric",
        "role-2": "other"}).text
    assert post_protect(client, k="4").status_code == 200
    page = client.get("/export").text
    offered = re.findall(r'published\.(\w+)', page[page.index('id="downloads"'):])
    assert offered[0] == "xlsx"  # the upload's own format first
    response = client.get("/export/published.xlsx")
    if response.status_code == 409:  # the verdict asks for the confirmation
        response = client.post("/export/download", data={
            "csrf_token": csrf(client, "/export"), "name": "published.xlsx",
            "confirm": "yes"})
    assert response.status_code == 200
    sheet = openpyxl.load_workbook(io.BytesIO(response.content)).active
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("age", "income", "note") and len(rows) == 61
    published = pd.DataFrame(rows[1:], columns=rows[0])
    assert published["note"].tolist() == frame["note"].tolist()  # unmasked, as uploaded
    assert published.groupby(["age", "income"]).size().min() >= 4
