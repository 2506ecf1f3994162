"""The compiled-kernel cache as people meet it: separate processes one after another, several
at once, another thread count, nothing writable (issue 16, item 5).

Every test gets a fresh, empty cache (``NUMBA_CACHE_DIR``) and runs each step in a new
interpreter: one pytest process compiles everything once and never sees these failures.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg._runtime import numba_cache as _numba_cache
from microagg._runtime.numba_cache import clear_cache, ensure_fresh, kernel_folders, kernel_stamp
from microagg.partition import PARTITIONERS

MICROAGG = str(Path(sys.executable).with_name("microagg"))
SEGFAULT = -11  # a child killed by SIGSEGV

# one release in a fresh interpreter, through the Python API (lighter than the CLI)
DRIVER = """
import sys, warnings
warnings.simplefilter("ignore")
from microagg import anonymize, load_dataset
from microagg.partition import PARTITIONERS
census = load_dataset("census")
method, k = sys.argv[1], int(sys.argv[2])
qi, extra = census.quasi_identifiers, {}
if PARTITIONERS[method].needs_sensitive:
    qi, extra = qi[:-1], {"sensitive": [qi[-1]]}
release = anonymize(census.data, quasi_identifiers=qi, k=k, method=method, random_state=0,
                    **extra)
assert release.checks["k_anonymity"]["achieved"] >= k
"""


def _env(cache: Path | None, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("NUMBA_")}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def _assert_ok(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode != SEGFAULT, f"{what}: segmentation fault"
    assert result.returncode == 0, f"{what}: exit {result.returncode}\n{result.stderr[-2000:]}"


ISSUE_LOOP = [("bottom-up", 3), ("bottom-up", 7), ("cbfs", 3), ("cbfs", 7), ("dba1", 3),
              ("dba1", 7), ("dba2", 3)]
ISSUE_LOOP_CRASHES = [("dba1", 3), ("dba1", 7), ("dba2", 3)]
"""The runs of the loop that crashed (``dba1:7``, ``dba2:3``), after the one that fills the
cache they load from: the default run; the whole loop runs with the exhaustive tests."""


@pytest.fixture(scope="module")
def issue_loop(tmp_path_factory: pytest.TempPathFactory
               ) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
    """The reproduction of issue 16 on a fresh cache: seven CLI runs one after another
    (dba1:7 and dba2:3 died with exit 139, every time: a cached kernel calling a parallel one,
    loaded without numba's threading layer). The cache it fills serves later tests."""
    return _loop(tmp_path_factory.mktemp("issue-loop"), ISSUE_LOOP_CRASHES)


def _loop(work: Path, runs: list[tuple[str, int]]
          ) -> tuple[Path, list[subprocess.CompletedProcess[str]]]:
    env = _env(work / "cache")
    results = [_run([MICROAGG, "anonymize", "--dataset", "census", "-k", str(k), "--method",
                     method, "--random-state", "0", "-o", "o.csv"], env, work)
               for method, k in runs]
    return work, results


def test_the_issue_loop_runs_on_a_fresh_cache(issue_loop) -> None:
    for (method, k), result in zip(ISSUE_LOOP_CRASHES, issue_loop[1], strict=True):
        _assert_ok(result, f"{method}:{k}")


@pytest.mark.exhaustive  # seven runs, each compiling on a fresh cache: minutes
def test_the_whole_issue_loop_runs_on_a_fresh_cache(tmp_path: Path) -> None:
    for (method, k), result in zip(ISSUE_LOOP, _loop(tmp_path, ISSUE_LOOP)[1], strict=True):
        _assert_ok(result, f"{method}:{k}")


@pytest.mark.exhaustive  # 3-4 minutes: `make test-exhaustive`
def test_every_method_at_two_k_in_turn(tmp_path: Path) -> None:
    # 14 of 48 such runs crashed before the fix (issue 16)
    env = _env(tmp_path / "cache")
    for k in (3, 7):
        for method in sorted(PARTITIONERS):
            result = _run([sys.executable, "-c", DRIVER, method, str(k)], env, tmp_path)
            _assert_ok(result, f"{method}:{k}")


def test_first_runs_at_once_then_from_the_cache(tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    methods = ["dba1", "bottom-up"]  # both compile the chain that crashed

    def command(method: str, wave: int) -> list[str]:
        return [MICROAGG, "anonymize", "--dataset", "census", "-k", "4", "--method", method,
                "--random-state", "0", "-o", f"{method}-{wave}.csv"]

    running = [subprocess.Popen(command(m, 1), env=env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for m in methods]
    for method, process in zip(methods, running, strict=True):
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, f"{method} (first wave): {stderr[-2000:]}"
    for method in methods:  # everything now comes from what the three wrote at once
        _assert_ok(_run(command(method, 2), env, tmp_path), f"{method} (second wave)")
        assert (tmp_path / f"{method}-1.csv").read_bytes() == \
            (tmp_path / f"{method}-2.csv").read_bytes()


def test_another_thread_count_between_runs(issue_loop) -> None:
    # kernels cached with 2 threads, loaded with 1 and back (numba#7518 crashed there);
    # 12,000 records: the distance passes take their parallel branch (>= 8,192 active)
    work = issue_loop[0]
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(12_000, 3)), columns=["a", "b", "c"]).to_csv(
        work / "in.csv", index=False)
    outputs = []
    for run, threads in enumerate(["1", "2", "1"]):
        env = _env(work / "cache", NUMBA_NUM_THREADS=threads)
        result = _run([MICROAGG, "anonymize", "in.csv", "-q", "a,b,c", "-k", "5",
                       "--method", "cbfs", "-o", f"out{run}.csv"], env, work)
        _assert_ok(result, f"run {run} with {threads} threads")
        outputs.append((work / f"out{run}.csv").read_bytes())
    assert all(out == outputs[0] for out in outputs)  # same partition, whatever the threads


def _read_only_copy(target: Path) -> Path:
    """A copy of the installed package where no ``__pycache__`` can be made (a file holds
    each name), so numba finds no folder beside the sources: a read-only install, even for
    root, whom file permissions do not stop."""
    import shutil

    import microagg

    package = Path(microagg.__file__).parent
    shutil.copytree(package, target / "microagg",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [target / "microagg", *(p for p in (target / "microagg").rglob("*")
                                          if p.is_dir())]:
        (folder / "__pycache__").write_text("not a folder")
    return target


def test_read_only_install_and_no_home(tmp_path: Path) -> None:
    # a service user: the package cannot be written, HOME cannot exist; `import microagg`
    # (even `microagg --version`) died with "cannot cache function ...: no locator available"
    site = _read_only_copy(tmp_path / "site")
    (tmp_path / "tmp").mkdir()
    env = _env(None, HOME="/dev/null/home", PYTHONPATH=str(site), TMPDIR=str(tmp_path / "tmp"),
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("XDG_CACHE_HOME", None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return _run([sys.executable, "-c", "from microagg.cli import main; main()", *args],
                    env, tmp_path)

    version = run("--version")
    _assert_ok(version, "--version")
    assert version.stdout.startswith("microagg")
    _assert_ok(run("anonymize", "--dataset", "census", "-k", "3", "--method", "cbfs",
                   "-o", "o.csv"), "run")
    doctor = run("doctor")
    _assert_ok(doctor, "doctor")
    assert "private-temp" in doctor.stdout
    assert str(tmp_path / "tmp" / "microagg-numba-") in doctor.stdout.replace("\n", "")
    private = next((tmp_path / "tmp").glob("microagg-numba-*"))
    assert private.stat().st_mode & 0o777 == 0o700
    assert list(private.rglob("*.nbc"))  # the kernels were cached there


def test_no_writable_folder_turns_caching_off(tmp_path: Path, monkeypatch) -> None:
    read_only = tmp_path / "ro"
    read_only.mkdir()
    monkeypatch.setattr(_numba_cache, "_writable", lambda folder: False)
    monkeypatch.setattr(_numba_cache, "_private_temp_folder", lambda: None)
    settings, private = _numba_cache._choose("", (read_only,), read_only / "user")
    assert settings.mode == "off" and private is None
    assert settings.reason.endswith("can be written, nor a private temporary folder")


def test_unwritable_numba_cache_dir_falls_back(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_numba_cache, "_writable", lambda folder: False)
    monkeypatch.setattr(_numba_cache, "_private_temp_folder", lambda: tmp_path)
    settings, private = _numba_cache._choose("/proc/nope", (tmp_path,), tmp_path / "user")
    assert (settings.mode, private) == ("private-temp", tmp_path)
    assert "NUMBA_CACHE_DIR=/proc/nope cannot be written" in settings.reason


def test_stale_kernels_are_deleted_before_loading(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "kernels.py").write_text("from numba import njit\nx = 1\n")
    (source / "plain.py").write_text("y = 1\n")
    stamp = kernel_stamp(source)
    cache = tmp_path / "cache"
    cache.mkdir()
    entry = cache / "kernels.f-1.py311.nbi"
    entry.write_text("compiled")
    ensure_fresh(cache, stamp)  # no stamp yet: unknown origin, deleted
    assert not entry.exists()
    entry.write_text("compiled")
    _numba_cache._FRESH.clear()
    ensure_fresh(cache, stamp)  # same sources: kept
    assert entry.exists()
    (source / "plain.py").write_text("y = 2\n")  # a module without kernels
    assert kernel_stamp(source) == stamp
    (source / "kernels.py").write_text("from numba import njit\nx = 2\n")
    _numba_cache._FRESH.clear()
    ensure_fresh(cache, kernel_stamp(source))  # a kernel changed: deleted
    assert not entry.exists()
    assert clear_cache([str(cache)]) == 1  # the stamp itself


def test_the_stamp_covers_kernels_in_every_folder(tmp_path: Path) -> None:
    (tmp_path / "bounds").mkdir()
    (tmp_path / "plain.py").write_text("y = 1\n")
    nested = tmp_path / "bounds" / "kernels.py"
    nested.write_text("from numba import njit\nx = 1\n")
    stamp = kernel_stamp(tmp_path)
    assert kernel_folders(tmp_path) == (tmp_path / "bounds",)
    nested.write_text("from numba import njit\nx = 2\n")  # a kernel one folder down changed
    assert kernel_stamp(tmp_path) != stamp


def test_every_kernel_folder_is_guarded() -> None:
    import importlib

    from microagg._runtime.jit import KERNELS

    for module in ("microagg.partition", "microagg.aggregate.aggregators", "microagg.partition.fuzzy",
                   "microagg.metrics.clustering", "microagg.bounds._exact",
                   "microagg.series.distance", "microagg.metrics._suda_kernel"):
        importlib.import_module(module)
    defined = {Path(kernel.py_func.__code__.co_filename).resolve().parent for kernel in KERNELS}
    guarded = set(kernel_folders())
    assert {folder.name for folder in defined} >= {"bounds", "series", "partition", "metrics"}
    assert defined <= guarded


# the cross-file case: a cached kernel of bounds/_exact.py calls kernels of
# bounds/_enumeration.py; numba re-validates it against _exact.py only
PRICING = """
import numpy as np
from microagg.bounds._exact import exact_pricing
from microagg.bounds._pricing import knn_table
X = np.random.default_rng(0).normal(size=(9, 2))
print(exact_pricing(X, np.ones(9), knn_table(X, 3), 3, np.full(9, np.inf)).bound)
"""


@pytest.mark.exhaustive  # about 70 s on 2 cores (two compilations of the bound's kernels);
# the default run keeps the structural guard tests (every kernel folder stamped and guarded)
def test_a_stale_kernel_in_bounds_is_deleted_before_it_loads(tmp_path: Path) -> None:
    import shutil

    import microagg

    site = tmp_path / "site"
    shutil.copytree(Path(microagg.__file__).parent, site / "microagg",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = _env(tmp_path / "cache", PYTHONPATH=str(site))

    def price() -> str:
        result = _run([sys.executable, "-c", PRICING], env, tmp_path)
        _assert_ok(result, "exact pricing")
        return result.stdout

    def cached() -> dict[str, tuple[int, int]]:
        files = (tmp_path / "cache").rglob("_exact.*.nb[ic]")
        return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in files}

    first = price()
    compiled = cached()
    assert compiled  # the caller's machine code is in the cache
    assert price() == first and cached() == compiled  # unchanged sources: loaded as cached
    callee = site / "microagg" / "bounds" / "_enumeration.py"
    callee.write_text(callee.read_text() + "\n# edited: the caller's machine code is stale\n")
    assert price() == first
    again = cached()
    assert again.keys() == compiled.keys()
    assert all(again[name] != compiled[name] for name in compiled)  # deleted, compiled anew


def test_doctor_reports_and_clears_the_cache(issue_loop) -> None:
    work = issue_loop[0]
    env = _env(work / "cache")
    report = _run([MICROAGG, "doctor"], env, work)
    _assert_ok(report, "doctor")
    assert "NUMBA_CACHE_DIR" in report.stdout and "current" in report.stdout
    assert list((work / "cache").rglob("*.nbc"))
    cleared = _run([MICROAGG, "doctor", "--clear-cache"], env, work)
    _assert_ok(cleared, "doctor --clear-cache")
    assert "Removed" in cleared.stdout
    assert not list((work / "cache").rglob("*.nb[ci]"))
    assert "empty" in _run([MICROAGG, "doctor"], env, work).stdout


def _tutorial_blocks(*marks: str) -> str:
    """The ``sh`` blocks of docs/tutorial.md that contain one of ``marks``, in order."""
    import re

    tutorial = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
    blocks = re.findall(r"```sh\n(.*?)```", tutorial.read_text(encoding="utf-8"), flags=re.S)
    return "\n".join(block for block in blocks if any(mark in block for mark in marks))


@pytest.mark.exhaustive  # about 45 s on 2 cores: a fresh compilation, then the tutorial's runs
def test_warm_up_covers_the_tutorial(tmp_path: Path) -> None:
    env = _env(tmp_path / "cache")
    warm = _run([MICROAGG, "doctor", "--warm-up"], env, tmp_path)
    _assert_ok(warm, "doctor --warm-up")
    assert "compiled" in warm.stdout
    compiled = sorted(p.name for p in (tmp_path / "cache").rglob("*.nbc"))
    script = "set -euo pipefail\n" + _tutorial_blocks(
        "datasets survey -o survey.csv", "cat > survey.toml", "--drop person_id",
        "microagg risk", "--schema survey.toml -k 5 -l 2")
    assert script.count("microagg anonymize") == 3 and "microagg risk" in script
    env["PATH"] = f"{Path(MICROAGG).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", script], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mage" in done.stdout  # the method of its mixed releases
    # the runs found every kernel in the cache: nothing compiled, nothing said about it
    assert "compiling numba kernels" not in done.stderr and "Compiled" not in done.stderr
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*.nbc")) == compiled
