"""``microagg report``: the HTML report of a release, from the original and published tables."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.text import Text

from microagg.cli._common import (
    QuasiIdentifiersOption,
    RandomStateOption,
    SchemaOption,
    SensitiveOption,
    SepOption,
    UsageError,
    app,
    exit_on_verdict,
    match_column,
    match_columns,
    split_names,
    stdout,
    user_errors,
)


@app.command()
def report(
    original_path: Annotated[
        str,
        typer.Argument(metavar="ORIGINAL", show_default=False,
                       help="The table before masking (CSV, TSV, Parquet, Excel .xlsx, "
                            "Stata .dta, SPSS .sav or sqlite:///file.db?table=NAME)."),
    ],
    published_path: Annotated[
        str,
        typer.Argument(metavar="PUBLISHED", show_default=False,
                       help="The released table: the same records in the same order."),
    ],
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="The report (.html): one self-contained file."),
    ],
    quasi_identifiers: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    schema: SchemaOption = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="The release's summary (anonymize --summary-json): adds its "
                          "parameters, seed and warnings; every figure is recomputed."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("-k", show_default=False,
                     help="The k the published file must reach (>= 2): the report says "
                          "whether it does. Without it (and without a k in --summary-json) "
                          "the achieved level is only stated."),
    ] = None,
    review_json: Annotated[
        pathlib.Path | None,
        typer.Option("--review-json", show_default=False,
                     help="Also write the review's figures as JSON (the release summary's "
                          "layout: verdict, checks, metrics with the attacks and the "
                          "analyses, warnings)."),
    ] = None,
    sweep_csv: Annotated[
        pathlib.Path | None,
        typer.Option("--sweep", show_default=False,
                     help="A sweep table (microagg sweep -o): adds the risk-utility map."),
    ] = None,
    title: Annotated[
        str, typer.Option("--title", help="The report's title.")
    ] = "microagg release report",
    attacks: Annotated[
        bool,
        typer.Option("--attacks", help="Attack the release as the release attacks itself "
                                       "(singling out, linkability, inference of each "
                                       "sensitive column), against --control or, without "
                                       "it, the leave-one-out control: adds the section "
                                       "\"Attacks\"; with the --summary-json's seed, the "
                                       "release's own figures."),
    ] = False,
    control_path: Annotated[
        str | None,
        typer.Option("--control", show_default=False,
                     help="Original records held out BEFORE the release was made (the "
                          "original's columns, at most its rows): what the attacks compare "
                          "with (with --attacks)."),
    ] = None,
    estimate: Annotated[
        str | None,
        typer.Option("--estimate", show_default=False,
                     help="Numeric columns whose weighted totals and means are compared "
                          "(comma-separated): adds \"Can an analyst still get the answers?\"."),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", show_default=False,
                     help="The domain (a categorical column, at most 50 values): every "
                          "estimate also in each of its values."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", show_default=False,
                     help="A linear model, \"y ~ x1 + C(g)\" (repeatable): its coefficients "
                          "before and after, with the confidence-interval overlap."),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", show_default=False,
                     help="A categorical column a random forest learns from the release and "
                          "predicts on held-back original rows."),
    ] = None,
    weight: Annotated[
        str | None,
        typer.Option("--weight", show_default=False,
                     help="The sampling weight (default: the --summary-json's, else the "
                          "--schema's): the survey risk before and after, with the "
                          "population figures, as the release measured them, and the "
                          "weight of the estimates; with it and no other analysis option, "
                          "the release's default analyses are repeated."),
    ] = None,
    household: Annotated[
        str | None,
        typer.Option("--household", show_default=False,
                     help="The household id column (default: the --summary-json's, else "
                          "the --schema's): the household risk, after masking on the "
                          "published column, else on the original's row for row."),
    ] = None,
    strata: Annotated[
        str | None,
        typer.Option("--strata", show_default=False,
                     help="The strata column (default: the --summary-json's, else the "
                          "--schema's): the risk's frequencies are counted within each "
                          "stratum."),
    ] = None,
    random_state: RandomStateOption = None,
    sep: SepOption = None,
) -> None:
    """Write the HTML report of a release: its verdict, guarantees re-checked, loss, risk,
    plots.

    With the release's --schema, dates are compared as days and ordinal columns by rank, as
    the release measured them; its \\[\\[steps]] are judged as the release judged them (each
    step's verifier on the two files; a one-step plan's k required, k over the keys of a
    plan of several steps reported). Prints the verdict (the same words as the release's). Exit
    status 0, or 4 when the published file is not protected (the report is written).

    With a sampling weight, a household or strata (--weight, --household, --strata, each
    by default the --summary-json's, else the --schema's), the disclosure risk before and
    after is measured as the release measured it (individual, global and household risk,
    the records violating k, SUDA2; with a weight k-map, the journalist and marketer risks
    and the log-linear tau1 / tau2): the same figures as the release's summary.

    With --attacks, the release is attacked as an intruder who knows the quasi-identifiers
    would (anonymeter's singling out, linkability and inference, Giomi et al. 2023) and each
    attack's risk is reported: against the held-out records of --control, else against the
    same attack with the person's own released record left out, as the release does. The
    attacks draw from their own stream of the seed (--random-state, else the --summary-json's):
    with the release's seed they repeat its figures.

    With --estimate, --by, --model or --target (or a weight, --weight or the summary's), the
    analyses are repeated on both files (weighted estimates against the original's
    confidence intervals, Karr et al.'s interval overlap, pMSE, a classifier's accuracy)."""
    with user_errors():
        if control_path is not None and not attacks:
            raise UsageError("--control is read only by --attacks (the records the attacks "
                             "compare with): add --attacks, or drop --control.")

        from microagg.audit.assess import assess_release, load_summary
        from microagg.io.tables import check_output_path, read_table
        from microagg.report.html import write_report

        inputs: list[str | pathlib.Path] = [
            original_path, published_path,
            *(p for p in (summary_json, sweep_csv, schema, control_path) if p is not None)]
        out = check_output_path(output, inputs=inputs, extensions=(".html", ".htm"),
                                parameter="--output")
        out_json = None if review_json is None else check_output_path(
            review_json, inputs=inputs, extensions=(".json",), parameter="--review-json",
            outputs={"--output": out})
        summary = load_summary(summary_json) if summary_json is not None else None
        qi, sens = split_names(quasi_identifiers), split_names(sensitive)
        hierarchies: dict[str, str] = {}
        text: list[str] = []
        loaded = None
        if schema is not None:  # roles, hierarchies (for NCP), dates, ordinals, text columns
            from microagg.schema._steps import roles_from
            from microagg.schema.schema_file import load_schema

            loaded = load_schema(schema)
            qi, sens, _ = roles_from(loaded, qi, sens, None)
            if loaded.plan is not None:  # the plan's keys, as the release's
                from microagg._pipeline.plan_review import plan_k

                qi = plan_k(loaded.plan)[0]
            hierarchies, text = loaded.hierarchies, loaded.text_columns
        if not qi and summary is not None:
            qi = [str(c) for c in summary["params"].get("quasi_identifiers", ())]
        if sens is None and summary is not None:
            sens = [str(c) for c in summary["params"].get("sensitive", ())]
        if not qi:
            raise UsageError("Name the quasi-identifiers: -q, --schema or --summary-json.")
        original = read_table(original_path, sep=sep, text_columns=text)
        published = read_table(published_path, sep=sep, text_columns=text)
        # every name as the original table spells it
        qi, sens = match_columns(qi, original.columns) or [], match_columns(sens, original.columns)
        hierarchies = dict(zip(match_columns(list(hierarchies), original.columns) or [],
                               hierarchies.values(), strict=True))
        loaded = None if loaded is None else loaded.spelled_as(original.columns)
        survey = [None if c is None else match_column(c, original.columns)
                  for c in (weight, household, strata)]
        release = assess_release(original, published, quasi_identifiers=qi,
                                 sensitive=sens or (), summary=summary, k=k,
                                 hierarchies={c: h for c, h in hierarchies.items() if c in qi}
                                 or None, schema=loaded, weight=survey[0],
                                 household=survey[1], strata=survey[2])
        if attacks:
            control = None if control_path is None else read_table(control_path, sep=sep,
                                                                   text_columns=text)
            release = _attacked(release, original, control, (qi, sens or []),
                                _seed(random_state, summary),
                                dates=() if loaded is None else loaded.dates)
        release = _analysed(release, original, _Asked(estimate, by, model or [], target,
                                                      survey[0]), summary, random_state)
        sweep = None if sweep_csv is None else _read_sweep(sweep_csv)
        write_report(release, original, out, title=title, sweep=sweep)
        if out_json is not None:
            from microagg.io.tables import write_text_atomic

            write_text_atomic(release.to_json() + "\n", out_json)
    stdout().print(Text(release.verdict.headline,
                        style="bold green" if release.verdict.protected else "bold red"),
                   soft_wrap=True)
    stdout().print(Text(_done_line(release, out)), soft_wrap=True)
    exit_on_verdict(release.verdict)


def _done_line(release: Any, out: pathlib.Path) -> str:
    """"report written to r.html (k = 5, required 5: reached; information loss ...)"."""
    from microagg.metrics.headline import headline_loss, headline_risk

    required = release.checks["k_anonymity"].get("required")  # k over the keys
    text = f"report written to {out} (k = {release.k}" + (
        "" if required is None else
        f", required {required}: {'reached' if release.k >= int(required) else 'NOT reached'}")
    for found in (headline_loss(release.metrics), headline_risk(release.metrics)):
        if found is not None:
            text += f"; {found[0].label} {found[1]:.2f} %"
    return text + ")"


def _read_sweep(sweep_csv: pathlib.Path) -> Any:
    """The sweep table of --sweep, its numeric columns as numbers."""
    import pandas as pd

    sweep = pd.read_csv(sweep_csv, keep_default_na=False)
    needed = {"method", "k", "aggregation", "aggregation_params", "information_loss",
              "dld_risk", "error", "pareto"}
    missing = sorted(needed - set(sweep.columns))
    if missing:
        raise UsageError(f"--sweep {sweep_csv} is not a sweep table (microagg sweep "
                         f"-o): it lacks the column(s) {', '.join(missing)}.")
    for column in ("information_loss", "dld_risk", "class_risk", "global_risk"):
        if column in sweep.columns:
            sweep[column] = pd.to_numeric(sweep[column], errors="coerce")
    return sweep


def _seed(random_state: int | None, summary: Any) -> int | None:
    """The release's seed the review's attacks draw from: --random-state, else the
    --summary-json's, else ``None`` (drawn)."""
    if random_state is not None:
        return random_state
    seed = None if summary is None else summary.get("seed")
    return int(seed) if isinstance(seed, int) and not isinstance(seed, bool) else None


def _attacked(release: Any, original: Any, control: Any, roles: tuple[list[str], list[str]],
              seed: int | None, *, dates: Any) -> Any:
    """The review with ``metrics["attacks"]`` (--attacks [--control]): the release's
    attacks, drawn from their stream of ``seed`` (:func:`~microagg._pipeline.attack_step.
    attack_seed`; drawn without one)."""
    from microagg._pipeline.attack_step import attack_seed
    from microagg.audit.attacks_review import check_control, with_attacks

    if control is not None:
        check_control(original, control, parameter="--control")
    if seed is None:
        import numpy as np

        seed = int(np.random.default_rng().integers(2**31))
    return with_attacks(release, original, control, quasi_identifiers=roles[0],
                        sensitive=roles[1], dates=dates, random_state=attack_seed(seed))


@dataclass(frozen=True)
class _Asked:
    """The analysis options of ``microagg report``."""

    estimate: str | None
    by: str | None
    models: list[str]
    target: str | None
    weight: str | None


def _analysed(release: Any, original: Any, asked: _Asked, summary: Any,
              random_state: int | None) -> Any:
    """The review with ``metrics["analysis_utility"]`` when an analysis is asked for or a
    weight is known (the release's default analyses then)."""
    from microagg.audit.analysis_review import with_analyses
    from microagg.metrics.analysis_utility import Analyses

    params = {**(dict(summary["params"]) if summary is not None else {}), **{
        role: release.params[role] for role in ("weight", "household", "strata")
        if release.params.get(role) is not None}}  # the roles the review measured with
    weight = asked.weight or params.get("weight")
    household = params.get("household")
    household = household if household in original.columns else None
    columns = tuple(split_names([asked.estimate] if asked.estimate else None) or ())
    if columns or asked.by or asked.models or asked.target:
        analyses = Analyses(columns=columns, by=asked.by, models=tuple(asked.models),
                            target=asked.target)
    elif weight is not None:
        from microagg._pipeline.analysis_step import default_analyses

        roles = {c for c in (weight, household, params.get("strata")) if c}
        analyses = default_analyses(original, release.data, tuple(
            release.params.get("quasi_identifiers", ())), roles)
    else:
        return release
    return with_analyses(release, original, analyses, weights=weight, households=household,
                         random_state=random_state)
