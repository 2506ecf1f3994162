"""Semantic microaggregation of categorical and short textual attributes: taxonomies
(ARX hierarchies, WordNet 3.0 nouns, OWL/RDF), semantic distances, semantic centroids,
semantic MDAV and the semantic information loss.

``anonymize_semantic`` loads pandas on first use (PEP 562); the rest does not.

References
----------
Martinez, S., Sanchez, D., Valls, A. "Semantic adaptive microaggregation of categorical
microdata." Computers & Security 31 (2012); Martinez, S., Valls, A., Sanchez, D.
"Semantically-grounded construction of centroids for datasets with textual attributes."
Knowl.-Based Syst. 35 (2012); Sanchez, D., Batet, M., Isern, D., Valls, A. "Ontology-based
semantic similarity: a new feature-based approach." Expert Syst. Appl. 39 (2012).
"""

from __future__ import annotations

from typing import Any

from .distance import DISTANCES, ConceptSpace, concept_distance
from .mdav import ONTOLOGIES, group_centroids, semantic_mdav, semantic_mdav_labels
from .measures import semantic_loss
from .taxonomy import Taxonomy
from .wordnet import find_wordnet, wordnet_available, wordnet_taxonomy

__all__ = ["DISTANCES", "ONTOLOGIES", "ConceptSpace", "Taxonomy", "anonymize_semantic",
           "concept_distance", "find_wordnet", "group_centroids", "semantic_centroid",
           "semantic_loss", "semantic_mdav", "semantic_mdav_labels", "wordnet_available",
           "wordnet_taxonomy"]


def semantic_centroid(taxonomy: Taxonomy, values: Any, counts: Any = None, *,
                      distance: str = "feature") -> str:
    """The semantic centroid of ``values`` (with multiplicities ``counts``): the concept,
    among the values and all their taxonomic ancestors, with the least summed weighted
    distance to the values; ties go to a value of the group, then to the deepest concept,
    then to the smallest id.

    Parameters
    ----------
    taxonomy : Taxonomy
        The taxonomy of the values.
    values : sequence of str
        The group's concepts (non-empty).
    counts : array-like of shape (len(values),) or None, default=None
        Non-negative multiplicities of ``values``; ``None``: each counts once.
    distance : str, default="feature"
        The semantic distance (a key of :data:`DISTANCES`).

    Examples
    --------
    >>> t = Taxonomy.from_edges([("dog", "mammal"), ("cat", "mammal"), ("mammal", "animal")])
    >>> semantic_centroid(t, ["dog", "dog", "cat"])
    'dog'

    References
    ----------
    Martinez, S., Valls, A., Sanchez, D. "Semantically-grounded construction of centroids
    for datasets with textual attributes." Knowl.-Based Syst. 35 (2012) 160-172.
    """
    import numpy as np

    vals = [str(v) for v in values]
    weights = np.ones(len(vals)) if counts is None else np.asarray(counts, dtype=np.float64)
    if len(vals) == 0 or weights.shape != (len(vals),) or (weights < 0).any():
        raise ValueError(f"values ({len(vals)}) must be non-empty and counts, when given, "
                         f"as many non-negative numbers; got counts of shape {weights.shape}.")
    space = ConceptSpace.build(taxonomy, sorted(set(vals)), distance=distance)
    index = {c: i for i, c in enumerate(space.values)}
    w = np.bincount([index[v] for v in vals], weights=weights, minlength=len(space.values))
    return space.candidates[space.centroid(w)]


def __getattr__(name: str) -> Any:
    if name == "anonymize_semantic":
        from .release import anonymize_semantic

        return anonymize_semantic
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
