"""Steps: what a release applies to its table, in order, before it is published, verified and
measured once.

:data:`STEPS` maps a step's name to its :class:`Step` entry (what it is, what it promises,
where its code and its verifier live, as lazy ``"module:function"`` targets); a :class:`Plan`
orders the options of each step (a frozen dataclass subclassing :class:`StepOptions`, such as
:class:`Microaggregate`). Importing this package imports no step's code: only the options
classes (no pandas, no numba).

A new step is one options class, one entry here, an ``apply`` and a ``verify``; every face
(the API, a schema's ``[[steps]]``, the CLI's ``--step``, the workbench's plan form) lists it
from this registry and its options' fields.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ._options import StepOptions
from ._plan import Microaggregate, Plan
from .suppress.options import SuppressRisk, SuppressToK

__all__ = ["STEPS", "Microaggregate", "Plan", "Step", "StepOptions", "SuppressRisk",
           "SuppressToK"]


def _load(target: str) -> Callable[..., Any]:
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


@dataclass(frozen=True)
class Step:
    """A registered step: what a user needs to know about it, and where its code is."""

    name: str
    """Its name in :data:`STEPS` (the ``name`` of its options class)."""
    options: type[StepOptions]
    """The frozen dataclass of its options (named fields, checked when built)."""
    summary: str
    """One line on what it does."""
    reference: str
    """The papers or software it follows."""
    promises: str
    """What the step guarantees, checked on the published table by its verifier."""
    target: str
    """``"module:function"`` of ``apply(state, options, rng) -> state``, imported on use."""
    verifier: str
    """``"module:function"`` of ``verify(options, original, published, roles) -> Mapping``
    (at least ``{"model": str, "holds": bool}`` and the step's achieved figures), imported
    on use and called once, on the published table."""
    checker: str | None = None
    """``"module:function"`` of ``check(options, table, position, plan) -> None``, which
    refuses (by raising, naming the column, the value and the option) what the step cannot
    run on the request's table, before any step runs (one that declares a keyword ``roles``
    also receives the request's :class:`~._state.StepRoles`); ``None``: nothing beyond its
    options' own checks."""
    randomized: bool = False
    """Whether ``random_state`` can change its result."""
    per_household: bool = False
    """Whether it treats one row per household and copies the result to every member (its
    ``apply`` reads ``state.roles.household``; its verifier checks that every member of a
    household has the same published values)."""

    def load(self) -> Callable[..., Any]:
        """The step's ``apply`` function (imported on first use)."""
        return _load(self.target)

    def load_verifier(self) -> Callable[..., Any]:
        """The step's ``verify`` function (imported on first use)."""
        return _load(self.verifier)

    def takes(self, function: Callable[..., Any], keyword: str) -> bool:
        """Whether ``function`` (its verifier or checker) declares the keyword ``keyword``."""
        return keyword in inspect.signature(function).parameters

    def load_checker(self) -> Callable[..., Any] | None:
        """The step's ``check`` function (imported on first use), or ``None``."""
        return None if self.checker is None else _load(self.checker)


_REGISTRY: dict[str, Step] = {
    "microaggregate": Step(
        name="microaggregate", options=Microaggregate,
        summary="groups of at least k records on the step's quasi-identifiers, each value "
                "replaced by its group's representative",
        reference="Domingo-Ferrer & Mateo-Sanz 2002, IEEE TKDE 14(1); Templ, Kowarik & "
                  "Meindl 2015, J. Stat. Softw. 67(4) (microaggregation())",
        promises="every group of the step's partition has at least k records (group k); "
                 "k-anonymity on its quasi-identifiers unless the aggregation is noisy",
        target="microagg.steps.microaggregate:apply",
        verifier="microagg.steps.microaggregate:verify",
        checker="microagg._pipeline.plan_request:check_microaggregate_step",
        randomized=True),
    # the local suppression steps (microagg.steps.suppress): deterministic, cells set missing
    "suppress": Step(
        name="suppress", options=SuppressToK,
        summary="the fewest key cells set to missing so that every record's class on the "
                "keys (or on every subset of combs keys) holds at least k records, within "
                "strata",
        reference="sdcMicro localSuppression / kAnon (Templ, Kowarik & Meindl 2015, J. Stat. "
                  "Softw. 67(4)); the exact mode: an integer program solved by HiGHS (Huangfu "
                  "& Hall 2018, Math. Prog. Comp. 10(1))",
        promises="k-anonymity on the keys (every required subset) counted on the published "
                 "table under the step's missing semantics, within strata; only key cells "
                 "set to missing, no row dropped; household-level keys constant within each "
                 "household",
        target="microagg.steps.suppress.step:apply_suppress_step",
        verifier="microagg.steps.suppress.step:verify_suppress_step",
        checker="microagg.steps.suppress.step:check_suppress_step"),
    "suppress_risk": Step(
        name="suppress_risk", options=SuppressRisk,
        summary="in every record whose individual risk on the keys is above the threshold, "
                "the key value that lowers it most set to missing, round after round",
        reference="sdcMicro localSupp, on every key (Templ 2017, Statistical Disclosure "
                  "Control for Microdata, Springer; Templ, Kowarik & Meindl 2015, J. Stat. "
                  "Softw. 67(4)); individual risk after Benedetti & Franconi 1998",
        promises="every record's individual risk on the keys (weighted, within strata) at "
                 "most the threshold on the published table; only key cells set to "
                 "missing, no row dropped; not k-anonymity",
        target="microagg.steps.suppress.step:apply_suppress_risk_step",
        verifier="microagg.steps.suppress.step:verify_suppress_risk_step",
        checker="microagg.steps.suppress.step:check_suppress_risk_step"),
}

STEPS: MappingProxyType[str, Step] = MappingProxyType(_REGISTRY)
"""Every step by name; a plan's records name their step by these keys."""


@contextlib.contextmanager
def _registered(step: Step) -> Iterator[Step]:
    """``step`` in :data:`STEPS` while the block runs (for tests: the registered steps are
    the entries above)."""
    if step.name in _REGISTRY or step.options.name != step.name:
        raise ValueError(f"Step {step.name!r} is registered already, or its options are "
                         f"named {step.options.name!r}.")
    _REGISTRY[step.name] = step
    try:
        yield step
    finally:
        del _REGISTRY[step.name]
