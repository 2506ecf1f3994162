"""Weighted survey estimates before and after a release: totals, means, ratios and tables
(weighted counts) overall and by domain, each with its standard error on the original, its
95 % confidence interval, the released estimate's relative difference and whether it falls
inside that interval.

The variance estimator is the with-replacement (ultimate cluster) Taylor linearisation: the
primary sampling units are the households when a household id is given, the records
otherwise, taken within strata when strata are given (Wolter 2007, "Introduction to
Variance Estimation", 2nd ed., ch. 6; Särndal, Swensson and Wretman 1992, "Model Assisted
Survey Sampling", section 5.5 for ratios, 10.3 for domains). The numeric core
(:func:`linearised`) reads arrays; :func:`weighted_estimates` reads tables (pandas is loaded
by the caller's tables only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["MAX_DOMAIN_LEVELS", "Design", "Estimate", "linearised", "weighted_estimates"]

MAX_DOMAIN_LEVELS = 50
"""The most levels a domain (or a tabulated column) may have: each level is one estimate."""

VARIANCE_SENTENCE = ("Standard errors by with-replacement linearisation (Wolter 2007), "
                     "{units} as primary sampling units{strata}; 95 % intervals from the "
                     "normal distribution.")


@dataclass(frozen=True)
class Design:
    """The sampling design the standard errors read: the weight of each record, the code
    0..m-1 of its primary sampling unit and 0..s-1 of its stratum (``None``: one stratum)."""

    weights: NDArray[np.float64]
    psu: NDArray[np.intp]
    strata: NDArray[np.intp] | None = None


@dataclass(frozen=True)
class Estimate:
    """One estimate before and after: ``statistic`` (total, mean, ratio or count) of
    ``column`` in ``domain`` = ``level`` (``None``, ``None``: the whole file), the original
    value with its standard error and ``ci`` (95 %), the released value, the relative
    difference ``(released - original) / |original|`` (``None`` when the original is 0 or
    either is undefined) and whether the released value falls inside ``ci``."""

    statistic: str
    column: str
    domain: str | None
    level: str | None
    original: float
    se: float
    ci: tuple[float, float]
    released: float
    relative_difference: float | None
    inside_ci: bool

    def as_dict(self) -> dict[str, Any]:
        """Python floats, strings and lists, for a release's JSON."""
        return {"statistic": self.statistic, "column": self.column, "domain": self.domain,
                "level": self.level, "original": self.original, "se": self.se,
                "ci": list(self.ci), "released": self.released,
                "relative_difference": self.relative_difference, "inside_ci": self.inside_ci}


def _between_units(z: NDArray[np.float64], design: Design) -> float:
    """The with-replacement variance of a total whose linearised values are ``z``: the sum
    over strata of ``m_h / (m_h - 1)`` times the sum of squared deviations of the PSU totals
    from their stratum mean (a stratum with one PSU adds nothing)."""
    unit_total = np.bincount(design.psu, weights=z)
    if design.strata is None:
        units = unit_total.size
        return (float(units / (units - 1) * ((unit_total - unit_total.mean()) ** 2).sum())
                if units > 1 else 0.0)
    groups = np.zeros(unit_total.size, dtype=np.intp)
    groups[design.psu] = design.strata  # each PSU in its stratum
    m = np.bincount(groups).astype(np.float64)
    mean = np.bincount(groups, weights=unit_total) / np.maximum(m, 1.0)
    squares = np.bincount(groups, weights=(unit_total - mean[groups]) ** 2)
    factor = np.divide(m, m - 1.0, out=np.zeros_like(m), where=m > 1)
    return float(np.sum(factor * squares))


def linearised(y: NDArray[np.float64], design: Design, x: NDArray[np.float64] | None = None
               ) -> tuple[float, float]:
    """The weighted total ``sum w y`` (``x`` is ``None``) or ratio ``sum w y / sum w x``
    and its linearised standard error.

    Parameters
    ----------
    y, x : ndarray of shape (n_samples,)
        Finite values (a missing value enters as 0 with ``x`` = 0: a domain of the observed
        records). A mean is the ratio with ``x`` the indicator of the records counted.
    design : Design

    Returns
    -------
    (estimate, standard_error) : tuple of float
        NaN, NaN for a ratio whose denominator is 0.

    References
    ----------
    Wolter, K. M. "Introduction to Variance Estimation", 2nd ed., Springer (2007), ch. 6:
    the ratio's linearised variable ``w (y - R x) / sum w x``.

    Examples
    --------
    >>> d = Design(np.array([1.0, 1.0, 2.0]), np.arange(3))
    >>> total, se = linearised(np.array([1.0, 2.0, 3.0]), d)
    >>> total, round(se ** 2, 12)  # (3 / 2) * ((1 - 3)^2 + (2 - 3)^2 + (6 - 3)^2)
    (9.0, 21.0)
    """
    w = design.weights  # sums of products, not np.dot: BLAS threads thrash on a busy machine
    wy = w * y
    if x is None:
        return float(wy.sum()), math.sqrt(_between_units(wy, design))
    denominator = float((w * x).sum())
    if denominator == 0.0:
        return math.nan, math.nan
    ratio = float(wy.sum()) / denominator
    z = w * (y - ratio * x) / denominator
    return ratio, math.sqrt(_between_units(z, design))


def _compare(statistic: str, column: str, domain: tuple[str, str] | None,
             original: tuple[float, float], released: float, z: float) -> Estimate:
    value, se = original
    low, high = value - z * se, value + z * se
    rel = (None if value == 0 or not (math.isfinite(value) and math.isfinite(released))
           else (released - value) / abs(value))
    return Estimate(statistic, column, None if domain is None else domain[0],
                    None if domain is None else domain[1], value, se, (low, high), released,
                    rel, bool(low <= released <= high))


def _observed(table: pd.DataFrame, column: str) -> tuple[NDArray[np.float64],
                                                          NDArray[np.float64]]:
    """A numeric column's values with a missing one at 0, and the indicator of the
    observed ones."""
    import pandas as pd

    values = pd.to_numeric(table[column], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    seen = np.isfinite(values)
    return np.where(seen, values, 0.0), seen.astype(np.float64)


@dataclass(frozen=True)
class _Side:
    table: pd.DataFrame
    design: Design


def _numeric_estimates(sides: tuple[_Side, _Side], columns: Sequence[str],
                       ratios: Sequence[tuple[str, str]], masks: list[tuple[Any, Any, Any]],
                       z: float) -> list[Estimate]:
    """Totals and means of ``columns`` and the ratios, in each domain of ``masks``
    (``(domain, mask of the original, mask of the release)``)."""
    out: list[Estimate] = []
    for column in columns:
        (yo, so), (yr, sr) = _observed(sides[0].table, column), _observed(sides[1].table, column)
        for domain, mo, mr in masks:
            total = linearised(yo * mo, sides[0].design)
            out.append(_compare("total", column, domain, total,
                                linearised(yr * mr, sides[1].design)[0], z))
            mean = linearised(yo * mo, sides[0].design, so * mo)
            out.append(_compare("mean", column, domain, mean,
                                linearised(yr * mr, sides[1].design, sr * mr)[0], z))
    for y, x in ratios:
        (yo, so), (yr, sr) = _observed(sides[0].table, y), _observed(sides[1].table, y)
        (xo, to), (xr, tr) = _observed(sides[0].table, x), _observed(sides[1].table, x)
        for domain, mo, mr in masks:  # the records where both are observed
            both_o, both_r = mo * so * to, mr * sr * tr
            ratio = linearised(yo * both_o, sides[0].design, xo * both_o)
            out.append(_compare("ratio", f"{y}/{x}", domain, ratio,
                                linearised(yr * both_r, sides[1].design, xr * both_r)[0], z))
    return out


def _levels(table: pd.DataFrame, column: str, parameter: str) -> list[Any]:
    levels = sorted(table[column].dropna().unique().tolist(), key=str)
    if not 1 <= len(levels) <= MAX_DOMAIN_LEVELS:
        raise ValueError(f"The {parameter!r} parameter names column {column!r}, which has "
                         f"{len(levels)} distinct values in the original; allowed: 1 to "
                         f"{MAX_DOMAIN_LEVELS} (each value is one estimate). Group it first.")
    return levels


def _domain_masks(sides: tuple[_Side, _Side], by: str | None) -> list[tuple[Any, Any, Any]]:
    ones = (np.ones(len(sides[0].table)), np.ones(len(sides[1].table)))
    masks: list[tuple[Any, Any, Any]] = [(None, *ones)]
    if by is None:
        return masks
    for level in _levels(sides[0].table, by, "by"):
        masks.append(((by, str(level)),
                      (sides[0].table[by] == level).to_numpy(np.float64),
                      _level_mask(sides[1].table, by, level)))
    return masks


def _level_mask(table: pd.DataFrame, column: str, level: Any) -> NDArray[np.float64]:
    """Rows of the release whose ``column`` is ``level`` (compared as text when a step
    changed the column's type, e.g. a recoded number)."""
    if column not in table.columns:
        return np.zeros(len(table))
    equal = (table[column] == level).to_numpy(np.bool_)
    if not equal.any():
        equal = (table[column].astype(str) == str(level)).to_numpy(np.bool_)
    return equal.astype(np.float64)


def weighted_estimates(original: pd.DataFrame, released: pd.DataFrame, *,
                       designs: tuple[Design, Design], columns: Sequence[str] = (),
                       ratios: Sequence[tuple[str, str]] = (), tables: Sequence[str] = (),
                       by: str | None = None, confidence: float = 0.95) -> list[Estimate]:
    """Totals and means of ``columns``, ratios ``y / x`` and weighted counts of each value
    of the ``tables`` columns, overall and (with ``by``) in each domain, before and after.

    Validation is assumed (:func:`microagg.metrics.analysis_utility.utility_by_analysis`
    checks the columns, the weights and the domain): ``designs`` are the original's and the
    release's, row for row of each table. A released value is what an analyst computes from
    the released table with its own weights and domain column.

    Returns
    -------
    list of Estimate
        Columns in the order given, the whole file first, then each domain level.
    """
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    sides = (_Side(original, designs[0]), _Side(released, designs[1]))
    masks = _domain_masks(sides, by)
    out = _numeric_estimates(sides, columns, ratios, masks, z)
    for column in tables:
        for value in _levels(original, column, "tables"):
            yo = (original[column] == value).to_numpy(np.float64)
            yr = _level_mask(released, column, value)
            for domain, mo, mr in masks:
                out.append(_compare("count", f"{column} = {value}", domain,
                                    linearised(yo * mo, designs[0]),
                                    linearised(yr * mr, designs[1])[0], z))
    return out
