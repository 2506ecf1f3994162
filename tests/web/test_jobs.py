"""Long runs: in worker processes, with progress, cancel, limits (issue 20, item 7).

The long job is exact MDAV on 120,000 records: it reports the records grouped as it goes
and takes several seconds on this machine, long enough to watch and to cancel.
"""

from __future__ import annotations

import pathlib
import re
import time

import numpy as np
import pandas as pd
import pytest
from starlette.testclient import TestClient

from microagg.web import create_app
from microagg.web.jobs import Job, JobRunner, RunnerBusy
from microagg.web.protect import release_for
from microagg.web.sessions import SessionStore

from .conftest import csrf, make_settings, settled, signed_in, upload
from .test_finish import unlabelled

LONG_ROWS = 120_000


def _long_table() -> pd.DataFrame:
    values = np.random.default_rng(0).normal(size=(LONG_ROWS, 4)).round(3)
    return pd.DataFrame(values, columns=["a", "b", "c", "d"])


def _long_job(runner: JobRunner, folder: pathlib.Path, **kw: object) -> Job:
    schema = {c: {"role": "quasi-identifier"} for c in "abcd"}
    options = {"k": 5, "method": "mdav", "random_state": 0}
    return runner.submit(release_for, (_long_table(), schema, folder, options),
                         kind="protect", label="mdav, k = 5", **kw)  # type: ignore[arg-type]


def _until(condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_long_release_reports_progress_and_cancel_kills_its_process(
        runner: JobRunner, tmp_path: pathlib.Path) -> None:
    job = _long_job(runner, tmp_path)
    _until(lambda: job.total > 0)
    assert job.total == LONG_ROWS and 0 <= job.done < LONG_ROWS
    assert job.unit == "records grouped" and job.running
    worker = runner._busy[job.id]
    assert runner.cancel(job)
    assert job.state == "cancelled" and job.result is None
    assert not worker.process.is_alive()
    assert not runner.cancel(job)  # once only
    _until(lambda: runner.running == 0)


def test_a_worker_that_dies_fails_its_job_with_a_message(
        runner: JobRunner, tmp_path: pathlib.Path) -> None:
    job = _long_job(runner, tmp_path)
    _until(lambda: job.total > 0)
    runner._busy[job.id].process.kill()
    assert job.wait(30)
    assert job.state == "failed" and "worker process stopped" in job.error
    assert not job.expected_error


def test_a_release_after_a_cancel_still_works(runner: JobRunner,
                                              tmp_path: pathlib.Path) -> None:
    cancelled = _long_job(runner, tmp_path)
    _until(lambda: cancelled.total > 0)
    runner.cancel(cancelled)
    data = pd.DataFrame(np.random.default_rng(1).normal(size=(200, 2)), columns=["x", "y"])
    job = runner.submit(release_for, (data, {"x": {"role": "quasi-identifier"},
                                             "y": {"role": "quasi-identifier"}},
                                      tmp_path, {"k": 4, "random_state": 0}),
                        kind="protect", label="mdav, k = 4")
    assert job.wait(60) and job.state == "done"
    assert job.result.k >= 4 and len(job.result.data) == 200


def test_an_idle_worker_that_died_is_replaced(tmp_path: pathlib.Path) -> None:
    single = JobRunner(1)
    try:
        single._spare()  # the warm idle worker, now
        single._idle[0].process.kill()
        single._idle[0].process.join(5)
        data = pd.DataFrame({"x": np.arange(20.0)})
        job = single.submit(release_for, (data, {"x": {"role": "quasi-identifier"}},
                                          tmp_path, {"k": 4, "random_state": 0}),
                            kind="protect", label="mdav, k = 4")
        assert job.wait(60) and job.state == "done", job.error
    finally:
        single.close()


def test_a_requests_error_comes_back_as_the_users_message(
        runner: JobRunner, tmp_path: pathlib.Path) -> None:
    data = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    job = runner.submit(release_for, (data, {"x": {"role": "quasi-identifier"}}, tmp_path,
                                      {"k": 5, "random_state": 0}),
                        kind="protect", label="mdav, k = 5")
    assert job.wait(60) and job.state == "failed"
    assert job.expected_error and "k" in job.error and "3" in job.error


def test_more_jobs_than_workers_are_refused_with_the_limit(tmp_path: pathlib.Path) -> None:
    single = JobRunner(1, prewarm=False)
    try:
        job = _long_job(single, tmp_path)
        with pytest.raises(RunnerBusy, match=r"--max-jobs 1"):
            _long_job(single, tmp_path)
        single.cancel(job)
    finally:
        single.close()
    with pytest.raises(ValueError, match="max_workers must be at least 1; got 0"):
        JobRunner(0)


# ------------------------------------------------------------------- through the pages

@pytest.fixture
def long_client(tmp_path: pathlib.Path, runner: JobRunner):  # type: ignore[no-untyped-def]
    """A client with the long table open, whose forms never wait for their job."""
    app = create_app(make_settings(tmp_path, progress_after=0.0), runner=runner)
    with signed_in(app) as client:
        assert upload(client, "long.csv",
                      _long_table().to_csv(index=False).encode()).status_code == 200
        yield client
    app.state.store.close()


def _start(client: TestClient) -> str:
    response = client.post("/protect", data={"k": "5", "method": "mdav", "random_state": "1",
                                             "csrf_token": csrf(client, "/protect")},
                           follow_redirects=False)
    assert response.status_code == 303
    found = re.fullmatch(r"/jobs/([\w-]+)", response.headers["location"])
    assert found is not None
    return found.group(1)


def test_progress_page_refreshes_and_other_pages_stay_responsive(
        long_client: TestClient) -> None:
    job_id = _start(long_client)
    page = long_client.get(f"/jobs/{job_id}")
    assert page.status_code == 200
    assert '<meta http-equiv="refresh" content="1">' in page.text
    assert 'id="job-progress"' in page.text and 'id="cancel"' in page.text
    assert unlabelled(page.text) == []  # the progress bar named by the job's label
    assert '<progress id="job-progress" aria-labelledby="job-label"' in page.text
    started = time.perf_counter()
    data_page = long_client.get("/data")
    assert data_page.status_code == 200 and time.perf_counter() - started < 1.0
    assert f'href="/jobs/{job_id}"' in data_page.text  # the header says a job runs
    # a second Protect while one runs goes to the running one
    again = long_client.post("/protect", data={"k": "5", "csrf_token": csrf(long_client)},
                             follow_redirects=False)
    assert again.headers["location"] == f"/jobs/{job_id}"
    long_client.post(f"/jobs/{job_id}/cancel", data={"csrf_token": csrf(long_client)})


def test_cancel_needs_csrf_then_returns_to_the_form_with_nothing_kept(
        long_client: TestClient) -> None:
    job_id = _start(long_client)
    assert long_client.post(f"/jobs/{job_id}/cancel", data={}).status_code == 403
    page = long_client.post(f"/jobs/{job_id}/cancel",
                            data={"csrf_token": csrf(long_client)})
    assert page.status_code == 200
    assert "Cancelled after" in page.text and "nothing was kept" in page.text
    assert 'value="5"' in page.text  # the form keeps what was typed
    assert "No release yet" in long_client.get("/result").text
    assert long_client.get(f"/jobs/{job_id}", follow_redirects=False).status_code == 200


def test_a_finished_job_leads_to_its_result(long_client: TestClient,
                                            runner: JobRunner) -> None:
    long_client.post("/data/dataset", data={"dataset": "census",
                                            "csrf_token": csrf(long_client)})
    job_id = _start(long_client)
    _until(lambda: runner.running == 0, seconds=120)
    response = long_client.get(f"/jobs/{job_id}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/result"
    assert 'id="achieved-k"' in long_client.get("/result").text


def test_a_job_is_invisible_to_another_session(long_client: TestClient) -> None:
    job_id = _start(long_client)
    other = signed_in(long_client.app)  # type: ignore[arg-type]
    assert other.get(f"/jobs/{job_id}").status_code == 404
    assert other.post(f"/jobs/{job_id}/cancel",
                      data={"csrf_token": csrf(other)}).status_code == 404
    long_client.post(f"/jobs/{job_id}/cancel", data={"csrf_token": csrf(long_client)})


# ----------------------------------------------------------------- sessions' lifetime

def test_idle_sessions_are_forgotten_with_their_folders(tmp_path: pathlib.Path) -> None:
    store = SessionStore(tmp_path)
    try:
        idle, busy = store.new(), store.new()
        busy.jobs["x"] = Job(id="x", kind="protect", label="running")
        store.idle_seconds = 0.0
        time.sleep(0.01)
        assert store.expire() == 1
        assert not idle.folder.exists() and store.get(idle.session_id) is None
        assert store.get(busy.session_id) is busy and busy.folder.is_dir()
    finally:
        store.close()


def test_a_session_keeps_its_last_attempts(tmp_path: pathlib.Path) -> None:
    store = SessionStore(tmp_path)
    try:
        session = store.new()
        for number in range(1, 8):
            session.add_attempt(number, limit=5)
        assert session.attempts == [3, 4, 5, 6, 7] and session.current == 4
    finally:
        store.close()


def test_a_sweep_runs_as_a_job_with_runs_done_and_cancel(long_client: TestClient) -> None:
    response = long_client.post("/sweep", data={"k": "3 5", "method-mdav": "on",
                                                "random_state": "0",
                                                "csrf_token": csrf(long_client, "/sweep")},
                                follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/jobs/")
    job_id = response.headers["location"].rsplit("/", 1)[1]
    page = long_client.get(f"/jobs/{job_id}")
    assert "sweep of 2 runs" in page.text
    _until(lambda: "runs done" in long_client.get(f"/jobs/{job_id}").text)
    cancelled = long_client.post(f"/jobs/{job_id}/cancel",
                                 data={"csrf_token": csrf(long_client)})
    assert "Cancelled after" in cancelled.text and 'value="3 5"' in cancelled.text


def test_the_report_is_drawn_in_a_worker_process(client: TestClient, monkeypatch) -> None:
    """Drawing the report's figures would hold the server's interpreter: it happens in a
    worker (the server's own render_report is broken here, and the report still comes)."""
    import microagg.report.html

    def broken(*args: object, **kwargs: object) -> str:
        raise AssertionError("the report was drawn in the server's process")

    client.post("/data/dataset", data={"dataset": "census", "csrf_token": csrf(client)})
    response = settled(client, client.post("/protect", data={
        "k": "5", "method": "mdav", "random_state": "0", "csrf_token": csrf(client, "/protect")}))
    assert 'id="achieved-k"' in response.text
    monkeypatch.setattr(microagg.report.html, "render_report", broken)
    report = client.get("/result/report.html")
    assert report.status_code == 200 and "<html" in report.text.lower()
