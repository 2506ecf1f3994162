"""Graphs (seed 001, section 2.2): Definition 1 (Stokes & Torra), k-degree anonymity
(Liu & Terzi 2008), neighbourhood anonymization, and graph I/O."""

from __future__ import annotations

import itertools
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# the graph extra: without networkx this module (all of tests/graph) is skipped at collection
nx = pytest.importorskip("networkx", reason="the graph extra is not installed: "
                                            "pip install 'microagg[graph]'")

from microagg.exceptions import PrivacyViolationError  # noqa: E402 - after the extra's check
from microagg.graph import (  # noqa: E402 - needs networkx: after the extra's check
    _degree,
    degree_k_anonymity,
    graph_k_anonymity,
    k_degree_anonymize,
    neighbourhood_anonymize,
    neighbourhood_classes,
    optimal_degree_sequence,
    read_graph,
    write_graph,
)
from microagg.partition import optimal_univariate  # noqa: E402 - after the extra's check

# Seed 001, section 2.2, Table 2: adjacency matrix of the 3-anonymous graph of Fig. 2
SEED_TABLE2 = """\
0 0 0 1 1 1 0 0 0 1 1 1 1 1 1
0 0 0 1 1 1 0 0 0 1 1 1 1 1 1
0 0 0 1 1 1 0 0 0 1 1 1 1 1 1
1 1 1 0 0 0 0 0 0 1 1 1 0 0 0
1 1 1 0 0 0 0 0 0 1 1 1 0 0 0
1 1 1 0 0 0 0 0 0 1 1 1 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0 1 1 1
0 0 0 0 0 0 0 0 0 0 0 0 1 1 1
0 0 0 0 0 0 0 0 0 0 0 0 1 1 1
1 1 1 1 1 1 0 0 0 0 0 0 1 1 1
1 1 1 1 1 1 0 0 0 0 0 0 1 1 1
1 1 1 1 1 1 0 0 0 0 0 0 1 1 1
1 1 1 0 0 0 1 1 1 1 1 1 0 0 0
1 1 1 0 0 0 1 1 1 1 1 1 0 0 0
1 1 1 0 0 0 1 1 1 1 1 1 0 0 0
"""


def seed_graph() -> nx.Graph:
    M = np.array([[int(c) for c in line.split()] for line in SEED_TABLE2.splitlines()])
    assert (M == M.T).all() and not M.diagonal().any()  # as printed: symmetric, no loops
    return nx.from_numpy_array(M)


# ---------------------------------------------------------------- Definition 1 (item 1)

def test_seed_example_is_3_anonymous() -> None:
    # Seed 001, Fig. 2 / Table 2: "for each node (each row) there are other 2 which have
    # the same neighbors" -- with open neighbourhoods N(v) = {u : (u, v) in E}
    G = seed_graph()
    assert G.number_of_nodes() == 15 and G.number_of_edges() == 54  # row sums 9,6,3,9,9 (x3) / 2
    assert graph_k_anonymity(G) == 3
    assert neighbourhood_classes(G) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11],
                                        [12, 13, 14]]
    # with closed neighbourhoods N[v] = N(v) + {v} the rows would all differ: 1-anonymous
    closed = {frozenset(G[v]) | {v} for v in G}
    assert len(closed) == 15


def test_definition_on_small_graphs() -> None:
    assert graph_k_anonymity(nx.empty_graph(4)) == 4  # all share the empty neighbourhood
    assert graph_k_anonymity(nx.complete_bipartite_graph(2, 5)) == 2
    assert graph_k_anonymity(nx.complete_graph(4)) == 1  # N(v) = V - {v}: all distinct
    assert graph_k_anonymity(nx.path_graph(3)) == 1  # the middle vertex is alone
    assert graph_k_anonymity(nx.Graph([(0, 1)])) == 1
    assert graph_k_anonymity(nx.Graph([(0, 1), (2, 3)])) == 1
    assert degree_k_anonymity(nx.path_graph(5)) == 2  # degrees 1,2,2,2,1
    assert degree_k_anonymity(nx.star_graph(3)) == 1


def test_definition_matches_brute_force_on_random_graphs(rng: np.random.Generator) -> None:
    for trial in range(30):
        G = nx.gnp_random_graph(int(rng.integers(2, 12)), 0.4, seed=trial)
        expected = min(sum(1 for u in G if set(G[u]) == set(G[v])) for v in G)
        assert graph_k_anonymity(G) == expected
        degrees = [d for _, d in G.degree()]
        assert degree_k_anonymity(G) == min(degrees.count(d) for d in degrees)


# ---------------------------------------------------------------- degree DP (item 2)

def _set_partitions(items: list[int]):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1:]]
        yield [[first], *part]


def _brute_force_cost(d: list[int], k: int) -> int:
    """Minimum total increase over every partition into blocks of >= k (any, not only runs of
    sorted degrees), each block raised to its maximum: an independent oracle."""
    best = math.inf
    for part in _set_partitions(list(range(len(d)))):
        if min(len(b) for b in part) < k:
            continue
        best = min(best, sum(max(d[i] for i in b) * len(b) - sum(d[i] for i in b)
                             for b in part))
    return int(best)


@pytest.mark.parametrize("n", range(2, 10))
def test_degree_dp_matches_brute_force(n: int, rng: np.random.Generator) -> None:
    for _ in range(4 if n < 9 else 2):
        d = rng.integers(0, 12, size=n).tolist()
        for k in range(2, min(n, 4) + 1):
            targets, cost = optimal_degree_sequence(d, k)
            assert cost == _brute_force_cost(d, k), (d, k)
            assert (targets >= np.asarray(d)).all() and int((targets - d).sum()) == cost
            _, counts = np.unique(targets, return_counts=True)
            assert counts.min() >= k


def test_degree_dp_hand_case() -> None:
    # by hand, each run raised to its maximum: [1,1,2,2,4,5] at k = 2 -> [1,1,2,2,5,5],
    # cost 1; at k = 3, {1,1,2} -> 2 and {2,4,5} -> 3 + 1: cost 6 (one run of all six
    # raised to 5 would cost 19)
    assert optimal_degree_sequence([1, 1, 2, 2, 4, 5], 2)[1] == 1
    targets, cost = optimal_degree_sequence([5, 4, 2, 2, 1, 1], 3)
    assert cost == 6 and sorted(targets.tolist()) == [2, 2, 2, 5, 5, 5]
    assert targets[:2].tolist() == [5, 5] and targets[4:].tolist() == [2, 2]


def test_degree_dp_never_worse_than_sse_partition_raised(rng: np.random.Generator) -> None:
    # the optimal univariate (minimum SSE) groups, raised to their maxima, are one feasible
    # k-anonymous sequence: the increase-only DP can only do as well or better
    for _ in range(20):
        d = rng.integers(0, 40, size=int(rng.integers(6, 60)))
        k = int(rng.integers(2, 6))
        labels, _ = optimal_univariate(d.astype(float), k)
        raised = sum(int(d[labels == g].max() * (labels == g).sum() - d[labels == g].sum())
                     for g in np.unique(labels))
        assert optimal_degree_sequence(d, k)[1] <= raised


# ---------------------------------------------------------------- k-degree anonymize (item 2)

def _check_degree_result(G: nx.Graph, result, k: int) -> None:
    H = result.graph
    assert isinstance(H, nx.Graph) and not H.is_multigraph() and not H.is_directed()
    assert nx.number_of_selfloops(H) == 0
    assert set(H.nodes()) == set(G.nodes())
    assert all(H.has_edge(u, v) for u, v in G.edges())  # a supergraph: additions only
    assert H.number_of_edges() == G.number_of_edges() + result.n_edges_added
    assert degree_k_anonymity(H) >= k and result.achieved_k == degree_k_anonymity(H)
    assert result.n_edges_added >= result.lower_bound
    assert result.lower_bound == math.ceil(optimal_degree_sequence(
        [d for _, d in G.degree()], k)[1] / 2)


def test_k_degree_anonymize_star() -> None:
    G = nx.star_graph(4)  # degrees 4,1,1,1,1
    result = k_degree_anonymize(G, 2, random_state=0)
    _check_degree_result(G, result, 2)
    assert result.degree_cost == 3 and result.lower_bound == 2
    # hub 4 paired with a leaf raised to 4 needs 3 edges from that leaf to other leaves,
    # which raises those leaves too: the cheapest supergraph adds at least 3 edges
    assert result.n_edges_added >= 3


def test_k_degree_anonymize_already_anonymous_adds_nothing() -> None:
    G = nx.cycle_graph(7)
    result = k_degree_anonymize(G, 7, random_state=0)
    assert result.n_edges_added == 0 and result.rounds == 0 and result.achieved_k == 7
    assert result.clustering_change == 0.0 and result.path_length_change == 0.0


def test_k_degree_anonymize_is_deterministic_and_records_seed() -> None:
    G = nx.barabasi_albert_graph(300, 2, seed=1)
    a = k_degree_anonymize(G, 5, random_state=42)
    b = k_degree_anonymize(G, 5, random_state=42)
    assert a.edges_added == b.edges_added and a.seed == 42
    assert k_degree_anonymize(G, 5, random_state=np.random.default_rng(3)).seed >= 0


def test_k_degree_anonymize_metrics_match_networkx() -> None:
    G = nx.powerlaw_cluster_graph(120, 2, 0.3, seed=2)
    result = k_degree_anonymize(G, 4, random_state=0, path_length_sources=120)
    assert result.path_length_sources == 120  # exact: every vertex is a source
    assert result.clustering_before == pytest.approx(nx.average_clustering(G))
    assert result.clustering_after == pytest.approx(nx.average_clustering(result.graph))
    assert result.path_length_before == pytest.approx(nx.average_shortest_path_length(G))
    assert result.path_length_after == pytest.approx(
        nx.average_shortest_path_length(result.graph))


def test_k_degree_anonymize_keeps_attributes_and_input_untouched() -> None:
    G = nx.barabasi_albert_graph(60, 2, seed=5)
    nx.set_node_attributes(G, {v: f"name{v}" for v in G}, "label")
    edges = set(G.edges())
    result = k_degree_anonymize(G, 3, random_state=1)
    assert set(G.edges()) == edges
    assert result.graph.nodes[7]["label"] == "name7"


def test_k_degree_anonymize_string_vertices_and_k_equal_n() -> None:
    G = nx.relabel_nodes(nx.path_graph(5), {i: f"v{i}" for i in range(5)})
    result = k_degree_anonymize(G, 5, random_state=0)
    _check_degree_result(G, result, 5)
    assert len({d for _, d in result.graph.degree()}) == 1  # k = n: one degree for all


def test_verification_catches_a_broken_release(monkeypatch: pytest.MonkeyPatch) -> None:
    def nothing(A, k, rng):
        return _degree._Augmenter(A), 1

    monkeypatch.setattr(_degree, "_augment", nothing)
    with pytest.raises(PrivacyViolationError, match="reached only k=1 < 2"):
        k_degree_anonymize(nx.star_graph(3), 2, random_state=0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 40), p=st.floats(0.0, 0.6), k=st.integers(2, 8),
       seed=st.integers(0, 2**31))
def test_k_degree_anonymize_properties(n: int, p: float, k: int, seed: int) -> None:
    G = nx.gnp_random_graph(n, p, seed=seed)
    k = min(k, n)
    result = k_degree_anonymize(G, k, random_state=seed)
    _check_degree_result(G, result, k)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(10, 200), m=st.integers(1, 4), k=st.integers(2, 10),
       seed=st.integers(0, 2**31))
def test_k_degree_anonymize_power_law(n: int, m: int, k: int, seed: int) -> None:
    G = nx.barabasi_albert_graph(n, min(m, n - 1), seed=seed)
    result = k_degree_anonymize(G, k, random_state=seed)
    _check_degree_result(G, result, k)


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("func", [k_degree_anonymize, neighbourhood_anonymize])
def test_bad_k(func) -> None:
    G = nx.path_graph(4)
    with pytest.raises(ValueError, match=r"'k' parameter .* \[2, n_vertices=4\]. Got 5 instead"):
        func(G, 5)
    with pytest.raises(ValueError, match="Got 1 instead"):
        func(G, 1)
    with pytest.raises(TypeError, match="'k' parameter"):
        func(G, 2.0)


@pytest.mark.parametrize("func", [graph_k_anonymity, degree_k_anonymity,
                                  lambda G: k_degree_anonymize(G, 2),
                                  lambda G: neighbourhood_anonymize(G, 2)])
def test_bad_graphs(func) -> None:
    with pytest.raises(ValueError, match=r"directed graph.*to_undirected"):
        func(nx.DiGraph([(0, 1), (1, 2)]))
    with pytest.raises(ValueError, match=r"multigraph.*networkx\.Graph"):
        func(nx.MultiGraph([(0, 1), (0, 1), (1, 2)]))
    with pytest.raises(ValueError, match=r"1 self-loop\(s\) \(at 1\)"):
        func(nx.Graph([(0, 1), (1, 1), (1, 2)]))
    with pytest.raises(ValueError, match="no vertices"):
        func(nx.Graph())
    with pytest.raises(TypeError, match=r"networkx\.Graph"):
        func([(0, 1)])


def test_bad_degree_sequences() -> None:
    with pytest.raises(TypeError, match="integers"):
        optimal_degree_sequence([1.5, 2.0], 2)
    with pytest.raises(ValueError, match=">= 0"):
        optimal_degree_sequence([1, -1, 2], 2)
    with pytest.raises(ValueError, match="n_vertices=3"):
        optimal_degree_sequence([1, 1, 2], 4)


def test_networkx_is_optional() -> None:
    # `import microagg` never imports networkx; without it, microagg.graph says what to do
    code = ("import sys; import microagg; assert 'networkx' not in sys.modules\n"
            "sys.modules['networkx'] = None\n"
            "try:\n    import microagg.graph\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert "pip install microagg[graph]" in out


# ---------------------------------------------------------------- I/O (item 4)

def _same_graph(G: nx.Graph, H: nx.Graph) -> bool:
    return set(G.nodes()) == set(H.nodes()) and {frozenset(e) for e in G.edges()} == {
        frozenset(e) for e in H.edges()}


@pytest.mark.parametrize("ext", [".csv", ".graphml"])
def test_round_trip(tmp_path: pathlib.Path, ext: str) -> None:
    G = seed_graph()
    G.add_node(99)  # an isolated vertex survives both formats
    write_graph(G, tmp_path / f"g{ext}")
    H = read_graph(tmp_path / f"g{ext}")
    if ext == ".graphml":  # GraphML stores vertex ids as strings
        H = nx.relabel_nodes(H, int)
    assert _same_graph(G, H)
    assert graph_k_anonymity(H) == 1  # the isolated vertex is alone in its class


def test_round_trip_string_vertices(tmp_path: pathlib.Path) -> None:
    G = nx.Graph([("alice", "bob"), ("bob", "carol x"), ("dave", "alice")])
    write_graph(G, tmp_path / "g.csv")
    assert _same_graph(G, read_graph(tmp_path / "g.csv"))


def test_never_overwrites_input(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("source,target\n1,2\n2,3\n3,4\n4,1\n")
    G = read_graph(path)
    result = k_degree_anonymize(G, 2, random_state=0)
    with pytest.raises(ValueError, match="never overwrites its input"):
        write_graph(result.graph, path)
    with pytest.raises(ValueError, match="never overwrites its input"):
        write_graph(nx.path_graph(2), tmp_path / "x.csv", inputs=(tmp_path / "x.csv",))
    write_graph(result.graph, tmp_path / "out.graphml")
    assert "microagg_source_path" not in (tmp_path / "out.graphml").read_text()


def test_write_is_atomic(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.csv"
    out.write_text("previous content")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_graph(nx.path_graph(3), out)
    assert out.read_text() == "previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left


@pytest.mark.parametrize(("content", "message"), [
    ("", "is empty"),
    ("source,target\n", "no rows"),
    ("src,dst\n1,2\n", "lacks the column.s. source, target.*Found: src, dst"),
    ("source,dst\n1,2\n", "lacks the column.s. target"),
    ("source,target,weight\n1,2,3\n", "unexpected column.s. weight"),
    ("source,target\n1,2\n2,2\n", "line 3 is a self-loop"),
    ("source,target\n1,2\n2,1\n", "line 3 repeats the edge .*multigraphs"),
    ("source,target\n1,2\n,3\n", "line 3 has no source"),
])
def test_bad_csv(tmp_path: pathlib.Path, content: str, message: str) -> None:
    path = tmp_path / "g.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_graph(path)


def test_bad_graphml_and_paths(tmp_path: pathlib.Path) -> None:
    nx.write_graphml(nx.DiGraph([(1, 2)]), tmp_path / "d.graphml")
    with pytest.raises(ValueError, match=r"directed graph.*to_undirected"):
        read_graph(tmp_path / "d.graphml")
    nx.write_graphml(nx.MultiGraph([(1, 2), (1, 2)]), tmp_path / "m.graphml")
    with pytest.raises(ValueError, match="multigraph"):
        read_graph(tmp_path / "m.graphml")
    (tmp_path / "e.graphml").write_text("")
    with pytest.raises(ValueError, match="is empty"):
        read_graph(tmp_path / "e.graphml")
    with pytest.raises(ValueError, match=r"unsupported extension '.txt'.*\.csv, \.graphml"):
        read_graph(tmp_path / "g.txt")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_graph(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="unsupported extension"):
        write_graph(nx.path_graph(2), tmp_path / "g.parquet")
    with pytest.raises(ValueError, match="self-loop"):
        write_graph(nx.Graph([(1, 1)]), tmp_path / "g.csv")


# ---------------------------------------------------------------- neighbourhood anonymity (item 3)

def _all_k_anonymous_masks(n: int, k: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Every graph on n labelled vertices as a bit mask over the vertex pairs, and which of
    them are k-anonymous by Definition 1 (brute force, vectorized)."""
    pairs = list(itertools.combinations(range(n), 2))
    masks = np.arange(2 ** len(pairs), dtype=np.int64)
    nbr = np.zeros((masks.shape[0], n), dtype=np.int64)
    for e, (u, v) in enumerate(pairs):
        bit = (masks >> e) & 1
        nbr[:, u] |= bit << v
        nbr[:, v] |= bit << u
    level = (nbr[:, :, None] == nbr[:, None, :]).sum(axis=2).min(axis=1)
    return pairs, masks[level >= k]


def _brute_force_min_edits(G: nx.Graph, k: int) -> int:
    pairs, ok = _all_k_anonymous_masks(G.number_of_nodes(), k)
    mask = sum(1 << e for e, (u, v) in enumerate(pairs) if G.has_edge(u, v))
    return int(min(bin(int(x)).count("1") for x in (ok ^ mask)))


def _best_partition_cost(G: nx.Graph, k: int) -> int:
    from microagg.graph._common import csr_adjacency
    from microagg.graph._neighbourhood import _edit_cost

    _, A = csr_adjacency(G)
    best = math.inf
    for part in _set_partitions(list(range(G.number_of_nodes()))):
        if min(len(b) for b in part) >= k:
            labels = np.empty(G.number_of_nodes(), dtype=np.intp)
            for g, block in enumerate(part):
                labels[block] = g
            best = min(best, _edit_cost(A, labels))
    return int(best)


def test_neighbourhood_seed_example_needs_no_edit() -> None:
    G = seed_graph()
    result = neighbourhood_anonymize(G, 3, random_state=0)
    assert result.n_edits == 0 and result.achieved_k == 3
    assert sorted(map(sorted, result.groups)) == neighbourhood_classes(G)


@pytest.mark.parametrize("seed", range(12))
def test_neighbourhood_against_brute_force(seed: int) -> None:
    # n = 6 (all 2^15 graphs): the exact minimum number of edits to a k-anonymous graph
    # equals the best partition settled by the "auto" rule (the structure argument of
    # _settle), and the greedy grouping reaches k and never beats the optimum
    n, k = 6, 2 + seed % 2
    G = nx.gnp_random_graph(n, 0.5, seed=seed)
    optimum = _brute_force_min_edits(G, k)
    assert _best_partition_cost(G, k) == optimum
    result = neighbourhood_anonymize(G, k, random_state=seed)
    assert result.achieved_k >= k == result.k
    assert result.n_edits >= optimum
    assert result.n_edits <= G.number_of_edges()  # never worse than deleting every edge


def test_neighbourhood_hand_cases_are_optimal() -> None:
    # path 0-1-2-3 (not 2-anonymous, so >= 1 edit): one added edge gives the 4-cycle
    result = neighbourhood_anonymize(nx.path_graph(4), 2, random_state=0)
    assert result.n_edits == 1 == _brute_force_min_edits(nx.path_graph(4), 2)
    # K(2,3) minus one edge at k = 2: restoring the edge is the unique cheapest fix
    G = nx.complete_bipartite_graph(2, 3)
    G.remove_edge(0, 4)
    result = neighbourhood_anonymize(G, 2, random_state=0)
    assert result.edges_added in (((0, 4),), ((4, 0),)) and not result.edges_removed
    assert _brute_force_min_edits(G, 2) == 1
    # a triangle at k = 3: neighbourhoods can only be equal in the empty graph
    result = neighbourhood_anonymize(nx.complete_graph(3), 3, random_state=0)
    assert result.graph.number_of_edges() == 0 and result.n_edits == 3


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), p=st.floats(0.0, 0.7), k=st.integers(2, 6),
       rule=st.sampled_from(["auto", "union", "intersection"]), seed=st.integers(0, 2**31))
def test_neighbourhood_properties(n: int, p: float, k: int, rule: str, seed: int) -> None:
    G = nx.gnp_random_graph(n, p, seed=seed)
    k = min(k, n)
    result = neighbourhood_anonymize(G, k, rule=rule, random_state=seed)
    H = result.graph
    assert graph_k_anonymity(H) == result.achieved_k >= k
    assert set(H.nodes()) == set(G.nodes())
    assert all(len(g) >= k for g in result.groups)
    assert sorted(v for g in result.groups for v in g) == sorted(G.nodes())
    assert all(not G.has_edge(u, v) and H.has_edge(u, v) for u, v in result.edges_added)
    assert all(G.has_edge(u, v) and not H.has_edge(u, v) for u, v in result.edges_removed)
    assert H.number_of_edges() == (G.number_of_edges() + len(result.edges_added)
                                   - len(result.edges_removed))
    group_of = {v: i for i, g in enumerate(result.groups) for v in g}
    if rule == "union":  # removals only inside groups (mandatory)
        assert all(group_of[u] == group_of[v] for u, v in result.edges_removed)
    if rule == "intersection":
        assert not result.edges_added
    if rule == "auto":
        assert result.n_edits <= G.number_of_edges()


def test_neighbourhood_bad_rule() -> None:
    with pytest.raises(ValueError, match=r"'rule' parameter .* auto, union, intersection\. "
                                         r"Got 'mean'"):
        neighbourhood_anonymize(nx.path_graph(4), 2, rule="mean")


def test_the_graph_tests_skip_at_collection_without_networkx():
    # a fresh interpreter in which networkx cannot be imported (a None entry in sys.modules)
    code = ("import sys; sys.modules['networkx'] = None; import pytest; "
            "sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', '--co', "
            f"{str(pathlib.Path(__file__).parent)!r}]))")
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False, cwd=root)
    assert done.returncode == 5, done.stdout + done.stderr  # 5: no test collected, no error
    assert "error" not in done.stdout.lower(), done.stdout
    assert re.search(r"SKIPPED \[1\] .*test_graph\.py:\d+: the graph extra is not installed",
                     done.stdout), done.stdout
