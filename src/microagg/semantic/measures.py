"""Semantic information loss of a release: how far, in the taxonomy, each published value is
from the original one, and the share of values generalized."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..exceptions import SchemaError
from .distance import ConceptSpace
from .taxonomy import Taxonomy

__all__ = ["semantic_loss"]


def _concepts(values: ArrayLike, taxonomy: Taxonomy, concept_of: Mapping[str, str],
              by_label: Mapping[str, str], what: str) -> list[str]:
    """Each text value's concept: through ``concept_of``, else a concept id, else a label."""
    out, missing = [], set()
    for v in np.asarray(values, dtype=object).tolist():
        text = str(v)
        c = concept_of.get(text) or (text if text in taxonomy else by_label.get(text))
        if c is None:
            missing.add(text)
        out.append(c)
    if missing:
        raise SchemaError(f"{what}: value(s) {', '.join(map(repr, sorted(missing)[:20]))} "
                          f"are not concepts of the taxonomy {taxonomy.name!r}.")
    return out  # type: ignore[return-value]


def semantic_loss(original: ArrayLike, published: ArrayLike, taxonomy: Taxonomy, *,
                  distance: str = "feature", concept_of: Mapping[str, str] | None = None,
                  column: str = "") -> dict[str, Any]:
    """Semantic information loss of one attribute and the share of values generalized.

    The loss is the mean over records of the semantic distance between the original value
    and the published one (0: nothing changed; at most 1 with the measures of
    :data:`~microagg.semantic.distance.DISTANCES`), as Martinez, Sanchez & Valls (2012)
    report it; a value is generalized when its published concept differs from its own.

    Parameters
    ----------
    original, published : array-like of shape (n_samples,)
        Text values; a published value is read as a concept id or a concept's label (the
        hierarchy's generalizations, a semantic centroid, an original value).
    taxonomy : Taxonomy
    distance : {"feature", "wu-palmer", "ic"}, default="feature"
    concept_of : mapping of str -> str, optional
        The concept of each original value (WordNet: its synset); default the value itself.
    column : str
        The column's name, for messages.

    Returns
    -------
    dict
        ``semantic_information_loss`` and ``generalized_share`` (Python floats).

    References
    ----------
    Martinez, S., Sanchez, D., Valls, A. "Semantic adaptive microaggregation of categorical
    microdata." Computers & Security 31 (2012) 653-672.

    Examples
    --------
    >>> t = Taxonomy.from_edges([("dog", "mammal"), ("cat", "mammal"), ("mammal", "animal")])
    >>> semantic_loss(["dog", "cat"], ["dog", "mammal"], t)["generalized_share"]
    0.5
    """
    mapping = dict(concept_of or {})
    by_label: dict[str, str] = {}
    for c in taxonomy.concepts:
        by_label.setdefault(taxonomy.label(c), c)
    orig = _concepts(original, taxonomy, mapping, by_label, f"Column {column!r} (original)")
    pub = _concepts(published, taxonomy, mapping, by_label, f"Column {column!r} (published)")
    if len(orig) != len(pub):
        raise ValueError(f"Column {column!r}: {len(orig)} original and {len(pub)} published "
                         "values; they must be as many.")
    if not orig:
        return {"semantic_information_loss": 0.0, "generalized_share": 0.0}
    space = ConceptSpace.build(taxonomy, sorted(set(orig) | set(pub)), distance=distance)
    index = {c: i for i, c in enumerate(space.values)}
    o = np.array([index[c] for c in orig])
    p = np.array([index[c] for c in pub])
    return {"semantic_information_loss": float(space.table[p, o].mean()),
            "generalized_share": float((o != p).mean())}
