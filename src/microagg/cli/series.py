"""``microagg series``: k-anonymous release of time series (one column per time point)."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from microagg.cli._common import (
    RandomStateOption,
    SepOption,
    app,
    match_column,
    match_columns,
    passthrough_as_read,
    split_names,
    stdout,
    user_errors,
)

from ._tables import key_value_table

if TYPE_CHECKING:
    from microagg._pipeline.result import Release


@app.command()
def series(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A table with one series per row (CSV, TSV, Parquet, Excel .xlsx, "
                            "Stata .dta, SPSS .sav, or sqlite:///file.db?table=NAME)."),
    ],
    output: Annotated[
        str,
        typer.Option("-o", "--output", show_default=False,
                     help="Output table, written atomically, never over the input."),
    ],
    columns: Annotated[
        str,
        typer.Option("--columns", show_default=False,
                     help="The time points: a glob pattern ('t*'), a prefix ('t') or a "
                          "comma-separated list of columns in time order."),
    ],
    k: Annotated[int, typer.Option("-k", help="Minimum records per published series "
                                              "(k >= 2).")] = 5,
    distance: Annotated[
        str, typer.Option("--distance", help="euclidean or dtw (dynamic time warping).")
    ] = "euclidean",
    band: Annotated[
        int | None,
        typer.Option("--band", show_default=False,
                     help="Sakoe-Chiba radius of DTW, in time points (--distance dtw)."),
    ] = None,
    representative: Annotated[
        str | None,
        typer.Option("--representative", show_default=False,
                     help="mean or dba (DTW barycentre, needs microagg\\[series]); default "
                          "mean for euclidean, dba for dtw."),
    ] = None,
    identifiers: Annotated[
        str | None,
        typer.Option("-i", "--identifiers", show_default=False,
                     help="Comma-separated columns to drop from the release."),
    ] = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the release summary (params, checks, metrics) as JSON."),
    ] = None,
    random_state: RandomStateOption = None,
    sep: SepOption = None,
) -> None:
    """Microaggregate whole time series with MDAV (Euclidean or DTW): every published series
    is shared by at least k records (Nin & Torra 2006, 2009)."""
    with user_errors():
        from microagg.io.tables import (
            check_output_path,
            check_table_output,
            read_table,
            write_table,
            write_text_atomic,
        )
        from microagg.series import anonymize_series

        target = check_table_output(output, inputs=[input_path], parameter="-o/--output")
        summary_out = None if summary_json is None else check_output_path(
            summary_json, inputs=[input_path], extensions=(".json",),
            parameter="--summary-json")
        table = read_table(input_path, sep=sep)
        chosen: str | list[str] = (
            match_column(columns, table.columns) if "," not in columns else
            match_columns(split_names([columns]), table.columns) or [])
        release = anonymize_series(
            table, series_columns=chosen, k=k, distance=distance, band=band,
            representative=representative, identifiers=match_columns(split_names(
                [identifiers] if identifiers else None), table.columns) or (),
            random_state=random_state)
        written = passthrough_as_read(release.data, input_path, target,
                                      masked=release.params["series_columns"], sep=sep)
        write_table(written, target, sep=sep)
        if summary_out is not None:
            write_text_atomic(release.to_json() + "\n", summary_out)
    stdout().print(_summary(release, output))


def _summary(release: Release, output: str) -> Table:
    """The release's figures as a two-column table."""
    metrics, params = release.metrics, release.params
    band = params["band"]
    rows = [
        ("rows / series length", f"{release.n_rows:,} / {len(params['series_columns'])}"),
        ("distance", params["distance"] + (f" (band {band})" if band is not None else "")),
        ("representative", params["representative"]),
        ("k required / achieved", f"{params['k']} / {release.k}"),
        ("groups", f"{metrics['groups']:,}"),
        ("information loss (SSE/SST, %)", f"{metrics['information_loss']:.4f}"),
    ]
    if "dtw_mean" in metrics:
        rows.append(("mean DTW to the published series", f"{metrics['dtw_mean']:.4f}"))
    rows += [("linkage to own series / re-identification",
              f"{metrics['linkage_risk']:.4f} / {metrics['reidentification_risk']:.4f}"),
             ("seed", str(release.seed)),
             ("time (s)", f"{sum(release.timings.values()):.2f}"),
             ("written", output)]
    return key_value_table("microagg series", rows, release.warnings)
