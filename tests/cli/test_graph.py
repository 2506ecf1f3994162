"""`microagg graph anonymize | check`: files in, verified graph out, errors named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

nx = pytest.importorskip("networkx")

from microagg.cli import EXIT_USER_ERROR, app  # noqa: E402
from microagg.graph import degree_k_anonymity, graph_k_anonymity, read_graph  # noqa: E402


@pytest.fixture
def edge_list(tmp_path: Path) -> Path:
    G = nx.barabasi_albert_graph(200, 2, seed=1)
    path = tmp_path / "g.csv"
    path.write_text("source,target\n" + "".join(f"{u},{v}\n" for u, v in G.edges()))
    return path


def test_degree_anonymize_writes_a_verified_graph(edge_list: Path, tmp_path: Path) -> None:
    out, summary = tmp_path / "g_k4.csv", tmp_path / "g.json"
    result = CliRunner().invoke(app, ["graph", "anonymize", str(edge_list), "-o", str(out),
                                      "-k", "4", "--random-state", "3", "--summary-json",
                                      str(summary)])
    assert result.exit_code == 0, result.output
    H = read_graph(out)
    G = read_graph(edge_list)
    assert degree_k_anonymity(H) >= 4
    assert all(H.has_edge(u, v) for u, v in G.edges())  # only additions
    facts = json.loads(summary.read_text())
    assert facts["achieved_k"] >= 4 and facts["seed"] == 3
    assert facts["edges_added"] == H.number_of_edges() - G.number_of_edges()
    assert facts["edges_added"] >= facts["lower_bound"]
    # same seed, same graph
    again = tmp_path / "again.csv"
    CliRunner().invoke(app, ["graph", "anonymize", str(edge_list), "-o", str(again),
                             "-k", "4", "--random-state", "3"])
    assert again.read_text() == out.read_text()


def test_neighbourhood_model_and_check(edge_list: Path, tmp_path: Path) -> None:
    out = tmp_path / "g.graphml"
    result = CliRunner().invoke(app, ["graph", "anonymize", str(edge_list), "-o", str(out),
                                      "-k", "3", "--model", "neighbourhood",
                                      "--random-state", "0"])
    assert result.exit_code == 0, result.output
    assert graph_k_anonymity(read_graph(out)) >= 3
    assert "edges were removed" in result.output  # a sparse power-law graph loses most
    check = CliRunner().invoke(app, ["graph", "check", str(out)])
    assert check.exit_code == 0 and "Definition 1" in check.output


@pytest.mark.parametrize(("args", "message"), [
    (["-k", "1"], "k"),
    (["-k", "500"], "500"),
    (["--model", "closeness"], "--model must be one of degree, neighbourhood"),
    (["--rule", "union"], "--rule applies to --model neighbourhood"),
])
def test_bad_options_are_refused(edge_list: Path, tmp_path: Path, args: list[str],
                                 message: str) -> None:
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(app, ["graph", "anonymize", str(edge_list), "-o", str(out),
                                      *args])
    assert result.exit_code == EXIT_USER_ERROR
    assert message in result.output
    assert not out.exists()


def test_never_over_the_input(edge_list: Path) -> None:
    before = edge_list.read_text()
    result = CliRunner().invoke(app, ["graph", "anonymize", str(edge_list), "-o",
                                      str(edge_list)])
    assert result.exit_code == EXIT_USER_ERROR and "never overwrites" in result.output
    assert edge_list.read_text() == before
