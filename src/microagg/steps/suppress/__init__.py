"""Local suppression: to k-anonymity (heuristic and exact) and by an individual-risk
threshold. The options (:mod:`.options`) load without numpy; the cores load on use."""

from __future__ import annotations

from typing import Any

from .options import MISSING_SEMANTICS, SuppressRisk, SuppressToK

__all__ = ["MISSING_SEMANTICS", "SuppressRisk", "SuppressToK", "apply_suppress",
           "apply_suppress_risk", "verify_suppress", "verify_suppress_risk"]

_LAZY = {"apply_suppress": ".core", "apply_suppress_risk": ".risk",
         "verify_suppress": ".verify", "verify_suppress_risk": ".verify"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
