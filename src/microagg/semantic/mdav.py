"""Semantic MDAV: MDAV driven by a semantic distance and semantic centroids, run on the
distinct combinations of values with their counts (never an n x n matrix)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix
from .distance import ConceptSpace
from .taxonomy import Taxonomy

if TYPE_CHECKING:  # microagg.partition imports this module for its registry entry
    from ..partition.mixed import MixedData

__all__ = ["ONTOLOGIES", "group_centroids", "semantic_mdav", "semantic_mdav_labels"]

ONTOLOGIES = ("hierarchy", "wordnet")
"""Where :func:`semantic_mdav` takes a categorical column's taxonomy from: the column's
hierarchy (ARX-style), or WordNet 3.0 nouns (the hierarchy's leaves read as words)."""


@dataclass
class _State:
    """Distinct combinations of values and the records of each still unassigned."""

    spaces: Sequence[ConceptSpace]
    codes: NDArray[np.intp]        # (m, a) value code of each combination per attribute
    numeric: NDArray[np.float64]   # (m, r) in [0, 1]
    left: NDArray[np.int64]        # (m,) records of each combination not yet grouped

    def to_centroid(self) -> NDArray[np.float64]:
        """Distance of each combination to the centroid of the records left: per semantic
        attribute the semantic centroid, per numeric one the mean."""
        w = self.left.astype(np.float64)
        d = np.zeros(self.left.size)
        for j, space in enumerate(self.spaces):
            weights = np.bincount(self.codes[:, j], weights=w, minlength=len(space.values))
            d += space.table[space.centroid(weights), self.codes[:, j]]
        if self.numeric.shape[1]:
            mean = w @ self.numeric / w.sum()
            d += np.abs(self.numeric - mean).sum(axis=1)
        return d

    def to_combination(self, r: int) -> NDArray[np.float64]:
        """Distance of each combination to combination ``r``."""
        d = np.zeros(self.left.size)
        for j, space in enumerate(self.spaces):
            d += space.table[self.codes[r, j], self.codes[:, j]]
        if self.numeric.shape[1]:
            d += np.abs(self.numeric - self.numeric[r]).sum(axis=1)
        return d

    def farthest(self, d: NDArray[np.float64]) -> int:
        """The combination with records left farthest by ``d`` (first index among ties)."""
        return int(np.argmax(np.where(self.left > 0, d, -np.inf)))

    def take(self, r: int, k: int) -> list[tuple[int, int]]:
        """``k`` records nearest to combination ``r`` (``r``'s own first, then by distance
        and index), as ``(combination, count)`` pieces; removed from the records left."""
        pieces = [(r, int(min(self.left[r], k)))]
        need = k - pieces[0][1]
        self.left[r] -= pieces[0][1]
        if need > 0:
            d = self.to_combination(r)
            alive = np.flatnonzero(self.left > 0)
            if alive.size > need:  # the need nearest combinations hold enough records
                cut = np.partition(d[alive], need - 1)[need - 1]
                alive = alive[d[alive] <= cut]
            for c in alive[np.lexsort((alive, d[alive]))]:
                t = int(min(self.left[c], need))
                pieces.append((int(c), t))
                self.left[c] -= t
                need -= t
                if need == 0:
                    break
        return pieces


def _groups(state: _State, k: int) -> list[list[tuple[int, int]]]:
    """MDAV (Domingo-Ferrer & Torra 2005) on counted combinations: while 3k or more records
    are left, a group around the record farthest from the centroid and one around the
    record farthest from it; then one more group if 2k or more are left; the rest is a
    group."""
    groups: list[list[tuple[int, int]]] = []
    while state.left.sum() >= 3 * k:
        r = state.farthest(state.to_centroid())
        groups.append(state.take(r, k))
        s = state.farthest(state.to_combination(r))
        groups.append(state.take(s, k))
    if state.left.sum() >= 2 * k:
        groups.append(state.take(state.farthest(state.to_centroid()), k))
    rest = np.flatnonzero(state.left > 0)
    if rest.size:
        groups.append([(int(c), int(state.left[c])) for c in rest])
        state.left[rest] = 0
    return groups


def semantic_mdav_labels(spaces: Sequence[ConceptSpace], codes: ArrayLike,
                         numeric: ArrayLike | None, k: int) -> NDArray[np.intp]:
    """Group of each record by semantic MDAV. Validation is assumed.

    ``codes`` (n, a): each record's value code in each ``spaces[j]``; ``numeric`` (n, r):
    numeric attributes already in [0, 1] (or None). Records are folded into their distinct
    combinations with counts; the records of one combination are handed out in row order.

    Parameters
    ----------
    spaces : sequence of ConceptSpace
        One per categorical attribute.
    codes : array-like of shape (n_samples, a)
        Each record's value code in each ``spaces[j]``.
    numeric : array-like of shape (n_samples, r) or None
        Numeric attributes already in [0, 1], or ``None``.
    k : int
        Minimum group size.
    """
    cod = np.asarray(codes, dtype=np.intp).reshape(len(codes), -1)  # type: ignore[arg-type]
    n = cod.shape[0]
    num = (np.zeros((n, 0)) if numeric is None
           else np.asarray(numeric, dtype=np.float64).reshape(n, -1))
    keys = np.column_stack([cod.astype(np.float64), num])
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    state = _State(spaces, uniq[:, : cod.shape[1]].astype(np.intp),
                   np.ascontiguousarray(uniq[:, cod.shape[1]:]), counts.astype(np.int64))
    order = np.argsort(inverse, kind="stable")  # rows of each combination, in row order
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    labels = np.empty(n, dtype=np.intp)
    for g, pieces in enumerate(_groups(state, k)):
        for c, t in pieces:
            labels[order[start[c]: start[c] + t]] = g
            start[c] += t
    return labels


def group_centroids(space: ConceptSpace, codes: ArrayLike, labels: ArrayLike
                    ) -> NDArray[np.intp]:
    """Candidate index of each group's semantic centroid: the concept (a value or any of
    their ancestors) with the least summed distance to the group's values, each counted as
    often as it occurs; ties go to the first candidate (a value before an ancestor).

    Parameters
    ----------
    space : ConceptSpace
        The attribute's concepts and distances.
    codes : array-like of shape (n_samples,)
        Each record's value code in ``space.values``.
    labels : array-like of shape (n_samples,)
        The group of each record (``0..g-1``).
    """
    cod = np.asarray(codes, dtype=np.intp)
    lab = np.asarray(labels, dtype=np.intp)
    weights = np.zeros((int(lab.max()) + 1, len(space.values)))
    np.add.at(weights, (lab, cod), 1.0)
    return np.argmin(weights @ space.table.T, axis=1).astype(np.intp)


def _spaces_of(data: MixedData, ontology: str, distance: str
               ) -> tuple[list[ConceptSpace], NDArray[np.intp]]:
    """One concept space per categorical column and each record's value codes in it."""
    spaces, codes = [], []
    for j, tables in enumerate(data.tables):
        if ontology == "wordnet":
            from .wordnet import wordnet_taxonomy

            taxonomy, concept_of = wordnet_taxonomy(tables.leaves,
                                                    column=f"categorical column {j}")
            leaf_concept = [concept_of[leaf] for leaf in tables.leaves]
        else:
            taxonomy = Taxonomy.from_tables(tables, name=f"hierarchy of categorical column {j}")
            leaf_concept = list(tables.leaves)
        space = ConceptSpace.build(taxonomy, sorted(set(leaf_concept)), distance=distance)
        index = {c: i for i, c in enumerate(space.values)}
        spaces.append(space)
        codes.append(np.array([index[c] for c in leaf_concept], dtype=np.intp)[data.codes[:, j]])
    n = data.n_samples
    return spaces, (np.column_stack(codes) if codes else np.zeros((n, 0), dtype=np.intp))


def semantic_mdav(X: ArrayLike | MixedData, k: int, *, ontology: str = "hierarchy",
                  distance: str = "feature", random_state: RandomState = None
                  ) -> NDArray[np.intp]:
    """Partition records with semantic MDAV (categorical values compared in a taxonomy).

    The record distance is the sum over attributes of per-attribute distances in [0, 1]:
    the semantic distance between concepts for a categorical attribute, the absolute
    difference of min-max normalized values for a numeric one. The centroid of a set of
    records is, per categorical attribute, its semantic centroid (the concept, among the
    values and their taxonomic ancestors, of least summed distance to the values), per
    numeric one the mean. MDAV then proceeds as usual. Records are folded into their
    distinct combinations of values with counts, so memory and time grow with the number
    of distinct combinations, not with n squared.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or MixedData
        Numeric quasi-identifiers, already scaled (used as given: the distance is the sum
        of absolute differences), or mixed data whose categorical columns carry their
        hierarchy tables (:meth:`MixedData.build`, numbers min-max scaled to [0, 1]).
    k : int
        Minimum group size, ``k >= 2``.
    ontology : {"hierarchy", "wordnet"}, default="hierarchy"
        The taxonomy of each categorical column: its hierarchy, or WordNet 3.0 nouns (the
        hierarchy's leaves read as words; needs nltk and Debian's wordnet-base).
    distance : {"feature", "wu-palmer", "ic"}, default="feature"
        See :data:`microagg.semantic.distance.DISTANCES`.
    random_state : None, int or numpy.random.Generator, default=None
        Unused (the method is deterministic); accepted like every partitioner.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Every group has k records except the last (k..2k-1).

    References
    ----------
    Martinez, S., Sanchez, D., Valls, A. "Semantic adaptive microaggregation of categorical
    microdata." Computers & Security 31 (2012) 653-672; Domingo-Ferrer, J., Torra, V.
    "Ordinal, continuous and heterogeneous k-anonymity through microaggregation." Data Min.
    Knowl. Disc. 11 (2005).

    Examples
    --------
    >>> semantic_mdav([[0.0], [0.1], [5.0], [5.2]], 2).tolist()
    [1, 1, 0, 0]
    """
    from ..partition.mixed import MixedData

    if not isinstance(X, MixedData):  # numbers only: X as the caller scaled it
        matrix = check_matrix(X, caller="semantic-mdav")
        k = check_k(k, n_samples=matrix.shape[0], caller="semantic-mdav")
        return semantic_mdav_labels([], np.zeros((matrix.shape[0], 0)), matrix, k)
    k = check_k(k, n_samples=X.n_samples, caller="semantic-mdav")
    spaces, codes = _spaces_of(X, ontology, distance)
    return semantic_mdav_labels(spaces, codes, X.numeric, k)
