"""Regression coefficients of a user-named linear model before and after a release, with the
confidence-interval overlap of Karr et al. (2006).

A model is written ``"y ~ x1 + x2 + C(region)"``: the response, then the terms; a term whose
column is not numeric, or written ``C(name)``, enters one-hot with its first value (in the
original, sorted) as the reference; an intercept is always fitted. Least squares on the
records where the response and every term are observed; with sampling weights, weighted
least squares with the with-replacement linearisation (sandwich) variance, the households
as primary sampling units when given (Binder 1983, "On the variances of asymptotically
normal estimators from complex surveys", Int. Stat. Rev. 51); without, the classical OLS
variance ``s^2 (X'X)^-1``. Intervals at 95 % from the normal distribution.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Coefficient", "Formula", "ci_overlap", "fit_linear", "parse_formula",
           "regression_overlap"]

_TERM = re.compile(r"^(?:C\((?P<cat>[^()]+)\)|(?P<name>[^()]+))$")


@dataclass(frozen=True)
class Formula:
    """A parsed model: the response column, the term columns, which enter one-hot."""

    response: str
    terms: tuple[str, ...]
    categorical: tuple[bool, ...]
    text: str


def parse_formula(formula: Any, columns: Sequence[Any], *, parameter: str = "model"
                  ) -> Formula:
    """``"y ~ x1 + C(x2)"`` as a :class:`Formula` on ``columns`` (the original's).

    Raises
    ------
    ValueError
        A formula that is not ``response ~ term + term``, or names a column the table does
        not have (the unknown names and the available columns listed).

    Examples
    --------
    >>> parse_formula("y ~ x + C(g)", ["y", "x", "g"]).terms
    ('x', 'g')
    """
    if not isinstance(formula, str) or formula.count("~") != 1:
        raise ValueError(f"The {parameter!r} parameter must be a formula 'response ~ term + "
                         f"term' (one '~'). Got {formula!r} instead.")
    left, right = (part.strip() for part in formula.split("~"))
    names, forced = [], []
    for raw in (t.strip() for t in right.split("+")):
        match = _TERM.match(raw)
        if match is None or not raw:
            raise ValueError(f"The {parameter!r} parameter {formula!r} has an empty or "
                             f"unreadable term {raw!r}; terms are column names or C(name), "
                             "joined by '+'.")
        names.append((match["cat"] or match["name"]).strip())
        forced.append(match["cat"] is not None)
    known = {str(c) for c in columns}
    unknown = [n for n in (left, *names) if n not in known]
    if not left or unknown:
        raise ValueError(f"The {parameter!r} parameter {formula!r} names column(s) the table "
                         f"does not have: {', '.join(map(repr, unknown or [left]))}; "
                         f"available: {', '.join(map(repr, sorted(known)))}.")
    if left in names or len(set(names)) != len(names):
        raise ValueError(f"The {parameter!r} parameter {formula!r} names a column twice; "
                         "allowed: a response and distinct terms.")
    return Formula(left, tuple(names), tuple(forced), formula)


@dataclass(frozen=True)
class Coefficient:
    """One coefficient before and after: estimates, 95 % intervals and Karr's overlap."""

    term: str
    original: float
    original_ci: tuple[float, float]
    released: float
    released_ci: tuple[float, float]
    overlap: float

    def as_dict(self) -> dict[str, Any]:
        """Python floats and lists, for a release's JSON."""
        return {"term": self.term, "original": self.original,
                "original_ci": list(self.original_ci), "released": self.released,
                "released_ci": list(self.released_ci), "overlap": self.overlap}


def ci_overlap(original: tuple[float, float], released: tuple[float, float]) -> float:
    """Karr et al.'s interval overlap: the average of the shares of each interval covered
    by their intersection; 1 for equal intervals, negative when they are disjoint (by how
    far, in interval widths).

    References
    ----------
    Karr, Kohnen, Oganian, Reiter and Sanil. "A framework for evaluating the utility of
    data altered to protect confidentiality." The American Statistician 60(3) (2006),
    224-232, section 3.

    Examples
    --------
    >>> ci_overlap((0.0, 2.0), (1.0, 5.0))
    0.375
    """
    low, high = max(original[0], released[0]), min(original[1], released[1])
    width_o, width_r = original[1] - original[0], released[1] - released[0]
    if not (width_o > 0 and width_r > 0):
        return 1.0 if original == released else math.nan
    return float(0.5 * ((high - low) / width_o + (high - low) / width_r))


def fit_linear(X: NDArray[np.float64], y: NDArray[np.float64],
               weights: NDArray[np.float64] | None = None,
               psu: NDArray[np.intp] | None = None
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Coefficients and standard errors of ``y ~ X`` (``X`` holds the intercept column).

    Without ``weights``: ordinary least squares, the classical variance
    ``s^2 (X'X)^-1`` with ``s^2 = RSS / (n - p)``. With ``weights``: weighted least squares
    and the linearisation variance ``A^-1 B A^-1``, ``A = X'WX``, ``B`` the with-replacement
    variance of the PSU totals of ``w x e`` (``psu``: codes 0..m-1, default one per record).
    A coefficient the data cannot identify (a constant or collinear term) gets NaN.
    """
    n, p = X.shape
    w = np.ones(n) if weights is None else weights
    sw = np.sqrt(w)
    beta, _, rank, _ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
    bread = np.linalg.pinv(X.T @ (X * w[:, None]))
    residual = y - X @ beta
    if weights is None:
        dof = max(n - rank, 1)
        cov = bread * float(residual @ residual) / dof
    else:
        units = np.arange(n) if psu is None else psu
        score = np.zeros((int(units.max()) + 1 if n else 0, p))
        np.add.at(score, units, X * (w * residual)[:, None])
        m = score.shape[0]
        centred = score - score.mean(axis=0)
        meat = centred.T @ centred * (m / (m - 1) if m > 1 else 0.0)
        cov = bread @ meat @ bread
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if rank < p:  # the terms the data cannot identify
        free = np.abs(np.diag(bread @ (X.T @ (X * w[:, None])))) < 0.5
        beta, se = np.where(free, np.nan, beta), np.where(free, np.nan, se)
    return np.asarray(beta, dtype=np.float64), np.asarray(se, dtype=np.float64)


def _design(table: pd.DataFrame, formula: Formula, levels: dict[str, list[Any]],
            numeric: dict[str, bool]) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                               NDArray[np.bool_], list[str]]:
    """The model matrix (intercept, numeric terms, one-hot terms), the response and the
    rows used (response and terms observed) of ``table``."""
    import pandas as pd

    y = pd.to_numeric(table[formula.response], errors="coerce").to_numpy(np.float64,
                                                                        na_value=np.nan)
    keep = np.isfinite(y)
    columns, names = [np.ones(len(table))], ["(intercept)"]
    for term in formula.terms:
        values = table[term] if term in table.columns else pd.Series(np.nan, table.index)
        if numeric[term]:
            x = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
            keep &= np.isfinite(x)
            columns.append(np.where(np.isfinite(x), x, 0.0))
            names.append(term)
            continue
        keep &= values.notna().to_numpy()
        text = values.astype(str).to_numpy()
        for level in levels[term][1:]:
            columns.append((text == str(level)).astype(np.float64))
            names.append(f"{term}[{level}]")
    X = np.column_stack(columns)
    return X[keep], y[keep], keep, names


def regression_overlap(original: pd.DataFrame, released: pd.DataFrame, formula: Formula, *,
                       weights: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
                       psu: tuple[NDArray[np.intp], NDArray[np.intp]] | None = None,
                       confidence: float = 0.95) -> list[Coefficient]:
    """The model fitted on both tables, coefficient by coefficient with Karr's overlap.

    Validation is assumed (the formula parsed on the original's columns, the weights
    checked): ``weights`` and ``psu`` are the original's and the release's, row for row.
    """
    import pandas as pd

    from .analysis_learning import one_blas_thread

    levels, numeric = {}, {}
    for term, forced in zip(formula.terms, formula.categorical, strict=True):
        column = original[term]
        numeric[term] = not forced and pd.api.types.is_numeric_dtype(column) \
            and not pd.api.types.is_bool_dtype(column)
        if not numeric[term]:
            levels[term] = sorted({str(v) for v in column.dropna().unique()})
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    fits = []
    for side, table in enumerate((original, released)):
        X, y, keep, names = _design(table, formula, levels, numeric)
        if len(y) <= X.shape[1]:
            raise ValueError(f"The 'model' {formula.text!r} needs more complete records than "
                             f"its {X.shape[1]} coefficients; the "
                             f"{('original', 'release')[side]} has {len(y)}.")
        w = None if weights is None else weights[side][keep]
        units = None if psu is None else np.unique(psu[side][keep], return_inverse=True)[1]
        with one_blas_thread():
            fits.append(fit_linear(X, y, w, units))
    (bo, so), (br, sr) = fits
    out = []
    for j, name in enumerate(names):
        ci_o = (float(bo[j] - z * so[j]), float(bo[j] + z * so[j]))
        ci_r = (float(br[j] - z * sr[j]), float(br[j] + z * sr[j]))
        out.append(Coefficient(name, float(bo[j]), ci_o, float(br[j]), ci_r,
                               ci_overlap(ci_o, ci_r)))
    return out
