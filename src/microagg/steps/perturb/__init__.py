"""Perturbative steps: PRAM, noise addition (additive, correlated, ROMM, multiplicative),
rank swapping and data shuffling, each with its options, its core and its verifier.

Each core is ``apply_<step>(table, options, rng, *, households=None, weights=None,
strata=None) -> (published, details)``; each verifier ``verify_<step>(options, original,
published, *, households=None, weights=None, strata=None) -> {"model", "holds", ...}``.
None of them is differential privacy. The options (:mod:`.options`) import only the
standard library; the cores load on first use.
"""

from __future__ import annotations

from typing import Any

from .options import Noise, Pram, RankSwap, Shuffle

__all__ = ["Noise", "Pram", "RankSwap", "Shuffle", "apply_noise", "apply_pram",
           "apply_rank_swap", "apply_shuffle", "verify_noise", "verify_pram",
           "verify_rank_swap", "verify_shuffle"]

_LAZY = {
    "apply_pram": ".pram", "apply_noise": ".noise", "apply_rank_swap": ".swap",
    "apply_shuffle": ".shuffle", "verify_pram": ".verify", "verify_noise": ".noise",
    "verify_rank_swap": ".swap", "verify_shuffle": ".shuffle",
}


def __getattr__(name: str) -> Any:  # PEP 562: numpy/pandas load with the first core
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
