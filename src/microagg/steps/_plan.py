"""A release as a plan of steps: the options of each step, and the :class:`Plan` that orders
them (after sdcMicro's sequence of methods on one ``sdcMicroObj``, Templ, Kowarik & Meindl
2015, J. Stat. Softw. 67(4), and its ``undolast``).

A step's options are a frozen dataclass with named fields that subclasses
:class:`~._options.StepOptions` (:class:`Microaggregate`); the registry (:data:`microagg.steps.STEPS`) says what each step is, what it promises and where
its code lives. Every face builds the same :class:`Plan`: Python directly, a schema file's
``[[steps]]`` tables through :meth:`Plan.from_records`, the CLI's repeated ``--step`` options
through :meth:`Plan.from_text`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from ._options import StepOptions, as_bool, as_mapping, as_names, required_options

__all__ = ["Microaggregate", "Plan", "StepOptions"]


@dataclass(frozen=True)
class Microaggregate(StepOptions):
    """Microaggregation of a group of numeric quasi-identifiers: partition the records into
    groups of at least ``k`` on the scaled columns, enforce the release's privacy models, and
    replace each group's values by its representative (Domingo-Ferrer & Mateo-Sanz 2002,
    IEEE TKDE 14(1)).

    Parameters
    ----------
    quasi_identifiers : str or sequence of str
        The columns this step masks (at least one).
    k : int
        The smallest group size (>= 2), promised for this step's columns.
    method : str, optional
        The partitioner (``microagg.PARTITIONERS``); ``None`` chooses as
        :func:`microagg.anonymize` does.
    method_params : mapping, optional
        Keyword parameters of the partitioner.
    aggregation : str, optional
        How each group's representative is computed (``"mean"`` when ``None``).
    aggregation_params : mapping, optional
        Keyword parameters of the aggregation.
    scaling : str, optional
        How the columns are scaled before the partition (``"standard"`` when ``None``).
    within : str or sequence of str, optional
        Columns whose classes the step partitions separately (sdcMicro's
        ``microaggregation(strata_variables=)``): each group lies within one class, so k is
        promised on the step's quasi-identifiers together with these columns (as published:
        exact, or coarsened by an earlier step).
    per_household : bool, optional
        Microaggregate one row per household (the request's household role; the step's
        columns and ``within`` columns must be constant within every household), groups of
        at least k households, each member publishing its household's values (the household
        treatment of sdcMicro's users: household-level variables protected once per
        household).

    Examples
    --------
    >>> Microaggregate("age,income", k=5).quasi_identifiers
    ('age', 'income')
    """

    name: ClassVar[str] = "microaggregate"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    household_option: ClassVar[str | None] = "per_household=true"
    quasi_identifiers: tuple[str, ...]
    """The columns this step masks (at least one)."""
    k: int
    """The smallest group size (>= 2), promised for this step's columns."""
    method: str | None = None
    """The partitioner (microagg.PARTITIONERS); none: chosen as anonymize does."""
    method_params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Keyword parameters of the partitioner (a JSON object)."""
    aggregation: str | None = None
    """How each group's representative is computed (mean when none)."""
    aggregation_params: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({}))
    """Keyword parameters of the aggregation (a JSON object)."""
    scaling: str | None = None
    """How the columns are scaled before the partition (standard when none)."""
    within: tuple[str, ...] = ()
    """Columns whose classes are partitioned separately: k holds with them too."""
    per_household: bool = False
    """One row per household, groups of at least k households, copied to every member."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalized once, here
        set_(self, "quasi_identifiers", as_names(self.quasi_identifiers, step=self.name,
                                                 option="quasi_identifiers"))
        within = () if self.within in ((), None, "") else \
            as_names(self.within, step=self.name, option="within")
        both = sorted(set(within) & set(self.quasi_identifiers))
        if both:
            raise ValueError(f"The 'within' option of step {self.name!r} names "
                             f"{', '.join(map(repr, both))}, which the step masks: a step "
                             "partitions within the classes of other columns.")
        set_(self, "within", within)
        set_(self, "per_household", as_bool(self.per_household, step=self.name,
                                            option="per_household"))
        k = self.k
        if isinstance(k, str) and k.strip().lstrip("+").isdigit():
            k = int(k)
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"The 'k' option of step {self.name!r} must be an int >= 2. Got "
                            f"{self.k!r} instead.")
        set_(self, "k", k)
        for option in ("method_params", "aggregation_params"):
            set_(self, option, as_mapping(getattr(self, option), step=self.name,
                                          option=option))

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the step changes: its quasi-identifiers."""
        return self.quasi_identifiers

    @property
    def required_k(self) -> int:
        """The step's k, promised on its quasi-identifiers (with :attr:`within`)."""
        return self.k

    @property
    def promised_over(self) -> tuple[str, ...]:
        """Its quasi-identifiers, then the ``within`` columns."""
        return (*self.quasi_identifiers, *self.within)

    @property
    def counts_households(self) -> bool:
        """Whether its groups are of households (``per_household``)."""
        return self.per_household


def _kinds() -> Mapping[str, type[StepOptions]]:
    """Every registered step's options class, by name (:data:`microagg.steps.STEPS`)."""
    from . import STEPS

    return MappingProxyType({name: entry.options for name, entry in STEPS.items()})


def _step_from_record(record: Mapping[str, Any], position: int) -> StepOptions:
    """One step from ``{"step": name, option: value, ...}``, unknown names refused by name."""
    where = f"step {position} of the plan"
    if "step" not in record:
        raise ValueError(f"{where} does not say which step it is: give step = one of "
                         f"{', '.join(_kinds())}.")
    name = record["step"]
    options_class = _kinds().get(name)
    if options_class is None:
        raise ValueError(f"{where}: unknown step {name!r}; the steps are "
                         f"{', '.join(_kinds())}.")
    allowed = [f.name for f in dataclasses.fields(options_class)]  # type: ignore[arg-type]
    given = {str(key).replace("-", "_"): value for key, value in record.items()
             if key != "step"}
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ValueError(f"{where} ({name}): unknown option(s) {', '.join(map(repr, unknown))}; "
                         f"the options of {name} are {', '.join(allowed)}.")
    missing = [option for option in required_options(options_class) if option not in given]
    if missing:
        raise ValueError(f"{where} ({name}) needs {', '.join(map(repr, missing))}.")
    try:
        return options_class(**given)
    except (TypeError, ValueError) as error:  # the option's own message, with where it is
        raise type(error)(f"{where} ({name}): {error}") from None


@dataclass(frozen=True)
class Plan:
    """An ordered list of steps applied to one table, then published, verified and measured
    once.

    Parameters
    ----------
    steps : iterable of step options
        At least one step, in the order they run.

    Examples
    --------
    >>> plan = Plan([Microaggregate(["age", "income"], k=5),
    ...              Microaggregate(["height", "weight"], k=3)])
    >>> [s.quasi_identifiers for s in plan.steps]
    [('age', 'income'), ('height', 'weight')]
    >>> Plan.from_text(["microaggregate quasi_identifiers=age,income k=5"]) == \\
    ...     Plan([Microaggregate(["age", "income"], k=5)])
    True
    """

    steps: tuple[StepOptions, ...]

    def __init__(self, steps: Iterable[StepOptions]) -> None:
        steps = tuple(steps)
        if not steps:
            raise ValueError("A plan needs at least one step; the steps are "
                             f"{', '.join(_kinds())}.")
        for position, step in enumerate(steps, start=1):
            if not isinstance(step, tuple(_kinds().values())):
                raise TypeError(f"Step {position} of the plan must be a step's options (e.g. "
                                f"microagg.steps.Microaggregate). Got {step!r} instead.")
        object.__setattr__(self, "steps", steps)

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]]) -> Plan:
        """The plan of a schema's ``[[steps]]`` tables (or ``Release.params["plan"]``):
        one mapping per step, ``step = "microaggregate"`` and the step's options."""
        return cls(_step_from_record(r, i) for i, r in enumerate(records, start=1))

    @classmethod
    def from_text(cls, texts: Sequence[str]) -> Plan:
        """The plan of the CLI's repeated ``--step`` options, one text per step: the step's
        name, then ``option=value`` pairs separated by spaces (``quasi-identifiers=a,b k=5
        method=mdav method-params='{"gamma": 0.2}'``)."""
        records = []
        for position, text in enumerate(texts, start=1):
            words = text.split(None, 1)
            if not words:
                raise ValueError(f"step {position} of the plan is empty: give a step name, "
                                 f"one of {', '.join(_kinds())}.")
            record: dict[str, Any] = {"step": words[0]}
            for pair in _pairs(words[1] if len(words) > 1 else "", position):
                key, _, value = pair.partition("=")
                record[key] = value
            records.append(record)
        return cls.from_records(records)

    def to_records(self) -> list[dict[str, Any]]:
        """Each step as a plain record (:meth:`StepOptions.to_record`)."""
        return [step.to_record() for step in self.steps]

    def without_last_step(self) -> Plan:
        """The plan minus its last step (sdcMicro's ``undolast``); a plan of one step has
        nothing left to run and is refused."""
        if len(self.steps) == 1:
            raise ValueError("The plan has one step: without it nothing is released.")
        return Plan(self.steps[:-1])


def _pairs(text: str, position: int) -> list[str]:
    """``option=value`` words of one ``--step`` text; a JSON value may contain spaces."""
    import shlex

    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"step {position} of the plan: {error} in {text!r}.") from None
    bad = [w for w in words if "=" not in w or w.startswith("=")]
    if bad:
        raise ValueError(f"step {position} of the plan: {', '.join(map(repr, bad))} is not "
                         "option=value.")
    return words
