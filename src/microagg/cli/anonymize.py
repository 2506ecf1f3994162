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
from typing import Annotated

import typer

from microagg.cli._anonymize_run import (
    aggregation_params,
    check_outputs,
    codes_for,
    command_engine,
    parse_dates,
    parse_plan,
    parse_rounding,
    print_release,
    run_in_memory,
    run_on_file,
    schema_for,
)
from microagg.cli._common import (
    RandomStateOption,
    UsageError,
    app,
    exit_on_verdict,
    parse_attribute_groups,
    parse_bounds,
    parse_hierarchies,
    parse_params,
    split_names,
    user_errors,
)


@app.command()
def anonymize(
    ctx: typer.Context,
    *,
    input_path: Annotated[
        str | None,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="Input table: .csv/.tsv/.txt (optionally .gz), .parquet or .pq, "
                            ".xlsx (first sheet), .dta or .sav (value-labelled columns read "
                            "as their labels; microagg\\[formats]), or a database table: "
                            "sqlite:///file.db?table=NAME (any SQLAlchemy URL with "
                            "microagg\\[sql])."),
    ] = None,
    output: Annotated[
        str,
        typer.Option("-o", "--output", show_default=False,
                     help="Output table (.csv/.tsv/.txt[.gz], .parquet, .pq, .xlsx, .dta, "
                          ".sav: variable and value labels kept where they still fit), "
                          "written atomically, never over the input; or a NEW database table, "
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
                     help="Comma-separated columns to mask (repeatable): numeric ones are "
                          "microaggregated, categorical (text) ones grouped with them and "
                          "published generalized (--hierarchy, --categorical-aggregation), "
                          "dates with --dates. Default with --dataset: the data set's "
                          "quasi-identifiers."),
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
    keep: Annotated[
        list[str] | None,
        typer.Option("--keep", show_default=False,
                     help="Comma-separated columns published unchanged on purpose although "
                          "they look like identifiers (named like one, or unique on nearly "
                          "every row) or, without a role, break k by themselves (a value "
                          "fewer than k rows share); without it such columns are refused. "
                          "Recorded; the report then never says \"Protected\"."),
    ] = None,
    weight: Annotated[
        str | None,
        typer.Option("--weight", show_default=False,
                     help="The sampling weight column (numbers > 0): published unchanged, "
                          "used for the disclosure risk before and after (population "
                          "frequencies, individual risk)."),
    ] = None,
    household: Annotated[
        str | None,
        typer.Option("--household", show_default=False,
                     help="The household id column: for the household risk, then dropped "
                          "(publish it with --keep)."),
    ] = None,
    strata: Annotated[
        str | None,
        typer.Option("--strata", show_default=False,
                     help="The strata column (a region, the design stratum): published "
                          "unchanged; the disclosure risk counts frequencies within each "
                          "stratum (as sdcMicro's strataVar)."),
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
        int | None, typer.Option("--block-size", show_default=False,
                                 help="Largest block with --blocking (>= 2k; default 10,000; "
                                      "for mdav-scale and --refine 2,500,000 records of up "
                                      "to 10 columns, fewer in wider data).")
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", show_default=False,
                     help="Worker processes for --blocking (default: one per CPU on very "
                          "large inputs, else none)."),
    ] = None,
    dates: Annotated[
        list[str] | None,
        typer.Option("--dates", show_default=False,
                     help="Comma-separated quasi-identifiers that are dates (ISO text or "
                          "datetimes), as COL or COL:PRECISION (day, month, year): "
                          "microaggregated as days, published as ISO dates (rounded to the "
                          "day, or the first of the month / year). Formats: in --schema."),
    ] = None,
    round_digits: Annotated[
        list[str] | None,
        typer.Option("--round", show_default=False,
                     help="Published digits as COL=DIGITS (0: integers, -1: tens) or "
                          "COL=none, comma-separated; 'none' alone: no rounding. Default: "
                          "whole-number columns rounded to integers (k verified after)."),
    ] = None,
    schema: Annotated[
        pathlib.Path | None,
        typer.Option("--schema", show_default=False,
                     help="A TOML schema giving every column's role and type (see `microagg "
                          "init-schema`); replaces -q, -s, --drop."),
    ] = None,
    step: Annotated[
        list[str] | None,
        typer.Option("--step", metavar="TEXT", show_default=False,
                     help="One step of a plan, repeatable, run in order: the step's name "
                          "(microaggregate) and its options as option=value, e.g. --step "
                          "'microaggregate quasi-identifiers=age,bmi k=5 method=mdav' "
                          "--step 'microaggregate quasi-identifiers=income k=3'. Replaces "
                          "-q, -k and -m; a schema's \\[\\[steps]] give the same plan. "
                          "k-anonymity over all the steps' columns is reported, not "
                          "promised."),
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
                          "for at most this many seconds (mdav-ls; mdav-scale from 50,000 "
                          "records, with --blocking, or with --engine file / dask; with "
                          "--method colgen or --method mdav-scale, that method's own "
                          "budget). The result then depends on the machine's speed."),
    ] = None,
    certify_seconds: Annotated[
        float | None,
        typer.Option("--certify", metavar="SECONDS", show_default=False,
                     help="Prove how far the partition is from the best possible: spend "
                          "this many seconds on a lower bound on the loss of every partition "
                          "and report the certified gap (numeric data, up to 5,000 records)."),
    ] = None,
    missing: Annotated[
        str,
        typer.Option("--missing", metavar="STRATEGY",
                     help="Missing quasi-identifier values: pattern (group records by "
                          "missingness pattern, publish missing as missing, blank and count "
                          "cells of small patterns), category (a categorical column's missing "
                          "value as its own category), impute:median, impute:mean (recorded "
                          "imputation) or refuse."),
    ] = "pattern",
    missing_codes: Annotated[
        list[str] | None,
        typer.Option("--missing-codes", show_default=False,
                     help="Missing-value codes of a column as COL=CODE,CODE (repeatable), "
                          "e.g. --missing-codes income=-9,-8: read as missing, written back "
                          "to .sav / .dta where the cell is unchanged (the schema's "
                          "missing).")
    ] = None,
    no_attacks: Annotated[
        bool,
        typer.Option("--no-attacks",
                     help="Do not attack the release (by default singling out, linkability "
                          "and the inference of each sensitive column are tried on 2,000 of "
                          "its records, the quasi-identifiers known: the JSON's and the "
                          "reports' attacks)."),
    ] = False,
    control_path: Annotated[
        pathlib.Path | None,
        typer.Option("--control", metavar="FILE", show_default=False,
                     help="Original records held out before the release (the input's "
                          "columns, at most its rows): what the attacks compare with. "
                          "Without it each attack is compared with itself, the attacked "
                          "person's own released record left out."),
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
    """Mask the quasi-identifiers of a table by microaggregation and write the release.

    The first row of the table printed is the release's verdict (protected, not protected,
    or no k required), the same words as the summary JSON and the report. Exit status 0, or
    4 when the release is not protected (the files are written all the same), 2 for a user
    error, 3 for a bug."""
    start = time.perf_counter()
    with user_errors():
        outputs = check_outputs(input_path, dataset, output, summary_json, report)
        runner, face = command_engine(engine, input_path, dataset, outputs, scheduler)
        loaded_schema = schema_for(schema, dataset)
        given = [flag for flag, given in (("-q/--quasi-identifiers", quasi_identifiers),
                                          ("-k", _given(ctx, "k")), ("-m/--method", method))
                 if given]
        plan = parse_plan(step, given, loaded_schema)
        stepwise = plan is not None or getattr(loaded_schema, "plan", None) is not None
        options = dict(
            quasi_identifiers=split_names(quasi_identifiers),
            k=None if stepwise else k, method=method,  # a plan: each step gives its own
            sensitive=split_names(sensitive), identifiers=split_names(drop),
            keep=split_names(keep) or (), weights=weight, households=household,
            strata=strata, aggregation=aggregation,
            aggregation_params=aggregation_params(aggregation, rho, agg_param),
            scaling=scaling, random_state=random_state, method_params=parse_params(param),
            epsilon=epsilon, bounds=parse_bounds(bounds),
            intruder_knows=split_names(intruder_knows),
            hierarchies=parse_hierarchies(hierarchy), l=l_div, diversity=diversity,
            diversity_c=diversity_c, t=t_close, t_distance=t_distance,
            attribute_groups=parse_attribute_groups(attribute_groups),
            n_attribute_groups=n_attribute_groups,
            categorical_aggregation=categorical_aggregation, clustering_il=clustering_il,
            blocking=blocking, block_size=block_size, n_jobs=jobs, refine=refine_seconds,
            certify=certify_seconds, missing=missing,
            dates=parse_dates(dates), rounding=parse_rounding(round_digits),
            missing_codes=codes_for(loaded_schema, missing_codes, runner), plan=plan,
            attacks=not no_attacks, control=control_path)
        if input_path is not None and not options["quasi_identifiers"] \
                and loaded_schema is None and plan is None:
            raise UsageError("-q/--quasi-identifiers (or --schema) is required with an INPUT "
                             "file.")
        from microagg.cli._long_runs import compile_note, compiling_notice, watch_compilation

        with warnings.catch_warnings(record=True) as caught, \
                watch_compilation(compiling_notice) as compiled:
            warnings.simplefilter("always")
            if runner.reads_files:
                assert input_path is not None  # --dataset is refused by _engine
                release = run_on_file(runner, input_path, options, loaded_schema, sep,
                                      outputs, scheduler, face, rho)
                source = input_path
            else:
                release, source = run_in_memory(runner, input_path, dataset, options,
                                                 loaded_schema, sep, outputs)
    print_release(release, source, outputs, [str(w.message) for w in caught],
                  time.perf_counter() - start - compiled.seconds)
    compile_note(compiled)  # a first run's one-time compilation, apart from the release's time
    exit_on_verdict(release.verdict)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` was given (not its default): ``-k 5`` is given, ``5`` by
    default is not. The source enum is read from the context's own click (typer may bring
    its own copy), never imported."""
    source = ctx.get_parameter_source(name)
    return source is not None and source is not type(source).DEFAULT
