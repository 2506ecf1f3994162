"""``microagg anonymize``: mask a table (in memory, out of core or on Dask) and write the release."""

from __future__ import annotations

import json
import math
import pathlib
import time
import warnings
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    RandomStateOption,
    UsageError,
    _DelayedProgress,
    _parse_attribute_groups,
    _parse_bounds,
    _parse_hierarchies,
    _parse_params,
    _passthrough_as_read,
    _plain_json,
    _split_names,
    _stderr,
    _stdout,
    _user_errors,
    app,
)

if TYPE_CHECKING:
    from microagg.release import Release


def _format_float(value: Any, *, scale: float = 1.0, digits: int = 2) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) * scale
        return f"{number:.{digits}f}" if math.isfinite(number) else str(number)
    return "n/a"


def _summary_table(release: Release, *, source: str, output: pathlib.Path | str,
                   seconds: float) -> Table:
    """The rich table printed after a run (rows, groups, k, IL, risk, time)."""
    metrics = release.metrics
    k_check = release.checks.get("k_anonymity", {})
    group_check = release.checks.get("group_k", {})
    dp_check = release.checks.get("differential_privacy")
    l_check = release.checks.get("l_diversity")
    t_check = release.checks.get("t_closeness")
    qis = list(release.params.get("quasi_identifiers", ()))
    table = Table(title="microagg release", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    rows = [
        ("input", source),
        ("output", str(output)),
        ("method", str(release.params.get("method", "?"))),
        ("rows", str(release.data.shape[0])),
        ("quasi-identifiers", f"{len(qis)}: {', '.join(map(str, qis))}"),
        ("groups", str(metrics.get("n_groups", "n/a"))),
        ("aggregation", str(release.params.get("aggregation", "?"))
         + "".join(f" {n}={v}" for n, v in release.params.get("aggregation_params", {}).items())),
        ("required k", str(group_check.get("required", "n/a"))),
        ("smallest group", str(group_check.get("achieved", "n/a"))),
        ("achieved k (published values)",
         str(k_check.get("achieved", "n/a"))
         + ("" if k_check.get("required") is not None else
            "  (attribute groups: real k, not guaranteed)"
            if release.attribute_partitions else "  (noisy: not k-anonymous)")),
        ("IL (%)", _format_float(metrics.get("information_loss"), digits=4)),
        *((("NCP (%)", _format_float(metrics["ncp"], scale=100.0, digits=3)),
           ("IL(Omega), normalized", _format_float(metrics["il_omega_normalized"], digits=4)))
          if "ncp" in metrics else ()),
        *(((f"l-diversity ({l_check['diversity']})",
            f"required {l_check['required']}, achieved {l_check['achieved']:.3g}"),)
          if l_check is not None else ()),
        *((("t-closeness", f"required {t_check['required']}, achieved {t_check['achieved']:.3g}"),)
          if t_check is not None else ()),
        *((("UL / P(Q) / P(S) (%)",
            f"{100 * metrics['utility_loss']:.2f} / "
            f"{100 * metrics['privacy_of_quasi_identifiers']:.2f} / "
            f"{100 * metrics['privacy_of_sensitive']:.2f}"),)
          if "utility_loss" in metrics and "privacy_of_sensitive" in metrics else ()),
        *((("homogeneous classes",
            "; ".join(f"{c}: {h['homogeneous_classes']} of {h['classes']} "
                      f"({100 * h['homogeneous_share']:.2f}% of records)"
                      for c, h in metrics["homogeneity"].items())),)
          if "homogeneity" in metrics else ()),
        ("IL original units (%)", _format_float(metrics.get("information_loss_original_units"), digits=4)),
        ("DLD risk (%)", _format_float(metrics.get("dld_risk"), scale=100.0)),
        *((("DLD risk, intruder's columns (%)",
            _format_float(metrics["dld_risk_known"], scale=100.0)),)
          if "dld_risk_known" in metrics else ()),
        *((("intersection attack, re-identified (%)",
            _format_float(metrics["intersection_attack_reidentified"], scale=100.0)),)
          if "intersection_attack_reidentified" in metrics else ()),
        *((("IL_RI / IL_ARI / IL_Jaccard / IL_fuzzy",
            " / ".join(f"{metrics[m]:.4f}"
                       for m in ("il_rand", "il_ari", "il_jaccard", "il_fuzzy_rand"))),)
          if "il_ari" in metrics else ()),
        *((("epsilon-DP", f"epsilon={dp_check['epsilon']} "
            + ("(holds)" if dp_check["holds"] else "(does NOT hold: bounds from the data)")),)
          if dp_check is not None else ()),
        *((("time budget", _budget_text(release.params["time_budget"])),)
          if release.params.get("time_budget") else ()),
        ("seed", str(release.seed)),
        ("time (s)", f"{seconds:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


def _budget_text(budget: Any) -> str:
    """The method's time budget: seconds, where it came from, and whether it was spent."""
    source = "default for the file size" if budget["default"] else "given"
    reached = ("reached: the partition depends on the machine" if budget["reached"]
               else "not reached")
    return f"{budget['seconds']:g} s ({source}), {reached}; {budget['spent']:.1f} s spent"


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
    with _user_errors():
        if (input_path is None) == (dataset is None):
            raise UsageError(
                "Give exactly one of INPUT or --dataset "
                f"(got {'both' if dataset is not None else 'neither'})."
            )
        from microagg.io import (
            check_output_path,
            check_table_output,
            read_table,
            write_table,
            write_text_atomic,
        )
        from microagg.sql import is_sql_url

        inputs = [input_path] if input_path is not None else []
        out = check_table_output(output, inputs=inputs, parameter="--output")
        summary_out = None
        if summary_json is not None:
            summary_out = check_output_path(
                summary_json, inputs=inputs, extensions=(".json",),
                parameter="--summary-json", outputs={"--output": out},
            )
        report_out = None
        if report is not None:
            report_out = check_output_path(
                report, inputs=inputs, extensions=(".html", ".htm"), parameter="--report",
                outputs={"--output": out, "--summary-json": summary_out})
        method_params = _parse_params(param)
        if refine_seconds is not None:
            if not refine_seconds > 0:
                raise UsageError(
                    f"--refine must be a number of seconds > 0. Got {refine_seconds}.")
            start_method = "auto" if method in (None, "mdav-ls") else method
            method_params = {**method_params, "start": start_method, "time_limit": refine_seconds,
                             "rounds": 10**9}
            method = "mdav-ls"
        agg_params: dict[str, Any] = _parse_params(agg_param, "--agg-param")
        if rho is not None:
            if aggregation != "rho":
                raise UsageError(
                    f"--rho applies to --aggregation rho, not {aggregation or 'mean'!r}.")
            agg_params["rho"] = rho
        parsed_bounds = _parse_bounds(bounds)
        hierarchies = _parse_hierarchies(hierarchy)
        qi = _split_names(quasi_identifiers)
        sens = _split_names(sensitive)
        ids = _split_names(drop)
        loaded_schema = None
        if schema is not None:
            from microagg.schema import load_schema, roles_from

            if dataset is not None:
                raise UsageError("--schema describes an INPUT file; --dataset brings its own "
                                 "roles.")
            loaded_schema = load_schema(schema)
            qi, sens, ids = roles_from(loaded_schema, qi, sens, ids)
            clash = sorted(set(hierarchies) & set(loaded_schema.hierarchies))
            if clash:
                raise UsageError(f"--hierarchy {clash} repeats the schema's hierarchies.")
            hierarchies.update(loaded_schema.hierarchies)
            if parsed_bounds is None and loaded_schema.bounds is not None \
                    and epsilon is not None:
                parsed_bounds = loaded_schema.bounds
        if input_path is not None and not qi:
            raise UsageError("-q/--quasi-identifiers (or --schema) is required with an INPUT "
                             "file.")
        if engine not in ("local", "file", "dask"):
            raise UsageError(f"--engine must be local, file or dask. Got {engine!r}.")
        if engine != "local":
            unsupported = [name for name, value in (
                ("--dataset", dataset), ("--aggregation", aggregation), ("--rho", rho),
                ("--epsilon", epsilon), ("--bounds", bounds), ("--hierarchy", hierarchy),
                ("-l", l_div), ("-t", t_close), ("--intruder-knows", intruder_knows),
                ("--attribute-groups", attribute_groups), ("--clustering-il", clustering_il),
                ("--refine", refine_seconds), ("--scaling", scaling), ("--report", report),
                ("--schema with hierarchies, ordinal columns or categorical "
                 "quasi-identifiers (their codes would be averaged)",
                 loaded_schema is not None and (loaded_schema.hierarchies or any(
                     c.type == "ordinal" or (c.type == "categorical"
                                             and c.role == "quasi-identifier")
                     for c in loaded_schema.columns.values())))) if value]
            if unsupported:
                raise UsageError(f"--engine {engine} streams numeric microaggregation with "
                                 f"group means only; drop {', '.join(unsupported)} (or use "
                                 "--engine local).")
            if scheduler is not None and engine != "dask":
                raise UsageError("--scheduler applies to --engine dask.")
            assert input_path is not None  # --dataset refused above
            if is_sql_url(input_path) or isinstance(out, str):
                raise UsageError(f"--engine {engine} reads and writes files (CSV, Parquet); "
                                 "for a database table use --engine local.")
            _anonymize_large(engine, pathlib.Path(input_path), out, summary_out, qi or [], ids or [], k,
                             method or "mdav", method_params, blocking or "kd", block_size,
                             jobs, random_state, sep, scheduler, start)
            return

        console = _stderr()
        with _DelayedProgress(console, ("read", "anonymize", "write")) as progress:
            progress.stage("read", done=0)
            if dataset is not None:
                from microagg.datasets import load_dataset

                ds = load_dataset(dataset)
                df = ds.data
                source = f"dataset {ds.name}"
                if qi is None:
                    qi = list(ds.quasi_identifiers)
                if sens is None:
                    sens = [c for c in ds.sensitive if c not in qi and c not in (ids or ())]
                if ids is None:
                    ids = [c for c in ds.identifiers if c not in qi]
                for col, path in ds.hierarchies.items():  # categorical QIs get the bundled ones
                    if col in qi and col not in hierarchies and ds.data[col].dtype.kind not in "biuf":
                        hierarchies[col] = str(path)
            else:
                assert input_path is not None  # checked above
                df = read_table(input_path, sep=sep, text_columns=(
                    loaded_schema.text_columns if loaded_schema is not None else ()))
                if loaded_schema is not None:
                    df = loaded_schema.apply(df)
                source = str(input_path)

            progress.stage("anonymize", done=1)
            from microagg.release import anonymize as run_anonymize

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                release = run_anonymize(
                    df, quasi_identifiers=qi or [], k=k, method=method,
                    sensitive=sens or (), identifiers=ids or (), aggregation=aggregation,
                    aggregation_params=agg_params or None, scaling=scaling,
                    random_state=random_state, method_params=method_params or None,
                    epsilon=epsilon, bounds=parsed_bounds,
                    intruder_knows=_split_names(intruder_knows),
                    hierarchies=hierarchies or None, l=l_div, diversity=diversity,
                    diversity_c=diversity_c, t=t_close, t_distance=t_distance,
                    attribute_groups=_parse_attribute_groups(attribute_groups),
                    n_attribute_groups=n_attribute_groups,
                    categorical_aggregation=categorical_aggregation,
                    clustering_il=clustering_il, blocking=blocking, block_size=block_size,
                    n_jobs=jobs,
                )

            progress.stage("write", done=2)
            written = release.data
            if input_path is not None and release.params.get("epsilon") is None:
                written = _passthrough_as_read(written, input_path, out, sep=sep,
                                               masked=release.params["quasi_identifiers"])
            write_table(written, out, sep=sep)
            if summary_out is not None:
                write_text_atomic(release.to_json() + "\n", summary_out)
            if report_out is not None:
                from microagg.report import write_report

                write_report(release, df, report_out)
            progress.stage("done", done=3)

    notes = list(release.warnings)
    notes += [str(w.message) for w in caught if str(w.message) not in notes]
    stdout = _stdout()
    stdout.print(_summary_table(release, source=source, output=out,
                                seconds=time.perf_counter() - start))
    if summary_out is not None:
        stdout.print(Text(f"summary written to {summary_out}"), soft_wrap=True)
    if report_out is not None:
        stdout.print(Text(f"report written to {report_out}"), soft_wrap=True)
    for note in notes:
        stdout.print(Text(f"Warning: {note}", style="yellow"), soft_wrap=True)


def _anonymize_large(engine: str, input_path: pathlib.Path, out: pathlib.Path,
                     summary_out: pathlib.Path | None, qi: list[str], ids: list[str], k: int,
                     method: str, method_params: dict[str, Any], blocking: str,
                     block_size: int, jobs: int | None, random_state: int | None,
                     sep: str | None, scheduler: str | None, start: float) -> None:
    """``--engine file`` / ``--engine dask``: stream the input, write the output atomically."""
    from microagg.io import write_text_atomic

    console = _stderr()
    stages = ("statistics", "routing", "microaggregation", "writing")
    release: Any
    with _DelayedProgress(console, stages) as progress:
        if engine == "file":
            from microagg.outofcore import anonymize_file

            release = anonymize_file(
                input_path, out, quasi_identifiers=qi, k=k, method=method, identifiers=ids,
                blocking=blocking, block_size=block_size, n_jobs=jobs,
                random_state=random_state, sep=sep, method_params=method_params or None,
                on_stage=lambda name: progress.stage(name, done=stages.index(name)))
        else:
            from microagg._dask import anonymize_dask_file

            release = anonymize_dask_file(
                input_path, out, quasi_identifiers=qi, k=k, method=method, identifiers=ids,
                blocking=blocking, block_size=block_size, random_state=random_state,
                sep=sep, scheduler=scheduler, method_params=method_params or None)
        progress.stage("done", done=len(stages))
    summary = {"rows": release.rows, "params": _plain_json(release.params),
               "seed": release.seed, "checks": _plain_json(release.checks),
               "metrics": _plain_json(release.metrics),
               "timings": _plain_json(release.timings)}
    if summary_out is not None:
        write_text_atomic(json.dumps(summary, indent=2) + "\n", summary_out)
    table = Table(title="microagg release", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    for name, value in (
            ("input", str(input_path)), ("output", str(out)), ("engine", engine),
            ("method", f"{method}, blocking {blocking}, block size {block_size:,}"),
            ("rows", f"{release.rows:,}"), ("quasi-identifiers", f"{len(qi)}: {', '.join(qi)}"),
            ("blocks / groups", f"{release.metrics['n_blocks']:,} / "
                                f"{release.metrics['n_groups']:,}"),
            ("required k", str(k)), ("achieved k (written file)", str(release.k)),
            ("IL (%)", f"{release.metrics['information_loss']:.4f}"),
            ("seed", str(release.seed)),
            ("time (s)", f"{time.perf_counter() - start:.2f}")):
        table.add_row(name, Text(value))
    stdout = _stdout()
    stdout.print(table)
    if summary_out is not None:
        stdout.print(Text(f"summary written to {summary_out}"), soft_wrap=True)


