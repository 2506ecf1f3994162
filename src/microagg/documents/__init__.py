"""Spherical microaggregation of documents (Abril, Navarro-Arribas & Torra 2015): sparse
TF-IDF vectors grouped by cosine similarity, each published as its group's unit centroid.

:func:`spherical_mdav` (the partition, on a sparse matrix), :func:`spherical_centroids`,
:func:`anonymize_documents` (the release), :class:`PublishedDocuments` (what it publishes),
:func:`load_published` and :func:`wordnet_glosses` (a real corpus read offline). Names load
on first access (PEP 562): importing the package loads neither pandas nor scikit-learn.
"""

from __future__ import annotations

from .._runtime.lazy import lazy_names

__all__ = ["PublishedDocuments", "anonymize_documents", "load_published",
           "spherical_centroids", "spherical_mdav", "wordnet_glosses"]

_LAZY = {
    "PublishedDocuments": ".published",
    "anonymize_documents": ".release",
    "load_published": ".published",
    "spherical_centroids": ".mdav",
    "spherical_mdav": ".mdav",
    "wordnet_glosses": ".corpus",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__, globals())
