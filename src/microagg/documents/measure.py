"""Utility and linkage risk of a document-vector release: cosine information loss, the
spherical SSE/SST, topic agreement (k-means on original vs published vectors) and
nearest-published-vector linkage. Everything stays sparse; validation is assumed."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["cosine_loss", "nearest_vector_linkage", "topic_agreement", "topic_clusters"]

_BLOCK_ENTRIES = 4_000_000  # similarities held at once by the linkage (32 MB of float64)


def _row_dots(A: sp.csr_matrix, B: sp.csr_matrix) -> NDArray[np.float64]:
    """Row-wise dot products of two sparse matrices of the same shape."""
    return np.asarray(A.multiply(B).sum(axis=1), dtype=np.float64).ravel()


def cosine_loss(original: sp.csr_matrix, centroids: sp.csr_matrix, labels: NDArray[np.intp]
                ) -> dict[str, float]:
    """Cosine information loss of publishing each record's group centroid.

    ``cosine_loss``: the mean of ``1 - cos(x_i, c_g(i))`` over the records (0: nothing lost;
    an empty vector counts 1). ``spherical_sse_sst``: ``100 * SSE / SST`` (%) on the unit
    sphere, ``SSE = sum 1 - x_i . c_g(i)`` within groups and ``SST = sum 1 - x_i . c`` to the
    normalized mean ``c`` of all records; for unit vectors ``|x - c|^2 = 2 (1 - x . c)``, so
    this is the usual SSE/SST with the published points kept on the sphere.

    Examples
    --------
    >>> X = sp.csr_matrix(np.eye(2))
    >>> C = sp.csr_matrix(np.full((1, 2), np.sqrt(0.5)))
    >>> {k: round(v, 4) for k, v in cosine_loss(X, C, np.array([0, 0])).items()}
    {'cosine_loss': 0.2929, 'spherical_sse_sst': 100.0}
    """
    norms = np.sqrt(_row_dots(original, original))
    dots = _row_dots(original, sp.csr_matrix(centroids[labels]))
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    total = np.asarray(original.sum(axis=0)).ravel()
    size = np.linalg.norm(total)
    to_mean = original @ (total / size) if size > 0 else np.zeros(original.shape[0])
    sst = float((norms - to_mean).sum())
    sse = float((norms - dots).sum())
    return {"cosine_loss": float(np.mean(1.0 - cos)),
            "spherical_sse_sst": 100.0 * sse / sst if sst > 0 else 0.0}


def topic_clusters(X: sp.csr_matrix, n_topics: int, seed: int,
                   weights: NDArray[np.float64] | None = None) -> NDArray[np.intp]:
    """Topics of unit vectors: scikit-learn's k-means on the sparse rows (for unit vectors,
    the nearest centre by Euclidean distance is the nearest by cosine), ``n_init=3``;
    ``weights`` counts each row that many times."""
    from sklearn.cluster import KMeans

    model = KMeans(n_clusters=n_topics, n_init=3, random_state=seed)
    return np.asarray(model.fit_predict(X, sample_weight=weights), dtype=np.intp)


def topic_agreement(original: sp.csr_matrix, centroids: sp.csr_matrix,
                    labels: NDArray[np.intp], n_topics: int, seed: int
                    ) -> tuple[dict[str, float], NDArray[np.intp], NDArray[np.intp]]:
    """Do the same topics come out of the published vectors? The same clustering
    (:func:`topic_clusters`, k-means) on the original vectors and on the published ones,
    compared by the adjusted Rand index and the normalized mutual information (1: the same
    topics). The published matrix holds one distinct vector per group, so it is clustered as
    the centroids weighted by their group sizes.

    Returns ``({"topic_ari", "topic_nmi"}, original topics, published topics)``.
    """
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    n_topics = min(n_topics, centroids.shape[0])
    before = topic_clusters(original, n_topics, seed)
    after = topic_clusters(centroids, n_topics, seed,
                           np.bincount(labels).astype(np.float64))[labels]
    return ({"topic_ari": float(adjusted_rand_score(before, after)),
             "topic_nmi": float(normalized_mutual_info_score(before, after))}, before, after)


def nearest_vector_linkage(original: sp.csr_matrix, published: sp.csr_matrix,
                           classes: NDArray[np.intp]) -> tuple[float, float]:
    """Record linkage by the most similar published vector (cosine).

    An intruder holding a record's original vector links it to the most similar DISTINCT
    published vector. Returns ``(linkage, reidentification)``: ``linkage`` is the share of
    records whose most similar published vector is their own (``1/t`` when it ties with
    ``t`` vectors, within 1e-12); ``reidentification`` divides each link by the number of
    records sharing that vector (``1 / group size``). Similarities are computed for blocks of
    records against the distinct published vectors (at most 4 million at once).

    Examples
    --------
    >>> X = sp.csr_matrix(np.eye(4))
    >>> C = sp.csr_matrix(np.sqrt(0.5) * np.array([[1.0, 1, 0, 0], [1, 1, 0, 0],
    ...                                            [0, 0, 1, 1], [0, 0, 1, 1]]))
    >>> nearest_vector_linkage(X, C, np.array([0, 0, 1, 1]))
    (1.0, 0.5)
    """
    n = original.shape[0]
    first = np.full(int(classes.max()) + 1, n, dtype=np.intp)
    np.minimum.at(first, classes, np.arange(n))
    distinct_t = sp.csr_matrix(published[first].T)
    sizes = np.bincount(classes)
    block = max(1, _BLOCK_ENTRIES // max(1, first.size))
    linked = np.empty(n)
    for start in range(0, n, block):
        stop = min(n, start + block)
        sims = (original[start:stop] @ distinct_t).toarray()  # block x distinct vectors
        best = sims.max(axis=1)
        ties = (sims >= (best - 1e-12)[:, None]).sum(axis=1)
        own = sims[np.arange(stop - start), classes[start:stop]] >= best - 1e-12
        linked[start:stop] = own / ties
    return float(linked.mean()), float((linked / sizes[classes]).mean())
