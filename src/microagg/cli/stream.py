"""``microagg stream``: k-anonymous microaggregation of a CSV stream under a delay bound."""

from __future__ import annotations

import csv
import gzip
import json
import pathlib
import sys
import time
from collections.abc import Iterator
from typing import IO, Annotated, cast

import typer
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    RandomStateOption,
    UsageError,
    app,
    match_columns,
    plain_json,
    split_names,
    stderr,
    user_errors,
)


@app.command()
def stream(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A CSV with a header (.csv, .csv.gz ...), or - for standard input."),
    ],
    output: Annotated[
        str,
        typer.Option("-o", "--output", show_default=False,
                     help="A CSV file (written to a temporary file, renamed at the end), or - "
                          "for standard output (written as records are published)."),
    ],
    quasi_identifiers: Annotated[
        list[str],
        typer.Option("-q", "--quasi-identifiers", show_default=False,
                     help="Comma-separated numeric columns to microaggregate."),
    ],
    k: Annotated[int, typer.Option("-k", help="Minimum group size (k >= 2).")] = 5,
    delay: Annotated[
        int,
        typer.Option("--delay", help="A record is published at most this many arrivals after "
                                     "its own (>= k - 1)."),
    ] = 1000,
    flush_age: Annotated[
        int,
        typer.Option("--flush-age", help="When the delay forces a publication, publish the "
                                         "groups holding a record at least this many arrivals "
                                         "old; the others wait to be regrouped with later "
                                         "arrivals (0: the whole buffer; at most --delay)."),
    ] = 0,
    keep: Annotated[
        list[str] | None,
        typer.Option("--keep", show_default=False,
                     help="Comma-separated columns published unchanged (e.g. sensitive); "
                          "every other column is dropped."),
    ] = None,
    method: Annotated[
        str, typer.Option("-m", "--method", help="Partitioner for each buffer.")
    ] = "mdav",
    index_column: Annotated[
        str | None,
        typer.Option("--index-column", show_default=False,
                     help="Also write the arrival index under this name (to join back; it "
                          "re-identifies records for whoever knows arrival times, so keep "
                          "such a file with the data holder). Omitted by default, and rows "
                          "are then shuffled within each cluster."),
    ] = None,
    cluster_column: Annotated[
        str | None,
        typer.Option("--cluster-column", show_default=False,
                     help="Also write each record's cluster number under this name."),
    ] = None,
    delay_column: Annotated[
        str | None,
        typer.Option("--delay-column", show_default=False,
                     help="Also write each record's delay (arrivals between its own and its "
                          "publication) under this name; it reveals the arrival index too."),
    ] = None,
    chunk_rows: Annotated[
        int, typer.Option("--chunk-rows", help="Rows read at a time (latency on a pipe).")
    ] = 10_000,
    sep: Annotated[str, typer.Option("--sep", help="Field separator of input and output.")] = ",",
    random_state: RandomStateOption = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the achieved k, delay, clusters and seed as JSON."),
    ] = None,
) -> None:
    """Microaggregate a stream of records as they arrive: groups of >= k, bounded delay."""
    start = time.perf_counter()
    with user_errors():
        from microagg._base.validation import resolve_seed
        from microagg.engines.stream.csv_files import stream_csv
        from microagg.io.tables import check_output_path, write_text_atomic

        header, source = _header_and_source(input_path, sep)
        qi = match_columns(split_names(quasi_identifiers), header) or []
        if not qi:
            raise UsageError("Name the quasi-identifiers: -q.")
        inputs = [] if input_path == "-" else [input_path]
        summary_out = None
        if summary_json is not None:
            summary_out = check_output_path(
                summary_json, inputs=[*inputs, *([] if output == "-" else [output])],
                extensions=(".json",), parameter="--summary-json")
        seed, _ = resolve_seed(random_state)
        release = stream_csv(source, output, columns=qi, k=k, delay=delay, flush_age=flush_age,
                             keep=match_columns(split_names(keep), header) or (), sep=sep,
                             chunk_rows=chunk_rows, method=method, random_state=seed,
                             index_column=index_column, cluster_column=cluster_column,
                             delay_column=delay_column)
        records, clusters = release.n_rows, release.metrics["n_clusters"]
        max_delay, reused = release.checks["delay"]["achieved"], release.metrics["n_reused"]
        # the release's summary, and the figures under the names they always had
        summary = {**release.summary(), "input": input_path, "output": output,
                   "quasi_identifiers": qi, "k": k, "delay": delay, "method": method,
                   "seed": seed, "achieved_k": release.k, "max_delay": max_delay,
                   "records": records, "clusters": clusters, "reused_at_the_end": reused,
                   "seconds": time.perf_counter() - start}
        if summary_out is not None:
            write_text_atomic(json.dumps(plain_json(summary), indent=2) + "\n", summary_out)
    # standard output may carry the data: the summary always goes to standard error
    table = Table(title="microagg stream", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    for name, value in (("records / clusters", f"{records:,} / {clusters:,}"),
                        ("required / achieved k", f"{k} / {release.k}"),
                        ("delay bound / largest delay", f"{delay:,} / {max_delay:,}"),
                        ("published with a reused cluster", str(reused)),
                        ("seed", str(seed)),
                        ("time (s)", f"{time.perf_counter() - start:.2f}")):
        table.add_row(name, Text(value))
    stderr().print(table)


class _Replayed:
    """A text stream whose first line was already read off it: that line, then the rest."""

    def __init__(self, first_line: str, rest: IO[str]) -> None:
        self._pending, self._rest = first_line, rest

    def __iter__(self) -> Iterator[str]:
        return iter(self.readline, "")

    def readline(self, size: int | None = -1) -> str:
        if self._pending:
            line, self._pending = self._pending, ""
            return line
        return self._rest.readline(-1 if size is None else size)

    def read(self, size: int | None = -1) -> str:
        if self._pending:  # a short read is allowed: the rest comes on the next call
            text, self._pending = self._pending, ""
            return text
        return self._rest.read(-1 if size is None else size)


def _header_and_source(input_path: str, sep: str) -> tuple[list[str], str | IO[str]]:
    """The names of the input's header (to match the options' names against, as every
    command does) and what :func:`~microagg.engines.stream.csv_files.stream_csv` reads: the path, or standard
    input with its header line replayed."""
    if input_path == "-":
        line = sys.stdin.readline()
        names = next(csv.reader([line], delimiter=sep)) if line.strip() else []
        return names, cast(IO[str], _Replayed(line, sys.stdin))
    path = pathlib.Path(input_path).expanduser()
    if not path.is_file():  # stream_csv says so
        return [], input_path
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        first = handle.readline()
    return (next(csv.reader([first], delimiter=sep)) if first.strip() else []), input_path
