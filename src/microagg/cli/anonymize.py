"""``microagg anonymize``: mask a table (in memory, out of core or on Dask) and write the release.

The command parses its options into the keywords of :meth:`Request.build
<microagg._pipeline.request.Request.build>` (which checks every one of them) and hands the
Request to the engine ``--engine`` names (:data:`microagg.engines.ENGINES`); every engine
hands back the one Release, printed by :mod:`._tables`.
"""

from __future__ import annotations

import pathlib
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from microagg.cli._common import (
    DelayedProgress,
    RandomStateOption,
    UsageError,
    app,
    parse_attribute_groups,
    parse_bounds,
    parse_hierarchies,
    parse_params,
    passthrough_as_read,
    split_names,
    stderr,
    stdout,
    user_errors,
)
from microagg.cli._tables import summary_table

if TYPE_CHECKING:
    import pandas as pd

    from microagg._pipeline.request import Request
    from microagg.engines import Engine
    from microagg.release import Release
    from microagg.schema import Schema

_FLAGS = {
    "aggregation": "--aggregation", "aggregation_params": "--agg-param",
    "epsilon": "--epsilon", "bounds": "--bounds", "hierarchies": "--hierarchy", "l": "-l",
    "t": "-t", "intruder_knows": "--intruder-knows", "attribute_groups": "--attribute-groups",
    "clustering_il": "--clustering-il", "refine": "--refine", "scaling": "--scaling",
    "n_jobs": "--jobs", "method": "-m/--method (it generalizes)",
    "schema": "--schema with hierarchies, ordinal columns or categorical quasi-identifiers "
              "(their codes would be averaged)",
}
"""The option of this command behind each Request option an engine may refuse."""


@dataclass(frozen=True)
class _Outputs:
    """Where the release goes: the table, and optionally its summary and report."""

    table: pathlib.Path | str
    summary: pathlib.Path | None
    report: pathlib.Path | None


@app.command()
def anonymize(
    *,
    input_path: Annotated[
        str | None,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="Input table: .csv/.tsv/.txt (optionally .gz), .parquet or .pq, "
                            "or a database table: sqlite:///file.db?table=NAME (any "
                            "SQLAlchemy URL with microagg[sql])."),
    ] = None,
    output: Annotated[
        str,
        typer.Option("-o", "--output", show_default=False,
                     help="Output table (.csv/.tsv/.txt[.gz], .parquet, .pq), written "
                          "atomically, never over the input; or a NEW database table, "
                          "sqlite:///file.db?table=NAME, created in one transaction."),
    ],
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", help="Use a bundled data set (see `microagg datasets`) "
                                       "instead of INPUT."),
    ] = None,
    quasi_identifiers: Annotated[
        list[str] | None,
        typer.Option("-q", "--quasi-identifiers", show_default=False,
                     help="Comma-separated numeric columns to mask (repeatable). Default with "
                          "--dataset: the data set's quasi-identifiers."),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Minimum group size (k >= 2).")] = 5,
    method: Annotated[
        str | None,
        typer.Option("-m", "--method", show_default=False,
                     help="Partitioner (see `microagg methods`); default mdav."),
    ] = None,
    sensitive: Annotated[
        list[str] | None,
        typer.Option("-s", "--sensitive", show_default=False,
                     help="Comma-separated sensitive columns (published unchanged)."),
    ] = None,
    drop: Annotated[
        list[str] | None,
        typer.Option("--drop", show_default=False,
                     help="Comma-separated identifier columns, removed from the output."),
    ] = None,
    aggregation: Annotated[
        str | None,
        typer.Option("--aggregation", show_default=False,
                     help="Group representative: mean (default), median, mode, the noisy rho "
                          "(with --rho) and random-k, synthetic (hybrid data: the group's "
                          "mean and covariance), fuzzy-random (a group mean drawn by fuzzy "
                          "membership; --agg-param m=2) (these four are not k-anonymous, not "
                          "DP), or interval (generalizing releases; the default for cdt).")
    ] = None,
    rho: Annotated[
        float | None,
        typer.Option("--rho", show_default=False,
                     help="Noise scale of --aggregation rho, in [0, 1] (default 0.5)."),
    ] = None,
    scaling: Annotated[
        str | None,
        typer.Option("--scaling", show_default=False,
                     help="Scaling for distances: standard (default), minmax or none."),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", show_default=False,
                     help="Epsilon-differentially private release (insensitive partition + "
                          "Laplace noise on the group means); give --bounds for every "
                          "quasi-identifier."),
    ] = None,
    bounds: Annotated[
        list[str] | None,
        typer.Option("--bounds", show_default=False,
                     help="Public bounds for --epsilon as column=lower:upper (repeatable), "
                          "e.g. --bounds age=0:120."),
    ] = None,
    hierarchy: Annotated[
        list[str] | None,
        typer.Option("--hierarchy", show_default=False,
                     help="Generalization hierarchy of a categorical quasi-identifier as "
                          "COL=FILE (ARX CSV: value;level1;...;*), repeatable. With --dataset "
                          "adult the bundled hierarchies are used."),
    ] = None,
    l_div: Annotated[
        float | None,
        typer.Option("-l", "--l-diversity", show_default=False,
                     help="Require l-diversity of the sensitive columns (e.g. -l 2)."),
    ] = None,
    diversity: Annotated[
        str, typer.Option("--diversity", help="distinct, entropy or recursive.")
    ] = "distinct",
    diversity_c: Annotated[
        float, typer.Option("--diversity-c", help="c of recursive (c, l)-diversity.")
    ] = 2.0,
    t_close: Annotated[
        float | None,
        typer.Option("-t", "--t-closeness", show_default=False,
                     help="Require t-closeness of the sensitive columns (e.g. -t 0.2)."),
    ] = None,
    t_distance: Annotated[
        str, typer.Option("--t-distance",
                          help="EMD ground distance: auto, equal, ordered or hierarchical.")
    ] = "auto",
    intruder_knows: Annotated[
        list[str] | None,
        typer.Option("--intruder-knows", show_default=False,
                     help="Comma-separated quasi-identifiers an intruder holds: adds the "
                          "linkage risk on those columns only."),
    ] = None,
    attribute_groups: Annotated[
        str | None,
        typer.Option("--attribute-groups", show_default=False,
                     help="Microaggregate groups of quasi-identifiers separately: "
                          "'individual' (each column alone), 'correlation', or the groups "
                          "as 'a,b;c,d'. NOT k-anonymous: the real k is reported."),
    ] = None,
    n_attribute_groups: Annotated[
        int | None,
        typer.Option("--n-attribute-groups", show_default=False,
                     help="Number of groups for --attribute-groups correlation."),
    ] = None,
    categorical_aggregation: Annotated[
        str,
        typer.Option("--categorical-aggregation",
                     help="Nominal quasi-identifiers: 'generalize' (common ancestor in the "
                          "hierarchy) or 'mode' (most frequent value)."),
    ] = "generalize",
    agg_param: Annotated[
        list[str] | None,
        typer.Option("--agg-param", show_default=False,
                     help="Aggregation parameter name=value (repeatable), e.g. "
                          "--agg-param m=2 for fuzzy-random."),
    ] = None,
    clustering_il: Annotated[
        int | None,
        typer.Option("--clustering-il", metavar="C", show_default=False,
                     help="Also report the clustering-based information loss (k-means and "
                          "fuzzy c-means with C clusters: IL_RI, IL_ARI, IL_Jaccard, fuzzy "
                          "Rand)."),
    ] = None,
    blocking: Annotated[
        str | None,
        typer.Option("--blocking", show_default=False,
                     help="Run the method block by block for large files: kd (widest "
                          "axis), pca (principal axis) or vp (vantage point) median splits."),
    ] = None,
    block_size: Annotated[
        int, typer.Option("--block-size", help="Largest block with --blocking (>= 2k).")
    ] = 10_000,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", show_default=False,
                     help="Worker processes for --blocking (default: one per CPU on very "
                          "large inputs, else none)."),
    ] = None,
    schema: Annotated[
        pathlib.Path | None,
        typer.Option("--schema", show_default=False,
                     help="A TOML schema giving every column's role and type (see `microagg "
                          "init-schema`); replaces -q, -s, --drop."),
    ] = None,
    engine: Annotated[
        str,
        typer.Option("--engine",
                     help="local (in memory), file (out of core: streams INPUT in chunks, "
                          "blocks it, writes in the input's order; memory bounded by the "
                          "block size) or dask (a Dask cluster; --scheduler)."),
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", show_default=False,
                     help="Dask scheduler address for --engine dask (default: a local "
                          "cluster of one worker per CPU)."),
    ] = None,
    random_state: RandomStateOption = None,
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False,
                     help="CSV separator of the input and output; detected when omitted."),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", show_default=False,
                     help="Method parameter name=value (repeatable), e.g. --param gamma=0.5."),
    ] = None,
    refine_seconds: Annotated[
        float | None,
        typer.Option("--refine", metavar="SECONDS", show_default=False,
                     help="Quality mode: improve the method's partition by local search "
                          "(mdav-ls) for at most this many seconds. The result then "
                          "depends on the machine's speed."),
    ] = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the release summary (params, checks, metrics) as JSON."),
    ] = None,
    report: Annotated[
        pathlib.Path | None,
        typer.Option("--report", show_default=False,
                     help="Also write a self-contained HTML report of the release (.html)."),
    ] = None,
) -> None:

    """Mask the quasi-identifiers of a table by microaggregation and write the release."""
    start = time.perf_counter()
    with user_errors():
        outputs = _outputs(input_path, dataset, output, summary_json, report)
        runner, face = _engine(engine, input_path, dataset, outputs, scheduler)
        loaded_schema = _load_schema(schema, dataset)
        options = dict(
            quasi_identifiers=split_names(quasi_identifiers), k=k, method=method,
            sensitive=split_names(sensitive), identifiers=split_names(drop),
            aggregation=aggregation, aggregation_params=_aggregation_params(aggregation, rho,
                                                                           agg_param),
            scaling=scaling, random_state=random_state, method_params=parse_params(param),
            epsilon=epsilon, bounds=parse_bounds(bounds),
            intruder_knows=split_names(intruder_knows),
            hierarchies=parse_hierarchies(hierarchy), l=l_div, diversity=diversity,
            diversity_c=diversity_c, t=t_close, t_distance=t_distance,
            attribute_groups=parse_attribute_groups(attribute_groups),
            n_attribute_groups=n_attribute_groups,
            categorical_aggregation=categorical_aggregation, clustering_il=clustering_il,
            blocking=blocking, block_size=block_size, n_jobs=jobs, refine=refine_seconds)
        if input_path is not None and not options["quasi_identifiers"] \
                and loaded_schema is None:
            raise UsageError("-q/--quasi-identifiers (or --schema) is required with an INPUT "
                             "file.")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if runner.reads_files:
                assert input_path is not None  # --dataset is refused by _engine
                release = _run_on_file(runner, input_path, options, loaded_schema, sep,
                                       outputs, scheduler, face, rho)
                source = input_path
            else:
                release, source = _run_in_memory(runner, input_path, dataset, options,
                                                  loaded_schema, sep, outputs)
    _print(release, source, outputs, [str(w.message) for w in caught],
           time.perf_counter() - start)


def _outputs(input_path: str | None, dataset: str | None, output: str,
             summary_json: pathlib.Path | None, report: pathlib.Path | None) -> _Outputs:
    """Exactly one input; the outputs checked (never the input, never each other)."""
    from microagg.io import check_output_path, check_table_output

    if (input_path is None) == (dataset is None):
        raise UsageError("Give exactly one of INPUT or --dataset "
                         f"(got {'both' if dataset is not None else 'neither'}).")
    inputs = [input_path] if input_path is not None else []
    out = check_table_output(output, inputs=inputs, parameter="--output")
    summary_out = None
    if summary_json is not None:
        summary_out = check_output_path(summary_json, inputs=inputs, extensions=(".json",),
                                        parameter="--summary-json", outputs={"--output": out})
    report_out = None
    if report is not None:
        report_out = check_output_path(
            report, inputs=inputs, extensions=(".html", ".htm"), parameter="--report",
            outputs={"--output": out, "--summary-json": summary_out})
    return _Outputs(out, summary_out, report_out)


def _engine(name: str, input_path: str | None, dataset: str | None, outputs: _Outputs,
            scheduler: str | None) -> tuple[Engine, list[str]]:
    """The registry entry of ``--engine``, and this command's options it cannot take: an
    engine that reads its input file itself takes no --dataset, database table or --report
    (which needs the table in memory)."""
    from microagg.engines import get_engine
    from microagg.sql import is_sql_url

    runner = get_engine(name)
    if runner.command != "anonymize":  # the stream engine is a command of its own
        raise UsageError(f"--engine {name!r} runs as `microagg {runner.command}`, a command "
                         "of its own; --engine takes local, file or dask.")
    if scheduler is not None and runner.name != "dask":
        raise UsageError("--scheduler applies to --engine dask.")
    if not runner.reads_files:
        return runner, []
    face = [flag for flag, given in (("--dataset", dataset is not None),
                                     ("--report", outputs.report is not None)) if given]
    if dataset is not None:
        raise _refusal(runner, face)
    assert input_path is not None
    if is_sql_url(input_path) or isinstance(outputs.table, str):
        raise UsageError(f"--engine {runner.option} reads and writes files (CSV, Parquet); for "
                         "a database table use --engine local.")
    return runner, face


def _refusal(runner: Engine, flags: list[str]) -> UsageError:
    return UsageError(f"--engine {runner.option} streams numeric microaggregation with group "
                      f"means only; drop {', '.join(flags)} (or use --engine local).")


def _load_schema(schema: pathlib.Path | None, dataset: str | None) -> Schema | None:
    if schema is None:
        return None
    if dataset is not None:
        raise UsageError("--schema describes an INPUT file; --dataset brings its own roles.")
    from microagg.schema import load_schema

    return load_schema(schema)


def _aggregation_params(aggregation: str | None, rho: float | None,
                        agg_param: list[str] | None) -> dict[str, Any] | None:
    """``--agg-param`` pairs, and ``--rho`` (a shorthand of ``--agg-param rho=...``)."""
    params = parse_params(agg_param, "--agg-param")
    if rho is not None:
        if aggregation != "rho":
            raise UsageError(f"--rho applies to --aggregation rho, not {aggregation or 'mean'!r}.")
        params["rho"] = rho
    return params or None


def _keywords(options: dict[str, Any]) -> dict[str, Any]:
    """The keywords of :meth:`Request.build` from the parsed options: roles not given (nor
    by a bundled data set, :func:`_read_dataset`) empty, empty mappings ``None``."""
    return {**options, "quasi_identifiers": options["quasi_identifiers"] or [],
            "sensitive": options["sensitive"] or (), "identifiers": options["identifiers"] or (),
            "method_params": options["method_params"] or None,
            "hierarchies": options["hierarchies"] or None}


def _read_dataset(name: str, options: dict[str, Any]
                  ) -> tuple[pd.DataFrame, str, dict[str, Any]]:
    """A bundled data set, with its roles and hierarchies where the options give none."""
    from microagg.datasets import load_dataset

    ds = load_dataset(name)
    qi, sens, ids = options["quasi_identifiers"], options["sensitive"], options["identifiers"]
    if qi is None:
        qi = list(ds.quasi_identifiers)
    if sens is None:
        sens = [c for c in ds.sensitive if c not in qi and c not in (ids or ())]
    if ids is None:
        ids = [c for c in ds.identifiers if c not in qi]
    hierarchies = dict(options["hierarchies"] or {})
    for col, path in ds.hierarchies.items():  # categorical QIs get the bundled ones
        if col in qi and col not in hierarchies and ds.data[col].dtype.kind not in "biuf":
            hierarchies[col] = str(path)
    return ds.data, f"dataset {ds.name}", {**options, "quasi_identifiers": qi,
                                           "sensitive": sens, "identifiers": ids,
                                           "hierarchies": hierarchies or None}


def _run_in_memory(runner: Engine, input_path: str | None, dataset: str | None,
                   options: dict[str, Any], schema: Schema | None, sep: str | None,
                   outputs: _Outputs) -> tuple[Release, str]:
    """Read the table, build the Request, run it in memory, write what was asked."""
    from microagg._pipeline.request import Request
    from microagg.io import read_table

    with DelayedProgress(stderr(), ("read", "anonymize", "write")) as progress:
        progress.stage("read", done=0)
        if dataset is not None:
            df, source, options = _read_dataset(dataset, options)
        else:
            assert input_path is not None  # _outputs: exactly one input
            df, source = read_table(input_path, sep=sep, text_columns=(
                schema.text_columns if schema is not None else ())), str(input_path)
        progress.stage("anonymize", done=1)
        request = Request.build(df, schema=schema, engine=runner.name, **_keywords(options))
        release = runner.run(request)
        progress.stage("write", done=2)
        _write_in_memory(release, request, input_path, outputs, sep)
        progress.stage("done", done=3)
    return release, source


def _write_in_memory(release: Release, request: Request, input_path: str | None,
                     outputs: _Outputs, sep: str | None) -> None:
    """The table (pass-through columns as read), the summary and the report."""
    from microagg.io import write_table, write_text_atomic

    written = release.data
    if input_path is not None and release.params.get("epsilon") is None:
        written = passthrough_as_read(written, input_path, outputs.table, sep=sep,
                                       masked=release.params["quasi_identifiers"])
    write_table(written, outputs.table, sep=sep)
    if outputs.summary is not None:
        write_text_atomic(release.to_json() + "\n", outputs.summary)
    if outputs.report is not None:
        from microagg.report import write_report

        write_report(release, request.data, outputs.report)


def _run_on_file(runner: Engine, input_path: str, options: dict[str, Any],
                 schema: Schema | None, sep: str | None, outputs: _Outputs,
                 scheduler: str | None, face: list[str], rho: float | None) -> Release:
    """``--engine file`` / ``dask``: the Request from the input's first rows, then the
    engine streams the input and writes the output atomically."""
    from microagg._pipeline.rules import EngineRefusal
    from microagg.engines.files import file_request
    from microagg.io import write_text_atomic

    source = pathlib.Path(input_path)
    try:
        request = file_request(source, engine=runner.name, sep=sep, schema=schema,
                               **_keywords(options))
    except EngineRefusal as refusal:
        flags = ["--rho" if name == "aggregation_params" and rho is not None else _FLAGS[name]
                 for name in refusal.options]
        raise _refusal(runner, [*flags, *face]) from None
    if face:
        raise _refusal(runner, face)
    extra = {"scheduler": scheduler} if scheduler is not None else {}
    with DelayedProgress(stderr(), runner.stages) as progress:
        release = runner.run(request, source, pathlib.Path(outputs.table), sep=sep,
                             on_stage=lambda name: progress.stage(
                                 name, done=runner.stages.index(name)), **extra)
        progress.stage("done", done=len(runner.stages))
    if outputs.summary is not None:
        write_text_atomic(release.to_json() + "\n", outputs.summary)
    return release


def _print(release: Release, source: str, outputs: _Outputs, caught: list[str],
           seconds: float) -> None:
    """The summary table, where the summary and report went, then every warning."""
    notes = list(release.warnings)
    notes += [message for message in caught if message not in notes]
    console = stdout()
    console.print(summary_table(release, source=source, output=outputs.table, seconds=seconds))
    if outputs.summary is not None:
        console.print(Text(f"summary written to {outputs.summary}"), soft_wrap=True)
    if outputs.report is not None:
        console.print(Text(f"report written to {outputs.report}"), soft_wrap=True)
    for note in notes:
        console.print(Text(f"Warning: {note}", style="yellow"), soft_wrap=True)
