"""Data shuffling (Muralidhar & Sarathy 2006) of confidential numeric columns, with its
verifier: the marginals kept exactly.

On the rows complete on the confidential columns X and the ``given`` columns S:

1. normal scores of every column, ``z = Phi^-1((rank - 0.5) / n)`` (average ranks for ties);
2. their correlation matrix C, and a copy ``Y = Z_S B + E`` with ``B = C_SS^-1 C_SX`` and
   ``E ~ N(0, C_XX - C_XS B)`` (without S: ``Y ~ N(0, C_XX)``), the conditional normal
   copula model;
3. for each confidential column, the record with the r-th smallest ``Y`` receives the
   r-th smallest original value (reverse mapping).

Each column's values are permuted, so its marginal distribution is kept exactly, and the
rank correlations with S and among X are kept in expectation under the copula model.
Incomplete rows are left unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from ._common import check_columns, numeric_values
from .options import Shuffle

__all__ = ["apply_shuffle", "verify_shuffle"]


def _normal_scores(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Column-wise normal scores of a complete matrix."""
    n = values.shape[0]
    ranks = stats.rankdata(values, axis=0)
    return np.asarray(stats.norm.ppf((ranks - 0.5) / n), dtype=np.float64)


def _root(matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """A square root ``L`` with ``L @ L.T = matrix`` (symmetric, possibly singular)."""
    w, V = np.linalg.eigh((matrix + matrix.T) / 2)
    return V * np.sqrt(np.clip(w, 0.0, None))


def apply_shuffle(table: pd.DataFrame, options: Shuffle, rng: np.random.Generator, *,
                  households: str | None = None, weights: str | None = None,
                  strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Data shuffling of ``options.variables`` given ``options.given``: a new table (same
    rows, order and index) and details.

    ``households``, ``weights`` and ``strata`` are not used.

    Returns
    -------
    published : pandas.DataFrame
    details : dict
        ``rows_shuffled``, per column ``records_changed`` and ``share_changed``, and
        ``rank_correlation_before`` / ``rank_correlation_after`` over variables + given.

    References
    ----------
    Muralidhar, K. and Sarathy, R. "Data shuffling: a new masking approach for numerical
    data." Management Science 52(5), 658-670, 2006.
    """
    names = options.variables + options.given
    check_columns(table, names, step=options.name)
    data = np.column_stack([numeric_values(table, c, step=options.name, min_present=3)
                            for c in names])
    rows = np.flatnonzero(~np.isnan(data).any(axis=1))
    if rows.size < 3:
        raise ValueError(f"Step 'shuffle' needs at least 3 rows complete on {list(names)}; "
                         f"there are {rows.size}.")
    scores = _normal_scores(data[rows])
    C = np.atleast_2d(np.corrcoef(scores, rowvar=False))
    p = len(options.variables)
    noise = rng.standard_normal((rows.size, p))
    if options.given:
        B = np.linalg.lstsq(C[p:, p:], C[p:, :p], rcond=None)[0]
        copy = scores[:, p:] @ B + noise @ _root(C[:p, :p] - C[:p, p:] @ B).T
    else:
        copy = noise @ _root(C[:p, :p]).T
    published = table.copy()
    details: dict[str, Any] = {"rows_shuffled": int(rows.size), "given": list(options.given),
                               "columns": {}}
    shuffled = data.copy()
    for j, column in enumerate(options.variables):
        out = data[:, j].copy()
        out[rows[np.argsort(copy[:, j], kind="stable")]] = np.sort(data[rows, j])
        shuffled[:, j] = out
        published[column] = pd.Series(out, index=table.index, name=column)
        changed = int((out[rows] != data[rows, j]).sum())
        details["columns"][column] = {"records_changed": changed,
                                      "share_changed": changed / rows.size}
    details["rank_correlation_before"] = _spearman(data[rows])
    details["rank_correlation_after"] = _spearman(shuffled[rows])
    return published, details


def _spearman(values: NDArray[np.float64]) -> list[list[float]]:
    return np.atleast_2d(np.corrcoef(stats.rankdata(values, axis=0),
                                     rowvar=False)).tolist()


def verify_shuffle(options: Shuffle, original: pd.DataFrame, published: pd.DataFrame, *,
                   households: str | None = None, weights: str | None = None,
                   strata: str | None = None) -> dict[str, Any]:
    """Check data shuffling on the output: every shuffled column holds exactly its original
    values (the same multiset), the ``given`` columns and the incomplete rows are
    unchanged; the rank correlations before and after are reported."""
    names = options.variables + options.given
    before = np.column_stack([original[c].to_numpy(np.float64, na_value=np.nan)
                              for c in names])
    after = np.column_stack([published[c].to_numpy(np.float64, na_value=np.nan)
                             for c in names])
    complete = ~np.isnan(before).any(axis=1)
    p = len(options.variables)
    marginal = {c: bool(np.array_equal(np.sort(before[complete, j]),
                                       np.sort(after[complete, j])))
                for j, c in enumerate(options.variables)}
    unchanged = bool(np.array_equal(before[~complete], after[~complete], equal_nan=True)
                     and np.array_equal(before[:, p:], after[:, p:], equal_nan=True))
    gap = float(np.abs(np.asarray(_spearman(before[complete]))
                       - np.asarray(_spearman(after[complete]))).max())
    return {"model": "data shuffling: each shuffled column's values kept exactly (a "
            "permutation of the complete rows); given columns unchanged",
            "marginal_kept": marginal, "others_unchanged": unchanged,
            "max_rank_correlation_change": gap,
            "holds": bool(all(marginal.values()) and unchanged)}
