"""What a document release publishes: one unit vector per record (its group's spherical
centroid) over a vocabulary, kept sparse; written as a ``.npz`` that
:func:`scipy.sparse.load_npz` reads, with the vocabulary beside the matrix."""

from __future__ import annotations

import io
import pathlib
from dataclasses import dataclass
from typing import IO

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["PublishedDocuments", "load_published"]


@dataclass(frozen=True, eq=False)
class PublishedDocuments:
    """The published document vectors (:attr:`Release.data` of
    :func:`~microagg.documents.anonymize_documents`).

    Attributes
    ----------
    centroids : scipy.sparse.csr_matrix of shape (n_groups, n_features)
        The distinct published vectors: each group's spherical centroid (unit norm).
    labels : ndarray of shape (n_samples,)
        The group, hence the published vector, of each record (input order).
    vocabulary : tuple of str
        The term of each column (learned from the documents with ``min_df``).
    """

    centroids: sp.csr_matrix
    labels: NDArray[np.intp]
    vocabulary: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_samples, n_features)`` of :attr:`vectors`."""
        return int(self.labels.size), len(self.vocabulary)

    @property
    def vectors(self) -> sp.csr_matrix:
        """The published matrix, one row per record: its group's centroid (built on access;
        it stores about k times the entries of :attr:`centroids`)."""
        return sp.csr_matrix(self.centroids[self.labels])

    def top_terms(self, n_terms: int = 10) -> list[str]:
        """The ``n_terms`` heaviest terms of each record's published vector, heaviest first
        and space-separated (ties in vocabulary order); one string per record.

        Examples
        --------
        >>> p = PublishedDocuments(sp.csr_matrix([[0.6, 0.8, 0.0]]), np.array([0, 0]),
        ...                        ("cat", "dog", "fish"))
        >>> p.top_terms(1)
        ['dog', 'dog']
        """
        if isinstance(n_terms, bool) or not isinstance(n_terms, (int, np.integer)) \
                or n_terms < 1:
            raise ValueError(f"The 'n_terms' parameter of top_terms must be an int >= 1. "
                             f"Got {n_terms!r} instead.")
        C = self.centroids
        per_group = []
        for g in range(C.shape[0]):
            cols, weights = C.indices[C.indptr[g]:C.indptr[g + 1]], \
                C.data[C.indptr[g]:C.indptr[g + 1]]
            order = np.lexsort((cols, -weights))[:n_terms]
            per_group.append(" ".join(self.vocabulary[c] for c in cols[order]))
        return [per_group[g] for g in self.labels]

    def to_npz_bytes(self) -> bytes:
        """The ``.npz`` content: scipy's CSR keys (``format``, ``shape``, ``data``,
        ``indices``, ``indptr``) of :attr:`vectors`, plus ``vocabulary``; no pickles."""
        V = self.vectors
        buffer = io.BytesIO()
        np.savez_compressed(buffer, format=np.array("csr"), shape=np.array(V.shape),
                            data=V.data, indices=V.indices, indptr=V.indptr,
                            vocabulary=np.array(self.vocabulary, dtype=str))
        return buffer.getvalue()

    def save_npz(self, path: str | pathlib.Path) -> None:
        """Write :meth:`to_npz_bytes` atomically (complete or absent)."""
        from ..io._atomic import atomic_write

        content = self.to_npz_bytes()

        def write(handle: IO[bytes]) -> None:
            handle.write(content)

        atomic_write(pathlib.Path(path), write)


def load_published(path: str | pathlib.Path) -> tuple[sp.csr_matrix, tuple[str, ...]]:
    """Read a file written by :meth:`PublishedDocuments.save_npz`: the published matrix
    (one row per record) and the vocabulary.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.npz`` file written by :meth:`PublishedDocuments.save_npz`.
    """
    with np.load(path, allow_pickle=False) as loaded:
        vocabulary = tuple(str(t) for t in loaded["vocabulary"])
    return sp.csr_matrix(sp.load_npz(path)), vocabulary
