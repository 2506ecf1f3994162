"""Targeted record swapping of households (TRS) as a step of a plan: its options
(:class:`SwapHouseholds`, standard library only), its core (:func:`apply_record_swap`) and
its verifier (:func:`verify_record_swap`), which load numpy, pandas and numba on first use.

Reference: sdcMicro ``recordSwap`` (Gussenbauer; Templ, Kowarik & Meindl 2015, J. Stat.
Softw. 67(4)), after the ONS / Eurostat targeted record swapping for the 2021 census.
"""

from __future__ import annotations

from typing import Any

from .options import SwapHouseholds

__all__ = ["SwapHouseholds", "apply_record_swap", "verify_record_swap"]

_LAZY = {"apply_record_swap": ".core", "verify_record_swap": ".verify"}


def __getattr__(name: str) -> Any:  # PEP 562: numpy/pandas load with the first core
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
