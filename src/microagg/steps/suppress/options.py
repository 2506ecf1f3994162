"""The options of the suppression steps: local suppression to k-anonymity (sdcMicro's
``localSuppression`` / ``kAnon``) and risk-threshold suppression (sdcMicro's ``localSupp``).

Standard library only: the CLI passes every option as text (``"5"``, ``"a,b"``, JSON), and
``__post_init__`` normalizes it once. Both subclass :class:`~microagg.steps.StepOptions`
(their record, renaming and help come from it); lists of ints and open intervals use the
conversions here, a single int the shared :func:`~microagg.steps._options.as_int`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .._options import StepOptions, as_choice, as_float, as_int, as_json, as_names

__all__ = ["MISSING_SEMANTICS", "SuppressRisk", "SuppressToK"]

MISSING_SEMANTICS = ("any", "category")
"""``"any"``: a missing key value matches any value (sdcMicro's ``freqCalc``, its default);
``"category"``: a missing value is one more category of its key."""

_MODES = ("heuristic", "exact")




def _ints(value: Any, *, step: str, option: str, low: int) -> tuple[int, ...]:
    """Integers >= ``low`` as a tuple: an int, a sequence, ``"3"``, ``"3,2"`` or JSON."""
    value = as_json(value, step=step, option=option, example="[3, 2]")
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    items = [value] if isinstance(value, int) else value
    if not isinstance(items, Sequence) or not items:
        raise TypeError(f"The {option!r} option of step {step!r} must be an int >= {low} "
                        f"or a list of them. Got {value!r} instead.")
    out = []
    for item in items:
        if isinstance(item, str) and item.lstrip("+").isdigit():
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int) or item < low:
            raise ValueError(f"The {option!r} option of step {step!r} must hold ints >= "
                             f"{low}. Got {item!r} in {value!r}.")
        out.append(item)
    return tuple(out)






def _importance(value: Any, keys: tuple[str, ...], *, step: str) -> tuple[str, ...]:
    """The keys from the most to the least important; ``()`` for sdcMicro's default."""
    order = as_names(value, step=step, option="importance", empty=True)
    unknown = [name for name in order if name not in keys]
    if unknown:
        raise ValueError(f"The 'importance' option of step {step!r} names {unknown!r}, which "
                         f"are not among its keys {list(keys)!r}.")
    if order and len(order) != len(keys):
        raise ValueError(f"The 'importance' option of step {step!r} must order all "
                         f"{len(keys)} keys {list(keys)!r} (most important first). Got "
                         f"{list(order)!r}.")
    return order



@dataclass(frozen=True)
class SuppressToK(StepOptions):
    """Local suppression to k-anonymity: the fewest key cells set to missing so that every
    record's class on the keys holds at least ``k`` records (sdcMicro's ``localSuppression``
    / ``kAnon``, Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).

    Parameters
    ----------
    keys : str or sequence of str
        The categorical key columns (quasi-identifiers) the step may blank.
    k : int or sequence of int
        The smallest class size (>= 2); with ``combs``, one k per subset size (or one for
        all).
    missing : {"any", "category"}, default="any"
        How a missing value counts: ``"any"`` matches every value (sdcMicro's default),
        ``"category"`` is a category of its own.
    importance : sequence of str, default=()
        The keys from the most to the least important; the least important are suppressed
        first. ``()``: sdcMicro's default (keys with more categories are less important).
    combs : sequence of int, default=()
        k-anonymity on every subset of this many keys (sdcMicro's ``combs``), one size per
        entry; ``()``: on all the keys together.
    mode : {"heuristic", "exact"}, default="heuristic"
        ``"exact"`` solves an integer program (HiGHS) that proves the count minimal within
        ``time_limit`` seconds, or reports the best count found, its lower bound and the gap.
    time_limit : float, default=60.0
        Seconds for the exact mode, in (0, 86400].
    household_keys : sequence of str, default=()
        Keys that describe the household (constant within it): blanked for every member at
        once. Needs the release's household column.

    Examples
    --------
    >>> SuppressToK("db040,hsize,age", k="3").k
    (3,)
    """

    name: ClassVar[str] = "suppress"
    column_types: ClassVar[frozenset[str]] = frozenset({"categorical", "ordinal"})
    household_option: ClassVar[str | None] = "household_keys={column}"
    keys: tuple[str, ...]
    """The categorical key columns the step may blank (a list, or a,b,c)."""
    k: tuple[int, ...]
    """The smallest class size (>= 2); with combs, one k per subset size (or one for all)."""
    missing: str = "any"
    """How a missing value counts: any (matches every value, sdcMicro's default) or
    category (a category of its own)."""
    importance: tuple[str, ...] = ()
    """All the keys from the most to the least important (the least important are blanked
    first); none: keys with more categories are less important (sdcMicro's default)."""
    combs: tuple[int, ...] = ()
    """k on every subset of this many keys, one size per entry (sdcMicro's combs); none: on
    all the keys together."""
    mode: str = "heuristic"
    """heuristic, or exact: an integer program (HiGHS) that proves the count of cells
    minimal within time_limit, or reports its lower bound and gap."""
    time_limit: float = 60.0
    """Seconds for the exact mode's solver, in (0, 86400]."""
    household_keys: tuple[str, ...] = ()
    """Keys that describe the household (constant within it), blanked for every member at
    once; needs the release's household column and the heuristic mode."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalized once, here
        keys = as_names(self.keys, step=self.name, option="keys")
        set_(self, "keys", keys)
        set_(self, "k", _ints(self.k, step=self.name, option="k", low=2))
        set_(self, "missing", as_choice(self.missing, MISSING_SEMANTICS, step=self.name,
                                      option="missing"))
        set_(self, "importance", _importance(self.importance, keys, step=self.name))
        combs = () if self.combs in ((), "", None) else _ints(
            self.combs, step=self.name, option="combs", low=1)
        too_big = [m for m in combs if m > len(keys)]
        if too_big:
            raise ValueError(f"The 'combs' option of step {self.name!r} must hold subset "
                             f"sizes in [1, {len(keys)}] (the number of keys). Got "
                             f"{list(combs)!r}.")
        set_(self, "combs", combs)
        if len(self.k) != 1 and len(self.k) != max(len(combs), 1):
            raise ValueError(f"The 'k' option of step {self.name!r} must be one k or one per "
                             f"entry of combs ({len(combs)}). Got {list(self.k)!r}.")
        set_(self, "mode", as_choice(self.mode, _MODES, step=self.name, option="mode"))
        set_(self, "time_limit", as_float(self.time_limit, step=self.name,
                                         option="time_limit", low=0.0, high=86400.0,
                                         low_open=True))
        household = as_names(self.household_keys, step=self.name, option="household_keys",
                           empty=True)
        outside = [name for name in household if name not in keys]
        if outside:
            raise ValueError(f"The 'household_keys' option of step {self.name!r} names "
                             f"{outside!r}, which are not among its keys {list(keys)!r}.")
        if household and self.mode == "exact":
            raise ValueError(f"The 'household_keys' option of step {self.name!r} "
                             f"({list(household)!r}) needs mode='heuristic'; the exact mode "
                             "does not blank a household's members together.")
        set_(self, "household_keys", household)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes (its keys)."""
        return self.keys

    @property
    def required_k(self) -> int | None:
        """The k promised on all the keys together (``None`` when ``combs`` asks only for
        smaller subsets), under the step's ``missing`` semantics: with ``"any"`` a missing
        value matches every value, so the release's k over the plan's keys, which counts a
        missing value as a category of its own, can be lower (the step's check says
        both)."""
        if not self.combs:
            return self.k[0]
        ks = self.k * len(self.combs) if len(self.k) == 1 else self.k
        whole = [k for size, k in zip(self.combs, ks, strict=True) if size == len(self.keys)]
        return max(whole) if whole else None

    @property
    def requirements(self) -> tuple[tuple[tuple[int, ...], int], ...]:
        """Every ``(subset of key positions, k)`` the output must satisfy."""
        from itertools import combinations

        if not self.combs:
            return ((tuple(range(len(self.keys))), self.k[0]),)
        ks = self.k * len(self.combs) if len(self.k) == 1 else self.k
        return tuple((subset, k) for size, k in zip(self.combs, ks, strict=True)
                     for subset in combinations(range(len(self.keys)), size))



@dataclass(frozen=True)
class SuppressRisk(StepOptions):
    """Risk-threshold local suppression (sdcMicro's ``localSupp``, extended to every key as
    its users ask): in every record whose individual risk exceeds ``threshold``, blank the key
    value that contributes most to the risk, until no record is above it (Templ 2017,
    Statistical Disclosure Control for Microdata, Springer, 3.5).

    Parameters
    ----------
    keys : str or sequence of str
        The categorical key columns.
    threshold : float
        The largest individual risk allowed, in (0, 1).
    missing : {"any", "category"}, default="any"
        How a missing value counts in the frequencies.
    importance : sequence of str, default=()
        The keys from the most to the least important: among keys that lower the risk
        equally, the least important is blanked. ``()``: all equal.
    max_rounds : int, default=100
        The most rounds of suppression (each blanks at most one key per risky record), >= 1.

    Examples
    --------
    >>> SuppressRisk(["db040", "age"], threshold="0.1").threshold
    0.1
    """

    name: ClassVar[str] = "suppress_risk"
    column_types: ClassVar[frozenset[str]] = frozenset({"categorical", "ordinal"})
    keys: tuple[str, ...]
    """The categorical key columns the step may blank (a list, or a,b,c)."""
    threshold: float
    """The largest individual risk allowed, in (0, 1)."""
    missing: str = "any"
    """How a missing value counts in the frequencies: any (matches every value) or
    category."""
    importance: tuple[str, ...] = ()
    """All the keys from the most to the least important: among keys that lower a record's
    risk equally, the least important is blanked; none: all equal."""
    max_rounds: int = 100
    """The most rounds of suppression (each blanks at most one key per risky record), >= 1."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        keys = as_names(self.keys, step=self.name, option="keys")
        set_(self, "keys", keys)
        set_(self, "threshold", as_float(self.threshold, step=self.name, option="threshold",
                                        low=0.0, high=1.0, low_open=True, high_open=True))
        set_(self, "missing", as_choice(self.missing, MISSING_SEMANTICS, step=self.name,
                                      option="missing"))
        set_(self, "importance", _importance(self.importance, keys, step=self.name))
        set_(self, "max_rounds", as_int(self.max_rounds, step=self.name, option="max_rounds",
                                        low=1))

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes (its keys)."""
        return self.keys



