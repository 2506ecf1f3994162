"""Speed and cost of the graph methods (issue 8): k-degree anonymity and neighbourhood
k-anonymity on power-law graphs from networkx's generators.

    python benchmarks/bench_graph.py            # 100,000-vertex graphs (~2 minutes)
    python benchmarks/bench_graph.py --quick    # 10,000 vertices only (~15 seconds)

Target (issue 8): k-degree anonymity of a 100,000-vertex Barabasi-Albert graph (m = 3,
seed 0) at k = 10 in under 30 s on the 2-core machine. The time is the whole public call:
validation, the degree program, realization, verification and the utility measures
(average clustering on all vertices; average path length from 100 sampled BFS sources,
the same before and after). "edges / LB" compares the edges added with the lower bound
ceil(cost / 2) of the optimal degree sequence.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import networkx as nx

from _machine import machine  # benchmarks/_machine.py (run as a script)
from microagg.graph import graph_k_anonymity, k_degree_anonymize, neighbourhood_anonymize

GENERATORS: dict[str, Callable[[int], nx.Graph]] = {
    "BA m=3": lambda n: nx.barabasi_albert_graph(n, 3, seed=0),
    "powerlaw-cluster m=3 p=0.3": lambda n: nx.powerlaw_cluster_graph(n, 3, 0.3, seed=0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 vertices only")
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    print(f"# machine: {machine('networkx ' + nx.__version__)}")
    print("\n## k-degree anonymity (k_degree_anonymize, random_state=0)\n")
    print("| graph | n | edges | k | seconds | edges added | LB | edges / LB | rounds | "
          "achieved k | clustering before -> after | path length before -> after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, make in GENERATORS.items():
        G = make(n)
        for k in (5, 10, 20):
            t = time.perf_counter()
            r = k_degree_anonymize(G, k, random_state=0)
            seconds = time.perf_counter() - t
            ratio = r.n_edges_added / r.lower_bound if r.lower_bound else float("nan")
            print(f"| {name} | {n:,} | {G.number_of_edges():,} | {k} | {seconds:.2f} | "
                  f"{r.n_edges_added:,} | {r.lower_bound:,} | {ratio:.2f} | {r.rounds} | "
                  f"{r.achieved_k} | {r.clustering_before:.4f} -> {r.clustering_after:.4f} | "
                  f"{r.path_length_before:.3f} -> {r.path_length_after:.3f} |")
    print("\n## neighbourhood k-anonymity, Definition 1 (neighbourhood_anonymize)\n")
    print("| graph | n | edges | k | rule | seconds | added | removed | edges left | "
          "achieved k |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, make in GENERATORS.items():
        G = make(n)
        for rule in ("auto", "union", "intersection"):
            if rule == "union" and n > 10_000:
                continue  # joins whole groups: tens of millions of edges at this size
            t = time.perf_counter()
            r = neighbourhood_anonymize(G, 5, rule=rule, random_state=0)
            seconds = time.perf_counter() - t
            assert graph_k_anonymity(r.graph) == r.achieved_k
            print(f"| {name} | {n:,} | {G.number_of_edges():,} | 5 | {rule} | {seconds:.2f} | "
                  f"{len(r.edges_added):,} | {len(r.edges_removed):,} | "
                  f"{r.graph.number_of_edges():,} | {r.achieved_k} |")


if __name__ == "__main__":
    main()
