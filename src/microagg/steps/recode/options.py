"""The options of the recoding steps: grouping categories (:class:`Recode`), banding numbers
(:class:`Band`), coarsening dates (:class:`RecodeDate`), top and bottom coding
(:class:`TopCode`) and robust multivariate top coding (:class:`MultivariateTopCode`).

Each is a frozen dataclass built from Python values or from the CLI's text (``"5"``,
``"a,b"``, JSON for mappings and lists), checked once here with errors that name the option,
the value and the allowed range. Importing this module imports the standard library only.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

from .._options import StepOptions, as_choice, as_float, as_int, as_json

__all__ = ["Band", "MultivariateTopCode", "Recode", "RecodeDate", "TopCode"]




def _column(value: Any, *, step: str, option: str = "column") -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"The {option!r} option of step {step!r} must be a column name. "
                        f"Got {value!r} instead.")
    return value.strip()










def _texts(value: Any, *, step: str, option: str) -> tuple[str, ...]:
    """Texts from a sequence, JSON list text, or ``"a,b"``."""
    value = as_json(value, step=step, option=option, example='["low", "high"]')
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, Sequence) or not value:
        raise ValueError(f"The {option!r} option of step {step!r} must be a non-empty list. "
                         f"Got {value!r} instead.")
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class Recode(StepOptions):
    """Group the categories of one column: by a mapping ``{new: [old, ...]}`` (values it
    does not name stay as they are), or by a level of a generalization hierarchy (sdcMicro's
    ``groupAndRename`` and ``globalRecode`` of a factor; ARX's hierarchies).

    Parameters
    ----------
    column : str
        The column recoded.
    groups : mapping of str to sequence of str, optional
        Each new category and the values it takes in (JSON text accepted:
        ``'{"North": ["N1", "N2"]}'``). No value may be in two groups.
    hierarchy : Hierarchy or path, optional
        A :class:`microagg.hierarchy.Hierarchy`, or the path of an ARX-style CSV file;
        exactly one of ``groups`` and ``hierarchy``.
    level : int, default=1
        The hierarchy level every value is replaced by (0: the value itself).

    Examples
    --------
    >>> Recode("region", groups='{"North": ["N1", "N2"]}').groups["North"]
    ('N1', 'N2')
    """

    name: ClassVar[str] = "recode"
    column_types: ClassVar[frozenset[str]] = frozenset({"categorical", "ordinal", "numeric"})
    column: str
    """The column recoded."""
    groups: Mapping[str, tuple[str, ...]] | None = None
    """Each new category and the old values it takes in (a JSON object such as
    '{"North": ["N1", "N2"]}'); values not named stay as they are."""
    hierarchy: Any = None
    """A generalization hierarchy (the path of an ARX-style CSV file) instead of groups."""
    level: int = 1
    """The hierarchy level every value is replaced by (0: the value itself)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "column", _column(self.column, step=self.name))
        if (self.groups is None) == (self.hierarchy is None):
            raise ValueError(f"Step {self.name!r} of column {self.column!r} needs exactly one "
                             "of 'groups' (a mapping new -> [old values]) and 'hierarchy'.")
        if self.groups is not None:
            set_(self, "groups", self._checked_groups(self.groups))
        if isinstance(self.hierarchy, (str, os.PathLike)):
            set_(self, "hierarchy", os.fspath(self.hierarchy))
        set_(self, "level", as_int(self.level, step=self.name, option="level", low=0))
        height = getattr(self.hierarchy, "height", None)
        if isinstance(height, int) and self.level > height:
            raise ValueError(f"The 'level' option of step {self.name!r} must be in [0, "
                             f"{height}] (the height of the hierarchy of column "
                             f"{self.column!r}). Got {self.level} instead.")

    def _checked_groups(self, value: Any) -> Mapping[str, tuple[str, ...]]:
        value = as_json(value, step=self.name, option="groups",
                      example='\'{"North": ["N1", "N2"]}\'')
        if not isinstance(value, Mapping) or not value:
            raise ValueError(f"The 'groups' option of step {self.name!r} must be a non-empty "
                             f"mapping of new values to lists of old values. Got {value!r}.")
        groups: dict[str, tuple[str, ...]] = {}
        seen: dict[str, str] = {}
        for new, olds in value.items():
            members = (olds,) if isinstance(olds, str) else tuple(olds)
            if not members:
                raise ValueError(f"The 'groups' option of step {self.name!r}: group "
                                 f"{new!r} of column {self.column!r} names no value.")
            for old in map(str, members):
                if old in seen and seen[old] != str(new):
                    raise ValueError(f"The 'groups' option of step {self.name!r}: value "
                                     f"{old!r} of column {self.column!r} is in two groups, "
                                     f"{seen[old]!r} and {new!r}; a value may be in one.")
                seen[old] = str(new)
            groups[str(new)] = tuple(dict.fromkeys(map(str, members)))
        return MappingProxyType(groups)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column the step changes."""
        return (self.column,)


@dataclass(frozen=True)
class Band(StepOptions):
    """Band a numeric column into intervals: explicit breaks, ``bands`` of equal width, or
    ``bands`` of (about) equal counts at the sample quantiles (sdcMicro's ``globalRecode``
    with ``breaks``, ``method="equidistant"`` and ``method="equalAmount"``).

    Parameters
    ----------
    column : str
        The numeric column banded.
    breaks : sequence of float, optional
        Strictly increasing break points (at least two); every value must lie in
        ``[breaks[0], breaks[-1]]``.
    bands : int, optional
        The number of bands (>= 1) for ``method="equal_width"`` or ``"quantiles"``.
    method : {"breaks", "equal_width", "quantiles"}, default="breaks"
        How the breaks are found.
    labels : sequence of str, optional
        One label per band; by default ``"[20, 30)"`` (or ``"(20, 30]"``).
    closed : {"left", "right"}, default="left"
        The closed side of each band: ``"left"`` gives ``[a, b)``, ``"right"`` ``(a, b]``
        (R's ``cut`` and so sdcMicro). The outermost band also holds its outer break.

    Examples
    --------
    >>> Band("age", breaks="0,18,65,120").breaks
    (0.0, 18.0, 65.0, 120.0)
    """

    name: ClassVar[str] = "band"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    makes_type: ClassVar[str | None] = "categorical"
    column: str
    """The numeric column banded (published as text labels)."""
    breaks: tuple[float, ...] | None = None
    """Strictly increasing break points, at least two (e.g. 0,18,65,120); every value must
    lie between the first and the last."""
    bands: int | None = None
    """The number of bands (>= 1) for method equal_width or quantiles."""
    method: str = "breaks"
    """How the breaks are found: breaks (given), equal_width or quantiles."""
    labels: tuple[str, ...] | None = None
    """One label per band; by default '[20, 30)' (or '(20, 30]')."""
    closed: str = "left"
    """The closed side of each band: left gives [a, b), right gives (a, b]."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "column", _column(self.column, step=self.name))
        set_(self, "method", as_choice(self.method, ("breaks", "equal_width", "quantiles"),
                                     step=self.name, option="method"))
        set_(self, "closed", as_choice(self.closed, ("left", "right"), step=self.name,
                                     option="closed"))
        if self.method == "breaks":
            self._set_breaks()
        else:
            if self.bands is None or self.breaks is not None:
                raise ValueError(f"Step {self.name!r} of column {self.column!r} with method="
                                 f"{self.method!r} needs 'bands' (an int >= 1) and no "
                                 "'breaks'.")
            set_(self, "bands", as_int(self.bands, step=self.name, option="bands", low=1))
        if self.labels is not None:
            labels = _texts(self.labels, step=self.name, option="labels")
            if len(set(labels)) != len(labels):
                raise ValueError(f"The 'labels' option of step {self.name!r} names a label "
                                 f"twice: {list(labels)!r}.")
            if self.method == "breaks" and self.breaks and len(labels) != len(self.breaks) - 1:
                raise ValueError(f"The 'labels' option of step {self.name!r} must give one "
                                 f"label per band ({len(self.breaks) - 1}). Got "
                                 f"{len(labels)}.")
            if self.bands is not None and self.method == "equal_width" \
                    and len(labels) != self.bands:
                raise ValueError(f"The 'labels' option of step {self.name!r} must give one "
                                 f"label per band ({self.bands}). Got {len(labels)}.")
            set_(self, "labels", labels)

    def _set_breaks(self) -> None:
        if self.breaks is None or self.bands is not None:
            raise ValueError(f"Step {self.name!r} of column {self.column!r} with method="
                             "'breaks' needs 'breaks' (increasing numbers) and no 'bands'.")
        raw = _texts(self.breaks, step=self.name, option="breaks") \
            if isinstance(self.breaks, str) else self.breaks
        if not isinstance(raw, Sequence) or len(raw) < 2:
            raise ValueError(f"The 'breaks' option of step {self.name!r} must give at least "
                             f"two numbers. Got {self.breaks!r} instead.")
        breaks = tuple(as_float(b, step=self.name, option="breaks", optional=True) for b in raw)
        for a, b in itertools.pairwise(breaks):
            if a is None or b is None or not a < b:
                raise ValueError(f"The 'breaks' option of step {self.name!r} (column "
                                 f"{self.column!r}) must be strictly increasing, without "
                                 f"overlapping bands; {a!r} is followed by {b!r} in "
                                 f"{list(breaks)!r}.")
        object.__setattr__(self, "breaks", breaks)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column the step changes."""
        return (self.column,)


@dataclass(frozen=True)
class RecodeDate(StepOptions):
    """Coarsen a date column: to the first day of its month or of its year, or replace it
    by the age in whole years at a reference date (sdcMicro has no date type; offices
    publish the year of birth or the age instead of the date).

    Parameters
    ----------
    column : str
        The date column (datetime64, or text ISO dates).
    precision : {"month", "year", "age"}
        What the date becomes.
    reference : str, optional
        The ISO date at which the age is measured; needed for ``"age"`` only.

    Examples
    --------
    >>> RecodeDate("birth", "age", reference="2024-06-30").reference
    '2024-06-30'
    """

    name: ClassVar[str] = "recode_date"
    column_types: ClassVar[frozenset[str]] = frozenset({"date"})
    column: str
    """The date column coarsened."""
    precision: str
    """What each date becomes: month or year (its first day; a text column is published as
    an ISO partial date, 1989-03 or 1989), or age (whole years at the reference date)."""
    reference: str | None = None
    """The ISO date at which the age is measured (precision age only)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "column", _column(self.column, step=self.name))
        set_(self, "precision", as_choice(self.precision, ("month", "year", "age"),
                                        step=self.name, option="precision"))
        if (self.precision == "age") != (self.reference is not None):
            raise ValueError(f"The 'reference' option of step {self.name!r} (column "
                             f"{self.column!r}) is needed with precision='age' and only "
                             f"then. Got precision={self.precision!r}, reference="
                             f"{self.reference!r}.")
        if self.reference is not None:
            import datetime

            try:
                reference = datetime.date.fromisoformat(str(self.reference).strip()[:10])
            except ValueError:
                raise ValueError(f"The 'reference' option of step {self.name!r} must be an "
                                 f"ISO date such as '2024-06-30'. Got {self.reference!r} "
                                 "instead.") from None
            set_(self, "reference", reference.isoformat())

    def publication(self) -> Mapping[str, str]:
        """A month or a year is published at that precision; an age as whole numbers."""
        return MappingProxyType({self.column: "integer" if self.precision == "age"
                                 else self.precision})

    @property
    def columns(self) -> tuple[str, ...]:
        """The column the step changes."""
        return (self.column,)


@dataclass(frozen=True)
class TopCode(StepOptions):
    """Top and bottom coding of one numeric column: values above the top code (below the
    bottom code) are replaced by the code, or by the mean of the values coded (sdcMicro's
    ``topBotCoding``; Hundepool et al. 2012, Statistical Disclosure Control, section 3.4).

    Parameters
    ----------
    column : str
        The numeric column coded.
    top, bottom : float, optional
        The codes as values.
    top_quantile, bottom_quantile : float, optional
        The codes as sample quantiles in (0, 1) (linear interpolation, R's type 7), each
        instead of the value of the same side.
    replacement : {"code", "mean"}, default="code"
        What a coded value becomes: the code, or the mean of the values coded on its side.

    Examples
    --------
    >>> TopCode("income", top_quantile="0.99").top_quantile
    0.99
    """

    name: ClassVar[str] = "topcode"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    column: str
    """The numeric column coded."""
    top: float | None = None
    """Values above it are coded."""
    bottom: float | None = None
    """Values below it are coded."""
    top_quantile: float | None = None
    """The top code as a sample quantile in (0, 1), instead of top."""
    bottom_quantile: float | None = None
    """The bottom code as a sample quantile in (0, 1), instead of bottom."""
    replacement: str = "code"
    """What a coded value becomes: code, or mean (of the values coded on its side)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "column", _column(self.column, step=self.name))
        for option in ("top", "bottom"):
            set_(self, option, as_float(getattr(self, option), step=self.name, option=option,
                                        optional=True))
        for option in ("top_quantile", "bottom_quantile"):
            set_(self, option, as_float(getattr(self, option), step=self.name, option=option,
                                        low=0, high=1, low_open=True, high_open=True,
                                        optional=True))
        set_(self, "replacement", as_choice(self.replacement, ("code", "mean"),
                                          step=self.name, option="replacement"))
        for side in ("top", "bottom"):
            if getattr(self, side) is not None and getattr(self, f"{side}_quantile") is not None:
                raise ValueError(f"Step {self.name!r} of column {self.column!r}: give {side!r} "
                                 f"or {side + '_quantile'!r}, not both.")
        if all(getattr(self, o) is None for o in ("top", "bottom", "top_quantile",
                                                   "bottom_quantile")):
            raise ValueError(f"Step {self.name!r} of column {self.column!r} needs a code: "
                             "'top', 'bottom', 'top_quantile' or 'bottom_quantile'.")
        for low, high in (("bottom", "top"), ("bottom_quantile", "top_quantile")):
            a, b = getattr(self, low), getattr(self, high)
            if a is not None and b is not None and not a < b:
                raise ValueError(f"Step {self.name!r} of column {self.column!r}: the top code "
                                 f"must be above the bottom code; {high}={b!r} is not above "
                                 f"{low}={a!r}.")

    def publication(self) -> Mapping[str, str]:
        """The column as the step left it (a rounded code or mean would break its promise)."""
        return MappingProxyType({self.column: "as-is"})

    @property
    def columns(self) -> tuple[str, ...]:
        """The column the step changes."""
        return (self.column,)


@dataclass(frozen=True)
class MultivariateTopCode(StepOptions):
    """Robust multivariate top coding (sdcMicro's ``mvTopCoding``, Gussenbauer & Templ):
    records whose squared robust Mahalanobis distance (MCD centre and covariance) exceeds
    the chi-square quantile ``1 - alpha`` are pulled onto that ellipsoid, towards the
    centre.

    Parameters
    ----------
    columns : sequence of str
        The numeric columns coded together (at least one).
    alpha : float, default=0.025
        Significance level in (0, 1): the boundary is the chi-square ``1 - alpha`` quantile
        with one degree of freedom per column (sdcMicro's default 0.025).
    support_fraction : float, optional
        The share of records the MCD estimate rests on, in (0, 1)
        (:class:`sklearn.covariance.MinCovDet`; ``None``: ``(n + p + 1) / 2n``).

    Examples
    --------
    >>> MultivariateTopCode("income,expend").columns
    ('income', 'expend')
    """

    name: ClassVar[str] = "mvtopcode"
    column_types: ClassVar[frozenset[str]] = frozenset({"numeric"})
    columns: tuple[str, ...]  # a field in place of StepOptions' property
    """The numeric columns coded together (at least one)."""
    alpha: float = 0.025
    """Significance level in (0, 1): the boundary is the chi-square 1 - alpha quantile."""
    support_fraction: float | None = None
    """The share of records the robust (MCD) estimate rests on, in (0, 1); none: (n + p +
    1) / 2n."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        names = _texts(self.columns, step=self.name, option="columns") \
            if isinstance(self.columns, str) else tuple(self.columns)
        names = tuple(_column(n, step=self.name, option="columns") for n in names)
        if not names or len(set(names)) != len(names):
            raise ValueError(f"The 'columns' option of step {self.name!r} must name at least "
                             f"one column, each once. Got {self.columns!r} instead.")
        set_(self, "columns", names)
        set_(self, "alpha", as_float(self.alpha, step=self.name, option="alpha", low=0, high=1,
                                     low_open=True, high_open=True, optional=True))
        if self.alpha is None:
            raise ValueError(f"The 'alpha' option of step {self.name!r} must be in (0, 1).")
        set_(self, "support_fraction", as_float(self.support_fraction, step=self.name,
                                                option="support_fraction", low=0, high=1,
                                                low_open=True, high_open=True, optional=True))

    def publication(self) -> Mapping[str, str]:
        """The columns as the step left them (rounding could move a record beyond the
        boundary, or off its ray from the centre)."""
        return MappingProxyType(dict.fromkeys(self.columns, "as-is"))


# The field ``columns`` of MultivariateTopCode is the step's columns: a plain class attribute
# in place of StepOptions' read-only property lets the frozen dataclass set it on each
# instance (the field has no default: the generated __init__ still requires it).
MultivariateTopCode.columns = ()
