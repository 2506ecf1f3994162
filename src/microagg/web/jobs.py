"""Background jobs of the workbench: releases and sweeps run in worker processes.

A release can take minutes (exact MDAV on a census-size file), and numba's kernels hold the
interpreter while they run: run in the server's own threads, they would freeze every page.
So each job runs in a separate worker process (``spawn``ed, so that nothing of the server's
threads is copied into it), which

* reports its progress over a pipe (the records grouped, the runs of a sweep done);
* can be cancelled at any moment: the process is killed, which stops even a kernel that is
  in the middle of a loop, and frees its memory at once;
* is started ahead of time and warmed up (imports and compiled kernels loaded), so that a
  small release answers as fast as in the server's own process.

At most ``max_workers`` jobs run at once (each uses the machine's cores); one warm worker is
kept idle for the next job.
"""

from __future__ import annotations

import multiprocessing
import secrets
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["EXPECTED_ERRORS", "Job", "JobRunner", "RunnerBusy"]

EXPECTED_ERRORS = ("SchemaError", "ValueError", "TypeError", "PrivacyViolationError")
"""Exception classes whose message answers a user's choice (shown in the form as it is);
any other is an internal error (shown with its class, traceback printed by the server)."""

_PROGRESS_EVERY = 0.2
"""Seconds between two progress messages from a worker."""


class RunnerBusy(RuntimeError):
    """Every worker is busy: the message says how many run and what to do."""


@dataclass
class Job:
    """One release or sweep running (or run) in a worker process.

    ``state`` is ``"running"``, ``"done"`` (``result`` set), ``"failed"`` (``error`` and
    ``error_class`` set) or ``"cancelled"``; ``done`` of ``total`` units (``unit``) are
    finished so far, as the worker last said.
    """

    id: str
    kind: str
    label: str
    context: dict[str, Any] = field(default_factory=dict)
    """What the page that started it needs afterwards (the form's values)."""
    state: str = "running"
    done: int = 0
    total: int = 0
    unit: str = ""
    left: float | None = None
    """Seconds left as the job itself last estimated them from its own measured progress
    (at :attr:`left_at`); NaN: it estimates them but cannot yet; ``None``: it does not."""
    left_at: float = 0.0
    result: Any = None
    error: str = ""
    error_class: str = ""
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    _finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def expected_error(self) -> bool:
        """Whether :attr:`error` answers the user's choices (not an internal error)."""
        return self.error_class in EXPECTED_ERRORS

    @property
    def seconds(self) -> float:
        """Seconds it ran (so far, while running)."""
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def wait(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds until it ends; whether it has ended."""
        return self._finished.wait(timeout)

    def _end(self, state: str) -> None:
        if self.state == "running":
            self.state, self.ended = state, time.monotonic()
        self._finished.set()


# ------------------------------------------------------------------- the worker process

def _warm_up() -> None:
    """Import the library and load the compiled kernels a first release needs."""
    import numpy as np
    import pandas as pd

    import microagg

    data = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)), columns=["a", "b", "c"])
    microagg.anonymize(data, quasi_identifiers=["a", "b", "c"], k=3, random_state=0)


def _serve(conn: Connection) -> None:  # pragma: no cover - runs in the worker process
    """The worker's loop: run each ``(function, args)`` received (:func:`_run_one`); stop at
    ``None`` or when the server's end of the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    _warm_up()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        _run_one(conn, *message)


def _run_one(conn: Connection, function: Callable[..., Any], args: tuple[Any, ...]
             ) -> None:  # pragma: no cover - runs in the worker process
    """Run ``function(*args, progress=...)``, sending ``("progress", done, total, unit,
    left)`` (``left``: the seconds left the function estimated itself, or None)
    at most every :data:`_PROGRESS_EVERY` seconds, then ``("done", result)`` or ``("error",
    class name, message)``."""
    last = 0.0

    def progress(done: int, total: int, unit: str = "", left: float | None = None) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= _PROGRESS_EVERY or done >= total or left is not None:
            last = now
            conn.send(("progress", int(done), int(total), unit,
                       None if left is None else float(left)))

    try:
        answer: tuple[Any, ...] = ("done", function(*args, progress=progress))
    except Exception as error:  # every failure is reported to the page
        if type(error).__name__ not in EXPECTED_ERRORS:
            traceback.print_exc(file=sys.stderr)
        answer = ("error", type(error).__name__, str(error))
    try:
        conn.send(answer)
    except Exception as error:  # e.g. a result that cannot be pickled
        conn.send(("error", type(error).__name__, f"the result could not be returned: "
                                                  f"{error}"))


class _Worker:
    """A worker process and the server's end of its pipe."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True,
                                       name="microagg-worker")
        self.process.start()
        child.close()
        self._stopping = threading.Lock()  # a cancel and the job's own thread may both stop it

    def alive(self) -> bool:
        return self.process.is_alive()

    def stop(self) -> None:
        """Kill it now (a cancelled job, or the server stopping); the pipe stays open for
        the thread that follows its job, which closes it (:meth:`discard`)."""
        with self._stopping:  # one waitpid at a time: two at once can leave it unreaped
            if self.process.is_alive():
                self.process.kill()
            self.process.join(timeout=5)

    def discard(self) -> None:
        """Kill it and close the pipe (no thread follows it any more)."""
        self.stop()
        self.conn.close()


# ------------------------------------------------------------------------- the runner

class JobRunner:
    """Runs jobs in warm worker processes, at most ``max_workers`` at once.

    Parameters
    ----------
    max_workers : int, default=2
        Jobs that may run at the same time (each in its own process).
    prewarm : bool, default=True
        Start one worker at :meth:`start` so that the first job does not wait for it.
    """

    def __init__(self, max_workers: int = 2, *, prewarm: bool = True) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1; got {max_workers}.")
        self.max_workers, self.prewarm = max_workers, prewarm
        self._idle: list[_Worker] = []
        self._busy: dict[str, _Worker] = {}
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        """Start the idle worker in the background (when ``prewarm``)."""
        if self.prewarm:
            threading.Thread(target=self._spare, daemon=True).start()

    def _spare(self) -> None:
        with self._lock:
            if self._closed or self._idle or len(self._busy) >= self.max_workers:
                return
            self._idle.append(_Worker())

    def submit(self, function: Callable[..., Any], args: tuple[Any, ...], *, kind: str,
               label: str, context: dict[str, Any] | None = None,
               on_done: Callable[[Job], None] | None = None) -> Job:
        """Run ``function(*args, progress=...)`` in a worker; ``on_done(job)`` is called (in
        a server thread) when it succeeds, before :meth:`Job.wait` returns.

        Raises
        ------
        RunnerBusy
            When ``max_workers`` jobs are running already.
        """
        job = Job(id=secrets.token_urlsafe(12), kind=kind, label=label,
                  context=dict(context or {}))
        with self._lock:
            if self._closed:
                raise RunnerBusy("The workbench is stopping.")
            if len(self._busy) >= self.max_workers:
                raise RunnerBusy(
                    f"{len(self._busy)} jobs are running already, the most this workbench "
                    f"runs at once (--max-jobs {self.max_workers}): wait for one to finish "
                    f"or cancel it.")
            worker = self._take_idle() or _Worker()
            self._busy[job.id] = worker
        threading.Thread(target=self._watch, args=(job, worker, function, args, on_done),
                         daemon=True, name=f"microagg-job-{job.id}").start()
        return job

    def _take_idle(self) -> _Worker | None:
        """An idle worker that is still alive (one that died while idle is discarded)."""
        while self._idle:
            worker = self._idle.pop()
            if worker.alive():
                return worker
            worker.discard()
        return None

    def _watch(self, job: Job, worker: _Worker, function: Callable[..., Any],
               args: tuple[Any, ...], on_done: Callable[[Job], None] | None) -> None:
        """Send the job, follow its messages, and settle it (in its own thread)."""
        try:
            worker.conn.send((function, args))
            while True:
                message = worker.conn.recv()
                if message[0] == "progress":
                    job.done, job.total, job.unit = message[1], message[2], message[3]
                    job.left, job.left_at = message[4], time.monotonic()
                    continue
                if message[0] == "done":
                    job.result = message[1]
                    self._settle(job, on_done)
                else:
                    job.error_class, job.error = message[1], message[2]
                    job._end("failed")
                break
        except (EOFError, OSError, BrokenPipeError):
            if job.state == "running":  # not cancelled: the worker died (memory, a crash)
                worker.process.join(timeout=2)
                code = worker.process.exitcode
                job.error_class = "WorkerDied"
                job.error = (f"The worker process stopped (exit code {code}) before the job "
                             f"finished; the machine may be out of memory.")
                job._end("failed")
        finally:
            self._release(job, worker)

    @staticmethod
    def _settle(job: Job, on_done: Callable[[Job], None] | None) -> None:
        """Hand the result to ``on_done``, then mark the job done (or failed, if that
        raises: the error is then the job's)."""
        try:
            if on_done is not None:
                on_done(job)
        except Exception as error:  # reported to the page, printed here
            traceback.print_exc(file=sys.stderr)
            job.error_class, job.error = type(error).__name__, str(error)
            job._end("failed")
        else:
            job._end("done")

    def _release(self, job: Job, worker: _Worker) -> None:
        """Keep ``worker`` as the idle one if it is healthy and none is idle; else stop it."""
        with self._lock:
            self._busy.pop(job.id, None)
            keep = (not self._closed and job.state != "cancelled" and worker.alive()
                    and not self._idle)
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.discard()
            self.start()

    def cancel(self, job: Job) -> bool:
        """Stop ``job`` now (its worker is killed); whether it was still running."""
        with self._lock:
            worker = self._busy.get(job.id)
            if job.state != "running" or worker is None:
                return False
            job._end("cancelled")
        worker.stop()
        return True

    @property
    def running(self) -> int:
        """Jobs running now."""
        with self._lock:
            return len(self._busy)

    def close(self) -> None:
        """Stop every worker (idempotent)."""
        with self._lock:
            self._closed = True
            workers, busy = list(self._idle), dict(self._busy)
            self._idle = []
        for worker in busy.values():  # their threads close the pipes
            worker.stop()
        for worker in workers:
            worker.discard()
