"""Guard against stale numba caches: clear them when any kernel source changes.

numba's ``cache=True`` re-validates a cached kernel against its own source file only. When a
kernel that it calls changes in another file (a package upgrade, an edited checkout), the
stale machine code can be loaded and crash the interpreter. At import we hash the sources of
every module that holds kernels (the ``*.py`` files of the package that mention numba); if the hash differs from the one recorded beside the cache,
the cache files of this package are deleted (numba then recompiles once).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["reset_stale_cache"]

_PACKAGE = Path(__file__).resolve().parent
_KERNEL_DIRS = (_PACKAGE, _PACKAGE / "partition")
_MARKER = "microagg-kernels.sha256"


def reset_stale_cache(folders: tuple[Path, ...] = _KERNEL_DIRS) -> None:
    """Delete the numba cache files in ``folders/__pycache__`` if any kernel module (a
    ``*.py`` of ``folders`` that mentions numba) changed since they were written. Modules
    without kernels are left out, so editing them does not throw compiled code away. Never raises: a read-only install simply keeps numba's
    own behaviour."""
    try:
        digest = hashlib.sha256()
        for folder in folders:
            for source in sorted(folder.glob("*.py")):
                text = source.read_bytes()
                if b"numba" not in text:
                    continue
                digest.update(source.name.encode())
                digest.update(text)
        stamp = digest.hexdigest()
        for folder in folders:
            cache = folder / "__pycache__"
            marker = cache / _MARKER
            if marker.is_file() and marker.read_text() == stamp:
                continue
            if cache.is_dir():
                for pattern in ("*.nbi", "*.nbc"):
                    for stale in cache.glob(pattern):
                        stale.unlink(missing_ok=True)
            cache.mkdir(exist_ok=True)
            marker.write_text(stamp)
    except OSError:
        pass
