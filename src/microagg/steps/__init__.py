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
from .household.options import Household
from .perturb.options import Noise, Pram, RankSwap, Shuffle
from .recode.options import Band, MultivariateTopCode, Recode, RecodeDate, TopCode
from .record_swap.options import SwapHouseholds
from .suppress.options import SuppressRisk, SuppressToK

__all__ = ["STEPS", "Band", "Household", "Microaggregate", "MultivariateTopCode", "Noise",
           "Plan", "Pram", "RankSwap", "Recode", "RecodeDate", "Shuffle", "Step",
           "StepOptions", "SuppressRisk", "SuppressToK", "SwapHouseholds", "TopCode"]


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
    on use and called once, on the published table; a verifier that declares a keyword
    ``details`` also receives its step's record details (what the step drew: PRAM's
    matrices)."""
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
    household_level: str | None = None
    """``"module:function"`` of ``columns(options, table, roles) -> tuple of str``: the
    columns the step makes (or needs) the same for every member of a household and its
    verifier checks so on the published table (a household step's household-level columns,
    a per-household microaggregation's); ``None``: none. A later step of the plan that
    changes one of them, and is not itself per household on it, is refused before any step
    runs (:func:`microagg._pipeline.plan_request.check_household_order`)."""
    reads_details: bool = False
    """Whether its verifier is also given the details the step recorded (a keyword
    ``details``: the :class:`~microagg._pipeline.result.StepRecord`'s ``details``, or
    ``None`` where the release kept no record), to check its figures against its own."""

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

    def load_household_level(self) -> Callable[..., Any] | None:
        """The step's ``household_level`` function (imported on first use), or ``None``."""
        return None if self.household_level is None else _load(self.household_level)


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
        household_level="microagg.steps._grouped:household_level_of",
        randomized=True),
    "pram": Step(
        name="pram", options=Pram,
        summary="each categorical value moved to another category with the probabilities of "
                "a transition matrix (invariant by default), per stratum",
        reference="Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, J. Off. Stat. 14(4); "
                  "Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4) (pram())",
        promises="missing cells untouched, every value a known category, the observed "
                 "transitions within binomial bounds of the recorded matrices (and, invariant, "
                 "the frequencies within sampling error); not k-anonymity, not differential "
                 "privacy",
        target="microagg.steps.perturb.step:apply_pram_step",
        verifier="microagg.steps.perturb.step:verify_pram_step",
        checker="microagg.steps.perturb.step:check_pram_step", randomized=True,
        reads_details=True),
    "noise": Step(
        name="noise", options=Noise,
        summary="noise added to numeric columns: additive, correlated, ROMM or "
                "multiplicative, its variance a stated share of each column's",
        reference="Brand 2002, LNCS 2316; Ting, Fienberg & Trottini 2008 (ROMM); Templ, "
                  "Kowarik & Meindl 2015, J. Stat. Softw. 67(4) (addNoise())",
        promises="the achieved noise-to-variance ratio within its chi-square bounds, missing "
                 "cells untouched; not k-anonymity, not differential privacy",
        target="microagg.steps.perturb.step:apply_noise_step",
        verifier="microagg.steps.perturb.step:verify_noise_step",
        checker="microagg.steps.perturb.step:check_numeric_step", randomized=True),
    "rank_swap": Step(
        name="rank_swap", options=RankSwap,
        summary="each numeric value exchanged with one at most p percent of the ranks away, "
                "per stratum",
        reference="Moore 1996, US Census Bureau; Templ, Kowarik & Meindl 2015, J. Stat. "
                  "Softw. 67(4) (rankSwap())",
        promises="every column's values kept exactly (within each stratum), no value moved "
                 "more ranks than the window; not k-anonymity, not differential privacy",
        target="microagg.steps.perturb.step:apply_rank_swap_step",
        verifier="microagg.steps.perturb.step:verify_rank_swap_step",
        checker="microagg.steps.perturb.step:check_numeric_step", randomized=True),
    "shuffle": Step(
        name="shuffle", options=Shuffle,
        summary="the values of confidential numeric columns reassigned by the ranks of a "
                "normal-copula copy given the non-confidential ones",
        reference="Muralidhar & Sarathy 2006, Management Science 52(5)",
        promises="every column's values kept exactly (a permutation), the given columns "
                 "unchanged; not k-anonymity, not differential privacy",
        target="microagg.steps.perturb.step:apply_shuffle_step",
        verifier="microagg.steps.perturb.step:verify_shuffle_step",
        checker="microagg.steps.perturb.step:check_numeric_step", randomized=True),
    "household": Step(
        name="household", options=Household,
        summary="household-level columns made consistent within every household and the "
                "sampling weight treated once per household (microaggregated within strata, "
                "rounded, or kept on purpose), copied to every member",
        reference="Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4), section 4.2 "
                  "(selectHouseholdData, mergeHouseholdData, microaggregation with "
                  "strata_variables)",
        promises="every member of a household publishes the same household-level values; "
                 "microaggregated, every published weight shared by at least k households "
                 "of its stratum and each stratum's weighted count of persons kept",
        target="microagg.steps.household.step:apply_household_step",
        verifier="microagg.steps.household.step:verify_household_step",
        checker="microagg.steps.household.step:check_household_step",
        household_level="microagg.steps.household.step:household_level_of",
        per_household=True),
    "swap_households": Step(
        name="swap_households", options=SwapHouseholds,
        summary="targeted record swapping: whole households exchange their geography (and "
                "carried-along columns) with a household of the same similarity profile in "
                "another area, households at risk first, random ones to fill the swap rate",
        reference="sdcMicro recordSwap (Gussenbauer, since 5.7.1; Templ, Kowarik & Meindl "
                  "2015, J. Stat. Softw. 67(4)); the ONS / Eurostat targeted record "
                  "swapping for the 2021 census",
        promises="every household moved as a whole, the geography still a hierarchy, every "
                 "household's new geography that of one of its own similarity profile (the "
                 "profiles' multiset of geographies kept); the swap rate and the records at "
                 "risk before and after reported; not k-anonymity, not differential privacy",
        target="microagg.steps.record_swap.step:apply_swap_households_step",
        verifier="microagg.steps.record_swap.step:verify_swap_households_step",
        checker="microagg.steps.record_swap.step:check_swap_households_step",
        household_level="microagg.steps.record_swap.step:household_level_of",
        randomized=True, per_household=True, reads_details=True),
    # the recoding steps (microagg.steps.recode): deterministic, one record at a time
    **{name: Step(name=name, options=options, summary=summary, reference=reference,
                  promises=promises, target=f"microagg.steps.recode.step:apply_{name}",
                  verifier=f"microagg.steps.recode.step:verify_{name}",
                  checker=f"microagg.steps.recode.step:check_{name}", reads_details=True)
       for name, options, summary, reference, promises in (
           ("band", Band,
            "a numeric column replaced by the label of its interval (given breaks, equal "
            "widths or quantiles), published as text",
            "sdcMicro globalRecode (Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)); "
            "R's cut",
            "every published value is a band's label and each record's original value lies "
            "in its band; missing stays missing"),
           ("mvtopcode", MultivariateTopCode,
            "robust multivariate top coding: records beyond the chi-square boundary of the "
            "robust (MCD) Mahalanobis distance pulled onto it, towards the centre",
            "sdcMicro mvTopCoding (Gussenbauer & Templ; Templ, Kowarik & Meindl 2015, J. "
            "Stat. Softw. 67(4)); Rousseeuw & Van Driessen 1999, Technometrics 41(3)",
            "no complete record lies beyond the boundary; records inside it unchanged, "
            "those beyond moved along their ray from the centre"),
           ("recode", Recode,
            "categories of a column grouped by a mapping, or replaced by their ancestor at "
            "a level of a generalization hierarchy",
            "sdcMicro groupAndRename and globalRecode (Templ, Kowarik & Meindl 2015, J. "
            "Stat. Softw. 67(4)); ARX value generalization hierarchies",
            "every published value is in the recoded domain and is the image of the "
            "record's original value; missing stays missing"),
           ("recode_date", RecodeDate,
            "a date coarsened to its month or year, or replaced by the age in whole years "
            "at a reference date",
            "Hundepool et al. 2012, Statistical Disclosure Control, section 3.4.2 (global "
            "recoding of dates)",
            "every published date is at the step's precision and in the record's own month "
            "or year, or the published age is the record's whole years at the reference"),
           ("topcode", TopCode,
            "values above a top code (below a bottom code) replaced by the code or by the "
            "mean of the values coded",
            "sdcMicro topBotCoding (Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)); "
            "Hundepool et al. 2012, section 3.4.4",
            "no published value beyond a code other than its replacement; every record "
            "beyond a code replaced, every other unchanged"))},
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
        checker="microagg.steps.suppress.step:check_suppress_step",
        household_level="microagg.steps.suppress.step:household_level_of"),
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
