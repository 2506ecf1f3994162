"""CDT, clustering dissimilar tuples (seed 004): entropy weights, weighted Gower distance,
k-medoids (FasterPAM) chosen by silhouette width, and the CDT partition.

Subramanian, Fayaz, Johnson & Thirumaaran, "Clustering Dissimilar Tuples: A Stronger Notion
of Privacy", IJETER 8(9) (2020) 6470-6481.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed

MAX_RECORDS = 10_000
"""Largest table :func:`cdt` accepts (its n x n matrices take 8 n^2 bytes each)."""

__all__ = ["MAX_RECORDS", "Columns", "attribute_entropy", "cdt", "choose_clusters", "entropy_weights",
           "gower_matrix"]


def attribute_entropy(values: ArrayLike) -> float:
    """Shannon entropy in bits of a column's values (each distinct value a symbol; numeric
    values too, as in seed 004 section 3.1.1).

    Examples
    --------
    >>> round(attribute_entropy([12, 45, 36, 23, 57, 24, 64, 42, 64, 34]), 6)
    3.121928
    """
    arr = np.asarray(values, dtype=object).ravel()
    if arr.size == 0:
        return 0.0
    _, counts = np.unique(arr.astype(str), return_counts=True)
    p = counts / arr.size
    return float(-(p * np.log2(p)).sum())


def entropy_weights(entropies: ArrayLike) -> NDArray[np.float64]:
    """Attribute weights ``w = 1 - e / sum(e)`` (seed 004, section 3.1.2).

    Seed 004's Eq. 4 says ``w = e / sum(e)``, but its algorithm computes ``1 - e / sum(e)``
    and its printed weights (0.7747309 for age in Table 3) follow the algorithm, which we
    implement. All-zero entropies give equal weights.

    Examples
    --------
    >>> entropy_weights([3.121928, 1.0, 1.970951, 2.521928, 2.321928, 2.921928]).round(6).tolist()
    [0.774731, 0.927843, 0.857782, 0.818025, 0.832457, 0.789162]
    """
    e = np.asarray(entropies, dtype=np.float64)
    total = e.sum()
    if total <= 0:
        return np.ones_like(e)
    return 1.0 - e / total


@dataclass(frozen=True)
class Columns:
    """Attributes for Gower: numeric columns (original scale) and categorical codes."""

    numeric: NDArray[np.float64]
    codes: NDArray[np.intp]

    @classmethod
    def of(cls, numeric: ArrayLike | None, codes: ArrayLike | None) -> Columns:
        num = np.zeros((0, 0)) if numeric is None else np.asarray(numeric, dtype=np.float64)
        cod = np.zeros((0, 0), dtype=np.intp) if codes is None else np.asarray(codes, np.intp)
        n = max(num.shape[0], cod.shape[0])
        num = num.reshape(n, -1) if num.size or num.shape[0] == n else np.zeros((n, 0))
        cod = cod.reshape(n, -1) if cod.size or cod.shape[0] == n else np.zeros((n, 0), np.intp)
        return cls(num, cod)

    @property
    def n_samples(self) -> int:
        return int(max(self.numeric.shape[0], self.codes.shape[0]))

    def take(self, rows: NDArray[np.intp]) -> Columns:
        return Columns(self.numeric[rows], self.codes[rows])

    def entropies(self) -> NDArray[np.float64]:
        return np.array([attribute_entropy(self.numeric[:, j]) for j in range(self.numeric.shape[1])]
                        + [attribute_entropy(self.codes[:, j]) for j in range(self.codes.shape[1])])


def gower_matrix(columns: Columns, weights: ArrayLike | None = None, *,
                 block_rows: int = 2048, ranges: ArrayLike | None = None
                 ) -> NDArray[np.float64]:
    """Weighted Gower dissimilarity matrix (seed 004, Eqs. 5-7), shape (n, n).

    ``H_ij = sum_k w_k H_ijk / sum_k w_k`` with ``H_ijk = |y_ik - y_jk| / (max_k - min_k)``
    for a numeric attribute (0 for a constant one) and the mismatch (0 or 1) for a
    categorical one. Computed blockwise (``block_rows`` rows at a time), vectorized.
    ``ranges`` gives the numeric ranges to divide by (default: those of ``columns``).
    """
    num, cod = columns.numeric, columns.codes
    n = columns.n_samples
    p = num.shape[1] + cod.shape[1]
    w = np.ones(p) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (p,):
        raise ValueError(f"weights has shape {w.shape}; expected ({p},).")
    if ranges is not None:
        spans = np.asarray(ranges, dtype=np.float64)
    else:
        spans = num.max(axis=0) - num.min(axis=0) if num.shape[1] else np.zeros(0)
    scaled = np.where(spans > 0, num / np.where(spans > 0, spans, 1.0), 0.0)
    out = np.empty((n, n))
    total = w.sum() if w.sum() > 0 else 1.0
    for start in range(0, n, block_rows):
        stop = min(n, start + block_rows)
        acc = np.zeros((stop - start, n))
        for j in range(num.shape[1]):
            acc += w[j] * np.abs(scaled[start:stop, j, None] - scaled[None, :, j])
        for j in range(cod.shape[1]):
            acc += w[num.shape[1] + j] * (cod[start:stop, j, None] != cod[None, :, j])
        out[start:stop] = acc / total
    return out


def _kmedoids() -> Any:
    try:
        import kmedoids
    except ImportError:
        raise ImportError("cdt needs the kmedoids package (FasterPAM): "
                          "pip install 'microagg[cdt]'") from None
    return kmedoids


def choose_clusters(D: NDArray[np.float64], *, criterion: str, max_clusters: int | None
                    ) -> tuple[int, NDArray[np.intp], dict[int, float]]:
    """k-medoids (FasterPAM) for every cluster count 2..n-1 (or 2..``max_clusters``), each
    started from the previous count's medoids plus one greedy BUILD step, and scored by the
    average silhouette width on ``D`` (Rousseeuw 1987); the count with the largest
    (``criterion="max"``) or smallest (``"min"``) width wins. Returns the count, its labels
    and every width.
    """
    kmedoids = _kmedoids()
    n = D.shape[0]
    top = n - 1 if max_clusters is None else min(n - 1, int(max_clusters))
    if top < 2:
        return 1, np.zeros(n, dtype=np.intp), {}
    widths: dict[int, float] = {}
    best: tuple[float, int, NDArray[np.intp]] | None = None
    medoids = np.array([int(np.argmin(D.sum(axis=0)))], dtype=np.intp)
    for c in range(2, top + 1):
        # warm start: the previous count's medoids plus one BUILD step (the record that
        # lowers the total deviation most), then FasterPAM swaps
        nearest = D[:, medoids].min(axis=1)
        gain = np.minimum(nearest[:, None], D).sum(axis=0)
        gain[medoids] = np.inf
        medoids = np.append(medoids, int(np.argmin(gain)))
        result = kmedoids.fasterpam(D, medoids.copy(), n_cpu=1)  # deterministic from here
        medoids = np.asarray(result.medoids, dtype=np.intp)
        labels = np.asarray(result.labels, dtype=np.intp)
        if np.unique(labels).size < 2:
            continue
        # the kmedoids package's silhouette (Rust) equals scikit-learn's silhouette_score on
        # a precomputed matrix (singletons count 0; a test checks it) and is ~25x faster,
        # which the 100x target of the seed's timings needs
        sw = float(kmedoids.silhouette(D, labels, n_cpu=1)[0])
        widths[c] = sw
        score = sw if criterion == "max" else -sw
        if best is None or score > best[0]:
            best = (score, c, labels)
    if best is None:
        return 1, np.zeros(n, dtype=np.intp), widths
    return best[1], best[2], widths


def cdt(X: ArrayLike | Columns | Any, k: int | None = None, *, sensitive: Columns | ArrayLike | None = None,
        sensitive_clusters: int | None = None, max_clusters: int | None = 30,
        random_state: RandomState = None) -> NDArray[np.intp]:
    """CDT partition (seed 004, section 3.2).

    1. Sensitive tuples: entropy weights, weighted Gower distance ``g_d``, similarity
       ``g_s = 1 - g_d**2``; k-medoids on ``g_s`` used as a dissimilarity (so that each
       cluster gathers *dissimilar* sensitive tuples), the cluster count minimizing the
       average silhouette width (or ``sensitive_clusters`` if given: the paper itself
       overrides its rule in its example, 8 -> 2).
    2. In each such cluster, quasi-identifier tuples: entropy weights of the cluster,
       weighted Gower distance, k-medoids with the count maximizing the silhouette width.
    3. With ``k``: CDT alone does not guarantee k (the paper's Table 9 has classes of 2);
       every group under k is merged with the group whose medoid is nearest (Gower on the
       quasi-identifiers), smallest first, until all have k or more.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or Columns
        Quasi-identifiers (numeric array, or numeric + categorical codes).
    k : int, default=None
        Minimum group size to enforce; ``None`` keeps CDT's own groups.
    sensitive : Columns or array-like, default=None
        Sensitive attributes; without them step 1 makes a single cluster.
    sensitive_clusters : int, default=None
        Force the number of sensitive clusters instead of the silhouette rule.
    max_clusters : int or None, default=30
        Largest cluster count scanned; ``None`` scans 2..n-1 like the paper (slow for large
        n: one k-medoids and one silhouette per count).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds FasterPAM when ``sensitive_clusters`` is given; the silhouette scans are
        deterministic (warm-started, see :func:`choose_clusters`).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
    """
    qi = _quasi_identifiers(X)
    n = qi.n_samples
    if n > MAX_RECORDS:
        raise ValueError(
            f"cdt builds an n x n distance matrix (as seed 004 does): {n} records would need "
            f"{8 * n * n / 2**30:.1f} GiB. It is meant for up to {MAX_RECORDS} records; "
            "sample the table or use mage / mdav for large files.")
    if k is not None:
        k = check_k(k, n_samples=n, caller="cdt")
    if max_clusters is not None and (isinstance(max_clusters, bool) or
                                     not isinstance(max_clusters, (int, np.integer)) or
                                     max_clusters < 2):
        raise ValueError(f"The 'max_clusters' parameter of cdt must be an int >= 2 or None. "
                         f"Got {max_clusters!r}.")
    seed, _ = resolve_seed(random_state)
    seed = seed % (2**31)
    if sensitive is None:
        outer = np.zeros(n, dtype=np.intp)
    else:
        outer = _sensitive_clusters(sensitive, n, count=sensitive_clusters,
                                    max_clusters=max_clusters, seed=seed)
    labels = _quasi_identifier_clusters(qi, outer, max_clusters)
    if k is not None:
        labels = _merge_small(qi, labels, k)
    return labels


def _quasi_identifiers(X: ArrayLike | Columns | Any) -> Columns:
    from .mixed import MixedData

    if isinstance(X, MixedData):
        return Columns(X.numeric, X.codes)
    return X if isinstance(X, Columns) else Columns.of(check_matrix(X, caller="cdt"), None)


def _sensitive_clusters(sensitive: Columns | ArrayLike, n: int, *, count: int | None,
                        max_clusters: int | None, seed: int) -> NDArray[np.intp]:
    """Step 1 of :func:`cdt`: clusters of dissimilar sensitive tuples (``count`` of them, or
    the count of smallest average silhouette width)."""
    sens = sensitive if isinstance(sensitive, Columns) else Columns.of(sensitive, None)
    if sens.n_samples != n:
        raise ValueError(f"sensitive has {sens.n_samples} rows for {n} records.")
    g_d = gower_matrix(sens, entropy_weights(sens.entropies()))
    g_s = 1.0 - g_d ** 2
    np.fill_diagonal(g_s, 0.0)
    if count is None:
        _, outer, _ = choose_clusters(g_s, criterion="min", max_clusters=max_clusters)
        return outer
    kmedoids = _kmedoids()
    c = int(count)
    if not 1 <= c <= n:
        raise ValueError(f"sensitive_clusters must be in 1..{n}. Got {c}.")
    return (np.zeros(n, dtype=np.intp) if c == 1 else np.asarray(
        kmedoids.fasterpam(g_s, c, init="build", random_state=seed, n_cpu=1).labels,
        dtype=np.intp))


def _quasi_identifier_clusters(qi: Columns, outer: NDArray[np.intp], max_clusters: int | None
                               ) -> NDArray[np.intp]:
    """Step 2 of :func:`cdt`: in each sensitive cluster, clusters of the quasi-identifiers
    (the count of largest average silhouette width), numbered consecutively."""
    n = qi.n_samples
    labels = np.empty(n, dtype=np.intp)
    next_label = 0
    for s in np.unique(outer):
        rows = np.flatnonzero(outer == s)
        part = qi.take(rows)
        if rows.size < 3:
            inner = np.zeros(rows.size, dtype=np.intp)
        else:
            D = gower_matrix(part, entropy_weights(part.entropies()))
            _, inner, _ = choose_clusters(D, criterion="max", max_clusters=max_clusters)
        inner = np.unique(inner, return_inverse=True)[1].ravel()
        labels[rows] = inner + next_label
        next_label += int(inner.max()) + 1
    return labels


def _merge_small(qi: Columns, labels: NDArray[np.intp], k: int) -> NDArray[np.intp]:
    """Merge every group under k into the group with the nearest medoid (smallest first)."""
    weights = entropy_weights(qi.entropies())
    ranges = qi.numeric.max(axis=0) - qi.numeric.min(axis=0) if qi.numeric.shape[1] else None
    lab = labels.copy()
    while True:
        sizes = np.bincount(lab)
        alive = np.flatnonzero(sizes > 0)
        small = alive[sizes[alive] < k]
        if small.size == 0 or alive.size == 1:
            break
        g = int(small[np.argmin(sizes[small])])
        medoids = np.array([_medoid(qi, np.flatnonzero(lab == h), weights, ranges)
                            for h in alive])
        D = gower_matrix(qi.take(medoids), weights, ranges=ranges)
        row = D[int(np.flatnonzero(alive == g)[0])].copy()
        row[alive == g] = np.inf
        lab[lab == g] = alive[int(np.argmin(row))]
    return np.unique(lab, return_inverse=True)[1].ravel().astype(np.intp)


def _medoid(qi: Columns, rows: NDArray[np.intp], weights: NDArray[np.float64],
            ranges: NDArray[np.float64] | None) -> int:
    if rows.size <= 2:
        return int(rows[0])
    D = gower_matrix(qi.take(rows), weights, ranges=ranges)
    return int(rows[np.argmin(D.sum(axis=1))])
