"""``anonymize_documents``: k-anonymous release of documents as TF-IDF vectors, each
record's vector replaced by its group's spherical centroid."""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

from .. import __version__
from .._base.validation import RandomState, check_k, check_labels, resolve_seed
from .._pipeline.result import Release
from .._pipeline.verify import class_sizes, group_k_check, k_check, published_classes
from ..exceptions import InternalError
from .mdav import _spherical_mdav_labels, spherical_centroids
from .measure import cosine_loss, nearest_vector_linkage, topic_agreement
from .published import PublishedDocuments
from .vectors import document_texts, tfidf_vectors

__all__ = ["anonymize_documents", "vector_classes"]

_METHOD = "spherical-mdav"
_CALLER = "anonymize_documents"


def vector_classes(published: sp.csr_matrix) -> NDArray[np.intp]:
    """Equivalence class of each published row: rows with identical stored vectors (same
    terms, same weights, bit for bit) share one, numbered by first appearance."""
    P = sp.csr_matrix(published)
    P.sum_duplicates()
    P.eliminate_zeros()
    P.sort_indices()
    keys = [P.indices[a:b].tobytes() + b"|" + P.data[a:b].tobytes()
            for a, b in zip(P.indptr[:-1], P.indptr[1:], strict=True)]
    return published_classes(pd.DataFrame({"vector": keys}), ["vector"])


def _check_topics(n_topics: Any) -> int | None:
    if n_topics is None:
        return None
    if isinstance(n_topics, bool) or not isinstance(n_topics, numbers.Integral) \
            or n_topics < 2:
        raise ValueError(f"The 'n_topics' parameter of {_CALLER} must be None or an int >= 2. "
                         f"Got {n_topics!r} instead.")
    return int(n_topics)


def anonymize_documents(  # noqa: PLR0913 - the public face: one keyword per option
        documents: Any, *, k: int, text_column: str | None = None,
        max_features: int | None = None, min_df: int | float | None = None,
        max_df: int | float = 1.0, stop_words: str | None = None,
        ngram_range: tuple[int, int] = (1, 1), n_topics: int | None = 10,
        random_state: RandomState = None) -> Release:
    """Spherical microaggregation of documents: every published vector is shared by >= k.

    The documents become TF-IDF vectors (scikit-learn, L2-normalized rows, sparse), are
    partitioned by :func:`~microagg.documents.spherical_mdav` (cosine similarity), and each
    record publishes its group's spherical centroid (the normalized mean direction). The
    texts are never published. The k-anonymity is re-derived from the published vectors.

    Parameters
    ----------
    documents : sequence of str or pandas.DataFrame
        One document per record; a DataFrame needs ``text_column`` (its other columns are
        not published).
    k : int
        Minimum number of records sharing each published vector, ``2 <= k <= n_documents``.
    text_column : str, optional
        The column holding the documents when ``documents`` is a DataFrame.
    max_features : int or None, default=None
        Keep only the most frequent terms (``TfidfVectorizer(max_features=...)``).
    min_df : int, float or None, default=None
        A term is kept if in at least ``min_df`` documents (a float: a share). ``None``:
        ``k``, so that no term used by fewer than k documents enters the published
        vocabulary (a lower value is allowed, with a warning).
    max_df : int or float, default=1.0
        Drop terms in more than ``max_df`` documents (a float: a share).
    stop_words : {None, "english"}, default=None
        scikit-learn's English stop-word list, or none.
    ngram_range : (int, int), default=(1, 1)
        Word n-grams, ``1 <= low <= high <= 3``.
    n_topics : int or None, default=10
        Topics (k-means clusters) for the topic-agreement metric; ``None`` skips it.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the k-means of the topic metric; recorded as :attr:`Release.seed` (the
        partition itself is deterministic).

    Returns
    -------
    Release
        ``data``: :class:`~microagg.documents.PublishedDocuments` (``.vectors``,
        ``.vocabulary``, ``.top_terms()``, ``.save_npz()``); ``checks["k_anonymity"]``
        counted on identical published vectors; ``metrics``: ``cosine_loss`` (mean
        ``1 - cos``), ``spherical_sse_sst`` (%), ``topic_ari`` / ``topic_nmi``,
        ``linkage_risk`` and ``reidentification_risk``.

    References
    ----------
    Abril, D., Navarro-Arribas, G. and Torra, V. "Spherical microaggregation: anonymizing
    sparse vector spaces." Computers & Security 49 (2015) 28-44.

    Examples
    --------
    >>> texts = ["cat dog pet", "dog cat pet", "pet cat dog",
    ...          "stock bond market", "bond market stock", "market stock bond"]
    >>> release = anonymize_documents(texts, k=3, min_df=1, n_topics=None, random_state=0)
    >>> release.k, release.labels.tolist(), release.data.top_terms(1)[0]
    (3, [0, 0, 0, 1, 1, 1], 'cat')
    """
    start = time.perf_counter()
    texts = document_texts(documents, text_column, caller=_CALLER)
    k = check_k(k, n_samples=len(texts), caller=_CALLER)
    topics = _check_topics(n_topics)
    seed, rng = resolve_seed(random_state)
    df_floor = k if min_df is None else min_df
    X, vocabulary = tfidf_vectors(texts, max_features=max_features, min_df=df_floor,
                                  max_df=max_df, stop_words=stop_words,
                                  ngram_range=ngram_range, caller=_CALLER)
    timings: dict[str, float] = {"vectorize": time.perf_counter() - start}
    t = time.perf_counter()
    labels = _checked_labels(X, k)
    timings["partition"] = time.perf_counter() - t
    t = time.perf_counter()
    published = PublishedDocuments(spherical_centroids(X, labels), labels, vocabulary)
    timings["aggregate"] = time.perf_counter() - t
    params = MappingProxyType({
        "method": _METHOD, "k": k, "text_column": text_column, "max_features": max_features,
        "min_df": df_floor, "max_df": max_df, "stop_words": stop_words,
        "ngram_range": tuple(int(v) for v in ngram_range), "n_topics": topics,
        "n_features": len(vocabulary), "microagg_version": __version__})
    warnings = _warnings(X, df_floor, k)
    return _verified(X, published, params, seed, rng, timings, warnings)


def _checked_labels(X: sp.csr_matrix, k: int) -> NDArray[np.intp]:
    """Spherical MDAV labels, verified; an invalid partition is a bug."""
    try:
        return check_labels(_spherical_mdav_labels(X, k), n_samples=X.shape[0], k=k)
    except (TypeError, ValueError) as error:  # pragma: no cover - a bug
        raise InternalError(f"spherical-mdav returned an invalid partition ({error}). "
                            "Nothing was released. This is a bug in microagg.") from error


def _warnings(X: sp.csr_matrix, min_df: int | float, k: int) -> tuple[str, ...]:
    """What the user should know: rare terms published, empty vectors, what k promises."""
    out = []
    if (isinstance(min_df, numbers.Integral) and min_df < k) or (
            not isinstance(min_df, numbers.Integral) and min_df * X.shape[0] < k):
        out.append(f"min_df={min_df!r} keeps terms used by fewer than k={k} documents: such "
                   "a term is published in the vocabulary and in its group's vector, and "
                   "may point to the one document that used it.")
    empty = int((np.diff(X.indptr) == 0).sum())
    if empty:
        out.append(f"{empty} document(s) have no term left in the vocabulary (min_df, "
                   "max_df, stop_words): their vectors are empty and grouped by position.")
    out.append("k-anonymity of the vectors hides which document is which among k; it does "
               "not hide what a group's documents share: a term in all k documents is "
               "published in their centroid.")
    return tuple(out)


def _verified(X: sp.csr_matrix, published: PublishedDocuments, params: Mapping[str, Any],
              seed: int, rng: np.random.Generator, timings: dict[str, float],
              warnings: tuple[str, ...]) -> Release:
    """Checks from the published vectors, then the metrics, then the Release."""
    k, labels = int(params["k"]), published.labels
    t = time.perf_counter()
    vectors = published.vectors
    classes = vector_classes(vectors)
    checks = {
        "k_anonymity": k_check(k, int(class_sizes(classes).min())),
        "group_k": group_k_check(k, int(np.bincount(labels).min()),
                                 "spherical-mdav: every group holds at least k documents"),
    }
    norms = np.sqrt(np.asarray(published.centroids.multiply(published.centroids)
                               .sum(axis=1)).ravel())
    timings["verify"] = time.perf_counter() - t
    t = time.perf_counter()
    metrics: dict[str, Any] = {"groups": int(labels.max()) + 1,
                               "unit_norm_error": float(np.abs(norms[norms > 0] - 1.0)
                                                        .max(initial=0.0)),
                               **cosine_loss(X, published.centroids, labels)}
    if params["n_topics"] is not None:
        agreement, _, _ = topic_agreement(X, published.centroids, labels,
                                          int(params["n_topics"]),
                                          int(rng.integers(0, 2**31 - 1)))
        metrics.update(agreement)
    metrics["linkage_risk"], metrics["reidentification_risk"] = nearest_vector_linkage(
        X, vectors, classes)
    timings["measure"] = time.perf_counter() - t
    return Release.of(data=published, labels=labels, params=params, layout="documents",
                      seed=seed, checks=checks, metrics=metrics, warnings=warnings,
                      timings=timings, rows=int(labels.size),
                      columns=(str(params["text_column"] or "text"),))
