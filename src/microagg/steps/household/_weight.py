"""Treatments of a household-level sampling weight, on one row per household, and the loss
they cause in weighted totals.

The microaggregation is the exact univariate optimum (Hansen & Mukherjee 2003, IEEE TKDE
15(4)) of the household weights within each stratum, ``k`` households per group; each group
gets the person-weighted mean of its weights (sum of size x weight over the sum of sizes), so
the weighted count of persons of every group, hence of every stratum, is kept. Rounding puts
each weight on the grid of a stated precision (sdcMicro users do this by hand before
``createSdcObj``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import SchemaError
from ...partition.univariate import optimal_univariate

__all__ = ["microaggregate_weight", "round_weight", "weighted_loss"]


def microaggregate_weight(weight: pd.Series, size: pd.Series, stratum: pd.Series | None,
                          k: int, *, column: str) -> pd.Series:
    """Household weights microaggregated within strata (one entry per household).

    Parameters
    ----------
    weight, size : Series
        Each household's weight (> 0) and number of members, one entry per household.
    stratum : Series or None
        Each household's stratum; ``None``: one stratum.
    k : int
        Households per group (>= 2); every stratum needs at least ``k`` households.
    column : str
        The weight column's name (for the error).

    Returns
    -------
    Series
        The new weights, same index; every value shared by at least ``k`` households of its
        stratum (two groups may by chance get the same mean: more, never fewer).

    Examples
    --------
    >>> w = pd.Series([10.0, 11.0, 12.0, 50.0, 52.0, 54.0])
    >>> microaggregate_weight(w, pd.Series([1] * 6), None, 3, column="w").tolist()
    [11.0, 11.0, 11.0, 52.0, 52.0, 52.0]
    """
    groups = (pd.Series(0, index=weight.index) if stratum is None else stratum)
    out = pd.Series(np.nan, index=weight.index, dtype=np.float64)
    for value, members in groups.groupby(groups, sort=False).groups.items():
        w = weight.loc[members].to_numpy(np.float64)
        if w.size < k:
            where = "" if stratum is None else f" in stratum {value!r}"
            raise SchemaError(f"The weight {column!r} cannot be microaggregated with k = {k} "
                              f"households per group{where}: it has {w.size} household(s) "
                              f"(allowed: at least {k}). Lower k, merge the stratum, or round "
                              "the weight instead.")
        labels, _ = optimal_univariate(w, k)
        n = size.loc[members].to_numpy(np.float64)
        totals = np.bincount(labels, weights=n * w)
        persons = np.bincount(labels, weights=n)
        out.loc[members] = (totals / persons)[labels]
    return out


def _decimals(precision: float) -> int:
    """Decimals that write every multiple of ``precision`` exactly enough (0.25 -> 2)."""
    text = repr(float(precision))
    if "e" in text:
        return max(0, -math.floor(math.log10(precision)) + 6)
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def round_weight(weight: pd.Series, precision: float, *, column: str) -> pd.Series:
    """Weights rounded to the nearest multiple of ``precision`` (halves to even), written
    without float noise (``589.5`` not ``589.5000000000001``).

    Raises
    ------
    SchemaError
        When a weight would round to 0 (weights must stay > 0), naming the smallest weight.

    Examples
    --------
    >>> round_weight(pd.Series([12.3, 17.6, 589.554]), 5, column="w").tolist()
    [10.0, 20.0, 590.0]
    """
    w = weight.to_numpy(np.float64)
    rounded = np.round(np.round(w / precision) * precision, _decimals(precision))
    if (rounded <= 0).any():
        raise SchemaError(f"Rounding the weight {column!r} to a precision of {precision:g} "
                          f"would make weights 0 (smallest weight {w.min():g}); the precision "
                          f"must be at most twice the smallest weight (allowed range (0, "
                          f"{2 * w.min():g})).")
    return pd.Series(rounded, index=weight.index)


def weighted_loss(before: pd.DataFrame, after: pd.DataFrame, weight: str,
                  strata: str | None, total: str | None) -> dict[str, Any]:
    """The loss in weighted totals, per person-level table: for each stratum (or overall),
    the weighted count of persons before and after and its relative change, and the same
    for the weighted total of ``total`` (missing values left out of the sum).

    Examples
    --------
    >>> a = pd.DataFrame({"w": [10.0, 20.0]})
    >>> weighted_loss(a, a.assign(w=[15.0, 20.0]), "w", None, None)["overall"]["count"]
    {'before': 30.0, 'after': 35.0, 'relative_change': 0.16666666666666666}
    """
    def figures(b: pd.DataFrame, a: pd.DataFrame) -> dict[str, Any]:
        result: dict[str, Any] = {"count": _change(b[weight].sum(), a[weight].sum())}
        if total is not None:
            result["total"] = {"column": total, **_change(
                (b[weight] * b[total]).sum(skipna=True), (a[weight] * a[total]).sum(skipna=True))}
        return result

    loss: dict[str, Any] = {"overall": figures(before, after)}
    if strata is not None:
        loss["strata"] = [{"stratum": _plain(value), **figures(before.loc[rows], after.loc[rows])}
                          for value, rows in before.groupby(strata, sort=True).groups.items()]
        changes = [abs(s["count"]["relative_change"]) for s in loss["strata"]]
        loss["largest_stratum_count_change"] = max(changes) if changes else 0.0
    return loss


def _change(before: float, after: float) -> dict[str, float]:
    """Before, after and the relative change (0 when both are 0)."""
    before, after = float(before), float(after)
    relative = (after - before) / abs(before) if before else (0.0 if after == before else
                                                              math.inf)
    return {"before": before, "after": after, "relative_change": relative}


def _plain(value: Any) -> Any:
    """A stratum value as a plain JSON-ready value."""
    return value.item() if isinstance(value, np.generic) else value
