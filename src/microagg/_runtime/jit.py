"""``njit`` for microagg's kernels: numba's decorator, cached only where it is safe.

Use ``from .._jit import njit`` instead of ``from numba import njit``; the options are
numba's. On top of numba:

* ``cache=True`` is honoured only where :func:`~microagg._runtime.numba_cache.configure_cache`
  found a writable folder (else kernels compile in memory instead of failing at import);
* every kernel registers in :data:`KERNELS` (``microagg doctor`` lists their cache folders);
* loading a kernel from the cache first checks the folder's stamp (stale machine code is
  deleted, never run) and **starts numba's threading layer** before the machine code is
  linked (the layer registers the symbols that parallel regions call). The reason is a numba defect
  (numba#8578): a cached kernel that calls a ``parallel=True`` kernel carries a hook that
  starts the threading layer when loaded, but only if the callee was compiled in the same
  process; when the callee itself came from the cache, the caller is saved without the hook,
  and a later process that loads just the caller runs a parallel region with no threading
  layer: a segmentation fault (``dba1`` after ``bottom-up`` on a fresh cache, every time).
  numba starts the layer itself when it compiles a parallel region, so only loads need it.
* saving takes the folder's lock, so concurrent first runs cannot mix up index entries;
* cache misses are counted: :func:`watch_compilation` tells a face that kernels are being
  compiled (a first run's one-time cost) and how long that took.

Only numba's documented cache attributes are touched (``Dispatcher._cache`` and its
``load_overload`` / ``save_overload`` / ``cache_path``); where they are missing (another
numba, ``NUMBA_DISABLE_JIT=1``) the kernel is returned unchanged.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core import types

from .numba_cache import cache_lock, configure_cache, ensure_fresh

configure_cache()  # before any kernel is defined: where (and whether) numba may cache

__all__ = ["KERNELS", "CompileLog", "njit", "start_threading_layer", "watch_compilation"]

KERNELS: list[Any] = []
"""Every kernel defined with :func:`njit`, in definition order."""


def start_threading_layer() -> None:
    """Start numba's threading layer now (idempotent, cheap after the first call)."""
    numba.get_num_threads()


def _harden(dispatcher: Any) -> None:
    cache: Any = getattr(dispatcher, "_cache", None)
    folder = getattr(cache, "cache_path", None)
    if folder is None or not hasattr(cache, "load_overload"):
        return
    load, save = cache.load_overload, cache.save_overload

    index = Path(getattr(getattr(cache, "_cache_file", None), "_index_path", "") or folder)

    def load_overload(sig: Any, target_context: Any) -> Any:
        ensure_fresh(folder)
        if index.exists():  # something may be loaded: the layer's symbols must exist first
            start_threading_layer()
        loaded = load(sig, target_context)
        if loaded is None:  # not cached: numba compiles it now, then saves it
            _COMPILING.started()
        return loaded

    def save_overload(sig: Any, data: Any) -> None:
        ensure_fresh(folder)
        with cache_lock(folder):
            save(sig, data)
        _COMPILING.saved()

    cache.load_overload = load_overload
    cache.save_overload = save_overload


class CompileLog:
    """Kernels compiled (cache misses) while :func:`watch_compilation` watches, and the
    seconds spent compiling them (nested compilations counted once)."""

    def __init__(self, on_start: Callable[[], None] | None = None) -> None:
        self.kernels = 0
        self.seconds = 0.0
        self._on_start = on_start
        self._depth = 0
        self._since = 0.0

    def started(self) -> None:
        if self.kernels == 0 and self._on_start is not None:
            self._on_start()
        self.kernels += 1
        if self._depth == 0:
            self._since = time.perf_counter()
        self._depth += 1

    def saved(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._since


_COMPILING = CompileLog()


@contextlib.contextmanager
def watch_compilation(on_start: Callable[[], None] | None = None) -> Iterator[CompileLog]:
    """Count the kernels compiled in the block (not found in the cache), and their time;
    ``on_start`` is called when the first compilation starts (a face's "compiling kernels,
    first run only" notice). Kernels that are not cached (caching off) are not seen."""
    global _COMPILING
    before = _COMPILING
    _COMPILING = CompileLog(on_start)
    try:
        yield _COMPILING
    finally:
        _COMPILING = before


def _one_specialization_per_type(dispatcher: Any) -> None:
    """Compile calls from other kernels for argument *types*, not constant values.

    numba types a constant argument (``distance_pass(..., -1, 0, True, ...)``) as a literal
    and compiles a separate specialization for each combination of constants: 8 copies of
    the parallel distance pass and 16 of its scan were compiled before (minutes on a fresh
    cache, several seconds per method). Widening the argument types at the call (an int
    constant is an int64) gives one specialization per type; constants still fold inside
    each kernel after inlining by LLVM."""
    template = getattr(dispatcher, "get_call_template", None)
    if template is None:
        return

    def get_call_template(args: Any, kws: Any) -> Any:
        return template(tuple(types.unliteral(a) for a in args),
                        {name: types.unliteral(t) for name, t in kws.items()})

    dispatcher.get_call_template = get_call_template


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with microagg's cache policy (see the module docstring).

    Used as ``@njit`` or ``@njit(cache=True, parallel=...)``."""
    if options.get("cache"):
        options["cache"] = configure_cache().mode != "off"

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(function)
        _harden(dispatcher)
        _one_specialization_per_type(dispatcher)
        KERNELS.append(dispatcher)
        return dispatcher

    if args and callable(args[0]) and not options:
        return decorate(args[0])
    return decorate
