"""Steps: what a release applies to its table, in order, before it is published, verified and
measured once.

:data:`STEPS` maps a step's name to its :class:`Step` entry (what it is, what it promises,
where its code lives, as a lazy ``"module:function"`` target); a :class:`Plan` orders the
options of each step (:class:`Microaggregate`). Importing this package imports no step's code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ._plan import Microaggregate, Plan, StepOptions

__all__ = ["STEPS", "Microaggregate", "Plan", "Step", "StepOptions"]


@dataclass(frozen=True)
class Step:
    """A registered step: what a user needs to know about it, and where its code is."""

    name: str
    """Its name in :data:`STEPS`."""
    options: type[StepOptions]
    """The frozen dataclass of its options (named fields, checked when built)."""
    summary: str
    """One line on what it does."""
    reference: str
    """The papers or software it follows."""
    promises: str
    """What the step guarantees, checked on the published table by the release's verifier."""
    target: str
    """``"module:function"`` of ``apply(state, options, rng) -> state``, imported on use."""
    randomized: bool = False
    """Whether ``random_state`` can change its result."""
    per_household: bool = False
    """Whether it treats one row per household and copies the result to every member."""

    def load(self) -> Callable[..., Any]:
        """The step's ``apply`` function (imported on first use)."""
        module, _, function = self.target.partition(":")
        return getattr(importlib.import_module(module), function)


STEPS: MappingProxyType[str, Step] = MappingProxyType({
    "microaggregate": Step(
        name="microaggregate", options=Microaggregate,
        summary="groups of at least k records on the step's quasi-identifiers, each value "
                "replaced by its group's representative",
        reference="Domingo-Ferrer & Mateo-Sanz 2002, IEEE TKDE 14(1); Templ, Kowarik & "
                  "Meindl 2015, J. Stat. Softw. 67(4) (microaggregation())",
        promises="every group of the step's partition has at least k records (group k); "
                 "k-anonymity on its quasi-identifiers unless the aggregation is noisy",
        target="microagg.steps.microaggregate:apply",
        randomized=True),
})
"""Every step by name; a plan's records name their step by these keys."""
