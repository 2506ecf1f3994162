"""PRAM (post-randomization) of categorical columns: sdcMicro's ``pd``/``alpha`` matrix, a
user matrix, invariant PRAM, per stratum.

The construction of the matrix follows sdcMicro's ``pram`` (R/pram.R, ``pramWORK``,
``calcTransitionMatrix``; Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)) for one column
with L categories:

1. the base matrix P: diagonal ``d_i`` drawn uniformly in ``[pd, 1]`` (or ``d_i = pd`` with
   ``random_diagonal=False``), every other entry of row i equal to ``(1 - d_i) / (L - 1)``;
   a user matrix replaces P;
2. with ``invariant`` (Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, J. Off. Stat. 14(4)):
   from the observed frequencies ``p``, the Bayes inverse ``Q[k, j] = P[j, k] p_j /
   sum_i p_i P[i, k]`` and ``R = P Q``, which satisfies ``p R = p``: the expected frequencies
   after PRAM equal the observed ones;
3. ``M = alpha R + (1 - alpha) I`` (still invariant), the matrix that is applied; without
   ``invariant``, ``M = P``.

Each non-missing value of category i becomes category j with probability ``M[i, j]``,
independently. Missing values stay missing and do not count in ``p`` (as in sdcMicro). Per
stratum: P is drawn once per column; R is computed from each stratum's own frequencies, so
the invariance holds within every stratum (sdcMicro computes one R from the whole column and
applies it in every stratum, which keeps only the overall frequencies in expectation).

The diagonal of R is generally *below* ``pd`` (sdcMicro's issue 347): ``pd`` bounds P, not
the applied matrix; the applied matrices are in the details, with their smallest diagonal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._common import check_columns, strata_codes
from .options import Pram

__all__ = ["apply_pram", "base_matrix", "categories_of", "column_details", "draw",
           "matrices_for", "pram_matrix", "restore"]


def categories_of(series: pd.Series, extra: Sequence[str] = ()) -> tuple[list[Any],
                                                                        NDArray[np.intp]]:
    """The column's categories (a categorical's own, else the sorted distinct values, then
    any ``extra`` labels not yet among them) and each row's code (-1 = missing)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = list(series.cat.categories)
        codes = series.cat.codes.to_numpy().astype(np.intp)
    else:
        missing = series.isna().to_numpy()
        present = series[~missing]
        try:
            uniques = sorted(present.unique())
        except TypeError:  # mixed types: order by text
            uniques = sorted(present.unique(), key=str)
        categories = list(uniques)
        lookup = {value: i for i, value in enumerate(categories)}
        codes = np.full(len(series), -1, dtype=np.intp)
        codes[~missing] = [lookup[v] for v in present]
    known = {str(c) for c in categories}
    categories += [label for label in extra if label not in known]
    if len({str(c) for c in categories}) != len(categories):
        raise ValueError(f"Column {series.name!r} has two categories with the same text; "
                         f"PRAM's matrix names categories by their text.")
    return categories, codes


def base_matrix(options: Pram, column: str, categories: Sequence[Any],
                rng: np.random.Generator | None) -> NDArray[np.float64]:
    """The base matrix P of one column: the user's matrix, or sdcMicro's construction from
    ``pd`` (random diagonal in ``[pd, 1]`` when ``options.random_diagonal``; ``rng=None``
    is allowed only where nothing is random)."""
    labels = [str(c) for c in categories]
    size = len(labels)
    user = options.matrix.get(column)
    if user is not None:
        absent = [label for label in labels if label not in user]
        if absent:
            raise ValueError(f"The 'matrix' option of step 'pram' for column {column!r} has "
                             f"no row for categor{'y' if len(absent) == 1 else 'ies'} "
                             f"{absent}; it must have a row for each of {labels}.")
        return np.array([[user[a].get(b, 0.0) for b in labels] for a in labels],
                        dtype=np.float64)
    if size == 1:
        return np.ones((1, 1))
    if options.random_diagonal:
        if rng is None:
            raise ValueError("A random diagonal needs a random generator.")
        diagonal = rng.uniform(options.pd, 1.0, size)
    else:
        diagonal = np.full(size, options.pd)
    matrix = np.repeat(((1.0 - diagonal) / (size - 1))[:, None], size, axis=1)
    np.fill_diagonal(matrix, diagonal)
    return matrix


def pram_matrix(base: NDArray[np.float64], counts: NDArray[np.float64], *, alpha: float,
                invariant: bool) -> NDArray[np.float64]:
    """The applied matrix: ``alpha * P Q + (1 - alpha) * I`` with Q the Bayes inverse of P
    under the frequencies ``counts`` (invariant PRAM), or P itself.

    A column k that no observed category can reach (``sum_i p_i P[i, k] = 0``) keeps
    ``Q[k] = e_k``; it has no effect on records that exist.
    """
    if not invariant:
        return base.copy()
    reach = counts @ base  # s_k = sum_j p_j P[j, k]
    inverse = np.eye(len(counts))
    hit = reach > 0
    inverse[hit] = (base.T[hit] * counts[None, :]) / reach[hit, None]
    matrix = alpha * (base @ inverse) + (1.0 - alpha) * np.eye(len(counts))
    return matrix / matrix.sum(axis=1, keepdims=True)  # floating-point slack only


def draw(codes: NDArray[np.intp], strata: NDArray[np.intp],
          matrices: Sequence[NDArray[np.float64]], u: NDArray[np.float64]) -> NDArray[np.intp]:
    """Each present code moved by its stratum's matrix, with one uniform per row."""
    new = codes.copy()
    for s, matrix in enumerate(matrices):
        rows = np.flatnonzero((strata == s) & (codes >= 0))
        if rows.size == 0:
            continue
        cumulative = np.cumsum(matrix, axis=1)
        cumulative[:, -1] = 1.0
        new[rows] = (cumulative[codes[rows]] <= u[rows, None]).sum(axis=1)
    return new


def apply_pram(table: pd.DataFrame, options: Pram, rng: np.random.Generator, *,
               households: str | None = None, weights: str | None = None,
               strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """PRAM on ``options.variables``: a new table (same rows, order and index) and details.

    Parameters
    ----------
    table : pandas.DataFrame
        Categorical columns as object or category dtype (missing = NaN/None).
    options : Pram
        The step's options.
    rng : numpy.random.Generator
        Draws the random diagonals (one per column) and one uniform per row and column.
    households, weights : str, optional
        Not used: PRAM moves each person's value on its own, unweighted.
    strata : str, optional
        A column; the invariant matrix is computed within each of its values.

    Returns
    -------
    published : pandas.DataFrame
    details : dict
        Per column: ``categories`` (as text), ``base_matrix`` (P), ``matrices`` (the applied
        matrix per stratum, rows = from, columns = to), ``min_diagonal``, ``records_changed``,
        ``share_changed``, ``missing``, ``frequencies_before`` / ``frequencies_after``.

    References
    ----------
    Gouweleeuw, J., Kooiman, P., Willenborg, L. and de Wolf, P.-P. "Post randomisation for
    statistical disclosure control: theory and implementation." J. Off. Stat. 14(4), 1998.
    """
    check_columns(table, options.variables, step=options.name)
    stratum, labels = strata_codes(table, strata)
    prepared: list[tuple[str, list[Any], NDArray[np.intp], NDArray[np.float64] | None]] = []
    for column in options.variables:  # every check before any draw
        series = table[column]
        if pd.api.types.is_numeric_dtype(series) and not isinstance(series.dtype,
                                                                  pd.CategoricalDtype):
            raise TypeError(f"Step 'pram' needs a categorical column (object or category "
                            f"dtype); column {column!r} has dtype {series.dtype}. Recode it "
                            f"to categories first.")
        extra = list(options.matrix.get(column, {}))
        categories, codes = categories_of(series, extra)
        if options.random_diagonal and column not in options.matrix:
            prepared.append((column, categories, codes, None))
        else:
            prepared.append((column, categories, codes,
                             base_matrix(options, column, categories, None)))
    published = table.copy()
    details: dict[str, Any] = {"strata": strata, "columns": {}}
    for column, categories, codes, base in prepared:
        if base is None:
            base = base_matrix(options, column, categories, rng)
        size = len(categories)
        matrices = []
        for s in range(len(labels)):
            present = codes[(stratum == s) & (codes >= 0)]
            counts = np.bincount(present, minlength=size).astype(np.float64)
            matrices.append(pram_matrix(base, counts, alpha=options.alpha,
                                        invariant=options.invariant))
        new = draw(codes, stratum, matrices, rng.random(len(table)))
        published[column] = restore(table[column], categories, new)
        details["columns"][column] = _column_details(categories, base, matrices, labels,
                                                     codes, new)
    return published, details


def restore(series: pd.Series, categories: list[Any], codes: NDArray[np.intp]) -> pd.Series:
    """The new codes in the column's own dtype (missing rows keep their missing value)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = pd.Categorical.from_codes(codes, categories=pd.Index(categories),
                                           ordered=series.cat.ordered)
        return pd.Series(values, index=series.index, name=series.name)
    out = series.to_numpy(dtype=object, copy=True)
    present = codes >= 0
    out[present] = np.asarray(categories, dtype=object)[codes[present]]
    return pd.Series(out, index=series.index, name=series.name, dtype=series.dtype)


def _column_details(categories: list[Any], base: NDArray[np.float64],
                    matrices: list[NDArray[np.float64]], labels: list[str],
                    codes: NDArray[np.intp], new: NDArray[np.intp]) -> dict[str, Any]:
    """What a steward and an analyst need of one column: the matrices and the changes."""
    present = codes >= 0
    size = len(categories)
    return column_details(categories, base, matrices, labels,
                          changed=int((codes[present] != new[present]).sum()),
                          before=np.bincount(codes[present], minlength=size),
                          after=np.bincount(new[present], minlength=size),
                          missing=int((~present).sum()))


def column_details(categories: Sequence[Any], base: NDArray[np.float64],
                   matrices: Sequence[NDArray[np.float64]], labels: Sequence[str], *,
                   changed: int, before: NDArray[np.int64], after: NDArray[np.int64],
                   missing: int) -> dict[str, Any]:
    """One column's details from its counts (records changed, frequencies before and after
    over the present values, missing cells): what an engine that reads chunks adds up."""
    text = [str(c) for c in categories]
    present = int(before.sum())
    return {
        "categories": text,
        "base_matrix": base.tolist(),
        "matrices": {label: m.tolist() for label, m in zip(labels, matrices, strict=True)},
        "min_diagonal": float(min(np.diag(m).min() for m in matrices)),
        "records_changed": changed,
        "share_changed": changed / max(present, 1),
        "missing": missing,
        "frequencies_before": dict(zip(text, map(int, before), strict=True)),
        "frequencies_after": dict(zip(text, map(int, after), strict=True)),
    }


def matrices_for(options: Pram, column: str, original: pd.DataFrame,
                 stratum: NDArray[np.intp], n_strata: int,
                 recorded: Mapping[str, Any] | None) -> tuple[list[str],
                                                              list[NDArray[np.float64]]] | None:
    """The applied matrices of one column for a verifier: the recorded ones, else re-derived
    from the original where nothing in them is random; ``None`` when neither is possible."""
    if recorded is not None:
        entry = recorded["columns"][column]
        return entry["categories"], [np.asarray(m) for m in entry["matrices"].values()]
    if options.random_diagonal and column not in options.matrix:
        return None
    categories, codes = categories_of(original[column], list(options.matrix.get(column, {})))
    base = base_matrix(options, column, categories, None)
    matrices = []
    for s in range(n_strata):
        counts = np.bincount(codes[(stratum == s) & (codes >= 0)],
                             minlength=len(categories)).astype(np.float64)
        matrices.append(pram_matrix(base, counts, alpha=options.alpha,
                                    invariant=options.invariant))
    return [str(c) for c in categories], matrices
