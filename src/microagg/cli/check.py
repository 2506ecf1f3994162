"""``microagg check``: the guarantees a published file achieves."""

from __future__ import annotations

import json
import pathlib
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    import pandas as pd

from microagg.cli._common import (
    HouseholdOption,
    QuasiIdentifiersOption,
    SchemaOption,
    SensitiveOption,
    SepOption,
    StrataOption,
    UsageError,
    WeightOption,
    app,
    exit_on_verdict,
    match_column,
    match_columns,
    plain_json,
    split_names,
    stdout,
    user_errors,
)
from microagg.cli._tables import verdict_row


@app.command()
def check(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A published table (CSV, TSV, Parquet, Excel .xlsx, Stata .dta, "
                            "SPSS .sav, or sqlite:///file.db?table=NAME)."),
    ],
    quasi_identifiers: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    schema: SchemaOption = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the figures as JSON."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("-k", show_default=False,
                     help="The k the file must reach (>= 2): the verdict says whether it "
                          "does, counting also every published column without a role that "
                          "an intruder may know (a weight, a postcode). Without it the "
                          "achieved k is stated and the columns that lower it are named."),
    ] = None,
    weight: WeightOption = None,
    household: HouseholdOption = None,
    strata: StrataOption = None,
    sep: SepOption = None,
) -> None:
    """Report the verdict, k, l, t, homogeneous classes and class risk a published file
    achieves (with --weight / --household / --strata, the individual, global and household
    risk too).

    The verdict is the release's (protected, not protected, no k required), re-derived from
    the file by the same verifier. With a --schema that has \\[\\[steps]], the file is judged
    by its plan as the release was: a plan of one microaggregate step requires its k of its
    columns; any other plan reports k over its keys and checks each step that promises a
    k on its own columns (the other steps need the original: microagg report). With
    --strata (or a schema's strata role), fk and Fk are counted within each stratum, as
    microagg risk --strata. Exit status 0, or 4 when the file is not protected."""
    with user_errors():
        from microagg._base.validation import check_k
        from microagg._pipeline.plan_review import plan_checks
        from microagg._pipeline.review import review_checks
        from microagg.audit.check import check_table
        from microagg.io.tables import check_output_path, read_table, write_text_atomic

        summary_out = None
        if summary_json is not None:
            summary_out = check_output_path(summary_json, inputs=[input_path],
                                            extensions=(".json",), parameter="--summary-json")
        qi = split_names(quasi_identifiers) or []
        sens = split_names(sensitive) or []
        start = time.perf_counter()
        table = read_table(input_path, sep=sep)
        loaded = None
        if schema is not None:
            loaded, qi, sens, weight, household, strata = _schema_roles(
                schema, table, qi, sens, weight, household, strata)
        elif not qi:
            raise UsageError("Name the quasi-identifiers: -q, or --schema.")
        qi, sens = (match_columns(names, table.columns) or [] for names in (qi, sens))
        plan_required, steps, unchecked = plan_checks(loaded, table, qi)
        result = check_table(table, quasi_identifiers=qi, sensitive=sens)
        if k is not None:
            k = check_k(k, n_samples=len(table), caller="check")
        verdict = review_checks(table, qi, sens, plan_required if k is None else k,
                                steps=steps)[2]
        survey = _survey_risk(table, qi, weight, household,
                              None if strata is None else match_column(strata, table.columns))
        if summary_out is not None:
            figures = {"verdict": verdict.summary(), **result.summary(), **(survey or {}),
                       **({"steps": [dict(s) for s in steps], "unchecked_steps": unchecked}
                          if steps or unchecked else {})}
            write_text_atomic(json.dumps(plain_json(figures), indent=2) + "\n", summary_out)
    out = Table(title=f"microagg check: {input_path}", show_header=False,
                title_justify="left")
    out.add_column("", style="bold")
    out.add_column("")
    rows = [verdict_row(verdict), *_step_rows(steps, unchecked),
            ("rows / classes", f"{result.rows:,} / {result.classes:,}"),
            ("k-anonymity", str(result.k)),
            ("risk per record (max / mean)",
             f"{result.risk['max']:.4f} / {result.risk['mean']:.4f}"),
            ("records in classes < 2 / < 3 / < 5 / < 10 (%)",
             " / ".join(f"{100 * result.risk[f'share_in_classes_below_{m}']:.2f}"
                        for m in (2, 3, 5, 10)))]
    for col in sens:
        rows.append((f"{col}: l (distinct / entropy)",
                     f"{result.l_diversity[col]['distinct']:.0f} / "
                     f"{result.l_diversity[col]['entropy']:.3g}"))
        rows.append((f"{col}: t (EMD)", f"{result.t_closeness[col]:.4f}"))
        h = result.homogeneity[col]
        rows.append((f"{col}: homogeneous classes",
                     f"{h['homogeneous_classes']} of {h['classes']} "
                     f"({100 * float(h['homogeneous_share']):.2f}% of records)"))
    rows.append(("time (s)", f"{time.perf_counter() - start:.2f}"))
    for name, value in rows:
        out.add_row(name, Text(value))
    stdout().print(out)
    if survey is not None:
        from microagg.cli.risk import risk_table

        stdout().print(risk_table(survey, source=input_path))
    exit_on_verdict(verdict)


def _schema_roles(schema: pathlib.Path, table: pd.DataFrame, qi: list[str], sens: list[str],
                  weight: str | None, household: str | None,
                  strata: str | None) -> tuple[Any, ...]:
    """The schema (spelled as the table), the quasi-identifiers (its plan's keys when it
    has ``[[steps]]``), sensitive columns, weight, household and strata it gives a published
    file (the strata as published: a release keeps the strata column unchanged)."""
    from microagg._pipeline.plan_review import plan_k
    from microagg.schema._steps import roles_from
    from microagg.schema.schema_file import load_schema

    # the roles only: a published file lacks the identifiers and may show
    # generalized values the schema's types do not allow
    loaded = load_schema(schema).spelled_as(table.columns)
    qi, sens, _ = roles_from(loaded, qi, sens, None)
    if loaded.plan is not None:  # the release's keys, in the plan's order
        qi = plan_k(loaded.plan)[0]
    weight = weight or loaded.weight
    household = household if household is not None else (
        loaded.household if loaded.household in table.columns else None)
    strata = strata if strata is not None else (
        loaded.strata if loaded.strata in table.columns else None)
    return loaded, qi, sens, weight, household, strata


def _step_rows(steps: Any, unchecked: Any) -> list[tuple[str, str]]:
    """One row per step of a schema's plan: its k on its columns, or why it is not
    checked."""
    rows = [(f"step {s['step']} ({s['name']}): k of {', '.join(s['quasi_identifiers'])}",
             f"{s['achieved']} (required {s['required']}: "
             f"{'holds' if s['holds'] else 'does NOT hold'})") for s in steps]
    return rows + [(name, "not checked: its verifier compares with the original (microagg "
                          "report ORIGINAL PUBLISHED --schema)") for name in unchecked]


def _survey_risk(table: pd.DataFrame, qi: list[str], weight: str | None,
                 household: str | None, strata: str | None) -> dict[str, Any] | None:
    """``microagg risk``'s figures of the published file, when a weight, a household or
    strata (fk and Fk counted within each stratum) are named."""
    if weight is None and household is None and strata is None:
        return None
    from microagg.cli.risk import file_risk

    return file_risk(table, qi, weights=weight, households=household, strata=strata,
                     threshold=0.05, ks=(2, 3, 5), missing="any", suda=True)


