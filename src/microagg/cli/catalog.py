"""``microagg methods | datasets | init-schema``: what is available, and a schema to start from."""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    UsageError,
    app,
    stdout,
    user_errors,
)

if TYPE_CHECKING:
    from microagg.partition import Partitioner


COMPACT_WIDTH = 120
"""Characters of a method's line in the compact listing (stdout not a terminal)."""


@app.command()
def methods() -> None:
    """List the microaggregation methods (partitioners) and their parameters.

    On a terminal, a table; otherwise (a pipe, a log, ``make``) one line per method (name,
    family, its summary shortened to fit) and an indented line of its parameters, if any.
    """
    from microagg.partition import ALIASES, PARTITIONERS

    console = stdout()
    if console.is_terminal:
        console.print(_methods_table(PARTITIONERS))
    else:
        for line in _methods_lines(PARTITIONERS):
            console.print(Text(line), soft_wrap=True)
    if ALIASES:
        aliases = ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items())
        console.print(Text(f"Aliases: {aliases}"), soft_wrap=True)
    from microagg.aggregate.aggregators import AGGREGATION_PARAMS, AGGREGATORS

    aggs = ", ".join(
        name + "".join(f" ({p}={d!r})" for p, d in AGGREGATION_PARAMS[name].items())
        + (" [noisy: not k-anonymous, not DP]" if AGGREGATORS[name].may_be_noisy else "")
        for name in AGGREGATION_PARAMS
    )
    console.print(Text(f"Aggregations (--aggregation): {aggs}. Differentially private "
                       "release: --epsilon with --bounds."), soft_wrap=True)


def _parameters(entry: Partitioner) -> str:
    """A method's parameters with their defaults, as ``--param`` takes them (or ``-``)."""
    params = ", ".join(f"{p}={default!r}" for p, default in entry.params.items()
                       if p != "sensitive") or "-"  # the sensitive columns come from -s
    if entry.needs_sensitive:
        params += " (groups on the -s columns too)"
    return params


def method_family(entry: Partitioner) -> str:
    """What kind of partition a method makes and of which data, from its registry entry:
    ``fixed size`` or ``variable size``, then ``numeric``, ``mixed`` (numeric and
    categorical) or ``generalizing`` (publishes ranges and value sets)."""
    data = "generalizing" if entry.generalizes else "mixed" if entry.mixed else "numeric"
    return f"{'fixed' if entry.fixed_size else 'variable'} size, {data}"


def shortened(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: cut at a word boundary, with an ellipsis.

    >>> shortened("Maximum distance: groups around the two records farthest apart.", 30)
    'Maximum distance: groups…'
    """
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    if " " in cut:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:(") + "…"


def _methods_lines(partitioners: Mapping[str, Partitioner]) -> list[str]:
    """The compact listing: per method, ``name  family  summary`` in :data:`COMPACT_WIDTH`
    characters, then its parameters indented when it has any."""
    name_width = max(map(len, partitioners))
    families = {name: method_family(entry) for name, entry in partitioners.items()}
    family_width = max(map(len, families.values()))
    lines = [f"microaggregation methods ({len(partitioners)}; a terminal shows them as a "
             "table with their references)"]
    for name, entry in partitioners.items():
        head = f"{name:<{name_width}}  {families[name]:<{family_width}}  "
        lines.append(head + shortened(entry.summary, max(COMPACT_WIDTH - len(head), 20)))
        params = _parameters(entry)
        if params != "-":
            lines.append(" " * (name_width + 2) + f"parameters: {params}")
    return lines


def _methods_table(partitioners: Mapping[str, Partitioner]) -> Table:
    """The table a terminal shows: name, fixed size, parameters, summary and reference."""
    table = Table(title="microaggregation methods", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("fixed size")
    table.add_column("parameters")
    table.add_column("summary")
    table.add_column("reference")
    for name, entry in partitioners.items():
        table.add_row(name, "yes" if entry.fixed_size else "no", Text(_parameters(entry)),
                      Text(entry.summary), Text(entry.reference))
    return table


@app.command("init-schema")
def init_schema(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A table (CSV, TSV, Parquet, Excel .xlsx, Stata .dta, SPSS .sav, "
                            "or sqlite:///file.db?table=NAME)."),
    ],
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="Where to write the proposed schema (.toml)."),
    ],
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False, help="CSV separator (detected if omitted)."),
    ] = None,
    k: Annotated[
        int,
        typer.Option("-k", help="The k you mean to release with: a column that breaks it by "
                                "itself is never proposed as \"other\" (published unchanged)."),
    ] = 5,
) -> None:
    """Propose a schema for INPUT (roles and types guessed, reasons as comments) to edit."""
    with user_errors():
        from microagg._base.validation import check_k
        from microagg.io.tables import check_output_path, read_table, write_text_atomic
        from microagg.schema.schema_file import propose_schema

        out = check_output_path(output, inputs=[input_path], extensions=(".toml",),
                                parameter="--output")
        check_k(k, n_samples=sys.maxsize, caller="init-schema")
        text = propose_schema(read_table(input_path, sep=sep), k=k)
        write_text_atomic(text, out)
    stdout().print(Text(f"schema proposed in {out}: check every role, mark the sensitive "
                         "columns, then use it with --schema."), soft_wrap=True)


@app.command()
def datasets(
    name: Annotated[
        str | None,
        typer.Argument(show_default=False,
                       help="A data set to write out (with -o); without it, the list."),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option("-o", "--output", show_default=False,
                     help="Write the data set NAME to this table file (.csv, .parquet, .xlsx, "
                          ".dta, .sav ...), to try the commands on it."),
    ] = None,
) -> None:
    """List the bundled benchmark data sets, or write one to a file (NAME -o FILE)."""
    from microagg.datasets import list_datasets

    with user_errors():
        if (name is None) != (output is None):
            raise UsageError("Give both a data set NAME and -o FILE to write it, or neither "
                             "to list them.")
        if name is not None and output is not None:
            _write_dataset(name, output)
            return
    table = Table(title="bundled data sets", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("columns", justify="right")
    table.add_column("description")
    for info in list_datasets():
        table.add_row(info.name, str(info.rows), str(info.columns), Text(info.description))
    stdout().print(table)


def _write_dataset(name: str, output: str) -> None:
    """The bundled data set ``name`` written to ``output`` (atomically, never over a file
    of the package)."""
    from microagg.datasets import load_dataset
    from microagg.io.tables import check_table_output, write_table

    target = check_table_output(output, parameter="-o/--output")
    data = load_dataset(name).data
    write_table(data, target)
    stdout().print(Text(f"data set {name} ({data.shape[0]} rows x {data.shape[1]} columns) "
                        f"written to {target}"), soft_wrap=True)


