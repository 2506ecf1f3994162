"""Log-linear models of the key table: how many sample uniques are population uniques
(Skinner & Holmes 1998; Skinner & Shlomo 2008; sdcMicro's ``modRisk``).

The sample frequency ``f_k`` of each cell ``k`` of the key table (every combination of the
keys' observed values, empty cells included) is taken for a Poisson count with mean
``mu_k = pi_k lambda_k``: ``lambda_k`` the cell's expected population frequency, ``pi_k`` its
sampling fraction. A log-linear model of ``mu_k`` (main effects, or the interactions of a
formula) is fitted by maximum likelihood (IRLS, as R's ``glm``). Under that model
``F_k - f_k`` is Poisson with mean ``(1 - pi_k) lambda_k``, independent of ``f_k``, so for a
sample unique

- ``P(F_k = 1 | f_k = 1) = exp(-(1 - pi_k) lambda_k)``, and
- ``E(1 / F_k | f_k = 1) = (1 - exp(-v)) / v`` with ``v = (1 - pi_k) lambda_k``;

``tau1`` and ``tau2`` are their sums over the sample uniques: the expected number of sample
uniques that are population uniques, and the expected number of correct matches of sample
uniques against the population. ``pi_k`` is the inverse of the cell's mean weight (a sample
unique's own ``1 / w``), or ``n / N`` without weights.

sdcMicro's ``modRisk`` plugs the fitted *sample* mean ``mu_k`` into the formulas in place of
``lambda_k`` and divides the sums by the number of non-empty cells; its two printed figures
are given too (``sdcmicro_risk1``, ``sdcmicro_risk2``) so that a user can compare, but they are
not the paper's measures (with weights of 100 they are near 1 where ``tau1`` is near 0).

numpy only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["METHODS", "KeyTable", "LoglinearMethod", "LoglinearOptions", "LoglinearRisk",
           "fit_poisson",
           "key_table", "loglinear_risk", "parse_formula"]

#: The largest key table (cells x model columns) the dense IRLS fit takes.
MAX_DESIGN_ENTRIES = 50_000_000


@dataclass(frozen=True, eq=False)
class KeyTable:
    """Every combination of the keys' observed values and what the sample holds in it.

    Attributes
    ----------
    keys : tuple of str
    codes : ndarray of int64, shape (n_cells, n_keys)
        Each cell's level of each key (0 .. levels - 1), the last key fastest.
    counts : ndarray of float64, shape (n_cells,)
        ``f_k``, the sample frequency (0 for an empty cell).
    weights : ndarray of float64, shape (n_cells,)
        The sum of the sampling weights in the cell (``f_k N / n`` without weights).
    n_records, population_size : float
        Records in the table (those with a missing key value left out) and ``N``.
    weighted : bool
    """

    keys: tuple[str, ...]
    codes: NDArray[np.int64]
    counts: NDArray[np.float64]
    weights: NDArray[np.float64]
    n_records: int
    population_size: float
    weighted: bool


@dataclass(frozen=True)
class LoglinearMethod:
    """One way of fitting the key table, as sdcMicro's ``modRisk(method=...)`` names it.

    Attributes
    ----------
    name, reference, assumption : str
    needs_weights : bool
        The fit uses the sampling weights; without them it is refused.
    response : callable(KeyTable) -> ndarray
        The count the Poisson model is fitted to.
    offset : callable(KeyTable) -> ndarray or None
    covariate : callable(KeyTable) -> ndarray or None
        One more numeric column of the model (the cell's weight sum for ``weightedLLM``).
    population_rate : callable(ndarray, KeyTable) -> ndarray
        ``lambda_k`` from the fitted mean of the response.
    """

    name: str
    reference: str
    assumption: str
    needs_weights: bool
    response: Callable[[KeyTable], NDArray[np.float64]]
    offset: Callable[[KeyTable], NDArray[np.float64] | None]
    covariate: Callable[[KeyTable], NDArray[np.float64] | None]
    population_rate: Callable[[NDArray[np.float64], KeyTable], NDArray[np.float64]]


def _counts(table: KeyTable) -> NDArray[np.float64]:
    return table.counts


def _no_column(table: KeyTable) -> None:
    return None


def _mean_weight(table: KeyTable) -> NDArray[np.float64]:
    """``1 / pi_k``: the cell's mean weight (``N / n`` for an empty cell)."""
    fallback = table.population_size / table.n_records
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = table.weights / table.counts
    return np.where(table.counts > 0, mean, fallback)


def _per_cell_fraction(mu: NDArray[np.float64], table: KeyTable) -> NDArray[np.float64]:
    return mu * _mean_weight(table)


def _ce_offset(table: KeyTable) -> NDArray[np.float64]:
    """Clogg & Eliason's offset, ``log(f_k / W_k + 0.1)`` as sdcMicro writes it (an empty
    cell's ``f / W`` taken for 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(table.weights > 0, table.counts / table.weights, 0.0)
    return np.log(fraction + 0.1)


def _pml_response(table: KeyTable) -> NDArray[np.float64]:
    """The weighted counts scaled to the sample size and rounded (half to even, as R)."""
    return np.round(table.weights * (table.counts.sum() / table.weights.sum()))


def _pml_rate(mu: NDArray[np.float64], table: KeyTable) -> NDArray[np.float64]:
    return mu * (table.weights.sum() / table.counts.sum())


def _weight_sum(table: KeyTable) -> NDArray[np.float64]:
    return table.weights


METHODS: dict[str, LoglinearMethod] = {m.name: m for m in (
    LoglinearMethod(
        "default", "Skinner, C.J. and Holmes, D.J. (1998), JOS 14:361-372",
        "the sample counts are independent Poisson counts whose logarithm is linear in the "
        "model's terms", False, _counts, _no_column, _no_column, _per_cell_fraction),
    LoglinearMethod(
        "CE", "Clogg, C.C. and Eliason, S.R. (1987), Sociological Methods & Research 16:8-44",
        "as the default, with each cell's sampling fraction log(f / W + 0.1) as an offset",
        True, _counts, _ce_offset, _no_column, _per_cell_fraction),
    LoglinearMethod(
        "PML", "Skinner, C.J. and Shlomo, N. (2008), JASA 103:989-1001, section 4",
        "the weighted population counts, scaled to the sample size and rounded, follow the "
        "log-linear model (pseudo maximum likelihood)", True, _pml_response, _no_column,
        _no_column, _pml_rate),
    LoglinearMethod(
        "weightedLLM", "Templ, M., Kowarik, A. and Meindl, B. sdcMicro 5.8.1, modRisk",
        "as the default, with the cell's sum of weights as one more (linear) predictor",
        True, _counts, _no_column, _weight_sum, _per_cell_fraction),
)}


@dataclass(frozen=True)
class LoglinearOptions:
    """Which log-linear model to fit: ``method`` (a name in :data:`METHODS`) and ``formula``
    (:func:`parse_formula`; ``None``: the main effects)."""

    method: str = "default"
    formula: str | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"The 'method' parameter of loglinear_risk must be one of "
                             f"{sorted(METHODS)}; got {self.method!r}.")


def parse_formula(formula: str | None, keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The terms of an R-style model formula over the keys (``"a*b + c"``, ``"~a:b + a + b"``),
    made hierarchical (a term brings in every term below it) and ordered by size.

    Parameters
    ----------
    formula : str or None
        ``+`` separates terms, ``a*b`` is ``a + b + a:b``, ``a:b`` the interaction alone;
        ``None``: the main effects of every key.
    keys : tuple of str
        The formula must name every key and nothing else.

    Returns
    -------
    tuple of tuple of str
        Each term as the keys it crosses, in the order of ``keys``.

    Examples
    --------
    >>> parse_formula("~a*b + c", ("a", "b", "c"))
    (('a',), ('b',), ('c',), ('a', 'b'))
    """
    if formula is None:
        return tuple((k,) for k in keys)
    text = formula.strip().removeprefix("~")
    terms: set[tuple[str, ...]] = set()
    for part in text.split("+"):
        crossed = [name.strip() for name in part.replace(":", "*").split("*")]
        if not part.strip() or any(not name for name in crossed):
            raise ValueError(f"The 'formula' parameter of loglinear_risk must be terms joined "
                             f"by '+' of keys joined by '*' or ':'; got {formula!r}.")
        unknown = [name for name in crossed if name not in keys]
        if unknown:
            raise ValueError(f"The 'formula' parameter of loglinear_risk names {unknown[0]!r}, "
                             f"which is not a key; the keys are {list(keys)}.")
        names = tuple(sorted(set(crossed), key=keys.index))
        for size in range(1, len(names) + 1):  # every sub-term: the model is hierarchical
            terms.update(itertools.combinations(names, size))
    absent = [k for k in keys if (k,) not in terms]
    if absent:
        raise ValueError(f"The 'formula' parameter of loglinear_risk must name every key; "
                         f"{absent} are not in {formula!r} (add them: + {' + '.join(absent)}).")
    return tuple(sorted(terms, key=lambda t: (len(t), [keys.index(k) for k in t])))


def key_table(df: Any, keys: Any, *, weights: str | None = None,
              population_size: float | None = None) -> KeyTable:
    """The full key table of a file: every combination of the keys' observed values.

    Records with a missing key value are left out (as R's ``glm`` leaves them out of
    sdcMicro's fit). ``population_size`` defaults to the sum of the weights.

    Examples
    --------
    >>> import pandas as pd
    >>> t = key_table(pd.DataFrame({"a": [1, 1, 2], "w": [2.0, 3.0, 5.0]}), ["a"], weights="w")
    >>> t.counts.tolist(), t.weights.tolist(), t.population_size
    ([2.0, 1.0], [5.0, 5.0], 10.0)
    """
    import pandas as pd

    keys = tuple(keys)
    frame = df[list(keys)]
    kept = frame.notna().all(axis=1).to_numpy()
    w = (np.ones(len(df)) if weights is None
         else np.asarray(df[weights], dtype=np.float64))[kept]
    level_codes, sizes = [], []
    for key in keys:
        codes, levels = pd.factorize(frame[key][kept], sort=True)
        level_codes.append(codes.astype(np.int64))
        sizes.append(max(len(levels), 1))
    n = int(kept.sum())
    if n == 0:
        raise ValueError(f"loglinear_risk: every record has a missing value in {list(keys)}.")
    cell = np.ravel_multi_index(tuple(level_codes), tuple(sizes))
    n_cells = int(np.prod(sizes))
    counts = np.bincount(cell, minlength=n_cells).astype(np.float64)
    wsum = np.bincount(cell, weights=w, minlength=n_cells).astype(np.float64)
    if population_size is None:
        population_size = float(w.sum())
    if weights is None:
        wsum = counts * (float(population_size) / n)
    grid = np.indices(sizes).reshape(len(sizes), -1).T.astype(np.int64)
    return KeyTable(keys=keys, codes=grid, counts=counts, weights=wsum, n_records=n,
                    population_size=float(population_size), weighted=weights is not None)


def _design(table: KeyTable, terms: tuple[tuple[str, ...], ...],
            covariate: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Treatment-coded model matrix: an intercept, then each term's dummy products (the
    first level of each key the reference), then the covariate."""
    columns: list[NDArray[np.float64]] = [np.ones(table.codes.shape[0])]
    sizes = table.codes.max(axis=0) + 1
    dummies = [np.eye(int(s))[table.codes[:, j]][:, 1:] for j, s in enumerate(sizes)]
    for term in terms:
        block = np.ones((table.codes.shape[0], 1))
        for key in term:
            d = dummies[table.keys.index(key)]
            block = (block[:, :, None] * d[:, None, :]).reshape(block.shape[0], -1)
        columns.extend(block.T)
    if covariate is not None:
        columns.append(np.asarray(covariate, dtype=np.float64))
    return np.column_stack(columns)


def fit_poisson(X: NDArray[np.float64], y: NDArray[np.float64], *,
                offset: NDArray[np.float64] | None = None, max_iter: int = 25,
                tol: float = 1e-8) -> tuple[NDArray[np.float64], int, bool]:
    """Maximum-likelihood Poisson regression with a log link by iteratively reweighted least
    squares, started and stopped as R's ``glm`` (``mu = y + 0.1``; relative deviance change
    below ``tol``, at most ``max_iter`` iterations). Validation is assumed.

    Returns
    -------
    mu : ndarray of shape (n_cells,)
        The fitted means (the offset included).
    iterations : int
    converged : bool

    Examples
    --------
    >>> X = np.column_stack([np.ones(4), [0, 1, 0, 1], [0, 0, 1, 1]]).astype(float)
    >>> mu, _, ok = fit_poisson(X, np.array([1.0, 2.0, 3.0, 4.0]))
    >>> np.round(mu, 6).tolist(), ok  # row sum x column sum / total
    ([1.2, 1.8, 2.8, 4.2], True)
    """
    off = np.zeros_like(y) if offset is None else offset
    mu = y + 0.1
    eta = np.log(mu)
    deviance = _deviance(y, mu)
    for iteration in range(1, max_iter + 1):
        z = eta - off + (y - mu) / mu
        gram = X.T @ (X * mu[:, None])  # weighted least squares by its normal equations
        try:
            beta = np.linalg.solve(gram, X.T @ (mu * z))
        except np.linalg.LinAlgError:  # a singular model matrix: the least-squares solution
            sw = np.sqrt(mu)
            beta = np.linalg.lstsq(X * sw[:, None], z * sw, rcond=None)[0]
        eta = X @ beta + off
        mu = np.exp(np.minimum(eta, 700.0))
        new = _deviance(y, mu)
        if abs(new - deviance) / (abs(new) + 0.1) < tol:
            return mu, iteration, True
        deviance = new
    return mu, max_iter, False


def _deviance(y: NDArray[np.float64], mu: NDArray[np.float64]) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(y > 0, y * np.log(y / mu), 0.0)
    return float(2.0 * np.sum(term - (y - mu)))


@dataclass(frozen=True, eq=False)
class LoglinearRisk:
    """Result of :func:`loglinear_risk`.

    Attributes
    ----------
    method : str
    terms : tuple of tuple of str
    table : KeyTable
    fitted : ndarray of shape (n_cells,)
        The fitted mean of the model's response in each cell.
    rate : ndarray of shape (n_cells,)
        ``lambda_k``, the expected population frequency.
    iterations : int
    converged : bool
    """

    method: str
    terms: tuple[tuple[str, ...], ...]
    table: KeyTable
    fitted: NDArray[np.float64]
    rate: NDArray[np.float64]
    iterations: int
    converged: bool

    def _sample_uniques(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(1 - pi_k) lambda_k`` of the sample uniques, and sdcMicro's ``(1 - pi_k) mu_k``."""
        unique = self.table.counts == 1
        pi = 1.0 / _mean_weight(self.table)[unique]
        return (1.0 - pi) * self.rate[unique], (1.0 - pi) * self.fitted[unique]

    def summary(self) -> dict[str, Any]:
        """Plain numbers for JSON: ``tau1`` (expected sample uniques that are population
        uniques), ``tau2`` (expected correct matches of sample uniques), their shares of the
        sample uniques, the table's size and sdcMicro's two printed figures."""
        v, v_sample = self._sample_uniques()
        tau1, tau2 = _risk_sums(v)
        s1, s2 = _risk_sums(v_sample)
        nonempty = int((self.table.counts > 0).sum())
        uniques = int(v.size)
        return {
            "method": self.method, "formula": " + ".join(":".join(t) for t in self.terms),
            "keys": list(self.table.keys), "n_records": self.table.n_records,
            "population_size": self.table.population_size, "weighted": self.table.weighted,
            "n_cells": int(self.table.counts.size), "n_nonempty_cells": nonempty,
            "sample_uniques": uniques, "tau1": tau1, "tau2": tau2,
            "tau1_share": tau1 / uniques if uniques else 0.0,
            "tau2_share": tau2 / uniques if uniques else 0.0,
            "sdcmicro_risk1": s1 / nonempty, "sdcmicro_risk2": s2 / nonempty,
            "converged": self.converged, "iterations": self.iterations,
        }


def _risk_sums(v: NDArray[np.float64]) -> tuple[float, float]:
    """``sum exp(-v)`` and ``sum (1 - exp(-v)) / v`` (1 where ``v = 0``)."""
    small = v < 1e-12
    safe = np.where(small, 1.0, v)
    second = np.where(small, 1.0, -np.expm1(-safe) / safe)
    return float(np.exp(-v).sum()), float(second.sum())


def _check(df: Any, keys: tuple[str, ...], weights: str | None,
           population_size: float | None, method: str) -> LoglinearMethod:
    """The method's entry, once the file, the weights and ``N`` are known to suit it."""
    entry = METHODS[LoglinearOptions(method=method).method]
    if not keys:
        raise ValueError("The 'keys' parameter of loglinear_risk must name at least one key.")
    for name in (*keys, *(() if weights is None else (weights,))):
        if name not in df.columns:
            raise KeyError(f"loglinear_risk: no column {name!r}; the columns are "
                           f"{list(df.columns)}.")
    if weights is None and (entry.needs_weights or population_size is None):
        need = "its fit uses them" if entry.needs_weights else "or give population_size"
        raise ValueError(f"loglinear_risk(method={method!r}) needs sampling weights "
                         f"('weights', a column of values >= 1): {need}.")
    if weights is not None:
        w = np.asarray(df[weights], dtype=np.float64)
        bad = ~np.isfinite(w) | (w < 1.0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"The weights in column {weights!r} must be finite and >= 1 (a "
                             f"record stands for at least itself); row {row} holds {float(w[row])!r}.")
    if population_size is not None and (
            isinstance(population_size, bool) or not np.isfinite(population_size)
            or population_size < len(df)):
        raise ValueError(f"The 'population_size' parameter of loglinear_risk must be a number "
                         f">= the number of records ({len(df):,}); got {population_size!r}.")
    return entry


def loglinear_risk(df: Any, keys: Any, *, weights: str | None = None,
                   population_size: float | None = None, method: str = "default",
                   formula: str | None = None) -> LoglinearRisk:
    """Fit a Poisson log-linear model to the key table and estimate the risk of its sample
    uniques, as sdcMicro's ``modRisk``.

    Parameters
    ----------
    df : pandas.DataFrame
    keys : sequence of str
        The key variables (categorical; each observed value is a level).
    weights : str, default=None
        Sampling weights (>= 1): each cell's sampling fraction is the inverse of its mean
        weight, and ``N`` their sum. Needed by ``"CE"``, ``"PML"`` and ``"weightedLLM"``.
    population_size : float, default=None
        ``N >= len(df)``; without weights every cell's sampling fraction is ``n / N``.
    method : {"default", "CE", "PML", "weightedLLM"}, default="default"
        The fit (:data:`METHODS`): the standard Poisson model of the sample counts, Clogg &
        Eliason's sampling-fraction offset, the pseudo-likelihood fit of the weighted counts,
        or the weight sum as one more predictor. sdcMicro's ``"IPF"`` fits the same
        maximum-likelihood model as ``"default"`` (main effects only) and is not repeated.
    formula : str, default=None
        The model's terms over the keys, R-style (``"a*b + c"``: the a x b interaction and
        the main effect of c); ``None``: the main effects (independence of the keys). Every
        key must appear.

    Returns
    -------
    LoglinearRisk
        ``summary()`` gives ``tau1`` (the expected number of sample uniques that are
        population uniques) and ``tau2`` (the expected number of correct matches of sample
        uniques), among others.

    Raises
    ------
    ValueError
        An unknown method, missing or sub-1 weights, a formula naming an unknown key or
        leaving one out, a key table of one cell or too many cells.

    References
    ----------
    Skinner, C.J. and Holmes, D.J. "Estimating the re-identification risk per record in
    microdata." Journal of Official Statistics 14 (1998) 361-372. Skinner, C.J. and Shlomo,
    N. "Assessing identification risk in survey microdata using log-linear models." JASA 103
    (2008) 989-1001 (equations 2-4). Templ, M., Kowarik, A. and Meindl, B. sdcMicro 5.8.1,
    ``modRisk`` (R/modRisk.R).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [0, 0, 0, 1, 1, 1], "b": [0, 1, 1, 0, 1, 2]})
    >>> s = loglinear_risk(df, ["a", "b"], population_size=60.0).summary()
    >>> s["sample_uniques"], round(s["tau1"], 4)
    (4, 0.0114)
    """
    keys = tuple(keys)
    entry = _check(df, keys, weights, population_size, method)
    terms = parse_formula(formula, keys)
    table = key_table(df, keys, weights=weights, population_size=population_size)
    n_cells = table.counts.size
    if n_cells < 2:
        raise ValueError(f"loglinear_risk: the key table of {list(keys)} has {n_cells} cell; "
                         "a model needs at least 2 (a key with two or more observed values).")
    covariate = entry.covariate(table)
    X_columns = 1 + sum(int(np.prod([table.codes[:, keys.index(k)].max() for k in t]))
                        for t in terms) + (covariate is not None)
    if n_cells * X_columns > MAX_DESIGN_ENTRIES:
        raise ValueError(f"loglinear_risk: the key table of {list(keys)} has {n_cells:,} cells "
                         f"and the model {X_columns:,} columns; their product must be at most "
                         f"{MAX_DESIGN_ENTRIES:,}: recode the keys or drop interactions.")
    X = _design(table, terms, covariate)
    mu, iterations, converged = fit_poisson(X, entry.response(table),
                                            offset=entry.offset(table))
    return LoglinearRisk(method=method, terms=terms, table=table, fitted=mu,
                         rate=entry.population_rate(mu, table), iterations=iterations,
                         converged=converged)
