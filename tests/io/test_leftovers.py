"""What a killed run leaves behind (issue 16, items 1 and 10): work files of unmasked data
never beside the output, private (0700 / 0600) and removed by the next run once their owner
is dead; partial outputs of dead writers removed by the next write; live runs untouched."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pytest

from microagg.engines.file.engine import anonymize_file
from microagg.io import _leftovers
from microagg.io._atomic import atomic_write
from microagg.io._leftovers import (
    make_work_folder,
    private_file,
    remove_dead_partials,
    remove_dead_work_folders,
)
from microagg.io.tables import write_table

pytestmark = pytest.mark.skipif(os.name != "posix" or not pathlib.Path("/proc/self/stat").exists(),
                                reason="process liveness is read from /proc")

QI = [f"x{i}" for i in range(10)]
MICROAGG = pathlib.Path(sys.executable).with_name("microagg")


def _frame(n: int, *, note_chars: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(16)
    df = pd.DataFrame(rng.normal(size=(n, len(QI))), columns=QI)
    df.insert(0, "id", np.arange(n))
    if note_chars:
        df["note"] = "n" * note_chars
    return df


def _originals(df: pd.DataFrame) -> np.ndarray:
    """1,000 original quasi-identifier values (continuous: no masked mean equals one)."""
    values = df[QI].to_numpy().ravel()
    return values[np.random.default_rng(1).choice(values.size, 1000, replace=False)]


def _holds_originals(path: pathlib.Path, originals: np.ndarray) -> bool:
    """Does the file hold any of ``originals``, as float64 bytes (any alignment) or as CSV
    text (Python's shortest repr, which pandas writes)?"""
    data = path.read_bytes()
    for offset in range(8):
        usable = (len(data) - offset) // 8 * 8
        if usable > 0 and np.isin(np.frombuffer(data, np.float64, usable // 8, offset),
                                  originals).any():
            return True
    return any(repr(float(v)).encode() in data for v in originals[:50])


def _files(folder: pathlib.Path) -> list[pathlib.Path]:
    """Every file under ``folder``, hidden ones and those in hidden folders included."""
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _mode(path: pathlib.Path) -> int:
    return path.stat().st_mode & 0o777


def _start(tmp_path: pathlib.Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``microagg anonymize ARGS`` with its own temporary folder ``tmp_path/tmp``."""
    if not MICROAGG.exists():
        pytest.skip(f"no microagg script beside {sys.executable}")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    # the run is the subject, not a traceback: compiled even in the NUMBA_DISABLE_JIT pass
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"},
           "TMPDIR": str(tmp_path / "tmp")}
    # Ctrl-C reaches the run as in a terminal even when the tests themselves run in the
    # background (`make test &`): a shell starts background jobs with SIGINT ignored, the
    # child inherits that, and Python then leaves SIGINT ignored (the run ended with 0)
    return subprocess.Popen([str(MICROAGG), "anonymize", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(find: Callable[[], list[pathlib.Path]], process: subprocess.Popen[bytes],
              timeout: float = 120.0) -> list[pathlib.Path]:
    """Poll (every 2 ms) until ``find`` returns something; fail if the run ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(f"the run ended (status {process.returncode}) before it was caught: "
                        f"{process.stderr.read().decode() if process.stderr else ''}")
        time.sleep(0.002)
    process.kill()
    pytest.fail(f"nothing appeared in {timeout} s")


def _partials(folder: pathlib.Path) -> Callable[[], list[pathlib.Path]]:
    return lambda: sorted(folder.glob(".o.csv.*.tmp"))


def _file_engine(tmp_path: pathlib.Path, n: int) -> tuple[pd.DataFrame, pathlib.Path]:
    df = _frame(n)
    df.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "out").mkdir()
    return df, tmp_path / "in.csv"


def _file_engine_args(source: pathlib.Path, out: pathlib.Path) -> list[str]:
    return [str(source), "-q", ",".join(QI), "--drop", "id", "-k", "5", "--engine", "file",
            "--jobs", "1", "--random-state", "0", "-o", str(out / "o.csv")]


@pytest.fixture
def private_tmp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The system temporary folder of this process, for the test (``tmp_path/tmp``)."""
    folder = tmp_path / "tmp"
    folder.mkdir(exist_ok=True)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process of this user that is not this one."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()


def _owner_name(pid: int, start: int | None = None, host: str | None = None) -> str:
    stat = _leftovers._process_stat(pid)
    start = (stat[1] if stat else 0) if start is None else start
    return f"microagg-{host or _leftovers._host_tag()}-{pid}-{start}-abcd_123"


# -- real runs of the command line, killed ----------------------------------------------------


def test_kill_9_of_the_file_engine_leaves_no_originals_beside_the_output(tmp_path,
                                                                        private_tmp):
    df, source = _file_engine(tmp_path, 20_000)
    out = tmp_path / "out"
    run = _start(tmp_path, *_file_engine_args(source, out))
    _wait_for(_partials(out), run)
    run.send_signal(signal.SIGKILL)
    run.wait()
    originals = _originals(df)
    beside = _files(out)
    assert beside, "the killed run left no partial output: the kill came too late"
    assert [p.name for p in beside if _holds_originals(p, originals)] == []
    assert all(_mode(p) == 0o600 for p in beside)
    # the originals are in the killed run's private work folder, 0700 with 0600 files
    (work,) = private_tmp.iterdir()
    assert work.name.startswith(f"microagg-{_leftovers._host_tag()}-{run.pid}-")
    assert _mode(work) == 0o700
    assert _files(work) and all(_mode(p) == 0o600 for p in _files(work))
    # by the time the output is written, the spilled runs (the original values) are gone:
    # the work folder holds the blocks' group means only
    assert [p.name for p in _files(work) if _holds_originals(p, originals)] == []
    assert _holds_originals(source, originals)  # the search works
    # the next run, writing the same output, removes both
    small = _frame(200)
    small.to_csv(tmp_path / "small.csv", index=False)
    anonymize_file(tmp_path / "small.csv", out / "o.csv", quasi_identifiers=QI, k=5,
                   identifiers=["id"], n_jobs=1, random_state=0)
    assert list(private_tmp.iterdir()) == []
    assert _files(out) == [out / "o.csv"]
    assert len(pd.read_csv(out / "o.csv")) == 200


def test_kill_9_of_the_memory_engine_partial_removed_by_the_next_write(tmp_path,
                                                                       private_tmp):
    df = _frame(5_000, note_chars=3_000)  # a wide copied column: writing takes a while
    df.to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out"
    out.mkdir()
    run = _start(tmp_path, str(tmp_path / "in.csv"), "-q", ",".join(QI), "--drop", "id",
                 "-k", "5", "--random-state", "0", "-o", str(out / "o.csv"))
    (partial,) = _wait_for(_partials(out), run)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert partial.exists() and _mode(partial) == 0o600
    assert not _holds_originals(partial, _originals(df))
    assert list(private_tmp.iterdir()) == []  # the in-memory engine has no work folder
    write_table(pd.DataFrame({"a": [1]}), out / "other.csv")  # any write in the folder
    assert _files(out) == [out / "other.csv"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_remove_the_work_folder_and_the_partial(tmp_path, signum):
    _, source = _file_engine(tmp_path, 20_000)
    out = tmp_path / "out"
    run = _start(tmp_path, *_file_engine_args(source, out))
    _wait_for(_partials(out), run)
    run.send_signal(signum)
    assert run.wait(timeout=60) != 0
    assert _files(out) == []
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_live_run_keeps_its_files_and_the_last_rename_wins(tmp_path, private_tmp):
    _, source = _file_engine(tmp_path, 20_000)
    out = tmp_path / "out"
    run = _start(tmp_path, *_file_engine_args(source, out))
    (partial,) = _wait_for(_partials(out), run)
    run.send_signal(signal.SIGSTOP)  # alive, and certain to stay in its writing stage
    try:
        (work,) = private_tmp.iterdir()
        small = _frame(200)
        small.to_csv(tmp_path / "small.csv", index=False)
        anonymize_file(tmp_path / "small.csv", out / "o.csv", quasi_identifiers=QI, k=5,
                       identifiers=["id"], n_jobs=1, random_state=0)
        assert len(pd.read_csv(out / "o.csv")) == 200
        assert partial.exists() and work.is_dir()  # both scanned, both kept
    finally:
        run.send_signal(signal.SIGCONT)
    assert run.wait(timeout=120) == 0
    # two writers of one output both succeed; the last rename wins (docs/guarantees.md)
    assert len(pd.read_csv(out / "o.csv")) == 20_000
    assert _files(out) == [out / "o.csv"] and list(private_tmp.iterdir()) == []


# -- the liveness rules, on folders named after chosen processes ------------------------------


def test_only_folders_of_provably_dead_owners_are_removed(tmp_path, sleeper):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while (_leftovers._process_stat(zombie.pid) or ("",))[0] != "Z":
        time.sleep(0.01)  # exited, not yet reaped
    names = {
        "dead": _owner_name(dead.pid, start=1),
        "zombie": _owner_name(zombie.pid),
        "reused pid": _owner_name(sleeper.pid, start=1),
        "live": _owner_name(sleeper.pid),
        "this process": _owner_name(os.getpid()),
        "other host": _owner_name(dead.pid, start=1, host="00000000"),
        "no start time": _owner_name(sleeper.pid, start=0),
        "not ours": "microagg-data",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    (tmp_path / f"{_owner_name(dead.pid, start=1)[:-1]}x.txt").write_text("a file")
    removed = remove_dead_work_folders(tmp_path)
    zombie.wait()
    assert sorted(p.name for p in removed) == sorted(
        [names["dead"], names["zombie"], names["reused pid"]])
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == sorted(
        names[k] for k in ("live", "this process", "other host", "no start time", "not ours"))


def test_partials_of_dead_writers_removed_by_any_write_in_the_folder(tmp_path, sleeper):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    kept = [f".o.csv.{_owner_name(sleeper.pid)}.tmp",  # a live writer
            ".o.csv.abcd1234.tmp",  # not named by microagg
            f".o.csv.{_owner_name(dead.pid, host='00000000')}.tmp"]  # another host's
    gone = [f".o.csv.{_owner_name(dead.pid, start=1)}.tmp",
            f".other.parquet.{_owner_name(dead.pid, start=1)}.tmp"]
    for name in kept + gone:
        (tmp_path / name).write_text("masked rows")
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "new.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "new.csv"])
    assert remove_dead_partials(tmp_path) == []


def test_partial_output_is_named_after_its_writer_and_private(tmp_path):
    seen: dict[str, object] = {}

    def write(handle):
        handle.write(b"a\n1\n")
        seen["name"] = pathlib.Path(handle.name).name
        seen["mode"] = _mode(pathlib.Path(handle.name))

    atomic_write(tmp_path / ("long" * 60 + ".csv"), write)
    name = str(seen["name"])
    assert name.startswith(".long") and name.endswith(".tmp") and len(name) < 160
    assert _leftovers._PARTIAL.match(name)["pid"] == str(os.getpid())
    assert seen["mode"] == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["long" * 60 + ".csv"]


def test_work_folder_private_with_a_marker_and_never_beside_the_output(tmp_path, private_tmp):
    work = make_work_folder()
    assert work.parent == private_tmp and _mode(work) == 0o700
    assert _mode(work / _leftovers.MARKER) == 0o600
    assert str(os.getpid()) in (work / _leftovers.MARKER).read_text()
    assert _mode(pathlib.Path(private_file(work / "values.npy"))) == 0o600
    with pytest.raises(FileExistsError):
        private_file(work / "values.npy")
    # a run of the file engine: work files in a given workdir while it runs, none after
    df = _frame(3_000)
    df.to_parquet(tmp_path / "in.parquet")
    (tmp_path / "out").mkdir()
    (tmp_path / "work").mkdir()
    during: list[list[int]] = []

    def on_stage(name: str) -> None:
        if name == "writing":
            (folder,) = (tmp_path / "work").iterdir()
            during.append([_mode(folder), *(_mode(p) for p in _files(folder))])

    anonymize_file(tmp_path / "in.parquet", tmp_path / "out" / "o.parquet",
                   quasi_identifiers=QI, k=5, identifiers=["id"], n_jobs=1, block_size=500,
                   workdir=tmp_path / "work", on_stage=on_stage)
    (modes,) = during
    assert modes[0] == 0o700 and len(modes) > 4 and set(modes[1:]) == {0o600}
    assert list((tmp_path / "work").iterdir()) == []
    assert _files(tmp_path / "out") == [tmp_path / "out" / "o.parquet"]


# -- a signal that lands while a file is being made (the CI failure of stop 35) -------------


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process, as in a terminal (a test runner's
    worker may have it ignored or handled)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _then_ctrl_c(make: Callable[..., object]) -> Callable[..., object]:
    """``make``, then a Ctrl-C to this process before the made thing is returned: the
    narrowest window, between a file's creation and its owner's clean-up."""

    def made_then_interrupted(*args: object, **kwargs: object) -> object:
        made = make(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return made

    return made_then_interrupted


def test_ctrl_c_while_the_partial_is_made_removes_it(tmp_path, monkeypatch, ctrl_c_raises):
    monkeypatch.setattr(_leftovers.tempfile, "NamedTemporaryFile",
                        _then_ctrl_c(tempfile.NamedTemporaryFile))
    written: list[bytes] = []
    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "o.csv", lambda handle: written.append(b"never"))
    assert written == []  # the Ctrl-C acted before anything was written
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_the_work_folder_is_made_removes_it(tmp_path, monkeypatch, private_tmp,
                                                         ctrl_c_raises):
    monkeypatch.setattr(_leftovers.tempfile, "mkdtemp", _then_ctrl_c(tempfile.mkdtemp))
    with pytest.raises(KeyboardInterrupt):
        make_work_folder()
    assert list(private_tmp.iterdir()) == []


def test_signals_deferred_holds_a_signal_to_the_end_of_the_block(ctrl_c_raises):
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with _leftovers.signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
            reached.append("end of the block")
    assert reached == ["end of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # an ignored signal stays ignored
    try:
        with _leftovers.signals_deferred():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_the_workbench_folder_is_made_leaves_its_removal_registered(
        tmp_path, monkeypatch, ctrl_c_raises):
    """The workbench's session folder is made and its removal registered (atexit) under
    signals_deferred: a Ctrl-C between the two at server start no longer leaves it."""
    from microagg.web import sessions

    registered: list[Callable[[], None]] = []
    monkeypatch.setattr(sessions.tempfile, "mkdtemp", _then_ctrl_c(tempfile.mkdtemp))
    monkeypatch.setattr(sessions.atexit, "register", registered.append)
    with pytest.raises(KeyboardInterrupt):
        sessions.SessionStore(tmp_path)
    assert len(registered) == 1 and len(list(tmp_path.iterdir())) == 1
    registered[0]()  # what happens at exit
    assert list(tmp_path.iterdir()) == []


# -- the start of any command --------------------------------------------------------------


def _command(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``microagg ARGS`` in a process of its own, with ``tmp_path/tmp`` as its ``$TMPDIR``."""
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    return subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           *args], env=env, capture_output=True, text=True, timeout=300)


def _killed_run_folder(folder: pathlib.Path, pid: int) -> pathlib.Path:
    """A work folder as a SIGKILLed file-engine run leaves it: 0700, a spilled run of
    original values (0600) and the marker."""
    work = folder / _owner_name(pid, start=1)
    work.mkdir(mode=0o700)
    with open(private_file(work / "run-0.f64"), "wb") as spilled:
        spilled.write(np.arange(4096, dtype=np.float64).tobytes())
    (work / _leftovers.MARKER).write_text("Work folder of microagg process\n")
    return work


def test_any_command_removes_the_work_folders_of_dead_runs_and_doctor_lists_them(
        tmp_path, private_tmp, sleeper):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = private_tmp / _owner_name(sleeper.pid)
    live.mkdir()
    work = _killed_run_folder(private_tmp, dead.pid)
    done = _command(tmp_path, "methods")
    assert done.returncode == 0, done.stderr
    assert not work.exists() and live.is_dir()  # a live run's folder is never touched

    work = _killed_run_folder(private_tmp, dead.pid)
    doctor = _command(tmp_path, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    text = " ".join(doctor.stdout.split())
    assert f"1 work folder(s) of killed runs in {private_tmp} (0.0 MiB, 2 files" in text
    assert f"{work} (2 files" in text
    assert not work.exists() and live.is_dir()
    again = _command(tmp_path, "doctor")
    assert f"leftovers none in {private_tmp}" in " ".join(again.stdout.split())
