"""The options of the household step (standard library only: nothing heavy at import).

Household-level columns (region, household size, the sampling weight) hold one value per
household; sdcMicro protects them once per household and copies the result to every member
(Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4), section 4.2, ``mergeHouseholdData``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .._options import StepOptions

__all__ = ["WEIGHT_TREATMENTS", "Household"]

WEIGHT_TREATMENTS = ("microaggregate", "round", "keep")
"""How the household step treats the sampling weight: household-level microaggregation
within strata, rounding to a precision, or published unchanged on purpose."""


def _names(value: Any, *, step: str, option: str) -> tuple[str, ...]:
    """Column names as a tuple (``"a,b"`` in text; ``None`` or ``""``: none)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, Sequence) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise TypeError(f"The {option!r} option of step {step!r} must be a column name or a list "
                    f"of column names. Got {value!r} instead.")


def _integer(value: Any, *, step: str, option: str, low: int) -> int:
    """An int >= ``low`` from an int or its text."""
    given = value
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"The {option!r} option of step {step!r} must be an int >= {low}. "
                         f"Got {given!r} instead.")
    return int(value)


def _precision(value: Any, *, step: str) -> float | None:
    """A finite number > 0 (or ``None``) from a number or its text."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"The 'precision' option of step {step!r} must be a finite number > 0 "
                         f"(allowed range (0, inf)), e.g. 1 or 0.5. Got {value!r} instead.")
    return number


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
        set_(self, "household_columns", _names(self.household_columns, step=self.name,
                                               option="household_columns"))
        weight = self.weight
        treatment = weight.strip() if isinstance(weight, str) else weight
        if treatment not in WEIGHT_TREATMENTS:
            raise ValueError(f"The 'weight' option of step {self.name!r} must be one of "
                             f"{', '.join(WEIGHT_TREATMENTS)}. Got {weight!r} instead.")
        set_(self, "weight", treatment)
        set_(self, "k", _integer(self.k, step=self.name, option="k", low=2))
        set_(self, "precision", _precision(self.precision, step=self.name))
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
