"""k-degree anonymity (Liu & Terzi 2008): the optimal degree sequence and a supergraph with it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, resolve_seed
from ..exceptions import PrivacyViolationError
from ._check import degree_level
from ._common import check_graph, check_graph_k, csr_adjacency, degrees_of
from ._utility import average_clustering, average_path_length

__all__ = ["DegreeAnonymization", "k_degree_anonymize", "optimal_degree_sequence"]

_INF = np.int64(2**62)


def _degree_dp(x: NDArray[np.int64], k: int) -> tuple[NDArray[np.int64], int]:
    """Liu & Terzi's dynamic program on ascending degrees ``x``: targets and their cost.

    Some optimal k-anonymous sequence ``t >= x`` groups consecutive sorted degrees into runs
    of k..2k-1 (a longer run splits into two without extra cost) and raises each run to its
    maximum; run ``[a, b)`` costs ``(b - a) * x[b-1] - sum(x[a:b])``. ``best[b]`` (the first
    b degrees grouped) looks back over the k possible sizes of the last run. Every ``b`` of
    the block ``[b0, b0 + k)`` depends only on ``best[a]`` with ``a <= b - k < b0``, so a
    block is one vectorized step: n / k steps of k x k work, O(n k) in all.
    Validation is assumed (``2 <= k <= len(x)``, ``x`` sorted ascending).
    """
    n = x.shape[0]
    S = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(x, out=S[1:])
    best = np.full(n + 1, _INF, dtype=np.int64)
    back = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0
    sizes = np.arange(k, 2 * k, dtype=np.int64)
    for b0 in range(k, n + 1, k):
        bs = np.arange(b0, min(b0 + k, n + 1), dtype=np.int64)
        A = bs[:, None] - sizes[None, :]
        valid = (A == 0) | (A >= k)
        Ac = np.where(valid, A, 0)
        cost = best[Ac] + sizes[None, :] * x[bs - 1][:, None] - (S[bs][:, None] - S[Ac])
        cost[~valid] = _INF
        j = np.argmin(cost, axis=1)  # the shortest last run wins ties
        best[bs] = cost[np.arange(bs.shape[0]), j]
        back[bs] = Ac[np.arange(bs.shape[0]), j]
    targets = np.empty(n, dtype=np.int64)
    b = n
    while b > 0:
        a = int(back[b])
        targets[a:b] = x[b - 1]
        b = a
    return targets, int(best[n])


def optimal_degree_sequence(degrees: ArrayLike, k: int) -> tuple[NDArray[np.int64], int]:
    """The cheapest k-anonymous degree sequence that only raises degrees (Liu & Terzi).

    Finds ``t >= degrees`` (elementwise) in which every value occurs at least ``k`` times
    and ``sum(t - degrees)`` is minimal, by Liu & Terzi's dynamic program over the sorted
    degrees (runs of k..2k-1 consecutive degrees, each raised to its maximum) in O(n k).
    Unlike optimal univariate microaggregation (:func:`microagg.partition.optimal_univariate`,
    minimum SSE, values moved both ways) the cost is the total *increase*: a degree can only
    grow when edges are added.

    Parameters
    ----------
    degrees : array-like of shape (n_vertices,)
        Non-negative integers.
    k : int
        Minimum number of vertices per degree value, ``2 <= k <= n_vertices``.

    Returns
    -------
    targets : ndarray of shape (n_vertices,), dtype=int64
        The anonymized degree of each vertex, in the input order.
    cost : int
        ``sum(targets - degrees)``, the minimum total increase; a supergraph with these
        degrees adds ``cost / 2`` edges, a lower bound for any k-degree-anonymous supergraph.

    References
    ----------
    Liu, K. and Terzi, E. "Towards identity anonymization on graphs." SIGMOD 2008,
    section 4 (degree anonymization). Seed 001, section 2.2, reference [34].

    Examples
    --------
    >>> targets, cost = optimal_degree_sequence([5, 1, 4, 2, 2, 1], 2)
    >>> targets.tolist(), cost
    ([5, 1, 5, 2, 2, 1], 1)
    """
    d = np.asarray(degrees)
    if d.ndim != 1 or d.dtype.kind not in "iu":
        raise TypeError(
            "The 'degrees' parameter of optimal_degree_sequence must be a 1-d array of "
            f"integers. Got shape {d.shape} and dtype {d.dtype} instead."
        )
    if d.shape[0] and int(d.min()) < 0:
        raise ValueError(
            "The 'degrees' parameter of optimal_degree_sequence must be >= 0. "
            f"Got a minimum of {int(d.min())}."
        )
    d = d.astype(np.int64)
    k = check_graph_k(k, n_vertices=d.shape[0], caller="optimal_degree_sequence")
    order = np.argsort(d, kind="stable")
    t_sorted, cost = _degree_dp(d[order], k)
    targets = np.empty_like(d)
    targets[order] = t_sorted
    return targets, cost


class _Augmenter:
    """A graph that only grows: CSR of the original plus the added edges, and degrees."""

    def __init__(self, A: sp.csr_array) -> None:
        self.A = A
        self.degrees = degrees_of(A)
        self.added: list[tuple[int, int]] = []
        self._sets: dict[int, set[int]] = {}

    def neighbours(self, u: int) -> set[int]:
        s = self._sets.get(u)
        if s is None:
            s = set(self.A.indices[self.A.indptr[u]:self.A.indptr[u + 1]].tolist())
            self._sets[u] = s
        return s

    def add(self, u: int, w: int) -> None:
        self.neighbours(u).add(w)
        self.neighbours(w).add(u)
        self.degrees[u] += 1
        self.degrees[w] += 1
        self.added.append((u, w))


class _BumpPool:
    """Satisfied vertices whose degree can grow by one, by class of target degree.

    A vertex of target degree ``δ`` may move to ``δ + 1`` when at least k + 1 targets equal
    ``δ`` and at least k - 1 equal ``δ + 1``, so the targets stay k-anonymous; the class
    with the largest surplus gives first (in a power-law graph, the many low degrees).
    Built once per round (shuffled within each class); a vertex passed over because it is
    adjacent to the requesting vertex is not offered again this round.
    """

    def __init__(self, targets: NDArray[np.int64], demand: NDArray[np.int64], k: int,
                 rng: np.random.Generator) -> None:
        self.k = k
        self.targets = targets
        self.demand = demand
        self.count = np.bincount(targets, minlength=int(targets.max()) + 2).astype(np.int64)
        free = np.flatnonzero(demand == 0)
        free = free[rng.permutation(free.shape[0])]
        self.free = free[np.argsort(targets[free], kind="stable")]
        self.starts = np.searchsorted(targets[self.free], np.arange(self.count.shape[0] + 1))
        self.pointer = self.starts[:-1].copy()
        self.exhausted = np.zeros(self.count.shape[0], dtype=bool)

    def connect(self, aug: _Augmenter, u: int, need: int) -> None:
        """Join ``u`` to up to ``need`` bumped vertices (fewer if the pool runs dry)."""
        count, k = self.count, self.k
        nb = aug.neighbours(u)
        while need > 0:
            ok = (count[:-1] >= k + 1) & (count[1:] >= k - 1) & ~self.exhausted[:-1]
            if not ok.any():
                return
            delta = int(np.argmax(np.where(ok, count[:-1], -1)))
            found = -1
            while self.pointer[delta] < self.starts[delta + 1]:
                w = int(self.free[self.pointer[delta]])
                self.pointer[delta] += 1
                if (w != u and w not in nb and self.targets[w] == delta
                        and self.demand[w] == 0):
                    found = w
                    break
            if found < 0:
                self.exhausted[delta] = True
                continue
            count[delta] -= 1
            count[delta + 1] += 1
            self.targets[found] += 1
            aug.add(u, found)
            need -= 1


def _greedy_round(aug: _Augmenter, targets: NDArray[np.int64], k: int,
                  rng: np.random.Generator) -> int:
    """One round of Havel-Hakimi-like matching of the remaining degree demands.

    Vertices with demand are visited by decreasing demand (random among ties); each is
    joined to the non-adjacent vertices of highest (initial) demand still unsatisfied, kept
    in a linked list so that a satisfied vertex is skipped in O(1). Demand left over after
    that is met by bumps (:class:`_BumpPool`). Returns the number of edges added.
    """
    demand = targets - aug.degrees
    D = np.flatnonzero(demand > 0)
    if D.shape[0] == 0:
        return 0
    D = D[rng.permutation(D.shape[0])]
    D = D[np.argsort(-demand[D], kind="stable")].tolist()
    links = _Linked(len(D))
    before = len(aug.added)
    pool: _BumpPool | None = None
    for pos, u in enumerate(D):
        if not links.alive[pos]:
            continue
        links.unlink(pos)
        _join_listed(aug, u, D, demand, links)
        if demand[u] > 0:
            if pool is None:
                pool = _BumpPool(targets, demand, k, rng)
            pool.connect(aug, u, int(demand[u]))
            demand[u] = targets[u] - aug.degrees[u]
    return len(aug.added) - before


class _Linked:
    """Positions 0..m-1 of the vertices with demand, as a doubly linked list: a satisfied
    vertex is unlinked (skipped from then on) in O(1)."""

    def __init__(self, m: int):
        self.m = m
        self.nxt = list(range(1, m + 1))
        self.prv = list(range(-1, m - 1))
        self.head = 0
        self.alive = [True] * m

    def unlink(self, p: int) -> None:
        self.alive[p] = False
        if self.prv[p] >= 0:
            self.nxt[self.prv[p]] = self.nxt[p]
        else:
            self.head = self.nxt[p]
        if self.nxt[p] < self.m:
            self.prv[self.nxt[p]] = self.prv[p]


def _join_listed(aug: _Augmenter, u: int, D: list[int], demand: NDArray[np.int64],
                 links: _Linked) -> None:
    """Join ``u`` to the listed vertices it is not adjacent to, in list order (highest demand
    first), until its demand is met or the list ends."""
    nb = aug.neighbours(u)
    nxt, m = links.nxt, links.m
    p = links.head
    while demand[u] > 0 and p < m:
        q = nxt[p]
        w = D[p]
        if w not in nb:
            aug.add(u, w)
            demand[u] -= 1
            demand[w] -= 1
            if demand[w] == 0:
                links.unlink(p)
        p = q


def _force_progress(aug: _Augmenter, targets: NDArray[np.int64],
                    rng: np.random.Generator) -> None:
    """Relaxation when a round adds nothing: each vertex short of its target gets one edge
    to a random non-neighbour (one exists: its degree is below a target <= n - 1)."""
    n = aug.degrees.shape[0]
    for u in np.flatnonzero(targets > aug.degrees).tolist():
        if aug.degrees[u] >= targets[u]:
            continue
        nb = aug.neighbours(u)
        candidates = np.setdiff1d(np.arange(n), np.fromiter(nb, dtype=np.int64, count=len(nb)))
        candidates = candidates[candidates != u]
        if candidates.shape[0]:
            aug.add(u, int(rng.choice(candidates)))


def _augment(A: sp.csr_array, k: int, rng: np.random.Generator) -> tuple[_Augmenter, int]:
    """Add edges until the degree sequence is k-anonymous; returns the state and the rounds.

    Each round re-solves the degree program on the current degrees and realizes what it can
    (a variant of Liu & Terzi's Probing: instead of perturbing the original sequence and
    restarting, the partly augmented graph is anonymized again). Every round adds at least
    one edge and the complete graph is k-degree anonymous, so the loop ends.
    """
    aug = _Augmenter(A)
    rounds = 0
    while degree_level(aug.degrees) < k:
        rounds += 1
        order = np.argsort(aug.degrees, kind="stable")
        t_sorted, _ = _degree_dp(aug.degrees[order], k)
        targets = np.empty_like(t_sorted)
        targets[order] = t_sorted
        if _greedy_round(aug, targets, k, rng) == 0:
            _force_progress(aug, targets, rng)
    return aug, rounds


@dataclass(frozen=True)
class DegreeAnonymization:
    """Result of :func:`k_degree_anonymize`: the supergraph and what it cost.

    Attributes
    ----------
    graph : networkx.Graph
        The anonymized graph: the input plus ``edges_added``, k-degree anonymous (verified).
    k : int
        The requested level.
    achieved_k : int
        Count of the rarest degree value in ``graph`` (``>= k``).
    edges_added : tuple of (vertex, vertex)
        The new edges, in the order they were added.
    degree_cost : int
        Total degree increase of the optimal k-anonymous sequence of the input degrees
        (Liu & Terzi's dynamic program).
    lower_bound : int
        ``ceil(degree_cost / 2)``: no k-degree-anonymous supergraph adds fewer edges.
    rounds : int
        Realization rounds (0 when the input was already k-degree anonymous).
    clustering_before, clustering_after : float
        Average clustering coefficient (zeros included) of the input and of ``graph``.
    path_length_before, path_length_after : float
        Average shortest-path length from ``path_length_sources`` BFS sources (the same
        vertices for both graphs) to every vertex they reach.
    path_length_sources : int
        Number of BFS sources; equal to the number of vertices when the average is exact.
    seed : int
        The seed of the run (tie-breaks and bump choices), to reproduce it.
    """

    graph: nx.Graph = field(repr=False)
    k: int
    achieved_k: int
    edges_added: tuple[tuple[Any, Any], ...] = field(repr=False)
    degree_cost: int
    lower_bound: int
    rounds: int
    clustering_before: float
    clustering_after: float
    path_length_before: float
    path_length_after: float
    path_length_sources: int
    seed: int

    @property
    def n_edges_added(self) -> int:
        """Number of edges added."""
        return len(self.edges_added)

    @property
    def clustering_change(self) -> float:
        """``clustering_after - clustering_before``."""
        return self.clustering_after - self.clustering_before

    @property
    def path_length_change(self) -> float:
        """``path_length_after - path_length_before``."""
        return self.path_length_after - self.path_length_before


def _verify_degree_release(G: nx.Graph, H: nx.Graph, k: int) -> int:
    """Re-derive the guarantees from the output: simple, a supergraph of G, k-degree anonymous."""
    if H.is_directed() or H.is_multigraph() or nx.number_of_selfloops(H):
        raise PrivacyViolationError("k_degree_anonymize produced a graph that is not simple.")
    if H.number_of_nodes() != G.number_of_nodes() or any(v not in H for v in G):
        raise PrivacyViolationError("k_degree_anonymize changed the vertex set.")
    missing = sum(1 for u, v in G.edges() if not H.has_edge(u, v))
    if missing:
        raise PrivacyViolationError(
            f"k_degree_anonymize removed {missing} edge(s); it may only add edges."
        )
    achieved = degree_level(np.fromiter((d for _, d in H.degree()), dtype=np.int64,
                                         count=H.number_of_nodes()))
    if achieved < k:
        raise PrivacyViolationError(
            f"k_degree_anonymize reached only k={achieved} < {k}; nothing is returned."
        )
    return achieved


def k_degree_anonymize(G: nx.Graph, k: int, *, random_state: RandomState = None,
                       path_length_sources: int = 100) -> DegreeAnonymization:
    """Make every degree value of ``G`` shared by at least ``k`` vertices by adding edges.

    1. Degree anonymization: the cheapest k-anonymous sequence above the degrees of ``G``
       (:func:`optimal_degree_sequence`, Liu & Terzi's O(n k) dynamic program).
    2. Realization on top of ``G``: vertices short of their target are joined greedily,
       largest demand first, to the non-adjacent vertices of largest demand (Havel-Hakimi
       on the complement, as Liu & Terzi's SuperGraph). When the demands cannot be met
       among themselves (a hub needs more partners than there are, or the total is odd),
       a vertex in a degree class with a surplus of vertices is raised by one degree
       (a *bump*, which keeps the targets k-anonymous). Whatever is still unmet starts a
       new round on the augmented graph (Liu & Terzi's Probing retries with a perturbed
       sequence; re-anonymizing the augmented sequence is our variant). Every round adds
       an edge and the complete graph is k-degree anonymous, so it ends.
    3. Verification: the output is simple, contains ``G`` and every degree value occurs at
       least ``k`` times; otherwise :class:`~microagg.exceptions.PrivacyViolationError`.

    Parameters
    ----------
    G : networkx.Graph
        Simple undirected graph (no self-loops, not a multigraph); not modified.
    k : int
        Minimum number of vertices per degree value, ``2 <= k <= n_vertices``.
    random_state : None, int or numpy.random.Generator, default=None
        Breaks ties between equal demands and picks the bumped vertices; the seed is
        recorded in the result.
    path_length_sources : int, default=100
        The average shortest-path length is measured by BFS from this many vertices drawn
        at random (the same ones before and after); exact when the graph has no more
        vertices than that.

    Returns
    -------
    result : DegreeAnonymization
        The supergraph, the added edges against the lower bound ``ceil(cost / 2)``, and the
        change in average clustering and average path length.

    Raises
    ------
    TypeError, ValueError
        For a graph that is not simple and undirected, or ``k`` outside [2, n_vertices].
    PrivacyViolationError
        If the output fails its own check (a bug in microagg).

    References
    ----------
    Liu, K. and Terzi, E. "Towards identity anonymization on graphs." SIGMOD 2008.
    Seed 001, section 2.2, reference [34].

    Examples
    --------
    >>> import networkx as nx
    >>> result = k_degree_anonymize(nx.star_graph(4), 2, random_state=0)
    >>> result.achieved_k >= 2, result.n_edges_added >= result.lower_bound
    (True, True)
    """
    check_graph(G, caller="k_degree_anonymize")
    n = G.number_of_nodes()
    k = check_graph_k(k, n_vertices=n, caller="k_degree_anonymize")
    if isinstance(path_length_sources, bool) or not isinstance(path_length_sources, int) \
            or path_length_sources < 1:
        raise ValueError(
            "The 'path_length_sources' parameter of k_degree_anonymize must be an int >= 1. "
            f"Got {path_length_sources!r} instead."
        )
    seed, rng = resolve_seed(random_state)
    nodes, A = csr_adjacency(G)
    _, cost = optimal_degree_sequence(degrees_of(A), k)
    sources = (np.arange(n) if n <= path_length_sources
               else np.sort(rng.choice(n, size=path_length_sources, replace=False)))
    aug, rounds = _augment(A, k, rng)
    H = G.copy()
    edges = tuple((nodes[u], nodes[w]) for u, w in aug.added)
    H.add_edges_from(edges)
    achieved = _verify_degree_release(G, H, k)
    _, B = csr_adjacency(H)
    return DegreeAnonymization(
        graph=H, k=k, achieved_k=achieved, edges_added=edges, degree_cost=cost,
        lower_bound=math.ceil(cost / 2), rounds=rounds,
        clustering_before=average_clustering(A), clustering_after=average_clustering(B),
        path_length_before=average_path_length(A, sources),
        path_length_after=average_path_length(B, sources),
        path_length_sources=int(sources.shape[0]), seed=seed,
    )
