"""Semantic distances between concepts of a taxonomy, cached as one table per attribute:
the feature-based measure of Sanchez et al. (2012), Wu & Palmer's path measure, and Lin's
measure on Seco's intrinsic information content."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .taxonomy import Taxonomy

__all__ = ["DISTANCES", "ConceptSpace", "concept_distance"]

DISTANCES = ("feature", "wu-palmer", "ic")
"""``feature``: Sanchez, Batet, Isern & Valls (2012), the measure of the Martinez / Sanchez
papers; ``wu-palmer``: ``1 - 2 depth(lcs) / (depth(a) + depth(b))``; ``ic``: ``1 - Lin``
similarity on Seco, Veale & Hayes' (2004) intrinsic information content."""


def _check_distance(distance: str) -> str:
    if distance not in DISTANCES:
        raise ValueError(f"The 'distance' parameter must be one of {', '.join(DISTANCES)}. "
                         f"Got {distance!r} instead.")
    return distance


@dataclass(frozen=True)
class ConceptSpace:
    """The concepts one attribute can take and their distances, computed once.

    ``values`` are the concepts the data uses (coded ``0..V-1``); ``candidates`` are those
    values first, then every other taxonomic ancestor of them (deepest first, then by id):
    the concepts a semantic centroid is searched among. ``table[c, v]`` is the distance from
    candidate ``c`` to value ``v``: the cache of concept-pair distances (its size does not
    depend on the number of records).

    Attributes
    ----------
    taxonomy : Taxonomy
        The taxonomy the concepts belong to.
    distance : str
        The semantic distance (a key of :data:`DISTANCES`).
    values : tuple of str
        The concepts the data uses, coded ``0..V-1``.
    candidates : tuple of str
        The values, then their other ancestors: where centroids are searched.
    table : ndarray of shape (len(candidates), len(values))
        ``table[c, v]``, the distance from candidate ``c`` to value ``v``.
    """

    taxonomy: Taxonomy
    distance: str
    values: tuple[str, ...]
    candidates: tuple[str, ...]
    table: NDArray[np.float64]

    @classmethod
    def build(cls, taxonomy: Taxonomy, values: Sequence[str], *, distance: str = "feature"
              ) -> ConceptSpace:
        """Distances from every candidate to every value (vectorized on ancestor bitsets)."""
        _check_distance(distance)
        vals = tuple(dict.fromkeys(values))
        above = set().union(*(taxonomy.ancestors(v) for v in vals)) - set(vals)
        others = sorted(above, key=lambda c: (-taxonomy.depth(c), c))
        cands = vals + tuple(others)
        index = {c: i for i, c in enumerate(cands)}
        member = np.zeros((len(cands), len(cands)), dtype=np.float32)
        for i, c in enumerate(cands):
            member[i, [index[a] for a in taxonomy.ancestors(c)]] = 1.0
        if distance == "feature":
            table = _feature(member, len(vals))
        else:
            weight = (np.array([taxonomy.depth(c) for c in cands], dtype=np.float64)
                      if distance == "wu-palmer" else _intrinsic_ic(taxonomy, cands))
            table = _lcs_measure(member, len(vals), weight)
        return cls(taxonomy, distance, vals, cands, table)

    @property
    def value_table(self) -> NDArray[np.float64]:
        """Distances between values, shape (V, V)."""
        return self.table[: len(self.values)]

    def centroid(self, weights: ArrayLike) -> int:
        """Index of the candidate with the least weighted distance to the values (``weights``
        of shape (V,)); ties go to the first candidate (a value before an ancestor)."""
        return int(np.argmin(self.table @ np.asarray(weights, dtype=np.float64)))


def _feature(member: NDArray[np.float32], n_values: int) -> NDArray[np.float64]:
    """``log2(1 + (|T(a) u T(b)| - |T(a) n T(b)|) / |T(a) u T(b)|)``, candidates x values."""
    sizes = member.sum(axis=1).astype(np.float64)
    common = (member @ member[:n_values].T).astype(np.float64)
    union = sizes[:, None] + sizes[None, :n_values] - common
    return np.log2(1.0 + (union - common) / union)


def _lcs_measure(member: NDArray[np.float32], n_values: int, weight: NDArray[np.float64]
                 ) -> NDArray[np.float64]:
    """``1 - 2 w(lcs) / (w(a) + w(b))`` with the lcs the common subsumer of largest weight
    (depth for Wu & Palmer, information content for Lin); 0 between equal concepts."""
    n = member.shape[0]
    out = np.empty((n, n_values))
    for v in range(n_values):
        cols = np.flatnonzero(member[v])
        shared = (member[:, cols] * weight[cols]).max(axis=1)
        total = weight + weight[v]
        with np.errstate(invalid="ignore", divide="ignore"):
            sim = np.where(total > 0, 2.0 * shared / total, 1.0)
        out[:, v] = 1.0 - sim
        out[v, v] = 0.0
    return np.clip(out, 0.0, 1.0)


def _intrinsic_ic(taxonomy: Taxonomy, concepts: Sequence[str]) -> NDArray[np.float64]:
    """Seco's intrinsic IC ``1 - log(hypo(c) + 1) / log(N)`` over the whole taxonomy."""
    hypo = taxonomy.descendants_count()
    n = max(len(hypo), 2)
    return np.array([1.0 - math.log(hypo[c] + 1) / math.log(n) for c in concepts])


def concept_distance(taxonomy: Taxonomy, a: str, b: str, *, distance: str = "feature"
                     ) -> float:
    """Semantic distance between two concepts (0 for equal concepts, symmetric, in [0, 1]).

    Parameters
    ----------
    taxonomy : Taxonomy
    a, b : str
        Concept ids.
    distance : {"feature", "wu-palmer", "ic"}, default="feature"
        ``feature``: ``log2(1 + (|T(a) u T(b)| - |T(a) n T(b)|) / |T(a) u T(b)|)`` with
        ``T(c)`` the taxonomic ancestors of ``c`` (``c`` included).

    Returns
    -------
    float

    References
    ----------
    Sanchez, D., Batet, M., Isern, D., Valls, A. "Ontology-based semantic similarity: a new
    feature-based approach." Expert Syst. Appl. 39 (2012) 7718-7728; Wu, Z., Palmer, M.
    "Verb semantics and lexical selection." ACL (1994); Seco, N., Veale, T., Hayes, J. "An
    intrinsic information content metric for semantic similarity in WordNet." ECAI (2004).

    Examples
    --------
    >>> t = Taxonomy.from_edges([("dog", "mammal"), ("cat", "mammal"), ("mammal", "animal")])
    >>> round(concept_distance(t, "dog", "cat"), 4)  # log2(1 + (4 - 2) / 4)
    0.585
    """
    if a == b:
        return 0.0
    space = ConceptSpace.build(taxonomy, [b, a], distance=distance)
    return float(space.table[1, 0])
