"""Mixed numeric + categorical data: the MAGE mixed distance, Gower distance, and the MAGE
partition (cluster partition, then CKA merging), after Han, Yu, Yu, Lu & Liu (Knowl.-Based
Syst. 55, 2014) as described in seed 002."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from .._runtime.jit import njit
from ..hierarchy import HierarchyTables

__all__ = ["MixedData", "gower_distance", "mage", "mixed_distance"]


@dataclass(frozen=True)
class MixedData:
    """Quasi-identifiers encoded for the mixed-data kernels.

    Attributes
    ----------
    numeric : ndarray of shape (n_samples, r)
        Numeric quasi-identifiers min-max normalized to [0, 1] (constant columns are 0).
    codes : ndarray of shape (n_samples, s)
        Leaf code of each categorical quasi-identifier in its hierarchy.
    tables : tuple of HierarchyTables
        One per categorical column.
    """

    numeric: NDArray[np.float64]
    codes: NDArray[np.intp]
    tables: tuple[HierarchyTables, ...]

    @classmethod
    def build(cls, numeric: ArrayLike | None, codes: ArrayLike | None,
              tables: Sequence[HierarchyTables] = ()) -> MixedData:
        """Normalize the numeric part and check the codes against the tables."""
        num = None if numeric is None else check_matrix(numeric, caller="MixedData", name="numeric")
        cod = None if codes is None else np.asarray(codes, dtype=np.intp)
        n = num.shape[0] if num is not None else (cod.shape[0] if cod is not None else 0)
        if num is None:
            num = np.zeros((n, 0))
        else:
            lo = num.min(axis=0)
            span = num.max(axis=0) - lo
            num = np.where(span > 0, (num - lo) / np.where(span > 0, span, 1.0), 0.0)
        if cod is None:
            cod = np.zeros((n, 0), dtype=np.intp)
        if cod.ndim == 1:
            cod = cod.reshape(-1, 1)
        if cod.shape[0] != n or cod.shape[1] != len(tables):
            raise ValueError(f"codes has shape {cod.shape}; expected ({n}, {len(tables)}).")
        for j, t in enumerate(tables):
            if cod.shape[0] and (cod[:, j].min() < 0 or cod[:, j].max() >= len(t.leaves)):
                raise ValueError(f"codes of categorical column {j} must be in 0..{len(t.leaves) - 1}.")
        if n == 0 or num.shape[1] + cod.shape[1] == 0:
            raise ValueError("MixedData needs at least one record and one column.")
        return cls(np.ascontiguousarray(num), np.ascontiguousarray(cod), tuple(tables))

    @property
    def n_samples(self) -> int:
        return int(self.numeric.shape[0])

    def kernel_arrays(self) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """Ancestor tables padded to one array (s, max height + 1, max leaves) and heights."""
        s = len(self.tables)
        hmax = max((t.height for t in self.tables), default=0)
        mmax = max((len(t.leaves) for t in self.tables), default=1)
        anc = np.zeros((max(s, 1), hmax + 1, mmax), dtype=np.intp)
        heights = np.ones(max(s, 1))
        for j, t in enumerate(self.tables):
            m = len(t.leaves)
            anc[j, : t.height + 1, :m] = t.ancestor
            anc[j, t.height + 1:, :m] = t.ancestor[t.height]  # the root above the top
            heights[j] = max(t.height, 1)
        return anc, heights

    def mapping(self) -> tuple[float, float]:
        """``(A, B)`` of the mapping ``f(d_c) = A + B d_c`` (see :func:`mixed_distance`)."""
        r, s = self.numeric.shape[1], len(self.tables)
        if s == 0:
            return 0.0, 0.0
        if r == 0:
            return 0.0, 1.0
        do_min, do_max = 0.0, math.sqrt(r)  # over the normalized domain [0, 1]^r
        dc_min, dc_max = 0.0, float(s)      # every hierarchy's root is at distance 1
        slope = (do_max - do_min) / (dc_max - dc_min)
        return (s / r) * (do_min - slope * dc_min), (s / r) * slope


def mixed_distance(data: MixedData, i: int, rows: ArrayLike | None = None) -> NDArray[np.float64]:
    """MAGE mixed distance from record ``i`` to ``rows`` (all records by default).

    ``d(t_i, t_j) = d_o(t_i, t_j) + f(d_c(t_i, t_j))`` where ``d_o`` is the Euclidean distance
    of the min-max normalized numeric attributes, ``d_c`` the sum over categorical attributes
    of the normalized hierarchical distance (level of the lowest common ancestor over the
    hierarchy's height), and ``f`` maps the categorical range onto the numeric one and weighs
    it by the ratio of attribute counts:

    ``f(d_c) = (N_c / N_o) * (d_o,min + (d_o,max - d_o,min) / (d_c,max - d_c,min) * (d_c - d_c,min))``

    Seed 002 prints this formula with the parentheses lost and defines ``N_c`` as "the number
    of numerical attributes"; we read ``N_c`` as the number of categorical and ``N_o`` of
    numeric attributes, as in the MAGE paper. The extremes are taken over the domain ("all
    possible combinations of values"): ``d_o`` in ``[0, sqrt(N_o)]`` and ``d_c`` in
    ``[0, N_c]``, so ``f(d_c) = d_c / sqrt(N_o)``: a categorical attribute whose values
    differ at the root weighs as much as a numeric attribute spanning its whole range. With
    no numeric attribute the distance is ``d_c``; with no categorical one it is ``d_o``.
    """
    idx = np.arange(data.n_samples) if rows is None else np.asarray(rows, dtype=np.intp)
    d_o = np.sqrt(((data.numeric[idx] - data.numeric[i]) ** 2).sum(axis=1))
    d_c = np.zeros(idx.size)
    for j, t in enumerate(data.tables):
        a = t.ancestor[0, data.codes[i, j]]
        b = t.ancestor[0, data.codes[idx, j]]
        d_c += t.join_level(np.full(idx.size, a), b) / max(t.height, 1)
    A, B = data.mapping()
    return d_o + (A + B * d_c if data.tables else 0.0)


def gower_distance(data: MixedData, i: int, rows: ArrayLike | None = None, *,
                   hierarchical: bool = False) -> NDArray[np.float64]:
    """Gower distance from record ``i`` to ``rows``: the mean over attributes of
    ``|x - y| / range`` (numeric, already normalized) and of the categorical mismatch (0 or 1;
    the normalized hierarchical distance with ``hierarchical=True``).

    Gower, J. C. "A general coefficient of similarity and some of its properties."
    Biometrics 27(4) (1971) 857-871; seed 004, Eq. for d(x, y).
    """
    idx = np.arange(data.n_samples) if rows is None else np.asarray(rows, dtype=np.intp)
    total = np.abs(data.numeric[idx] - data.numeric[i]).sum(axis=1)
    for j, t in enumerate(data.tables):
        if hierarchical:
            a = t.ancestor[0, data.codes[i, j]]
            total += t.join_level(np.full(idx.size, a), t.ancestor[0, data.codes[idx, j]]) \
                / max(t.height, 1)
        else:
            total += (data.codes[idx, j] != data.codes[i, j]).astype(np.float64)
    return total / (data.numeric.shape[1] + len(data.tables))


@njit(cache=True)
def _join(anc, j, level_a, leaf_a, level_b, leaf_b):  # pragma: no cover - numba
    """Level of the lowest common ancestor of two nodes of hierarchy ``j``."""
    lo = level_a if level_a > level_b else level_b
    for level in range(lo, anc.shape[1]):
        if anc[j, level, leaf_a] == anc[j, level, leaf_b]:
            return level
    return anc.shape[1] - 1


@njit(cache=True)
def _cluster_partition(num, codes, anc, heights, A, B, centres, max_iter):  # pragma: no cover  # noqa: C901, PLR0912 - numba kernel: one loop nest, kept whole for speed
    """Assign every record to the nearest centre (mixed distance), recompute centres (numeric
    mean, categorical most frequent leaf), until two consecutive assignments agree."""
    n, r = num.shape
    s = codes.shape[1]
    c = centres.shape[0]
    cnum = np.empty((c, r))
    ccode = np.empty((c, s), dtype=np.intp)
    for t in range(c):
        cnum[t] = num[centres[t]]
        for j in range(s):
            ccode[t, j] = codes[centres[t], j]
    labels = np.full(n, -1, dtype=np.intp)
    mmax = anc.shape[2]
    for _ in range(max_iter):
        changed = False
        for i in range(n):
            best = 0
            best_d = np.inf
            for t in range(c):
                d_o = 0.0
                for f in range(r):
                    diff = num[i, f] - cnum[t, f]
                    d_o += diff * diff
                d = math.sqrt(d_o)
                if s > 0:
                    d_c = 0.0
                    for j in range(s):
                        d_c += _join(anc, j, 0, codes[i, j], 0, ccode[t, j]) / heights[j]
                    d += A + B * d_c
                if d < best_d:
                    best_d = d
                    best = t
            if labels[i] != best:
                labels[i] = best
                changed = True
        if not changed:
            break
        sums = np.zeros((c, r))
        count = np.zeros(c)
        freq = np.zeros((c, s, mmax))
        for i in range(n):
            t = labels[i]
            count[t] += 1.0
            for f in range(r):
                sums[t, f] += num[i, f]
            for j in range(s):
                freq[t, j, codes[i, j]] += 1.0
        for t in range(c):
            if count[t] > 0:  # an empty cluster keeps its centre
                for f in range(r):
                    cnum[t, f] = sums[t, f] / count[t]
                for j in range(s):
                    ccode[t, j] = np.argmax(freq[t, j])
    return labels


@njit(cache=True)
def _cka(num, codes, anc, heights, A, B, k, order):  # pragma: no cover - numba  # noqa: C901, PLR0915 - numba kernel: one loop nest, kept whole for speed
    """CKA on one cluster: singleton classes; take classes in ``order``; while the taken
    class has fewer than k records, merge into it the open class at the smallest mixed
    distance (centroid distance plus the generalization the union needs); a class of k or
    more is closed. The last open class, if under k, joins the nearest closed class."""
    n, r = num.shape
    s = codes.shape[1]
    size = np.ones(n)
    sums = num.copy()
    level = np.zeros((n, s), dtype=np.intp)
    leaf = codes.copy()
    owner = np.arange(n)  # class of each record
    nxt = np.full(n, -1, dtype=np.intp)  # linked list of each class's records
    tail = np.arange(n)
    is_open = np.ones(n, dtype=np.bool_)
    n_open = n
    closed = np.zeros(n, dtype=np.bool_)

    def dist(a, b):
        d_o = 0.0
        for f in range(r):
            diff = sums[a, f] / size[a] - sums[b, f] / size[b]
            d_o += diff * diff
        d = math.sqrt(d_o)
        if s > 0:
            d_c = 0.0
            for j in range(s):
                d_c += _join(anc, j, level[a, j], leaf[a, j], level[b, j], leaf[b, j]) / heights[j]
            d += A + B * d_c
        return d

    def absorb(a, b):
        for j in range(s):
            level[a, j] = _join(anc, j, level[a, j], leaf[a, j], level[b, j], leaf[b, j])
        size[a] += size[b]
        for f in range(r):
            sums[a, f] += sums[b, f]
        u = b
        while u != -1:
            owner[u] = a
            u = nxt[u]
        nxt[tail[a]] = b
        tail[a] = tail[b]

    for t in range(n):
        a = order[t]
        if not is_open[a]:
            continue
        while size[a] < k:
            best = -1
            best_d = np.inf
            for b in range(n):
                if is_open[b] and b != a:
                    d = dist(a, b)
                    if d < best_d:
                        best_d = d
                        best = b
            if best < 0:  # a is the last open class
                for b in range(n):
                    if closed[b]:
                        d = dist(a, b)
                        if d < best_d:
                            best_d = d
                            best = b
                if best < 0:  # the whole cluster is under k: one class (the caller merges)
                    break
                absorb(best, a)
                is_open[a] = False
                n_open -= 1
                break
            absorb(a, best)
            is_open[best] = False
            n_open -= 1
        if is_open[a] and size[a] >= k:
            is_open[a] = False
            closed[a] = True
            n_open -= 1
    return owner


def _centres_distance(data: MixedData, labels: NDArray[np.intp], g: int, others: NDArray[np.intp]
                      ) -> NDArray[np.float64]:
    """Mixed distance between cluster g's centre and the centres of ``others``."""
    def centre(h: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        rows = labels == h
        num = data.numeric[rows].mean(axis=0)
        modes = np.array([np.bincount(data.codes[rows, j]).argmax()
                          for j in range(len(data.tables))], dtype=np.intp)
        return num, modes

    num_g, mode_g = centre(g)
    A, B = data.mapping()
    out = np.empty(others.size)
    for t, h in enumerate(others):
        num_h, mode_h = centre(int(h))
        d = float(np.sqrt(((num_g - num_h) ** 2).sum()))
        if data.tables:
            d_c = sum(float(tb.join_level(tb.ancestor[0, mode_g[j]], tb.ancestor[0, mode_h[j]])[0])
                      / max(tb.height, 1) for j, tb in enumerate(data.tables))
            d += A + B * d_c
        out[t] = d
    return out


def mage(X: ArrayLike | MixedData, k: int, *, c: int | None = None, max_iter: int = 100,
         random_state: RandomState = None) -> NDArray[np.intp]:
    """MAGE k-partition for mixed data: cluster partition, then CKA merging in each cluster.

    1. **Cluster partition**: ``c`` distinct records drawn at random are the first centres;
       every record joins the nearest centre by :func:`mixed_distance`; centres are
       recomputed (numeric mean, most frequent categorical leaf); repeat until two
       consecutive assignments agree (at most ``max_iter`` rounds). A cluster under k
       records is merged into the cluster with the nearest centre, smallest first, so none
       is published under k.
    2. **CKA** in each cluster: every record starts as its own class; classes are taken in
       a random order and each grows by merging the open class at the smallest mixed
       distance (centroid distance plus the generalization the union would need) until it
       has k records; the last open class, if under k, joins the nearest closed class.

    Seed 002's pseudo-code merges two classes and removes both from the candidate set (which
    would only make pairs); we follow its prose and the MAGE paper: merge until every class
    has at least k records. The seed does not give ``c``; by default ``c = max(1, n // 1000)``
    (clusters of about a thousand records keep the CKA step, quadratic in a cluster's size,
    fast; the seed partitions first for the same reason).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or MixedData
        Numeric quasi-identifiers (then the mixed distance is the Euclidean distance on
        min-max normalized columns), or mixed data from :meth:`MixedData.build`.
    k : int
        Minimum group size, ``k >= 2``.
    c : int, default=None
        Number of clusters of the first step (capped at ``n // k``).
    max_iter : int, default=100
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Seed 002, section 3 (cluster partition, CKA); Han, J., Yu, J., Yu, Y., Lu, J., Liu, H.
    "MAGE: A semantics retaining k-anonymization method for mixed data." Knowl.-Based Syst.
    55 (2014) 75-86.
    """
    data = X if isinstance(X, MixedData) else MixedData.build(check_matrix(X, caller="mage"), None)
    n = data.n_samples
    k = check_k(k, n_samples=n, caller="mage")
    if c is None:
        c = max(1, n // 1000)
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
        raise ValueError(f"The 'c' parameter of mage must be an int >= 1. Got {c!r} instead.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"The 'max_iter' parameter of mage must be an int >= 1. Got {max_iter!r}.")
    _, rng = resolve_seed(random_state)
    c = int(min(c, n // k))
    anc, heights = data.kernel_arrays()
    A, B = data.mapping()
    codes = data.codes if data.codes.shape[1] else np.zeros((n, 0), dtype=np.intp)
    centres = np.sort(rng.choice(n, size=c, replace=False)).astype(np.intp)
    clusters = _cluster_partition(data.numeric, codes, anc, heights, A, B, centres, int(max_iter))
    clusters = np.unique(clusters, return_inverse=True)[1].astype(np.intp)
    while True:
        counts = np.bincount(clusters)
        small = np.flatnonzero(counts < k)
        if small.size == 0 or counts.size == 1:
            break
        g = int(small[np.argmin(counts[small])])
        others = np.flatnonzero(np.arange(counts.size) != g)
        target = int(others[np.argmin(_centres_distance(data, clusters, g, others))])
        clusters[clusters == g] = target
        clusters = np.unique(clusters, return_inverse=True)[1].astype(np.intp)
    labels = np.empty(n, dtype=np.intp)
    next_label = 0
    for h in range(int(clusters.max()) + 1):
        rows = np.flatnonzero(clusters == h)
        owner = _cka(np.ascontiguousarray(data.numeric[rows]),
                     np.ascontiguousarray(codes[rows]), anc, heights, A, B, float(k),
                     rng.permutation(rows.size).astype(np.intp))
        local = np.unique(owner, return_inverse=True)[1]
        labels[rows] = local + next_label
        next_label += int(local.max()) + 1
    return labels
