"""The ``topcode`` step (top and bottom coding of one numeric column, sdcMicro's
``topBotCoding``) and the ``mvtopcode`` step (robust multivariate top coding, sdcMicro's
``mvTopCoding``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...exceptions import SchemaError
from ._common import column_of, numeric_values, with_column
from .options import MultivariateTopCode, TopCode

__all__ = ["MCD_SEED", "apply_mvtopcode", "apply_topcode", "robust_fit", "top_codes"]

MCD_SEED = 0
"""The seed of the MCD's random starting subsets: fixed, so that the step is deterministic
and its verifier re-fits the same centre and covariance on the original table."""


def top_codes(options: TopCode, values: NDArray[np.float64]) -> tuple[float | None, float | None]:
    """The bottom and top codes as values: given, or the sample quantiles of the observed
    ``values`` (linear interpolation, numpy's default and R's type 7). A top code below
    the bottom code is refused."""
    observed = values[~np.isnan(values)]
    codes: list[float | None] = []
    for side in ("bottom", "top"):
        code, q = getattr(options, side), getattr(options, f"{side}_quantile")
        if q is not None:
            if observed.size == 0:
                raise SchemaError(f"Step 'topcode': column {options.column!r} has no observed "
                                  f"value, so its {side} quantile {q} is undefined.")
            code = float(np.quantile(observed, q))
        codes.append(code)
    bottom, top = codes
    if bottom is not None and top is not None and top < bottom:
        raise SchemaError(f"Step 'topcode': the top code of column {options.column!r} "
                          f"({top:g}) is below its bottom code ({bottom:g}); the top code must "
                          "be at least the bottom code.")
    return bottom, top


def apply_topcode(table: pd.DataFrame, options: TopCode, rng: np.random.Generator, *,
                  households: str | None = None, weights: str | None = None,
                  strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Top and bottom code ``options.column``: every value above the top code (below the
    bottom code) becomes the code, or the mean of the values coded on its side.

    A missing value stays missing and counts in no quantile. The column stays float64.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; it is not modified.
    options : TopCode
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic).
    households, weights, strata : str, optional
        Unused: the codes are the same for every record (quantiles are unweighted, as
        sdcMicro's).

    Returns
    -------
    table : pandas.DataFrame
        A new table, the same rows, order and index; only ``options.column`` changed.
    details : dict
        ``column``, ``top`` and ``bottom`` (the codes as values), ``replacement``,
        ``top_replacement`` and ``bottom_replacement`` (what coded values became),
        ``top_coded``, ``bottom_coded``, ``records_changed``, ``share_changed`` and
        ``missing``.

    References
    ----------
    Templ, M., Kowarik, A. and Meindl, B. "Statistical disclosure control for micro-data
    using the R package sdcMicro." J. Stat. Softw. 67(4) (2015) (``topBotCoding``);
    Hundepool, A. et al. Statistical Disclosure Control. Wiley (2012), section 3.4.4.
    """
    series = column_of(table, options.column, step=options.name)
    values = numeric_values(series, step=options.name)
    bottom, top = top_codes(options, values)
    published = values.copy()
    details: dict[str, Any] = {"column": options.column, "top": top, "bottom": bottom,
                               "replacement": options.replacement}
    changed = np.zeros(values.size, dtype=bool)
    for side, code, coded in (("top", top, values > (top if top is not None else np.inf)),
                              ("bottom", bottom,
                               values < (bottom if bottom is not None else -np.inf))):
        value = code
        if options.replacement == "mean" and coded.any():
            value = float(values[coded].mean())
        published[coded] = value
        changed |= coded & (values != published)
        details[f"{side}_replacement"] = value
        details[f"{side}_coded"] = int(coded.sum())
    observed = int((~np.isnan(values)).sum())
    details.update(records_changed=int(changed.sum()),
                   share_changed=float(changed.sum() / observed) if observed else 0.0,
                   missing=int(values.size - observed))
    return with_column(table, options.column, published), details


def robust_fit(values: NDArray[np.float64], options: MultivariateTopCode
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The MCD centre and (reweighted) covariance of the complete rows of ``values``
    (:class:`sklearn.covariance.MinCovDet`, seeded with :data:`MCD_SEED`); a singular
    covariance (a constant or collinear column) is refused by name."""
    from sklearn.covariance import MinCovDet

    n, p = values.shape
    if n <= p + 1:
        raise SchemaError(f"Step 'mvtopcode' on columns {list(options.columns)!r} needs more "
                          f"complete records than columns plus one ({p + 1}); there are {n}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        mcd = MinCovDet(support_fraction=options.support_fraction,
                        random_state=MCD_SEED).fit(values)
    covariance = np.asarray(mcd.covariance_, dtype=np.float64)
    if np.linalg.matrix_rank(covariance) < p:
        raise SchemaError(f"Step 'mvtopcode': the robust covariance of columns "
                          f"{list(options.columns)!r} is singular (a column is constant or a "
                          "combination of the others on most records); code fewer columns.")
    return np.asarray(mcd.location_, dtype=np.float64), covariance


def squared_distances(values: NDArray[np.float64], center: NDArray[np.float64],
                      covariance: NDArray[np.float64]) -> NDArray[np.float64]:
    """Squared Mahalanobis distance of each row to ``center``."""
    centred = values - center
    solved = np.linalg.solve(covariance, centred.T).T
    return np.einsum("ij,ij->i", centred, solved)


def apply_mvtopcode(table: pd.DataFrame, options: MultivariateTopCode,
                    rng: np.random.Generator, *, households: str | None = None,
                    weights: str | None = None, strata: str | None = None
                    ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Robust multivariate top coding of ``options.columns``: every complete record whose
    squared robust Mahalanobis distance ``D`` exceeds ``d``, the chi-square ``1 - alpha``
    quantile with ``p`` degrees of freedom, becomes ``c + sqrt(d / D) (x - c)`` (``c`` the
    MCD centre): it moves towards the centre onto the ellipsoid of distance ``d``.

    A record with a missing value in these columns is left as it is (and counted). The MCD
    is seeded with :data:`MCD_SEED`, so the step does not depend on ``rng``.

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; it is not modified.
    options : MultivariateTopCode
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic).
    households, weights, strata : str, optional
        Unused: one robust fit on all records, unweighted, as sdcMicro's.

    Returns
    -------
    table : pandas.DataFrame
        A new table, the same rows, order and index; only ``options.columns`` changed.
    details : dict
        ``columns``, ``alpha``, ``boundary`` (``d``), ``center``, ``covariance``,
        ``records_changed``, ``share_changed``, ``records_incomplete`` (left as they are)
        and ``largest_distance`` (the largest ``D`` before).

    References
    ----------
    sdcMicro's ``mvTopCoding`` (Gussenbauer, J. and Templ, M.; sdcMicro >= 5.5,
    R/mvTopCoding.R): winsorization on the ellipsoid of the robust Mahalanobis distance.
    Rousseeuw, P. J. and Van Driessen, K. "A fast algorithm for the minimum covariance
    determinant estimator." Technometrics 41(3) (1999).
    """
    from scipy.stats import chi2

    series = [column_of(table, c, step=options.name) for c in options.columns]
    values = np.column_stack([numeric_values(s, step=options.name) for s in series])
    complete = ~np.isnan(values).any(axis=1)
    center, covariance = robust_fit(values[complete], options)
    boundary = float(chi2.ppf(1.0 - options.alpha, df=values.shape[1]))
    distance = squared_distances(values[complete], center, covariance)
    outside = distance > boundary
    rows = np.flatnonzero(complete)[outside]
    scale = np.sqrt(boundary / distance[outside])[:, None]
    published = values.copy()
    published[rows] = center + scale * (values[rows] - center)
    out = table.copy()
    for j, column in enumerate(options.columns):
        out[column] = pd.Series(published[:, j], index=table.index, name=column)
    n_complete = int(complete.sum())
    details = {"columns": list(options.columns), "alpha": options.alpha,
               "boundary": boundary, "center": center.tolist(),
               "covariance": covariance.tolist(), "records_changed": int(rows.size),
               "share_changed": float(rows.size / n_complete) if n_complete else 0.0,
               "records_incomplete": int(values.shape[0] - n_complete),
               "largest_distance": float(distance.max()) if distance.size else 0.0}
    return out, details

