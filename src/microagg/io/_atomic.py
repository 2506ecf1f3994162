"""Atomic writes: a file is complete or absent (temporary file beside it, fsync, rename).
Public through :mod:`microagg.io`."""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Callable
from typing import IO

from ._leftovers import partial_output, signals_deferred

__all__ = ["atomic_write", "write_text_atomic"]

PathLike = str | os.PathLike[str]


def _file_mode(path: pathlib.Path) -> int:
    """Permissions for a new output: those of the file it replaces, else 0o666 minus umask."""
    with contextlib.suppress(OSError):
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: pathlib.Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write`` on a temporary file beside ``path``, then rename it onto ``path``.

    The temporary file is flushed and fsync'ed before :func:`os.replace`; on any exception,
    KeyboardInterrupt included, it is removed and the exception re-raised, so ``path`` is
    either the complete new file or untouched (a signal that lands while the temporary file
    is being made is held until its removal is assured). The temporary file (mode 0600) is
    named after this process, and those of dead writers in the folder are removed first
    (:func:`microagg.io._leftovers.partial_output`): a killed writer's is gone at the next write.
    """
    mode = _file_mode(path)
    name = None
    try:
        with signals_deferred():  # a Ctrl-C now acts once `name` is set, then removes it
            tmp = partial_output(path)
            name = tmp.name
        with tmp:
            write(tmp)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(name, mode)
        os.replace(name, path)
    except BaseException:
        if name is not None:
            with contextlib.suppress(OSError):
                os.unlink(name)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: pathlib.Path) -> None:
    """Make the rename durable where the platform allows it (not on Windows)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_text_atomic(text: str, path: PathLike, *, encoding: str = "utf-8") -> None:
    """Write a text file atomically (temporary file, fsync, rename), e.g. a JSON summary.

    Parameters
    ----------
    text : str
        The whole content.
    path : str or path-like
        Output file; any extension.
    encoding : str, default="utf-8"
        Text encoding.

    Raises
    ------
    TypeError
        If `text` is not a string.
    OSError
        If the file cannot be written (the output is then absent or unchanged).
    """
    if not isinstance(text, str):
        raise TypeError(f"write_text_atomic expects a str. Got {type(text).__name__} instead.")
    data = text.encode(encoding)

    def write(handle: IO[bytes]) -> None:
        handle.write(data)

    atomic_write(pathlib.Path(path).expanduser(), write)
