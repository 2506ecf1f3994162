"""``microagg methods | datasets | init-schema``: what is available, and a schema to start from."""

from __future__ import annotations

import pathlib
import sys
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    UsageError,
    app,
    stdout,
    user_errors,
)


@app.command()
def methods() -> None:
    """List the microaggregation methods (partitioners) and their parameters."""
    from microagg.partition import ALIASES, PARTITIONERS

    table = Table(title="microaggregation methods", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("fixed size")
    table.add_column("parameters")
    table.add_column("summary")
    table.add_column("reference")
    for name, entry in PARTITIONERS.items():
        params = ", ".join(f"{p}={default!r}" for p, default in entry.params.items()
                           if p != "sensitive") or "-"  # the sensitive columns come from -s
        if entry.needs_sensitive:
            params += " (groups on the -s columns too)"
        table.add_row(name, "yes" if entry.fixed_size else "no", Text(params),
                      Text(entry.summary), Text(entry.reference))
    console = stdout()
    console.print(table)
    if ALIASES:
        aliases = ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items())
        console.print(Text(f"Aliases: {aliases}"), soft_wrap=True)
    from microagg.aggregate import AGGREGATION_PARAMS, AGGREGATORS

    aggs = ", ".join(
        name + "".join(f" ({p}={d!r})" for p, d in AGGREGATION_PARAMS[name].items())
        + (" [noisy: not k-anonymous, not DP]" if AGGREGATORS[name].may_be_noisy else "")
        for name in AGGREGATION_PARAMS
    )
    console.print(Text(f"Aggregations (--aggregation): {aggs}. Differentially private "
                       "release: --epsilon with --bounds."), soft_wrap=True)


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
        from microagg._validation import check_k
        from microagg.io import check_output_path, read_table, write_text_atomic
        from microagg.schema import propose_schema

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
    from microagg.io import check_table_output, write_table

    target = check_table_output(output, parameter="-o/--output")
    data = load_dataset(name).data
    write_table(data, target)
    stdout().print(Text(f"data set {name} ({data.shape[0]} rows x {data.shape[1]} columns) "
                        f"written to {target}"), soft_wrap=True)


