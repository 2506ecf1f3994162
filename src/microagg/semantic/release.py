"""``anonymize_semantic``: a k-anonymous release of categorical / short textual attributes by
semantic MDAV, each group published as its semantic centroids, checked by the one verifier."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .. import __version__
from .._base.validation import RandomState, check_k, check_labels, resolve_seed
from .._pipeline.result import Release
from .._pipeline.verify import group_k_check, k_check, published_classes
from ..exceptions import SchemaError
from ..hierarchy import Hierarchy
from ..metrics import group_size_summary
from .distance import DISTANCES, ConceptSpace
from .mdav import group_centroids, semantic_mdav_labels
from .taxonomy import Taxonomy

__all__ = ["anonymize_semantic"]

Ontology = str | Hierarchy | Taxonomy


@dataclass(frozen=True)
class _Column:
    """One semantic column: its concept space and each record's value code."""

    name: str
    space: ConceptSpace
    codes: NDArray[np.intp]
    source: str


def _check_columns(df: pd.DataFrame, columns: Sequence[str], numeric: Sequence[str],
                   identifiers: Sequence[str]) -> None:
    """Every problem with the roles at once, then the available columns."""
    problems = []
    if not columns:
        problems.append("'columns' must name at least one semantic column")
    absent = [c for c in (*columns, *numeric, *identifiers) if c not in df.columns]
    if absent:
        problems.append(f"column(s) {', '.join(map(repr, absent))} are not in the data")
    both = sorted(set(columns) & set(numeric))
    if both:
        problems.append(f"column(s) {', '.join(map(repr, both))} are both semantic and numeric")
    for c in (*columns, *numeric):
        if c in df.columns and df[c].isna().any():
            problems.append(f"column {c!r} has {int(df[c].isna().sum())} missing value(s)")
    for c in numeric:
        if c in df.columns and not pd.api.types.is_numeric_dtype(df[c]):
            problems.append(f"numeric column {c!r} has dtype {df[c].dtype}, not a number")
    if problems:
        raise SchemaError("; ".join(problems) + f". Available columns: "
                          f"{', '.join(map(str, df.columns))}.")


def _column(df: pd.DataFrame, name: str, ontology: Ontology, distance: str,
            synsets: Mapping[str, str] | None) -> _Column:
    """The column's taxonomy (hierarchy, taxonomy or WordNet) and its values' concepts."""
    text = df[name].astype(str).to_numpy()
    values = sorted(set(text.tolist()))
    if isinstance(ontology, str):
        if ontology != "wordnet":
            raise ValueError(f"The 'ontology' of column {name!r} must be 'wordnet', a "
                             f"Hierarchy or a Taxonomy. Got {ontology!r} instead.")
        from .wordnet import wordnet_taxonomy

        taxonomy, concept_of = wordnet_taxonomy(values, column=name, synsets=synsets)
        source = "wordnet"
    else:
        taxonomy = (Taxonomy.from_hierarchy(ontology) if isinstance(ontology, Hierarchy)
                    else ontology)
        absent = [v for v in values if v not in taxonomy]
        if absent:
            shown = ", ".join(map(repr, absent[:20])) + (" ..." if len(absent) > 20 else "")
            raise SchemaError(f"Column {name!r}: {len(absent)} value(s) not in the "
                              f"{taxonomy.name or 'taxonomy'}: {shown}.")
        concept_of = {v: v for v in values}
        source = (ontology.source if isinstance(ontology, Hierarchy) else taxonomy.name)
    space = ConceptSpace.build(taxonomy, sorted(set(concept_of.values())), distance=distance)
    index = {c: i for i, c in enumerate(space.values)}
    code_of = {v: index[concept_of[v]] for v in values}
    codes = np.array([code_of[v] for v in text.tolist()], dtype=np.intp)
    return _Column(name, space, codes, source)


def _ontology_for(ontology: Ontology | Mapping[str, Ontology], column: str) -> Ontology:
    if isinstance(ontology, Mapping):
        if column not in ontology:
            raise SchemaError(f"No ontology for column {column!r}: the 'ontology' mapping "
                              f"names {', '.join(map(repr, ontology))}.")
        return ontology[column]
    return ontology


def _normalized(df: pd.DataFrame, numeric: Sequence[str]) -> NDArray[np.float64]:
    """Numeric columns min-max scaled to [0, 1] (a constant column is 0)."""
    if not numeric:
        return np.zeros((len(df), 0))
    x = df[list(numeric)].to_numpy(dtype=np.float64)
    lo, span = x.min(axis=0), np.ptp(x, axis=0)
    return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1.0), 0.0)


def _publish(df: pd.DataFrame, cols: Sequence[_Column], numeric: Sequence[str],
             identifiers: Sequence[str], labels: NDArray[np.intp]
             ) -> tuple[pd.DataFrame, dict[str, NDArray[np.intp]]]:
    """Each semantic column as its group's semantic centroid, each numeric one as the mean."""
    published = df.drop(columns=list(identifiers))
    centroids = {}
    for col in cols:
        cent = group_centroids(col.space, col.codes, labels)
        centroids[col.name] = cent
        text = np.array([col.space.taxonomy.label(c) for c in col.space.candidates],
                        dtype=object)
        published[col.name] = text[cent[labels]]
    for c in numeric:
        published[c] = df[c].astype(np.float64).groupby(labels).transform("mean").to_numpy()
    return published, centroids


def _measure(cols: Sequence[_Column], centroids: Mapping[str, NDArray[np.intp]],
             labels: NDArray[np.intp]) -> dict[str, Any]:
    """Semantic information loss and share generalized, per column and on average."""
    loss, share = {}, {}
    for col in cols:
        cand = centroids[col.name][labels]
        loss[col.name] = float(col.space.table[cand, col.codes].mean())
        share[col.name] = float((cand != col.codes).mean())
    return {
        "semantic_information_loss": float(np.mean(list(loss.values()))),
        "semantic_information_loss_columns": MappingProxyType(loss),
        "generalized_share": float(np.mean(list(share.values()))),
        "generalized_share_columns": MappingProxyType(share),
        **group_size_summary(labels),
    }


def anonymize_semantic(df: pd.DataFrame, *, columns: Sequence[str], k: int,  # noqa: PLR0913 - the public face: one keyword per option
                       ontology: Ontology | Mapping[str, Ontology] = "wordnet",
                       distance: str = "feature", numeric: Sequence[str] = (),
                       synsets: Mapping[str, Mapping[str, str]] | None = None,
                       identifiers: Sequence[str] = (),
                       random_state: RandomState = None) -> Release:
    """k-anonymous release by semantic microaggregation of categorical / textual columns.

    Records are grouped by semantic MDAV (:func:`~microagg.semantic.mdav.semantic_mdav`);
    each group publishes, per semantic column, its semantic centroid (a value of the group
    or a taxonomic ancestor of them), and per numeric column its mean. The release is
    verified like every other: k-anonymity is re-derived from the published values.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : sequence of str
        The semantic quasi-identifiers.
    k : int
        Minimum group size, ``k >= 2``.
    ontology : "wordnet", Hierarchy, Taxonomy, or a mapping column -> one of them
        ``"wordnet"``: WordNet 3.0 nouns (each value's first noun synset, or the synset
        ``synsets`` gives); a :class:`~microagg.hierarchy.Hierarchy` (ARX-style) or a
        :class:`~microagg.semantic.taxonomy.Taxonomy`.
    distance : {"feature", "wu-palmer", "ic"}, default="feature"
    numeric : sequence of str, default=()
        Numeric quasi-identifiers (min-max normalized distance, published as group means).
    synsets : mapping column -> (mapping value -> synset name), optional
    identifiers : sequence of str, default=()
        Dropped from the release.
    random_state : None, int or numpy.random.Generator, default=None
        Recorded in the release; the method itself is deterministic.

    Returns
    -------
    Release
        ``metrics`` has ``semantic_information_loss`` and ``generalized_share`` (means over
        the semantic columns, and per column).

    References
    ----------
    Martinez, S., Sanchez, D., Valls, A. "Semantic adaptive microaggregation of categorical
    microdata." Computers & Security 31 (2012) 653-672; Martinez, S., Valls, A., Sanchez, D.
    "Semantically-grounded construction of centroids for datasets with textual attributes."
    Knowl.-Based Syst. 35 (2012) 160-172.
    """
    started = time.perf_counter()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame. Got {type(df).__name__} instead.")
    columns, numeric, identifiers = tuple(columns), tuple(numeric), tuple(identifiers)
    _check_columns(df, columns, numeric, identifiers)
    k = check_k(k, n_samples=len(df), caller="semantic-mdav")
    if distance not in DISTANCES:
        raise ValueError(f"The 'distance' parameter of semantic-mdav must be one of "
                         f"{', '.join(DISTANCES)}. Got {distance!r} instead.")
    seed, _ = resolve_seed(random_state)
    timings: dict[str, float] = {}
    cols = [_column(df, c, _ontology_for(ontology, c), distance, (synsets or {}).get(c))
            for c in columns]
    timings["ontology"] = time.perf_counter() - started
    t = time.perf_counter()
    labels = semantic_mdav_labels([c.space for c in cols],
                                  np.column_stack([c.codes for c in cols]),
                                  _normalized(df, numeric), k)
    labels = check_labels(labels, n_samples=len(df), k=k)
    timings["partition"] = time.perf_counter() - t
    t = time.perf_counter()
    published, centroids = _publish(df, cols, numeric, identifiers, labels)
    timings["aggregate"] = time.perf_counter() - t
    t = time.perf_counter()
    classes = published_classes(published, (*columns, *numeric))
    checks = {"k_anonymity": k_check(k, int(np.bincount(classes).min())),
              "group_k": group_k_check(k, int(np.bincount(labels).min()),
                                       "size of the smallest group (from the labels)")}
    timings["verify"] = time.perf_counter() - t
    metrics = _measure(cols, centroids, labels)
    timings["total"] = time.perf_counter() - started
    params = {
        "method": "semantic-mdav", "k": k, "quasi_identifiers": (*columns, *numeric),
        "semantic_columns": columns, "numeric_quasi_identifiers": numeric,
        "ontology": MappingProxyType({c.name: c.source for c in cols}),
        "distance": distance, "identifiers": identifiers,
        "synsets": MappingProxyType({c: MappingProxyType(dict(m))
                                     for c, m in (synsets or {}).items()}),
        "aggregation": "semantic-centroid", "microagg_version": __version__,
    }
    return Release.of(data=published, labels=labels, params=params, layout="semantic",
                      seed=seed, checks=checks, metrics=metrics, timings=timings)
