"""Private work folders and partial outputs that a killed run leaves, and their removal.

Every file microagg writes before it is complete carries its owner in its name: the host (a
short hash of its name), the process id and the process's start time (clock ticks since
boot, from ``/proc``; 0 where the platform does not tell). A later run removes an entry only
when its owner is provably dead on this host: no such process, a zombie, or a process with
the same id but another start time (the id was reused). Anything else (a live owner, another
host, an unreadable process table, Windows) is kept: a leftover costs disk space, removing a
live run's file would break that run.

- Work folders of unmasked data (:func:`make_work_folder`): ``microagg-HOST-PID-START-XXXXXXXX``
  under the system temporary folder (``$TMPDIR``) or a given one, never beside an output;
  mode 0700, files in it made with :func:`private_file` (0600).
- Partial outputs (:func:`partial_output`): ``.NAME.microagg-HOST-PID-START-XXXXXXXX.tmp``
  beside the output, mode 0600 while written; renamed onto the output when complete.

SIGKILL cannot be caught, hence the removal by the next run: the next file-engine run for
its work folder (in the same place), the next write for a partial output (in the same
folder), and, for the work folders in the system temporary folder, the start of any
``microagg`` command (:func:`remove_leftovers_at_start`; ``microagg doctor`` lists what it
found). The command line turns SIGTERM into an exit that runs the usual clean-up
(:func:`exit_on_sigterm`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import re
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import IO, Any

__all__ = ["Leftover", "exit_on_sigterm", "make_work_folder", "partial_output", "private_file",
           "remove_dead_partials", "remove_dead_work_folders", "remove_leftovers_at_start",
           "signals_deferred", "work_folder"]

_OWNER = r"microagg-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-(?P<start>\d+)-[a-z0-9_]{8}"
_WORK_FOLDER = re.compile(rf"^{_OWNER}$")
_PARTIAL = re.compile(rf"^\..+\.{_OWNER}\.tmp$")
_NAME_CHARS = 100  # of the output's name kept in a partial's name (file names <= 255 bytes)
MARKER = "OWNER"
"""File in a work folder saying, for people, which process owns it (the name is what counts)."""


def _host_tag() -> str:
    return hashlib.blake2s(socket.gethostname().encode(), digest_size=4).hexdigest()


def _process_stat(pid: int) -> tuple[str, int] | None:
    """State letter and start time (clock ticks since boot) of ``pid``, from ``/proc``; None
    where unavailable (not Linux, process gone, unreadable)."""
    try:
        text = pathlib.Path(f"/proc/{pid}/stat").read_text()
        fields = text[text.rindex(")") + 2:].split()
        return fields[0], int(fields[19])  # fields 3 (state) and 22 (starttime) of proc(5)
    except (OSError, ValueError, IndexError):
        return None


def _owner(pid: int | None = None) -> str:
    """``microagg-HOST-PID-START``: the owner part of a name made by this process."""
    pid = os.getpid() if pid is None else pid
    stat = _process_stat(pid)
    return f"microagg-{_host_tag()}-{pid}-{stat[1] if stat else 0}"


def _owner_alive(host: str, pid: int, start: int) -> bool:
    """False only when the owner is provably dead on this host (see the module docstring)."""
    if host != _host_tag() or os.name != "posix" or pid <= 0:
        return True  # another machine's process, or no safe test (os.kill kills on Windows)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # exists, owned by another user
    stat = _process_stat(pid)
    if stat is None:
        return True
    state, started = stat
    return state not in ("Z", "X") and (start == 0 or started == start)


def _is_dead(match: re.Match[str]) -> bool:
    return not _owner_alive(match["host"], int(match["pid"]), int(match["start"]))


def _dead_entries(folder: pathlib.Path, pattern: re.Pattern[str],
                  directories: bool) -> Iterator[pathlib.Path]:
    """Entries of ``folder`` named by ``pattern``, owned by this user, whose owner is dead."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            match = pattern.match(entry.name)
            if match is None:
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) != directories \
                        or entry.is_symlink() \
                        or (uid is not None and entry.stat(follow_symlinks=False).st_uid != uid):
                    continue
                if _is_dead(match):
                    yield pathlib.Path(entry.path)


def remove_dead_work_folders(folder: str | os.PathLike[str]) -> list[pathlib.Path]:
    """Remove the work folders in ``folder`` left by dead runs; return those removed.

    Examples
    --------
    >>> base = pathlib.Path(tempfile.mkdtemp())
    >>> work = make_work_folder(base)
    >>> remove_dead_work_folders(base)  # this process is alive: nothing removed
    []
    """
    removed = []
    for path in _dead_entries(pathlib.Path(folder), _WORK_FOLDER, directories=True):
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


@dataclass(frozen=True)
class Leftover:
    """A work folder of a dead run, as found before its removal."""

    path: pathlib.Path
    files: int
    bytes: int


_FOUND_AT_START: list[tuple[Leftover, ...]] = []
"""What :func:`remove_leftovers_at_start` found (once per process)."""


def _usage(folder: pathlib.Path) -> tuple[int, int]:
    """Files under ``folder`` and their bytes (what can be read of them)."""
    files = size = 0
    for root, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(root, name)).st_size
                files += 1
    return files, size


def remove_leftovers_at_start() -> tuple[Leftover, ...]:
    """Remove the work folders that dead runs left in the system temporary folder
    (``$TMPDIR``), once per process; return them as found (path, files, bytes).

    Called as every ``microagg`` command starts (a scan of one folder: cheap), so that the
    original values a SIGKILLed file-engine run spilled there do not wait for the next
    file-engine run; a later call returns the same (``microagg doctor`` shows them). Work
    folders under another ``workdir`` are removed by the next run there."""
    if not _FOUND_AT_START:
        found = []
        for path in _dead_entries(pathlib.Path(tempfile.gettempdir()), _WORK_FOLDER,
                                  directories=True):
            files, size = _usage(path)
            shutil.rmtree(path, ignore_errors=True)
            found.append(Leftover(path, files, size))
        _FOUND_AT_START.append(tuple(found))
    return _FOUND_AT_START[0]


def remove_dead_partials(folder: str | os.PathLike[str]) -> list[pathlib.Path]:
    """Remove the partial outputs in ``folder`` left by dead writers; return those removed."""
    removed = []
    for path in _dead_entries(pathlib.Path(folder), _PARTIAL, directories=False):
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            path.unlink()
            removed.append(path)
    return removed


def make_work_folder(parent: str | os.PathLike[str] | None = None) -> pathlib.Path:
    """Create a private (0700) work folder for unmasked data; the caller removes it
    (:func:`work_folder` does both).

    Work folders of dead runs in the same place are removed first. SIGINT and SIGTERM are
    held while the folder is made (:func:`signals_deferred`): one that comes then removes the
    folder before it acts.

    Parameters
    ----------
    parent : path-like, default=None
        Where to create it; ``None``: the system temporary folder (``$TMPDIR``, ``/tmp``).

    Returns
    -------
    pathlib.Path
        ``parent/microagg-HOST-PID-START-XXXXXXXX``, holding a :data:`MARKER` file.
    """
    base = pathlib.Path(tempfile.gettempdir() if parent is None else parent).expanduser()
    remove_dead_work_folders(base)
    owner = _owner()
    folder = None
    try:
        with signals_deferred():
            folder = pathlib.Path(tempfile.mkdtemp(prefix=f"{owner}-", dir=base))
        with open(private_file(folder / MARKER), "w", encoding="utf-8") as marker:
            marker.write(f"Work folder of microagg process {os.getpid()} on "
                         f"{socket.gethostname()} ({owner}); it holds unmasked data. A "
                         "later run removes it once that process is gone.\n")
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


@contextlib.contextmanager
def work_folder(parent: str | os.PathLike[str] | None = None) -> Iterator[pathlib.Path]:
    """A private work folder (:func:`make_work_folder`), removed with what it holds on leaving,
    whatever ends the block (an error, Ctrl-C, SIGTERM under :func:`exit_on_sigterm`)."""
    folder = make_work_folder(parent)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def private_file(path: str | os.PathLike[str]) -> str:
    """Create the empty file ``path`` with mode 0600 (it must not exist); return its name.

    Writers that open it again by name (``numpy.save``, ``numpy.memmap(mode="w+")``)
    truncate it and keep its mode."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return os.fspath(path)


def partial_output(path: pathlib.Path) -> IO[bytes]:
    """Open a new partial output (0600) beside ``path``, named after this process.

    Partial outputs of dead writers in the same folder are removed first. The caller owns its
    removal: call this inside :func:`signals_deferred`, so that a signal cannot act between
    the file's creation and the caller's clean-up."""
    remove_dead_partials(path.parent)
    return tempfile.NamedTemporaryFile(
        mode="wb", delete=False, dir=path.parent,
        prefix=f".{path.name[:_NAME_CHARS]}.{_owner()}-", suffix=".tmp")


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit(143)`` while inside, so that ``finally`` and
    ``except BaseException`` clean-ups run; a second SIGTERM kills at once.

    Does nothing outside the main thread or where SIGTERM already has a handler."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


_DEFERRABLE = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while inside; on leaving, restore their handlers and raise
    again each one that came, so that it acts (KeyboardInterrupt, ``SystemExit``) after the
    block: a file made inside and recorded for removal is never left by a Ctrl-C that lands
    between its creation and its clean-up.

    Python runs signal handlers in the main thread only, whichever thread the signal reached,
    so outside the main thread no handler can interrupt the block and nothing is changed. A
    signal that is ignored, or whose handler Python did not install, is left as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    previous: dict[signal.Signals, Any] = {}
    try:
        for deferred in _DEFERRABLE:
            handler = signal.getsignal(deferred)
            if handler is not None and handler is not signal.SIG_IGN:
                previous[deferred] = signal.signal(deferred, hold)
        yield
    finally:
        for deferred, handler in previous.items():
            signal.signal(deferred, handler)
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)
