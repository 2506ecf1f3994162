"""The verifiers of the recoding steps: each re-derives its step's promise from the
published table (and the original, for what the promise says about the change) by a path
of its own, not by running the step again, and returns what it achieved.

Every verifier returns ``{"model": <what is checked>, "holds": bool, ...figures}``, with
``records_changed`` (recounted from the two tables: the adapter compares it with the
step's details) and ``violations`` (records breaking the promise).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...hierarchy import Hierarchy, as_labels
from .bands import band_breaks, band_labels
from .dates import as_dates
from .options import Band, MultivariateTopCode, Recode, RecodeDate, TopCode
from .topcode import robust_fit, squared_distances, top_codes

__all__ = ["verify_band", "verify_mvtopcode", "verify_recode", "verify_recode_date",
           "verify_topcode"]


def _labels(series: pd.Series) -> tuple[NDArray[np.intp], NDArray[np.object_]]:
    """Each cell's code and the distinct values as hierarchy text; the last text is
    ``None``, the code of a missing cell."""
    codes, uniques = pd.factorize(series.astype(object), use_na_sentinel=True)
    texts = np.array([*as_labels(np.asarray(uniques, dtype=object)), None], dtype=object)
    return np.where(codes < 0, len(texts) - 1, codes).astype(np.intp), texts


def _result(model: str, violations: NDArray[np.bool_], changed: NDArray[np.bool_],
            **figures: Any) -> dict[str, Any]:
    return {"model": model, "holds": not bool(violations.any()),
            "violations": int(violations.sum()), "records_changed": int(changed.sum()),
            **figures}


def _same_rows(original: pd.DataFrame, published: pd.DataFrame) -> None:
    if len(original) != len(published):
        raise ValueError(f"The published table has {len(published)} rows and the original "
                         f"{len(original)}; a recoding step keeps every row.")


def verify_recode(options: Recode, original: pd.DataFrame, published: pd.DataFrame, *,
                  households: str | None = None, weights: str | None = None,
                  strata: str | None = None) -> dict[str, Any]:
    """Check a ``recode`` step: every published value of the column is in the recoded
    domain (a group's name, a value the groups do not name, or a label of the hierarchy's
    level), and is the image of the record's original value; missing stays missing.

    Parameters
    ----------
    options : Recode
        The step's options.
    original, published : pandas.DataFrame
        The table before the step and after it (the same rows, in the same order).
    households, weights, strata : str, optional
        Unused (the promise is the same for every record).

    Returns
    -------
    dict
        ``model``, ``holds``, ``violations``, ``records_changed``, ``outside_domain``.
    """
    _same_rows(original, published)
    before_codes, before_texts = _labels(original[options.column])
    after_codes, after_texts = _labels(published[options.column])
    if options.groups is not None:
        image = {old: new for new, olds in options.groups.items() for old in olds}
        domain = set(options.groups) | {v for v in before_texts if v is not None
                                        and v not in image}
        model = f"column {options.column!r} holds the groups' names and the values not named"
    else:
        hierarchy = options.hierarchy if isinstance(options.hierarchy, Hierarchy) \
            else Hierarchy.from_csv(options.hierarchy, column=options.column)
        image = {leaf: path[options.level] for leaf, path in hierarchy.paths.items()}
        domain = set(image.values())
        model = f"column {options.column!r} holds its hierarchy's level-{options.level} labels"
    # one check per distinct (original, published) pair of values
    pair_codes = before_codes * len(after_texts) + after_codes
    pairs, inverse = np.unique(pair_codes, return_inverse=True)
    per_pair = np.zeros((pairs.size, 3), dtype=bool)
    for j, code in enumerate(pairs):
        b, a = before_texts[code // len(after_texts)], after_texts[code % len(after_texts)]
        expected = None if b is None else image.get(b, b)
        per_pair[j] = (a is not None and a not in domain, a != expected, a != b)
    outside, wrong, changed = (per_pair[inverse.ravel(), j] for j in range(3))
    return _result(model, outside | wrong, changed, outside_domain=int(outside.sum()))


def _interval_holds(value: NDArray[np.float64], lower: float, upper: float,
                    closed_low: bool, closed_high: bool) -> NDArray[np.bool_]:
    low = value >= lower if closed_low else value > lower
    high = value <= upper if closed_high else value < upper
    return low & high


def verify_band(options: Band, original: pd.DataFrame, published: pd.DataFrame, *,
                households: str | None = None, weights: str | None = None,
                strata: str | None = None) -> dict[str, Any]:
    """Check a ``band`` step: every published value is a band's label, and each record's
    original value lies in the interval its label names (closed on the stated side, the
    outermost band on both); a missing value stays missing.

    Parameters
    ----------
    options : Band
        The step's options.
    original, published : pandas.DataFrame
        The table before the step and after it (the same rows, in the same order).
    households, weights, strata : str, optional
        Unused (the promise is the same for every record).

    Returns
    -------
    dict
        ``model``, ``holds``, ``violations``, ``records_changed``, ``outside_domain``,
        ``bands``.
    """
    _same_rows(original, published)
    values = original[options.column].to_numpy(dtype=np.float64, na_value=np.nan)
    breaks = band_breaks(options, values)
    labels = options.labels or band_labels(breaks, options.closed)
    after = published[options.column]
    missing_after = after.isna().to_numpy()
    text = after.astype(object).to_numpy()
    violations = missing_after != np.isnan(values)
    known = np.zeros(len(after), dtype=bool)
    last = len(labels) - 1
    for i, label in enumerate(labels):
        rows = ~missing_after & (text == label)
        known |= rows
        closed_low = options.closed == "left" or i == 0
        closed_high = options.closed == "right" or i == last
        inside = _interval_holds(values[rows], breaks[i], breaks[i + 1], closed_low,
                                 closed_high)
        violations[np.flatnonzero(rows)[~inside]] = True
    outside = ~missing_after & ~known
    model = (f"column {options.column!r} holds band labels ({options.closed}-closed, "
             f"{len(labels)} bands) and each original value lies in its band")
    return _result(model, violations | outside, ~missing_after, outside_domain=int(
        outside.sum()), bands=len(labels))


def verify_recode_date(options: RecodeDate, original: pd.DataFrame,
                       published: pd.DataFrame, *, households: str | None = None,
                       weights: str | None = None, strata: str | None = None
                       ) -> dict[str, Any]:
    """Check a ``recode_date`` step: the published dates are at the stated precision (the
    first of the month or of the year, at midnight) and in the record's own month or year;
    or the published age is the whole years from the date to the reference (computed here
    from ``yyyymmdd`` integers); missing stays missing.

    Parameters
    ----------
    options : RecodeDate
        The step's options.
    original, published : pandas.DataFrame
        The table before the step and after it (the same rows, in the same order).
    households, weights, strata : str, optional
        Unused (the promise is the same for every record).

    Returns
    -------
    dict
        ``model``, ``holds``, ``violations``, ``records_changed``.
    """
    _same_rows(original, published)
    dates = as_dates(original[options.column])
    missing = dates.isna().to_numpy()
    after = published[options.column]
    violations = after.isna().to_numpy() != missing
    keep = ~missing & ~after.isna().to_numpy()
    if options.precision == "age":
        reference = pd.Timestamp(str(options.reference))
        ages = pd.to_numeric(after, errors="coerce").to_numpy(dtype=np.float64)
        born = (dates.dt.year * 10000 + dates.dt.month * 100 + dates.dt.day).to_numpy(
            dtype=np.float64, na_value=np.nan)
        now = reference.year * 10000 + reference.month * 100 + reference.day
        expected = np.floor((now - born) / 10000.0)
        violations |= keep & ~(ages == expected)
        changed = keep
        model = f"column {options.column!r} holds whole years of age at {options.reference}"
    else:
        shown = pd.to_datetime(after, errors="coerce")
        same_year = shown.dt.year.to_numpy() == dates.dt.year.to_numpy()
        first = (shown.dt.day == 1).to_numpy() & (shown.dt.normalize() == shown).to_numpy()
        if options.precision == "month":
            same = same_year & (shown.dt.month.to_numpy() == dates.dt.month.to_numpy())
        else:
            same = same_year & (shown.dt.month == 1).to_numpy()
        violations |= keep & ~(first & same)
        changed = keep & (shown != dates).to_numpy()
        model = f"column {options.column!r} holds dates at {options.precision} precision"
    return _result(model, violations, changed)


def verify_topcode(options: TopCode, original: pd.DataFrame, published: pd.DataFrame, *,
                   households: str | None = None, weights: str | None = None,
                   strata: str | None = None) -> dict[str, Any]:
    """Check a ``topcode`` step: no published value above the top code (below the bottom
    code) other than the one replacement (the code, or the mean of the original values
    beyond it), every record beyond a code replaced, every other record unchanged.

    Parameters
    ----------
    options : TopCode
        The step's options.
    original, published : pandas.DataFrame
        The table before the step and after it (the same rows, in the same order).
    households, weights, strata : str, optional
        Unused (the promise is the same for every record).

    Returns
    -------
    dict
        ``model``, ``holds``, ``violations``, ``records_changed``, ``top``, ``bottom``,
        ``highest`` and ``lowest`` (published).
    """
    _same_rows(original, published)
    before = original[options.column].to_numpy(dtype=np.float64, na_value=np.nan)
    after = published[options.column].to_numpy(dtype=np.float64, na_value=np.nan)
    bottom, top = top_codes(options, before)
    inside = ~np.isnan(before)
    violations = np.isnan(after) != np.isnan(before)
    for code, sign in ((top, 1.0), (bottom, -1.0)):  # sign: above the top, below the bottom
        if code is None:
            continue
        coded = sign * before > sign * code
        inside &= ~coded
        value = float(before[coded].mean()) if options.replacement == "mean" and \
            coded.any() else code
        replaced = np.isclose(after, value, rtol=1e-12, atol=0.0)
        violations |= (coded | (sign * after > sign * code)) & ~replaced
    violations |= inside & (after != before)
    changed = ~np.isnan(before) & (after != before)
    observed = after[~np.isnan(after)]
    return _result(f"column {options.column!r} top coded at {top} and bottom coded at "
                   f"{bottom} ({options.replacement})", violations, changed, top=top,
                   bottom=bottom, highest=float(observed.max()) if observed.size else None,
                   lowest=float(observed.min()) if observed.size else None)


def verify_mvtopcode(options: MultivariateTopCode, original: pd.DataFrame,
                     published: pd.DataFrame, *, households: str | None = None,
                     weights: str | None = None, strata: str | None = None
                     ) -> dict[str, Any]:
    """Check an ``mvtopcode`` step: with the robust centre and covariance fitted again on
    the original, no complete published record lies beyond the chi-square boundary; a
    record inside it (or incomplete) is unchanged; a record beyond it moved along its ray
    from the centre, outward never.

    Parameters
    ----------
    options : MultivariateTopCode
        The step's options.
    original, published : pandas.DataFrame
        The table before the step and after it (the same rows, in the same order).
    households, weights, strata : str, optional
        Unused (one fit on all records).

    Returns
    -------
    dict
        ``model``, ``holds``, ``violations``, ``records_changed``, ``boundary``,
        ``largest_distance`` (published).
    """
    from scipy.stats import chi2

    _same_rows(original, published)
    columns = list(options.columns)
    before = original[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    after = published[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    complete = ~np.isnan(before).any(axis=1)
    center, covariance = robust_fit(before[complete], options)
    boundary = float(chi2.ppf(1.0 - options.alpha, df=len(columns)))
    violations = (np.isnan(after) != np.isnan(before)).any(axis=1)
    same = ((after == before) | (np.isnan(after) & np.isnan(before))).all(axis=1)
    distance_before = np.full(len(before), np.nan)
    distance_before[complete] = squared_distances(before[complete], center, covariance)
    distance_after = np.full(len(after), np.nan)
    ok = complete & ~np.isnan(after).any(axis=1)
    distance_after[ok] = squared_distances(after[ok], center, covariance)
    beyond = complete & (distance_before > boundary)
    violations |= ~beyond & ~same
    violations |= ok & (distance_after > boundary * (1 + 1e-9))
    # beyond: after - c = s (before - c) for one s in (0, 1]
    ray = np.zeros(len(before), dtype=bool)
    rows = np.flatnonzero(beyond & ok)
    if rows.size:
        d0, d1 = before[rows] - center, after[rows] - center
        s = np.einsum("ij,ij->i", d1, d0) / np.einsum("ij,ij->i", d0, d0)
        ray[rows] = (s > 0) & (s <= 1 + 1e-12) & np.isclose(
            d1, s[:, None] * d0, rtol=1e-9, atol=1e-9 * float(np.abs(d0).max())).all(axis=1)
    violations |= beyond & ~ray
    return _result(f"columns {columns!r} lie within squared robust Mahalanobis distance "
                   f"{boundary:.6g} (chi-square {1 - options.alpha:g} quantile, df="
                   f"{len(columns)})", violations, ~same, boundary=boundary,
                   largest_distance=float(np.nanmax(distance_after)) if ok.any() else 0.0)
