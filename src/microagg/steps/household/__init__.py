"""Household-level treatment (sdcMicro's household workflow): the household-level columns
found or checked, treated once per household and copied to every member, the sampling weight
treated so that it does not re-link the members of a household, and the measure of how far a
published column re-links them.

The step's options are :class:`Household` (:mod:`.options`, standard library only);
:func:`apply_household` runs it and :func:`verify_household` re-derives its promise from the
published table. The rest is imported when first used (numpy and pandas are not loaded by
importing the options).
"""

from __future__ import annotations

import importlib
from typing import Any

from .options import WEIGHT_TREATMENTS, Household

__all__ = ["WEIGHT_TREATMENTS", "Household", "Relinking", "apply_household",
           "details_columns", "household_level_columns", "microaggregate_weight",
           "per_household", "relinking", "relinking_columns", "round_weight",
           "varying_households", "verify_household", "weighted_loss"]

_HOMES = {"apply_household": "_apply", "details_columns": "_apply",
          "verify_household": "_apply", "Relinking": "_level",
          "household_level_columns": "_level", "per_household": "_level",
          "relinking": "_level", "relinking_columns": "_level",
          "varying_households": "_level", "microaggregate_weight": "_weight",
          "round_weight": "_weight", "weighted_loss": "_weight"}


def __getattr__(name: str) -> Any:
    """The functions of the step, imported on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{home}", __name__), name)
