"""The workbench driven by a real browser (issue 20): a ``microagg serve`` subprocess, and
Debian's Chromium driven by Playwright for Python through the steps, each step optionally
saved as a screenshot.

Used by ``tests/web/test_browser.py`` (the end-to-end test) and by
``benchmarks/workbench_screenshots.py`` (``docs/images/workbench-*.png``). Playwright drives
the system Chromium (``/usr/bin/chromium``, installed by ``.ci/run``): no browser is
downloaded (``playwright install`` is never run) and no driver package is needed.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["QUASI_IDENTIFIERS", "ROLES", "Flow", "Outcome", "Server", "browser_missing",
           "chromium", "launch", "run_all", "serve", "survey_csv"]

QUASI_IDENTIFIERS = ("age", "sex", "region", "income")
"""The survey's quasi-identifiers (as :func:`microagg.datasets.load_dataset` declares them)."""
ROLES = {"person_id": "identifier", "name": "identifier", "postcode": "identifier",
         "date_of_birth": "identifier", "household_size": "other", "education": "other",
         "occupation": "other", "diagnosis": "sensitive", "weight": "identifier",
         "household_id": "identifier",
         **dict.fromkeys(QUASI_IDENTIFIERS, "quasi-identifier")}
"""The roles set on the Roles page (the proposal makes most columns quasi-identifiers; the
household weight, which re-links households, and the household id are dropped)."""
WIDTH, HEIGHT = 1200, 800
"""The browser window (and screenshot) size."""
START_SECONDS = 60
PROTECT_MS = 60_000
"""How long the Risk and Protect pages may take (the release is built on the server)."""


def chromium() -> str | None:
    """Debian's Chromium (or another Chromium or Chrome on the PATH), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_missing() -> str | None:
    """Why the browser cannot be driven here (the reason a test skips with), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install playwright; the dev extra has it)"
    if chromium() is None:
        return "Chromium is not installed (.ci/run installs Debian's chromium)"
    return None


def survey_csv(folder: pathlib.Path) -> pathlib.Path:
    """The bundled survey written as ``folder/survey.csv``."""
    from microagg.datasets import load_dataset

    path = folder / "survey.csv"
    load_dataset("survey").data.to_csv(path, index=False)
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_url(process: subprocess.Popen[str]) -> str:
    """The token URL ``microagg serve`` prints (its first line of output)."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=START_SECONDS):
            raise RuntimeError(f"microagg serve printed nothing in {START_SECONDS} s")
    line = process.stdout.readline()
    words = [w for w in line.split() if w.startswith("http://")]
    if not words:
        raise RuntimeError(f"microagg serve did not print its address: {line!r}")
    return words[0]


def _wait_listening(port: int, process: subprocess.Popen[str]) -> None:
    """Until the server answers a request (the port is bound before the URL is printed;
    the application, and its work folder, come just after)."""
    import http.client

    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"microagg serve exited with status {process.returncode}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection.request("GET", "/")
            connection.getresponse().read()
            connection.close()
            return
        connection.close()
        time.sleep(0.1)
    raise RuntimeError(f"microagg serve is not answering on port {port}")


@dataclass
class Server:
    """A running ``microagg serve``: its token URL, its process and its temporary folder
    (``TMPDIR``, where it makes its work folder ``microagg-serve-*``)."""

    url: str
    process: subprocess.Popen[str]
    tmp: pathlib.Path

    def work_folders(self) -> list[pathlib.Path]:
        return sorted(self.tmp.glob("microagg-serve-*"))

    def children(self) -> list[int]:
        """The process ids of its children (the worker processes), from ``/proc``."""
        found = []
        for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:
                    found.append(int(stat.parent.name))
        return found

    def stop(self) -> int:
        """Ctrl-C, as a user stops it; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


@contextlib.contextmanager
def serve(tmp: pathlib.Path, *options: str) -> Iterator[Server]:
    """``microagg serve --no-browser --port <free port>`` with ``TMPDIR=tmp``; stopped at
    the end of the block."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1", "COLUMNS": "400",
           "NO_COLOR": "1"}
    command = [sys.executable, "-c", "from microagg.cli import main; main()", "serve",
               "--no-browser", "--port", str(port), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)
    server = Server("", process, tmp)
    try:
        server.url = _read_url(process)
        _wait_listening(port, process)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def launch(*, bypass_csp: bool = False) -> Iterator[Any]:
    """A headless Chromium (the system's) with a 1200x800 page that accepts downloads
    (``bypass_csp``: scripts a test injects run despite the pages' content security
    policy, for axe-core)."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    assert executable is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT},
                                          accept_downloads=True, bypass_csp=bypass_csp)
            yield context.new_page()
        finally:
            browser.close()


@dataclass
class Flow:
    """The steps of the workbench in one browser page; each checks what the page shows and,
    with ``shots``, saves ``shots/workbench-<step>.png``."""

    page: Any
    shots: pathlib.Path | None = None

    def shot(self, step: str, *, full_page: bool = False, element: str | None = None
             ) -> None:
        """``shots/workbench-<step>.png``: the window, the whole page, or one ``element``
        (a CSS selector), whole."""
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            path = self.shots / f"workbench-{step}.png"
            if element is not None:
                self.page.locator(element).screenshot(path=path)
            else:
                self.page.screenshot(path=path, full_page=full_page)

    def data(self, url: str, table: pathlib.Path, rows: int) -> None:
        """Open the token URL, upload ``table``, check the preview."""
        from playwright.sync_api import expect

        page = self.page
        page.goto(url)
        expect(page).to_have_url(url.split("?")[0] + "data")
        page.set_input_files("#file", table)
        page.get_by_role("button", name="Upload").click()
        expect(page.locator("header .source")).to_contain_text(table.name)
        expect(page.get_by_role("heading", name=f"Rows 1 to 50 of {rows}")).to_be_visible()
        header = page.locator("table.preview thead th")
        expect(header.first).to_have_text("person_id")
        expect(page.locator("table.preview tbody tr")).to_have_count(50)
        self.shot("data")

    def roles(self, roles: dict[str, str]) -> None:
        """Go to Roles, set ``roles`` (column: role), save; the schema is valid."""
        from playwright.sync_api import expect

        page = self.page
        page.get_by_role("link", name="Next: roles").click()
        expect(page.get_by_role("heading", name="Roles", exact=True)).to_be_visible()
        for column, role in roles.items():
            page.get_by_label(f"role of {column}", exact=True).select_option(role)
        page.get_by_role("button", name="Save roles").click()
        expect(page.get_by_role("status")).to_contain_text("Roles saved")
        self.shot("roles")

    def step(self, name: str) -> None:
        """Follow the step's link in the navigation bar."""
        import re

        from playwright.sync_api import expect

        nav = self.page.get_by_role("navigation", name="steps")
        nav.get_by_role("link", name=re.compile(rf"\b{name}$")).click()
        expect(self.page.get_by_role("heading", name=name, exact=True)).to_be_visible()

    def risk(self) -> int:
        """The Risk page: the table as it is; the smallest class size (k before)."""
        from playwright.sync_api import expect

        self.step("Risk")
        expect(self.page.locator("#class-risk")).to_be_visible(timeout=PROTECT_MS)
        self.shot("risk")
        return int(self.page.locator("#k-before").inner_text())

    def sweep(self, ks: str, pick: int) -> None:
        """The Sweep page: run mdav over ``ks``, then pick the map's point of k = ``pick``,
        which opens the Protect page with that k and method."""
        from playwright.sync_api import expect

        page = self.page
        self.step("Sweep")
        page.fill("#k", ks)
        page.click("#sweep")
        expect(page.locator("#sweep-map")).to_be_visible(timeout=60_000)
        self.shot("sweep", full_page=True)
        page.locator("#sweep-map a.point", has_text=f"k={pick}").first.locator("circle").click()
        expect(page.get_by_role("heading", name="Protect", exact=True)).to_be_visible()
        expect(page.locator("#k")).to_have_value(str(pick))

    def protect(self, k: int, seed: int = 0) -> None:
        """The Protect page: k and the seed (the recommended method), then Protect."""
        from playwright.sync_api import expect

        page = self.page
        self.step("Protect")
        page.fill("#k", str(k))
        page.fill("#random_state", str(seed))
        self.shot("protect")
        with page.expect_response(lambda r: r.request.method == "POST" and
                                  r.url.endswith("/protect"), timeout=PROTECT_MS) as posted:
            page.click("#protect")
        assert posted.value.status == 303, f"Protect answered {posted.value.status}"
        expect(page.get_by_role("heading", name="Result", exact=True)).to_be_visible(
            timeout=60_000)  # a loaded machine may show the progress page first

    def result(self) -> int:
        """The Result page: the checks re-made on the release; the k achieved."""
        from playwright.sync_api import expect

        expect(self.page.locator("#checks")).to_be_visible()
        self.shot("result")
        if self.shots is not None:  # the report, the window's width, once it has loaded
            report = self.page.frame_locator("#report").locator("h1").first
            expect(report).to_be_visible(timeout=PROTECT_MS)
            self.page.locator("#report").scroll_into_view_if_needed()
            self.page.wait_for_timeout(1500)  # the frame's own process paints it
            self.shot("report")
            self.page.evaluate("window.scrollTo(0, 0)")
        return int(self.page.locator("#achieved-k").inner_text())

    def export(self, folder: pathlib.Path) -> pathlib.Path:
        """The Export page: download the published CSV into ``folder`` (ticking the
        confirmation where the verdict asks for it)."""
        self.step("Export")
        self.shot("export")
        if self.page.locator("#confirm").count():  # the verdict is not "protected"
            self.page.check("#confirm")
        with self.page.expect_download() as download:
            self.page.click("#download-csv")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / download.value.suggested_filename
        download.value.save_as(path)
        return path


def _still_running(pids: list[int], seconds: float = 10.0) -> list[str]:
    """Those of ``pids`` still running after up to ``seconds`` (with their command lines);
    the server's helper processes exit when they see it gone."""
    deadline = time.monotonic() + seconds
    while True:
        left = {pid: pathlib.Path(f"/proc/{pid}/cmdline") for pid in pids}
        alive = []
        for pid, cmdline in left.items():
            with contextlib.suppress(OSError):
                text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":  # a zombie has exited
                    alive.append(f"{pid}: {text}")
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


@dataclass
class Outcome:
    """What the flow saw: k before and after, and the downloaded file."""

    k_before: int
    k_achieved: int
    published: pathlib.Path
    server_status: int
    work_folders_left: list[pathlib.Path]
    workers_before_stop: list[int]
    workers_left: list[str]


def run_all(tmp: pathlib.Path, k: int = 5, shots: pathlib.Path | None = None) -> Outcome:
    """Every step, from the token URL to the download; the server stopped at the end."""
    table = survey_csv(tmp)
    with serve(tmp / "tmp") as server:
        assert len(server.work_folders()) == 1
        with launch() as page:
            flow = Flow(page, shots)
            flow.data(server.url, table, rows=5000)
            flow.roles(ROLES)
            k_before = flow.risk()
            flow.sweep("3 5 10", pick=k)
            flow.protect(k)
            k_achieved = flow.result()
            published = flow.export(tmp / "downloads")
        workers = server.children()
        status = server.stop()
    left = _still_running(workers)
    return Outcome(k_before, k_achieved, published, status, server.work_folders(), workers,
                   left)

