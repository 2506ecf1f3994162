"""The options of the household step (standard library only: nothing heavy at import).

Household-level columns (region, household size, the sampling weight) hold one value per
household; sdcMicro protects them once per household and copies the result to every member
(Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4), section 4.2, ``mergeHouseholdData``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .._options import StepOptions, as_float, as_int, as_names

__all__ = ["WEIGHT_TREATMENTS", "Household"]

WEIGHT_TREATMENTS = ("microaggregate", "round", "keep")
"""How the household step treats the sampling weight: household-level microaggregation
within strata, rounding to a precision, or published unchanged on purpose."""








@dataclass(frozen=True)
class Household(StepOptions):
    """Household-level treatment: every member of a household publishes the same values of
    the household-level columns, and the sampling weight is treated once per household so
    that it does not re-link the members of a household.

    Parameters
    ----------
    household_columns : str or sequence of str, optional
        The household-level columns (one value per household: region, household size...).
        Empty: the columns found constant within every household
        (:func:`~microagg.steps.household.household_level_columns`). The weight (the release's
        weight role) is always household-level.
    weight : {"microaggregate", "round", "keep"}
        How the weight is treated: ``"microaggregate"``, the exact univariate optimal
        microaggregation of the household weights within each stratum, ``k`` households per
        group, each group's weight the person-weighted mean (the weighted count of persons
        per group, hence per stratum, is kept); ``"round"``, rounded to ``precision``;
        ``"keep"``, published unchanged on purpose (the household id is then effectively
        published).
    k : int, default=3
        Households per group of the weight's microaggregation (>= 2).
    precision : float, optional
        The step the weight is rounded to (``weight="round"``; > 0).
    total : str, optional
        A numeric column whose weighted total's loss the details report.

    Notes
    -----
    sdcMicro's equivalents: ``selectHouseholdData`` / ``mergeHouseholdData`` for the
    household-level columns; ``microaggregation(..., strata_variables=)`` on the household
    file for the weight.

    Examples
    --------
    >>> step = Household("region,size", weight="round", precision="10")
    >>> step.columns, step.precision
    (('region', 'size'), 10.0)
    """

    name: ClassVar[str] = "household"
    needs_roles: ClassVar[frozenset[str]] = frozenset({"household"})
    household_columns: tuple[str, ...] = ()
    """The household-level columns (one value per household: region, household size...);
    empty: those found constant within every household."""
    weight: str = "microaggregate"
    """How the weight role's column is treated: microaggregate (k households per group
    within strata), round (to precision) or keep (published unchanged on purpose)."""
    k: int = 3
    """Households per group of the weight's microaggregation (>= 2)."""
    precision: float | None = None
    """The step the weight is rounded to (weight=round; > 0)."""
    total: str | None = None
    """A numeric column whose weighted total's loss the details report."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalized once, here
        set_(self, "household_columns", as_names(self.household_columns, step=self.name,
                                               option="household_columns", empty=True))
        weight = self.weight
        treatment = weight.strip() if isinstance(weight, str) else weight
        if treatment not in WEIGHT_TREATMENTS:
            raise ValueError(f"The 'weight' option of step {self.name!r} must be one of "
                             f"{', '.join(WEIGHT_TREATMENTS)}. Got {weight!r} instead.")
        set_(self, "weight", treatment)
        set_(self, "k", as_int(self.k, step=self.name, option="k", low=2))
        set_(self, "precision", as_float(self.precision, step=self.name, option="precision",
                                         low=0, low_open=True, optional=True))
        if treatment == "round" and self.precision is None:
            raise ValueError(f"Step {self.name!r} with weight='round' needs the 'precision' "
                             "option (a number > 0, e.g. 1 or 0.5).")
        total = self.total
        if total is not None and not (isinstance(total, str) and total.strip()):
            raise TypeError(f"The 'total' option of step {self.name!r} must name one numeric "
                            f"column. Got {total!r} instead.")
        set_(self, "total", total.strip() if isinstance(total, str) else None)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the step changes, as declared (the weight role's column is added by
        the step when the weight is treated; detected columns are only known on a table)."""
        return self.household_columns

    @property
    def treats_weight(self) -> bool:
        """Whether the weight is treated (microaggregated or rounded), not kept."""
        return self.weight != "keep"
