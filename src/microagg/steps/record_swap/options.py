"""The options of targeted record swapping (:class:`SwapHouseholds`): a frozen dataclass
with named fields, normalized from Python values or the CLI's text.

Standard library only: the plan imports this class to parse a schema or a ``--step``
without loading numpy or pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .._options import StepOptions, as_float, as_int, as_names

__all__ = ["SwapHouseholds"]

_set = object.__setattr__  # frozen dataclass: every option is normalized once, here


@dataclass(frozen=True)
class SwapHouseholds(StepOptions):
    """Targeted record swapping (TRS): whole households exchange their geography with a
    household of the same similarity profile in another area, the households at risk first
    and random ones to fill the swap rate (sdcMicro ``recordSwap``, Gussenbauer, since
    5.7.1, after the ONS SAS code recommended by Eurostat for the 2021 census).

    Parameters
    ----------
    hierarchy : str or sequence of str
        The geographic columns from the coarsest to the finest (region, district,
        municipality); each area's code must be unique in the whole file (a district in
        two regions is refused). sdcMicro ``hierarchy``.
    similar : str or sequence of str
        Household-level columns a donor must match exactly (household size). sdcMicro
        ``similar`` (one profile).
    risk_variables : str or sequence of str, optional
        The person-level keys whose counts within each area define risk. sdcMicro
        ``risk_variables``; required when ``k`` > 0.
    k : int, default=3
        A record whose combination of ``risk_variables`` occurs fewer than ``k`` times in
        its area at a level is at risk, and its household is swapped across that level.
        0: nobody is targeted (random swapping at the rate). sdcMicro ``k_anonymity``.
    swaprate : float, default=0.05
        In [0, 1]: the share of households swapped (a swap counts both households),
        distributed over the finest areas. sdcMicro ``swaprate``.
    carry_along : str or sequence of str, optional
        Household-level columns that move with the geography (finer geography, a
        household-level area attribute). sdcMicro ``carry_along``.
    """

    name: ClassVar[str] = "swap_households"
    needs_roles: ClassVar[frozenset[str]] = frozenset({"household"})
    hierarchy: tuple[str, ...]
    """The geographic columns, coarsest first (region, district, municipality); each area's
    code unique in the file."""
    similar: tuple[str, ...]
    """Household-level columns a donor household must match exactly (household size)."""
    risk_variables: tuple[str, ...] = ()
    """Person-level keys counted within each area: a combination seen fewer than k times
    makes its household a target."""
    k: int = 3
    """A record whose risk-variable combination occurs fewer than k times in its area is at
    risk (0: none targeted)."""
    swaprate: float = 0.05
    """In [0, 1]: the share of households swapped, targeted ones first, random ones to fill
    it."""
    carry_along: tuple[str, ...] = ()
    """Household-level columns that move with the geography."""

    def __post_init__(self) -> None:
        step = self.name
        _set(self, "hierarchy", as_names(self.hierarchy, step=step, option="hierarchy"))
        _set(self, "similar", as_names(self.similar, step=step, option="similar"))
        _set(self, "risk_variables", as_names(self.risk_variables, step=step,
                                            option="risk_variables", empty=True))
        _set(self, "carry_along", as_names(self.carry_along, step=step, option="carry_along",
                                         empty=True))
        _set(self, "k", as_int(self.k, step=step, option="k", low=0))
        _set(self, "swaprate", as_float(self.swaprate, step=step, option="swaprate", low=0.0,
                                        high=1.0))
        if self.k > 0 and not self.risk_variables:
            raise ValueError(f"The 'risk_variables' option of step {step!r} must name the "
                             f"keys counted within each area when k = {self.k} > 0 (or set "
                             "k = 0 to swap at random only).")
        roles = {"hierarchy": self.hierarchy, "similar": self.similar,
                 "risk_variables": self.risk_variables, "carry_along": self.carry_along}
        seen: dict[str, str] = {}
        for option, columns in roles.items():
            for column in columns:
                if column in seen:
                    raise ValueError(f"Step {step!r} names column {column!r} in both "
                                     f"{seen[column]!r} and {option!r}; a column has one "
                                     "role in the swap.")
                seen[column] = option

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns this step changes: the geography and the carried-along columns."""
        return (*self.hierarchy, *self.carry_along)
