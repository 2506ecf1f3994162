"""Where numba caches microagg's compiled kernels, and keeping that cache sound.

Three rules, each from a failure seen in ordinary use:

* **A cache folder that can be written, or none.** numba looks for a writable folder when a
  kernel is *defined*: ``NUMBA_CACHE_DIR``, the package's ``__pycache__``, then the user's
  cache folder. A read-only install run by a service user with no writable home had none, and
  ``import microagg`` died with "cannot cache function ...: no locator available".
  :func:`configure_cache` runs before any kernel is defined; when none of numba's folders can
  be written it points numba at a private folder in the temporary directory (``0700``, owned
  by this user), and when even that fails it turns caching off (kernels then compile in
  memory in each process: slower to start, same results).
* **Stale code is never loaded.** numba re-validates a cached kernel against its own source
  file only; a kernel it calls in another file may have changed (an upgrade, an edited
  checkout). Each cache folder carries a stamp of every kernel module's source (found in
  every folder of the package, at any depth: :func:`kernel_modules`); a folder whose stamp
  differs is emptied of its numba files before anything is loaded from it.
* **One writer at a time.** numba's index update (read the index, pick a data-file number,
  write both) is not atomic across processes; two processes compiling different signatures
  of one kernel at once could both take number 1 and leave an index that points at the other
  one's machine code (numba#4807). :func:`cache_lock` serializes the writes (and the stale
  purge) with an advisory lock on the folder.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CacheSettings", "cache_lock", "cache_settings", "clear_cache", "configure_cache",
           "ensure_fresh", "kernel_folders", "kernel_modules", "kernel_stamp"]

_PACKAGE = Path(__file__).resolve().parents[1]
_MARKER = "microagg-kernels.sha256"
_LOCK = "microagg-cache.lock"
_NUMBA_SUFFIXES = (".nbi", ".nbc")


@dataclass(frozen=True)
class CacheSettings:
    """How this process caches kernels: ``mode`` is one of ``"NUMBA_CACHE_DIR"``,
    ``"package"`` (the ``__pycache__`` folders beside the kernel modules), ``"user"`` (numba's
    per-user cache folder), ``"private-temp"`` (our fallback) or ``"off"``; ``folder`` is the
    root numba writes under (``None`` for ``package`` and ``off``); ``reason`` says why."""

    mode: str
    folder: str | None
    reason: str


_SETTINGS: CacheSettings | None = None


def _writable(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (created if missing), as numba checks it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private_temp_folder() -> Path | None:
    """``<tmp>/microagg-numba-<uid>``, made ``0700`` and checked to be ours (not a link, not
    another user's folder planted in a shared temporary directory); ``None`` if unusable."""
    try:
        base = Path(tempfile.gettempdir())
    except (OSError, FileNotFoundError):  # no usable temporary directory at all
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    folder = base / f"microagg-numba-{uid}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
        return None
    if hasattr(os, "getuid") and (info.st_uid != uid or info.st_mode & 0o077):
        return None
    return folder if _writable(folder) else None


def _user_cache_folder() -> Path:
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def _choose(user_dir: str, package_dirs: tuple[Path, ...], user_folder: Path
            ) -> tuple[CacheSettings, Path | None]:
    """The first usable cache location, in numba's own order, then our fallbacks."""
    if user_dir:
        if _writable(Path(user_dir)):
            return CacheSettings("NUMBA_CACHE_DIR", user_dir, "set by NUMBA_CACHE_DIR"), None
        reason = f"NUMBA_CACHE_DIR={user_dir} cannot be written"
    elif all(_writable(d / "__pycache__") for d in package_dirs):
        return CacheSettings("package", None, "the package folder can be written"), None
    elif _writable(user_folder):
        return CacheSettings("user", str(user_folder),
                             "the package folder is read-only; numba's user cache"), None
    else:
        reason = f"neither the package folder nor {user_folder} can be written"
    private = _private_temp_folder()
    if private is not None:
        return CacheSettings("private-temp", str(private), reason), private
    return CacheSettings("off", None, reason + ", nor a private temporary folder"), None


def configure_cache() -> CacheSettings:
    """Decide once per process where kernels are cached (see the module docstring).

    Must run before any kernel is defined. Never raises; with ``NUMBA_DISABLE_JIT=1`` there is
    nothing to cache."""
    global _SETTINGS
    if _SETTINGS is not None:
        return _SETTINGS
    from numba.core import config as numba_config

    config: Any = numba_config  # its settings are set at run time, unknown to mypy
    if config.DISABLE_JIT:
        _SETTINGS = CacheSettings("off", None, "NUMBA_DISABLE_JIT=1: kernels run as Python")
        return _SETTINGS
    settings, private = _choose(config.CACHE_DIR, kernel_folders(), _user_cache_folder())
    if private is not None:
        config.CACHE_DIR = str(private)  # numba reads it when each kernel is defined
    _SETTINGS = settings
    return settings


def cache_settings() -> CacheSettings:
    """The settings chosen by :func:`configure_cache` (which it runs if needed)."""
    return configure_cache()


def kernel_modules(package: Path = _PACKAGE) -> tuple[Path, ...]:
    """The ``*.py`` files under ``package``, at any depth, that mention numba or ``njit``
    (every module that defines or calls kernels), sorted."""
    return tuple(source for source in sorted(package.rglob("*.py"))
                 if b"numba" in (text := source.read_bytes()) or b"njit" in text)


def kernel_folders(package: Path = _PACKAGE) -> tuple[Path, ...]:
    """The folders that hold :func:`kernel_modules` (where numba caches beside the sources)."""
    return tuple(sorted({source.parent for source in kernel_modules(package)}))


def _stamp(package: Path) -> str:
    digest = hashlib.sha256()
    for source in kernel_modules(package):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


@functools.cache
def _installed_stamp() -> str:
    return _stamp(_PACKAGE)


def kernel_stamp(package: Path | None = None) -> str:
    """SHA-256 of the sources of every kernel module under ``package`` (default: microagg's,
    computed once per process): any change to any kernel changes it, in whichever folder it
    is; editing a module without kernels keeps the compiled code."""
    return _installed_stamp() if package is None else _stamp(package)


@contextlib.contextmanager
def cache_lock(folder: str | Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on cache ``folder`` (a no-op where ``fcntl`` is
    missing or the lock file cannot be made: numba's own atomic renames still apply)."""
    try:
        import fcntl

        handle = open(Path(folder) / _LOCK, "a+b")
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # releases the lock


def _numba_files(folder: Path) -> list[Path]:
    return [f for f in folder.iterdir() if f.suffix in _NUMBA_SUFFIXES
            or ".nbi.tmp." in f.name or ".nbc.tmp." in f.name]


_FRESH: set[str] = set()


def ensure_fresh(folder: str | Path, stamp: str | None = None) -> None:
    """Empty ``folder`` of numba's files if they were compiled from other kernel sources,
    then record the current stamp; done once per folder and process, under the lock.
    Never raises (an unwritable folder keeps numba's own behaviour)."""
    key = str(folder)
    if key in _FRESH:
        return
    try:
        stamp = stamp or kernel_stamp()
        path = Path(folder)
        marker = path / _MARKER
        with cache_lock(path):
            if not (marker.is_file() and marker.read_text() == stamp):
                for stale in _numba_files(path):
                    stale.unlink(missing_ok=True)
                partial = path / f".{_MARKER}.{os.getpid()}"
                partial.write_text(stamp)
                os.replace(partial, marker)
    except OSError:
        pass
    _FRESH.add(key)


def clear_cache(folders: list[str]) -> int:
    """Delete microagg's compiled kernels from ``folders``; returns the number of files."""
    removed = 0
    for folder in folders:
        path = Path(folder)
        if not path.is_dir():
            continue
        with cache_lock(path):
            for item in [*_numba_files(path), path / _MARKER]:
                if item.exists():
                    item.unlink()
                    removed += 1
        _FRESH.discard(str(folder))
    return removed
