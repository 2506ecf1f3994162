"""Spherical MDAV on sparse unit vectors (cosine similarity) and the spherical centroids.

The n x vocabulary matrix stays a :class:`scipy.sparse.csr_matrix` throughout: each step is
one sparse matrix-vector product (``X @ c``, O(nnz)) over the rows still to be grouped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._base.validation import RandomState, check_k, check_matrix, check_random_state

__all__ = ["check_sparse_rows", "spherical_centroids", "spherical_mdav", "spherical_partition"]

_CALLER = "spherical_mdav"


def check_sparse_rows(X: Any, *, caller: str, name: str = "X") -> sp.csr_matrix:
    """``X`` as a float64 CSR matrix with sorted indices and finite values (never densified).

    A dense array is accepted and converted (its zeros dropped); rows are not rescaled: pass
    L2-normalized rows (TF-IDF vectors) for cosine similarity to be the dot product.
    """
    if not sp.issparse(X):
        array = np.asarray(X)
        if array.ndim != 2 or array.dtype.kind not in "biuf":
            raise TypeError(f"The {name!r} parameter of {caller} must be a 2-D numeric matrix "
                            f"(scipy.sparse or array). Got {type(X).__name__} with shape "
                            f"{array.shape} instead.")
        X = sp.csr_matrix(array)
    if X.ndim != 2:
        raise TypeError(f"The {name!r} parameter of {caller} must be 2-D. Got {X.ndim}-D.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if not np.isfinite(X.data).all():
        raise ValueError(f"The {name!r} parameter of {caller} holds non-finite values "
                         f"({int((~np.isfinite(X.data)).sum())} of {X.nnz} stored entries).")
    X.sum_duplicates()
    X.sort_indices()
    return X


def spherical_mdav(X: Any, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition sparse unit vectors with spherical MDAV (cosine similarity).

    MDAV with the direction of the mean in place of the mean: take the remaining record least
    similar to the mean direction, group it with its ``k - 1`` most similar remaining
    records; then the record least similar to it, and its ``k - 1`` most similar; repeat while
    ``3k`` records remain; then one group of ``k`` around the record least similar to the
    mean direction, and the rest (``k`` to ``2k - 1`` records) as the last group. Ties go to
    the lowest row index. Cost: three sparse mat-vecs per two groups, O(n / k * nnz) in all;
    memory O(nnz + n + n_features).

    Parameters
    ----------
    X : scipy.sparse matrix or array-like of shape (n_samples, n_features)
        Document vectors with L2-normalized rows (e.g. TF-IDF); kept sparse (CSR).
    k : int
        Minimum group size, ``2 <= k <= n_samples``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused (the method is deterministic); accepted for the common signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Group of each record, numbered in the order formed; every group has ``k`` records
        except the last (``k`` to ``2k - 1``).

    References
    ----------
    Abril, D., Navarro-Arribas, G. and Torra, V. "Spherical microaggregation: anonymizing
    sparse vector spaces." Computers & Security 49 (2015) 28-44; Domingo-Ferrer, J. and
    Torra, V. Data Mining and Knowledge Discovery 11 (2005) (MDAV).

    Examples
    --------
    >>> X = np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0],
    ...               [0, 0, 1.0], [0, 0.1, 0.9], [0, 0.2, 0.8]])
    >>> spherical_mdav(X / np.linalg.norm(X, axis=1, keepdims=True), 3).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    X = check_sparse_rows(X, caller=_CALLER)
    k = check_k(k, n_samples=X.shape[0], caller=_CALLER)
    check_random_state(random_state)
    return _spherical_mdav_labels(X, k)


def spherical_partition(X: Any, k: int, *, random_state: RandomState = None
                        ) -> NDArray[np.intp]:
    """:func:`spherical_mdav` on the rows of ``X`` made unit vectors (the registry's entry
    ``spherical-mdav``: groups records by the direction of their vector, cosine similarity).

    Rows of zeros stay zero (similarity 0 to every direction). Through
    :func:`microagg.anonymize` the columns are z-scored first, so the cosine is taken between
    scaled records; documents go through :func:`microagg.documents.anonymize_documents` (TF-IDF
    rows, never densified).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Records as vectors; only their direction counts (rows are made unit vectors).
    k : int
        Minimum group size, ``2 <= k <= n_samples``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused (the method is deterministic); accepted for the common signature.

    Examples
    --------
    >>> X = np.array([[2.0, 0], [4.0, 0.4], [1.0, 0.1], [0, 3.0], [0.2, 5.0], [0, 1.0]])
    >>> spherical_partition(X, 3).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    if not sp.issparse(X):  # the registry's dense X: its checks and messages first
        X = check_matrix(X, caller="spherical-mdav")
    rows = check_sparse_rows(X, caller="spherical-mdav")
    norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return spherical_mdav(sp.diags(scale) @ rows, k, random_state=random_state)


def _k_most_similar(sims: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Rows of the ``k`` largest ``sims`` (removed rows hold -inf), ties to the lowest index."""
    part = np.argpartition(-sims, k - 1)[:k]
    threshold = sims[part].min()
    above = np.flatnonzero(sims > threshold)
    at = np.flatnonzero(sims == threshold)[: k - above.size]
    return np.concatenate([above, at])


class _Remaining:
    """The rows not grouped yet: a compacted CSR copy (re-sliced when half of it is gone),
    the map to the original rows, a mask, and the running sum of the remaining vectors."""

    def __init__(self, X: sp.csr_matrix) -> None:
        self.original = X
        self.rows = np.arange(X.shape[0])
        self.dense = np.zeros(X.shape[1])  # buffer for one row, all-zero between uses
        self.compactions = 0
        self._compact(X)

    def _compact(self, X: sp.csr_matrix) -> None:
        self.X = X
        self.alive = np.ones(X.shape[0], dtype=bool)
        self.count = X.shape[0]
        self.total = np.asarray(X.sum(axis=0)).ravel()  # recomputed: no drift of the sum

    def similarities(self, direction: NDArray[np.float64]) -> NDArray[np.float64]:
        """Dot products of the compacted rows with ``direction`` (removed rows included)."""
        return np.asarray(self.X @ direction, dtype=np.float64)

    def to_mean(self) -> NDArray[np.float64]:
        """Similarities to the running sum (its norm does not change their order)."""
        return self.similarities(self.total)

    def to_row(self, row: int) -> NDArray[np.float64]:
        """Similarities to ORIGINAL row ``row`` (a dense copy of one row, then one mat-vec)."""
        X = self.original
        cols = X.indices[X.indptr[row]:X.indptr[row + 1]]
        self.dense[cols] = X.data[X.indptr[row]:X.indptr[row + 1]]
        sims = self.similarities(self.dense)
        self.dense[cols] = 0.0
        return sims

    def least_similar(self, sims: NDArray[np.float64]) -> int:
        """The remaining (local) row with the smallest similarity, lowest index on ties."""
        return int(np.argmin(np.where(self.alive, sims, np.inf)))

    def most_similar(self, sims: NDArray[np.float64], local: int, k: int
                     ) -> NDArray[np.intp]:
        """Local row ``local`` and the ``k - 1`` remaining rows most similar to it."""
        ranked = np.where(self.alive, sims, -np.inf)
        ranked[local] = np.inf  # the record itself first, whatever its norm
        return _k_most_similar(ranked, k)

    def remove(self, local: NDArray[np.intp]) -> NDArray[np.intp]:
        """Drop the local rows; return their original indices. Compacts when half is gone."""
        original = self.rows[local]
        self.alive[local] = False
        self.count -= local.size
        self.total -= np.asarray(self.X[local].sum(axis=0)).ravel()
        if 0 < self.count <= self.X.shape[0] // 2:
            keep = np.flatnonzero(self.alive)
            self.rows = self.rows[keep]
            self._compact(sp.csr_matrix(self.X[keep]))
            self.compactions += 1
        return original


def _spherical_mdav_labels(X: sp.csr_matrix, k: int) -> NDArray[np.intp]:
    """Spherical MDAV on a checked CSR matrix. Validation is assumed."""
    labels = np.full(X.shape[0], -1, dtype=np.intp)
    state = _Remaining(X)
    group = 0

    def take_group(local: int) -> NDArray[np.float64]:
        """Group ``local`` with its k - 1 most similar; return the similarities to it over
        the remaining rows (recomputed when the removal compacted the matrix)."""
        nonlocal group
        row, before = int(state.rows[local]), state.compactions
        sims = state.to_row(row)
        labels[state.remove(state.most_similar(sims, local, k))] = group
        group += 1
        return sims if state.compactions == before else state.to_row(row)

    while state.count >= 3 * k:
        sims_r = take_group(state.least_similar(state.to_mean()))
        take_group(state.least_similar(sims_r))
    if state.count >= 2 * k:
        take_group(state.least_similar(state.to_mean()))
    labels[state.rows[state.alive]] = group
    return labels


def spherical_centroids(X: Any, labels: Any) -> sp.csr_matrix:
    """The spherical centroid of each group: the normalized mean direction (unit L2 norm).

    Parameters
    ----------
    X : scipy.sparse matrix or array-like of shape (n_samples, n_features)
        The records' vectors (kept sparse).
    labels : array-like of shape (n_samples,)
        Group of each record, consecutive integers from 0.

    Returns
    -------
    centroids : scipy.sparse.csr_matrix of shape (n_groups, n_features)
        Row ``g``: the sum of group ``g``'s vectors divided by its norm (all-zero when the
        group's vectors sum to zero, e.g. only empty documents); sorted indices, no stored
        zeros, so that equal directions have equal storage.

    References
    ----------
    Dhillon, I. S. and Modha, D. S. "Concept decompositions for large sparse text data using
    clustering." Machine Learning 42 (2001) (the concept vector); Abril, Navarro-Arribas and
    Torra, Computers & Security 49 (2015).

    Examples
    --------
    >>> C = spherical_centroids(np.array([[1.0, 0.0], [0.0, 1.0]]), [0, 0])
    >>> np.round(C.toarray(), 4).tolist()
    [[0.7071, 0.7071]]
    """
    from .._base.validation import check_labels

    X = check_sparse_rows(X, caller="spherical_centroids")
    lab = check_labels(labels, n_samples=X.shape[0])
    n_groups = int(lab.max()) + 1 if lab.size else 0
    member = sp.csr_matrix((np.ones(lab.size), (lab, np.arange(lab.size))),
                           shape=(n_groups, X.shape[0]))
    sums = sp.csr_matrix(member @ X)
    sums.sum_duplicates()
    norms = np.sqrt(np.asarray(sums.multiply(sums).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    centroids = sp.csr_matrix(sp.diags(scale) @ sums)
    centroids.eliminate_zeros()
    centroids.sort_indices()
    return centroids
