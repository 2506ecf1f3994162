"""The machine line every benchmark prints first (benchmarks are run as scripts, so this
module is imported from the benchmarks folder)."""

from __future__ import annotations

import os
import platform


def machine(*extra: str) -> str:
    """``x86_64, 2 cores, <cpu model>, Python 3.11.7`` plus any ``extra`` items."""
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return ", ".join([platform.machine(), f"{os.cpu_count()} cores", cpu,
                      f"Python {platform.python_version()}", *extra])
