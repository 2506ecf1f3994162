"""``microagg sweep``: a grid of methods x k (x rho), mapped as information loss against risk."""

from __future__ import annotations

import pathlib
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    QuasiIdentifiersOption,
    SchemaOption,
    SensitiveOption,
    SepOption,
    UsageError,
    app,
    match_columns,
    parse_bounds,
    split_names,
    stderr,
    stdout,
    user_errors,
)


@app.command()
def sweep(
    input_path: Annotated[
        str | None,
        typer.Argument(metavar="[INPUT]", show_default=False,
                       help="A table (CSV, TSV, Parquet, Excel .xlsx, Stata .dta, SPSS .sav, "
                            "or sqlite:///file.db?table=NAME); or --dataset."),
    ] = None,
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="The results table (.csv), one row per run."),
    ] = pathlib.Path("sweep.csv"),
    plot: Annotated[
        pathlib.Path | None,
        typer.Option("--plot", show_default=False,
                     help="Also draw the loss against the risk (DLD; for categorical data the mean "
                          "1 / class size) with the Pareto front (.png; needs "
                          "matplotlib)."),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", show_default=False, help="Use a bundled data set."),
    ] = None,
    quasi_identifiers: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    drop: Annotated[
        list[str] | None,
        typer.Option("--drop", show_default=False, help="Identifiers to drop."),
    ] = None,
    schema: SchemaOption = None,
    methods_: Annotated[
        str | None,
        typer.Option("--methods", show_default=False,
                     help="Comma-separated methods (default: mdav, or mage when a "
                          "quasi-identifier is categorical)."),
    ] = None,
    ks: Annotated[
        str,
        typer.Option("-k", help="Comma-separated values of k."),
    ] = "2,3,5,10,20",
    rho: Annotated[
        str | None,
        typer.Option("--rho", show_default=False,
                     help="Comma-separated rho values: adds the rho aggregation for each."),
    ] = None,
    l_values: Annotated[
        str | None,
        typer.Option("-l", "--l-diversity", show_default=False,
                     help="Comma-separated l values: adds distinct l-diversity of the -s "
                          "columns for each."),
    ] = None,
    t_values: Annotated[
        str | None,
        typer.Option("-t", "--t-closeness", show_default=False,
                     help="Comma-separated t values: adds t-closeness of the -s columns for "
                          "each."),
    ] = None,
    epsilons: Annotated[
        str | None,
        typer.Option("--epsilon", show_default=False,
                     help="Comma-separated epsilon values: adds the epsilon-DP release for "
                          "each (give --bounds)."),
    ] = None,
    bounds: Annotated[
        list[str] | None,
        typer.Option("--bounds", show_default=False,
                     help="Public bounds for --epsilon as column=lower:upper (repeatable)."),
    ] = None,
    random_state: Annotated[
        int, typer.Option("--random-state", help="The seed of every run.")
    ] = 0,
    sep: SepOption = None,
) -> None:
    """Run a grid of methods x k (x rho) and map information loss against disclosure risk.

    With a --schema that has \\[\\[steps]]: a plan of one microaggregate step is swept on its
    columns (the grid's k and methods in place of the step's own); a plan of several steps
    is refused (a sweep varies one k and one method over every quasi-identifier)."""
    with user_errors():
        from microagg.io.tables import check_output_path, write_table
        from microagg.sweep import plot_sweep

        if (input_path is None) == (dataset is None):
            raise UsageError("Give exactly one of INPUT or --dataset.")
        inputs = [input_path] if input_path is not None else []
        out = check_output_path(output, inputs=inputs, parameter="--output")
        plot_out = (check_output_path(plot, inputs=[*inputs, out], extensions=(".png",),
                                      parameter="--plot") if plot is not None else None)
        k_values, rho_values, models, eps = _parse_grid(ks, rho, l_values, t_values, epsilons)
        methods_list = [m.strip() for m in (methods_ or "").split(",") if m.strip()]
        df, qi, sens, ids, options = _sweep_input(
            input_path, dataset, sep=sep, schema=schema,
            roles=(split_names(quasi_identifiers), split_names(sensitive), split_names(drop)))
        if not qi:
            raise UsageError("Name the quasi-identifiers: -q, --schema or --dataset.")
        if not methods_list:
            categorical = [c for c in qi if c in df.columns and df[c].dtype.kind not in "biuf"]
            methods_list = ["mage" if categorical else "mdav"]
        parsed_bounds = parse_bounds(bounds)
        if parsed_bounds is not None:
            parsed_bounds = dict(zip(match_columns(list(parsed_bounds), df.columns) or [],
                                     parsed_bounds.values(), strict=True))
        if eps and parsed_bounds is None:
            raise UsageError("--epsilon needs --bounds for every quasi-identifier "
                             "(column=lower:upper, public, not taken from the data).")
        models += [(f"epsilon={e:g}", {"epsilon": e, "bounds": parsed_bounds}) for e in eps]
        aggregations: list[tuple[str, dict[str, Any]]] = [("mean", {})]
        aggregations += [("rho", {"rho": r}) for r in rho_values]
        table = _run_with_progress(df, {
            "quasi_identifiers": qi, "sensitive": sens or (), "identifiers": ids or (),
            "ks": k_values, "methods": methods_list, "aggregations": aggregations,
            "models": models, "random_state": random_state, "options": options})
        write_table(table, out)
        if plot_out is not None:
            plot_sweep(table, plot_out, title=f"Risk-utility map: {dataset or input_path}")
    _show(table, out, plot_out)


def _floats(text: str | None) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()] if text else []


def _parse_grid(ks: str, rho: str | None, l_values: str | None, t_values: str | None,
                epsilons: str | None
                ) -> tuple[list[int], list[float], list[tuple[str, dict[str, Any]]], list[float]]:
    """The values of k, rho and epsilon, and the privacy models (k, then each l and t)."""
    try:
        k_values = [int(v) for v in ks.split(",") if v.strip()]
        rho_values = _floats(rho)
        models: list[tuple[str, dict[str, Any]]] = [("k", {})]
        models += [(f"l={v:g}", {"l": v}) for v in _floats(l_values)]
        models += [(f"t={v:g}", {"t": v}) for v in _floats(t_values)]
        eps = _floats(epsilons)
    except ValueError:
        raise UsageError(f"-k takes integers; --rho, -l, -t and --epsilon numbers, "
                         f"comma-separated. Got -k {ks!r}, --rho {rho!r}, -l {l_values!r}, "
                         f"-t {t_values!r}, --epsilon {epsilons!r}.") from None
    return k_values, rho_values, models, eps


Roles = tuple[list[str] | None, list[str] | None, list[str] | None]


def _sweep_input(input_path: str | None, dataset: str | None, *, sep: str | None,
                 schema: pathlib.Path | None, roles: Roles) -> tuple[Any, ...]:
    """The table, its quasi-identifiers, sensitive columns and identifiers (given, from the
    schema or from the bundled data set), and the options of every run."""
    options: dict[str, Any] = {}
    qi, sens, ids = roles
    if dataset is not None:
        from microagg.datasets import load_dataset

        ds = load_dataset(dataset)
        df = ds.data
        qi = qi or list(ds.quasi_identifiers)
        sens = sens if sens is not None else list(ds.sensitive)
        ids = ids if ids is not None else list(ds.identifiers)
        # categorical quasi-identifiers get the bundled hierarchies, as in anonymize
        hierarchies = {c: str(p) for c, p in ds.hierarchies.items()
                       if c in qi and df[c].dtype.kind not in "biuf"}
        if hierarchies:
            options["hierarchies"] = hierarchies
    else:
        from microagg.io.tables import read_table
        from microagg.schema._steps import roles_from
        from microagg.schema.schema_file import load_schema

        assert input_path is not None
        loaded = load_schema(schema) if schema is not None else None
        df = read_table(input_path, sep=sep, text_columns=(
            loaded.text_columns if loaded is not None else ()))
        if loaded is not None:  # every run takes it whole: types, dates, rounding
            loaded = _one_step(loaded.spelled_as(df.columns))
            qi, sens, ids = roles_from(loaded, qi, sens, ids)
            options["schema"] = loaded
    qi, sens, ids = (match_columns(names, df.columns) for names in (qi, sens, ids))
    return df, qi, sens, ids, options


def _one_step(schema: Any) -> Any:
    """``schema`` without its plan when the plan is one microaggregate step (the grid
    varies its k and method); a plan of several steps (or of another step) is refused: a
    sweep varies one k and one method over every quasi-identifier."""
    if schema.plan is None:
        return schema
    from dataclasses import replace

    from microagg._pipeline.plan_request import runs_as_plan

    plan = schema.plan
    if runs_as_plan(plan):
        names = ", ".join(f"{step.name} ({', '.join(step.columns)})" for step in plan.steps)
        raise UsageError(
            f"The schema {schema.source} has a plan of {len(plan.steps)} step(s) "
            f"([[steps]]: {names}); microagg sweep varies one k and one method over every "
            "quasi-identifier, which is no such plan. Sweep one step's columns at a time "
            "with a schema without [[steps]], or run the plan with microagg anonymize "
            "--schema.")
    return replace(schema, plan=None)


def _run_with_progress(df: Any, grid: dict[str, Any]) -> Any:
    """:func:`microagg.sweep.sweep` over ``grid``, with a progress bar on a terminal."""
    from microagg.sweep import sweep as run_sweep

    console = stderr()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=console, transient=True,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task("sweep", total=len(grid["methods"]) * len(grid["ks"])
                            * len(grid["aggregations"]) * len(grid["models"]))

        def step(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, description=label)

        return run_sweep(df, **grid, on_step=step)


def _show(table: Any, out: pathlib.Path, plot_out: pathlib.Path | None) -> None:
    """Print the runs (``*`` marks the Pareto front) and where the files went."""
    from microagg.sweep import RISK_LABELS, risk_column

    shown = Table(title="microagg sweep (* = on the Pareto front)", title_justify="left")
    risk = risk_column(table)
    measures = sorted({str(m) for m in table.get("loss_measure", ()) if str(m) not in ("", "nan")})
    for name in ("method", "k", "aggregation", f"loss, {' / '.join(measures) or 'n/a'} (%)",
                 f"{RISK_LABELS[risk][0]} (%)", "achieved k", "s"):
        shown.add_column(name)
    for _, row in table.iterrows():
        agg = row["aggregation"] + (f" {row['aggregation_params']}"
                                    if row["aggregation_params"] else "") + (
            "" if row["model"] == "k" else f", {row['model']}")
        if row["error"]:
            shown.add_row(row["method"], str(row["k"]), agg, "refused", "", "", "")
            continue
        shown.add_row(("* " if row["pareto"] else "") + row["method"], str(row["k"]), agg,
                      f"{row['information_loss']:.3f}", f"{row[risk]:.4g}",
                      str(int(row["achieved_k"])), f"{row['seconds']:.2f}")
    console = stdout()
    console.print(shown)
    console.print(Text(_legend(measures, risk)), soft_wrap=True)
    console.print(Text(f"table written to {out}" + (f", plot to {plot_out}" if plot_out
                                                    else "")), soft_wrap=True)


def _legend(measures: list[str], risk: str) -> str:
    """One line per measure of the table: what the loss and the risk columns mean."""
    from microagg.metrics.headline import CLASS_RISK, GENERALIZED_LOSS, NUMERIC_LOSS, NUMERIC_RISK

    lines = [f"loss, {m}: " + (GENERALIZED_LOSS if m == GENERALIZED_LOSS.short
                               else NUMERIC_LOSS).explanation for m in measures]
    if risk == "global_risk":
        return "\n".join([*lines, "risk, global risk: the published file's mean individual "
                                  "risk with the sampling weights (Benedetti & Franconi 1998, "
                                  "as sdcMicro's measure_risk)"])
    chosen = NUMERIC_RISK if risk == NUMERIC_RISK.key else CLASS_RISK
    return "\n".join([*lines, f"risk, {chosen.short}: {chosen.explanation}"])
