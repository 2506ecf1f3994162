"""Long runs of ``microagg anonymize``: the size guard in front of exact MDAV,
and the first run's one-time compilation of numba kernels.

Exact MDAV is the default method and costs O(n^2 p / k): 10^6 x 10 records took 27 minutes
with nothing printed, where ``--blocking kd`` took 37 seconds. When the estimate of
:mod:`microagg._runtime.sizing` is past :data:`~microagg._runtime.sizing.GUARD_SECONDS` and the user chose
neither a method, a blocking nor a blocked engine, the command refuses to start (before any
partition is computed) and names both estimates and the options that decide. It does not
switch to blocking by itself: blocked MDAV publishes a different partition (more information
lost), and a release must be the one its command line asks for.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.text import Text

from microagg._runtime.sizing import Estimate, estimate, format_duration
from microagg.cli._common import UsageError, stderr

if TYPE_CHECKING:
    from microagg._pipeline.request import Request
    from microagg._runtime.jit import CompileLog

__all__ = ["check_size", "compile_note", "compiling_notice", "guard_estimate",
           "watch_compilation"]

COMPILE_NOTICE = ("compiling numba kernels (once per method: how long depends on how many "
                  "kernels the run needs and on the machine's cores and load, from a few "
                  "seconds to about a minute on 2 shared cores; later runs load them from "
                  "the cache; `make install` or `microagg doctor --warm-up` compiles those "
                  "of the default release and of the tutorial ahead)...")
"""Printed to stderr when the first kernel of a run is not found in the cache."""


def guard_estimate(request: Request) -> Estimate | None:
    """The estimate behind the guard, or ``None`` when the guard does not apply: a method or
    a blocking was chosen, or the request is not one numeric partition (mixed types,
    attribute groups, differential privacy take their own partitioners)."""
    if request.kind != "numeric" or request.method is not None or request.blocking is not None:
        return None
    return estimate(len(request.data), len(request.quasi_identifiers), request.k,
                    block_size=request.block_size)


def check_size(request: Request) -> None:
    """Refuse a default-method run whose exact MDAV is estimated past the guard.

    Raises
    ------
    UsageError
        Naming the records, both estimates and the options ``--blocking kd``,
        ``--engine file`` and ``-m mdav``.
    """
    found = guard_estimate(request)
    if found is None or not found.too_slow:
        return
    raise UsageError(
        f"exact MDAV (the default method) on {found.n_samples:,} records x "
        f"{found.n_features} quasi-identifiers at k={found.k} would take "
        f"{format_duration(found.exact)} (a model calibrated on 2 cores; this machine has "
        f"{os.cpu_count() or 1}); blocked MDAV "
        f"{format_duration(found.blocked)} (blocks of {found.block_size:,}, every group still "
        ">= k, more information lost: 5.1 % against 2.9 % SSE/SST on 10^6 x 10 log-normal "
        "data, benchmarks/startup.md). Choose one: --blocking kd (in memory), "
        "--engine file (out of core, blocked), or -m mdav to run exact MDAV anyway.")


@contextmanager
def watch_compilation(on_start: Any = None) -> Iterator[CompileLog]:
    """:func:`microagg._runtime.jit.watch_compilation`, imported (with numba) when a run starts."""
    from microagg._runtime.jit import watch_compilation as watch

    with watch(on_start) as log:
        yield log


def compiling_notice() -> None:
    """Say, before it starts, that the wait is a one-time compilation."""
    stderr().print(Text(COMPILE_NOTICE, style="dim"), soft_wrap=True)


def compile_note(log: CompileLog) -> None:
    """After a run that compiled kernels: how long that took, apart from the release."""
    if log.kernels:
        stderr().print(Text(
            f"Compiled {log.kernels} numba kernels in {log.seconds:.1f} s (once: they are "
            "cached; the time above leaves it out)."), soft_wrap=True)
