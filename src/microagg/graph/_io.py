"""Reading and writing graphs: edge-list CSV (``source,target``) and GraphML, atomically."""

from __future__ import annotations

import csv
import io
import os
import pathlib
from typing import IO, Any

import networkx as nx
import pandas as pd

from ..io._atomic import atomic_write
from ..io._formats import format_suffix, path_subject
from ..io.tables import check_output_path
from ._common import SOURCE_KEY, check_graph

__all__ = ["GRAPH_EXTENSIONS", "read_graph", "write_graph"]

PathLike = str | os.PathLike[str]

GRAPH_EXTENSIONS: tuple[str, ...] = (".csv", ".graphml")
"""Extensions understood by :func:`read_graph` and :func:`write_graph`."""

_COLUMNS = ("source", "target")


def _graph_format(path: pathlib.Path, *, parameter: str) -> str:
    suffix = format_suffix(path)
    if suffix not in GRAPH_EXTENSIONS:
        raise ValueError(
            f"The {path_subject(parameter, path)} has an unsupported extension "
            f"{suffix or '(none)'!r}. Supported extensions: {', '.join(GRAPH_EXTENSIONS)}."
        )
    return suffix[1:]


def _read_csv(path: pathlib.Path) -> nx.Graph:
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"Graph file {str(path)!r} is empty: no header and no rows.") from None
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ValueError(f"Could not parse {str(path)!r} as an edge-list CSV: {exc}") from exc
    columns = [str(c) for c in df.columns]
    missing = [c for c in _COLUMNS if c not in columns]
    if missing:
        raise ValueError(
            f"Graph file {str(path)!r} lacks the column(s) {', '.join(missing)}; an edge list "
            f"needs exactly the columns source,target. Found: {', '.join(columns) or '(none)'}."
        )
    extra = [c for c in columns if c not in _COLUMNS]
    if extra:
        raise ValueError(
            f"Graph file {str(path)!r} has unexpected column(s) {', '.join(extra)}; an edge "
            "list has exactly the columns source,target (edge attributes need GraphML)."
        )
    if df.shape[0] == 0:
        raise ValueError(f"Graph file {str(path)!r} has a header but no rows (no vertices).")
    no_source = (df["source"].str.strip() == "").to_numpy()
    if no_source.any():
        row = int(no_source.argmax()) + 2  # 1-based, after the header
        raise ValueError(
            f"Graph file {str(path)!r}: line {row} has no source vertex (every row needs "
            "one; an empty target marks an isolated vertex)."
        )
    source = df["source"].str.strip()
    target = df["target"].str.strip()
    names = pd.concat([source, target[target != ""]])
    integers = bool(names.str.fullmatch(r"[+-]?\d+").all())
    return _edge_list_graph(path, source, target, integers=integers)


def _edge_list_graph(path: pathlib.Path, source: pd.Series, target: pd.Series, *,
                     integers: bool) -> nx.Graph:
    """The graph of the edge list's rows (an empty target: an isolated vertex); vertex names
    become ints when every one is an integer."""
    G = nx.Graph()
    for line, (a, b) in enumerate(zip(source, target, strict=True), start=2):
        u: Any = int(a) if integers else a
        if b == "":
            G.add_node(u)
            continue
        v: Any = int(b) if integers else b
        if u == v:
            raise ValueError(
                f"Graph file {str(path)!r}: line {line} is a self-loop ({u!r}, {v!r}); a "
                "vertex cannot be its own neighbour."
            )
        if G.has_edge(u, v):
            raise ValueError(
                f"Graph file {str(path)!r}: line {line} repeats the edge ({u!r}, {v!r}) "
                "(edges are undirected: (a, b) and (b, a) are the same edge); "
                "multigraphs are not supported."
            )
        G.add_edge(u, v)
    return G


def _read_graphml(path: pathlib.Path) -> nx.Graph:
    if path.stat().st_size == 0:
        raise ValueError(f"Graph file {str(path)!r} is empty.")
    try:
        G = nx.read_graphml(path)
    except (nx.NetworkXError, ValueError, SyntaxError) as exc:
        raise ValueError(f"Could not parse {str(path)!r} as GraphML: {exc}") from exc
    if G.is_directed():
        raise ValueError(
            f"Graph file {str(path)!r} holds a directed graph (edgedefault='directed'); "
            "microagg.graph works on undirected graphs. Convert it first, e.g. "
            "networkx.read_graphml(path).to_undirected(), and write that."
        )
    if G.is_multigraph():
        raise ValueError(
            f"Graph file {str(path)!r} holds a multigraph (parallel edges); "
            "convert it first, e.g. networkx.Graph(networkx.read_graphml(path))."
        )
    if G.number_of_nodes() == 0:
        raise ValueError(f"Graph file {str(path)!r} has no vertices.")
    loops = list(nx.selfloop_edges(G))
    if loops:
        raise ValueError(
            f"Graph file {str(path)!r} has {len(loops)} self-loop(s) (first at "
            f"{loops[0][0]!r}); a vertex cannot be its own neighbour."
        )
    return G


def read_graph(path: PathLike) -> nx.Graph:
    """Read a simple undirected graph from an edge-list CSV or a GraphML file (by extension).

    CSV: a header with exactly the columns ``source,target`` and one row per edge (parsed
    by pandas as text: when every vertex name is an integer, vertices are ints, otherwise
    strings, leading and trailing spaces removed). A row with an empty
    target lists an isolated vertex, which an edge list could not otherwise hold (and
    isolated vertices matter: they all share the empty neighbourhood).

    Parameters
    ----------
    path : str or path-like
        ``.csv`` or ``.graphml`` file.

    Returns
    -------
    G : networkx.Graph
        The graph; ``G.graph["microagg_source_path"]`` records the resolved path, so that
        :func:`write_graph` refuses to overwrite it (that key is never written).

    Raises
    ------
    ValueError
        For an unsupported extension, an empty file, missing or extra columns (named), a
        self-loop, a repeated edge (a multigraph) or a directed GraphML file.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "g.csv").write_text("source,target\\n1,2\\n2,3\\n4,\\n")
    >>> G = read_graph(folder / "g.csv")
    >>> sorted(G.edges()), sorted(G.nodes())
    ([(1, 2), (2, 3)], [1, 2, 3, 4])
    """
    file = pathlib.Path(path).expanduser()
    fmt = _graph_format(file, parameter="path")
    if not file.is_file():
        raise FileNotFoundError(f"Graph file {str(file)!r} does not exist.")
    G = _read_csv(file) if fmt == "csv" else _read_graphml(file)
    G.graph[SOURCE_KEY] = str(file.resolve())
    return G


def write_graph(G: nx.Graph, path: PathLike, *, inputs: tuple[PathLike, ...] = ()) -> None:
    """Write a graph as an edge-list CSV or GraphML (by extension), atomically.

    The file is written to a temporary file in the same folder, fsync'ed and renamed onto
    ``path`` (:func:`os.replace`), so ``path`` is either complete or untouched. A graph
    read by :func:`read_graph` (or anonymized from one: the results keep the graph
    attributes) is never written over the file it came from.

    Parameters
    ----------
    G : networkx.Graph
        Simple undirected graph.
    path : str or path-like
        ``.csv`` (columns ``source,target``; isolated vertices as rows with an empty target)
        or ``.graphml``.
    inputs : tuple of str or path-like, default=()
        Further paths that must not be overwritten.

    Raises
    ------
    ValueError
        If ``path`` is an input (``G``'s source file or one of ``inputs``), has an
        unsupported extension, or its folder does not exist; or ``G`` is not simple.

    Examples
    --------
    >>> import pathlib, tempfile, networkx as nx
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_graph(nx.path_graph(3), folder / "p.csv")
    >>> print((folder / "p.csv").read_text(), end="")
    source,target
    0,1
    1,2
    """
    check_graph(G, caller="write_graph")
    sources = [*inputs]
    if G.graph.get(SOURCE_KEY):
        sources.append(G.graph[SOURCE_KEY])
    target = pathlib.Path(path).expanduser()
    _graph_format(target, parameter="path")
    resolved = check_output_path(target, inputs=sources, extensions=GRAPH_EXTENSIONS,
                                 parameter="path")
    if format_suffix(target) == ".csv":
        text = io.StringIO(newline="")
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(_COLUMNS)
        writer.writerows(G.edges())
        writer.writerows((v, "") for v in G.nodes() if G.degree(v) == 0)
        data = text.getvalue().encode("utf-8")
    else:
        H = G.copy()
        H.graph.pop(SOURCE_KEY, None)
        buffer = io.BytesIO()
        nx.write_graphml(H, buffer)
        data = buffer.getvalue()

    def write(handle: IO[bytes]) -> None:
        handle.write(data)

    atomic_write(resolved, write)
