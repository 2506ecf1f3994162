"""``microagg risk``: the disclosure risk of any file, as statistical offices measure it:
the ex-ante look before choosing a method, or the ex-post look at a release.

Frequencies of the key variables in the sample (fk) and estimated in the population (Fk,
with sampling weights), the individual risk of each record (Benedetti & Franconi 1998, as
sdcMicro's ``measure_risk``), the global risk, the household risk, the records violating k
= 2, 3, 5, and SUDA2 special uniques (Manning, Haglin & Keane 2008; DIS-SUDA, Elliot et
al.), from :mod:`microagg.metrics.survey_risk` and :mod:`microagg.metrics.suda`.
"""

from __future__ import annotations

import json
import pathlib
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from microagg.cli._common import (
    HouseholdOption,
    QuasiIdentifiersOption,
    RandomStateOption,
    SchemaOption,
    SepOption,
    StrataOption,
    UsageError,
    WeightOption,
    app,
    match_column,
    match_columns,
    plain_json,
    split_names,
    stdout,
    user_errors,
)

if TYPE_CHECKING:
    import pandas as pd

    from microagg.cli._risk_attacks import RiskAttacks
    from microagg.metrics.loglinear_risk import LoglinearOptions


@app.command()
def risk(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A table (CSV, TSV, Parquet, Excel .xlsx, Stata .dta, SPSS .sav, "
                            "or sqlite:///file.db?table=NAME): an original or a release."),
    ],
    quasi_identifiers: QuasiIdentifiersOption = None,
    schema: SchemaOption = None,
    weight: WeightOption = None,
    household: HouseholdOption = None,
    strata: StrataOption = None,
    threshold: Annotated[
        float,
        typer.Option("--threshold", help="Count the records whose individual risk is above "
                                         "this, in (0, 1] (0.05: 5 %, a common limit)."),
    ] = 0.05,
    ks: Annotated[
        str,
        typer.Option("-k", help="Comma-separated k: count the records with fewer than k "
                                "records sharing their keys in the sample."),
    ] = "2,3,5",
    missing: Annotated[
        str,
        typer.Option("--missing", help="Missing key values: any (matches every value, as "
                                       "sdcMicro) or category (a value of its own)."),
    ] = "any",
    population_size: Annotated[
        float | None,
        typer.Option("--population-size", show_default=False,
                     help="The size of the population the file was drawn from (at least "
                          "its number of records): adds k-map, the journalist and marketer "
                          "risks and the population uniques; default with --weight: the sum "
                          "of the weights."),
    ] = None,
    uniques: Annotated[
        bool | None,
        typer.Option("--population-uniques/--no-population-uniques", show_default=False,
                     help="Also the population uniques estimated by the Pitman, Zayatz and "
                          "SNB models with Dankar et al.'s rule (fitted: a second or so); "
                          "default: with --population-size only."),
    ] = None,
    loglinear: Annotated[
        bool,
        typer.Option("--loglinear/--no-loglinear",
                     help="Also fit a Poisson log-linear model to the key table (sdcMicro's "
                          "modRisk; Skinner & Holmes 1998): the expected number of sample "
                          "uniques that are population uniques. Needs --weight or "
                          "--population-size."),
    ] = False,
    formula: Annotated[
        str | None,
        typer.Option("--formula", show_default=False,
                     help="The log-linear model's terms over the keys, R-style: \"a*b + c\" "
                          "(the a x b interaction and c); every key must appear. Default: "
                          "the main effects."),
    ] = None,
    loglinear_method: Annotated[
        str,
        typer.Option("--loglinear-method",
                     help="default (the sample counts), CE (Clogg & Eliason's offset), PML "
                          "(the weighted counts) or weightedLLM (the weight sum as a "
                          "predictor); all but default need --weight."),
    ] = "default",
    suda: Annotated[
        bool,
        typer.Option("--suda/--no-suda", help="Also the SUDA2 special uniques and DIS-SUDA "
                                              "scores."),
    ] = True,
    sensitive: Annotated[
        list[str] | None,
        typer.Option("-s", "--sensitive", show_default=False,
                     help="Comma-separated sensitive columns: each a secret the inference "
                          "attack guesses from the keys (default: the --schema's)."),
    ] = None,
    attacks: Annotated[
        bool,
        typer.Option("--attacks/--no-attacks",
                     help="Attack the file as if it were published unchanged, as every "
                          "release is attacked (singling out, linkability, the inference of "
                          "each -s column; 2,000 attacked records): the baseline a release "
                          "must lower. Off by default: they load the numeric kernels a quick "
                          "risk summary does not need (0.1 s on 15,000 rows; on 10^6 rows 3 s "
                          "with a numeric key, more with coded keys on which records tie)."),
    ] = False,
    control_path: Annotated[
        str | None,
        typer.Option("--control", metavar="FILE", show_default=False,
                     help="Records of the same population held out of INPUT (its columns, "
                          "at most its rows): what the attacks compare with. Without it "
                          "each attack is compared with itself, the attacked person's own "
                          "record left out."),
    ] = None,
    random_state: RandomStateOption = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the figures as JSON."),
    ] = None,
    sep: SepOption = None,
) -> None:
    """The disclosure risk of a file's key variables: fk and Fk (within each stratum with
    --strata), individual, global and household risk, k-anonymity violations, SUDA2, and
    the attacks a release of the file unchanged would suffer."""
    with user_errors():
        from microagg.io.tables import check_output_path, read_table, write_text_atomic

        out = None
        if summary_json is not None:
            out = check_output_path(summary_json, inputs=[input_path], extensions=(".json",),
                                    parameter="--summary-json")
        if control_path is not None and not attacks:
            raise UsageError("--control is read only by the attacks (the records they "
                             "compare with): add --attacks, or drop --control.")
        keys, survey, text, others = _roles(quasi_identifiers, schema,
                                            {"weights": weight, "households": household,
                                             "strata": strata}, sensitive)
        table = read_table(input_path, sep=sep, text_columns=text)
        keys = match_columns(keys, table.columns) or []
        survey = {role: None if name is None else match_column(name, table.columns)
                  for role, name in survey.items()}
        if population_size is not None and population_size < len(table):
            raise UsageError(f"--population-size must be at least the number of records "
                             f"({len(table):,}); got {population_size:g}.")
        model = _loglinear(loglinear, formula, loglinear_method,
                           survey["weights"] is not None or population_size is not None)
        figures = file_risk(table, keys, **survey, threshold=threshold, ks=_ks(ks),
                            missing=missing, suda=suda, population_size=population_size,
                            uniques=population_size is not None if uniques is None
                            else uniques, loglinear=model,
                            attacks=_attacks(attacks, table, others, control_path, random_state,
                                             sep=sep, text=text))
        stdout().print(risk_table(figures, source=input_path))
        if out is not None:
            write_text_atomic(json.dumps(plain_json(figures), indent=2) + "\n", out)
            stdout().print(Text(f"figures written to {out}"), soft_wrap=True)


def _loglinear(wanted: bool, formula: str | None, method: str, has_population: bool
               ) -> LoglinearOptions | None:
    """The log-linear model asked for, or ``None``; refused without a population."""
    from microagg.metrics.loglinear_risk import LoglinearOptions

    if not wanted:
        if formula is not None or method != "default":
            raise UsageError("--formula and --loglinear-method go with --loglinear.")
        return None
    if not has_population:
        raise UsageError("--loglinear needs --weight (sampling weights) or --population-size: "
                         "the model's risk depends on the sampling fraction.")
    return LoglinearOptions(method=method, formula=formula)


def _attacks(wanted: bool, table: pd.DataFrame, others: dict[str, list[str]],
             control_path: str | None, seed: int | None, *, sep: str | None, text: list[str]
             ) -> RiskAttacks | None:
    """The attacks asked for (``None``: --no-attacks), the control file read."""
    if not wanted:
        return None
    from microagg.cli._risk_attacks import RiskAttacks
    from microagg.io.tables import read_table

    control = None if control_path is None else read_table(control_path, sep=sep,
                                                           text_columns=text)
    return RiskAttacks(secrets=match_columns(others["sensitive"], table.columns) or [],
                       control=control, seed=seed,
                       dates=match_columns(others["dates"], table.columns) or [])


def _ks(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"-k takes comma-separated whole numbers >= 2; got {text!r}.") from None


def _roles(quasi_identifiers: list[str] | None, schema: pathlib.Path | None,
           survey: dict[str, str | None], sensitive: list[str] | None
           ) -> tuple[list[str], dict[str, str | None], list[str], dict[str, list[str]]]:
    """The key variables, the survey roles (``weights``, ``households``, ``strata``: given,
    or from the schema), the columns to read as text, and the attacks' ``sensitive`` and
    ``dates`` columns (given, or from the schema)."""
    keys = split_names(quasi_identifiers) or []
    others: dict[str, list[str]] = {"sensitive": split_names(sensitive) or [], "dates": []}
    text: list[str] = []
    if schema is not None:
        from microagg.schema.schema_file import load_schema

        loaded = load_schema(schema)
        if keys:
            raise UsageError("Give the key variables either with -q or in --schema, not both.")
        keys, text = loaded.quasi_identifiers, loaded.text_columns
        others = {"sensitive": others["sensitive"] or loaded.sensitive,
                  "dates": list(loaded.dates)}
        survey = {"weights": survey["weights"] or loaded.weight,
                  "households": survey["households"] or loaded.household,
                  "strata": survey["strata"] or loaded.strata}
    if not keys:
        raise UsageError("Name the key variables: -q (comma-separated) or --schema.")
    return keys, survey, text, others


def file_risk(table: pd.DataFrame, keys: list[str], *, weights: str | None,
              households: str | None, threshold: float, ks: tuple[int, ...], missing: str,
              suda: bool, strata: str | None = None,
              population_size: float | None = None, uniques: bool = False,
              loglinear: LoglinearOptions | None = None,
              attacks: RiskAttacks | None = None) -> dict[str, Any]:
    """The figures of :func:`risk`: ``survey_risk``, ``risky_cells`` (key combinations of up
    to 3 keys held by fewer than 3 records), with a weight or ``population_size``
    ``population_risk`` (with ``uniques``, the population uniques too; with ``loglinear``,
    ``population_risk["loglinear"]``: :meth:`~microagg.metrics.loglinear_risk.LoglinearRisk.
    summary`), with ``suda``, ``suda2``, and with ``attacks``, ``attacks``: the file attacked
    as if published unchanged (:func:`~microagg.cli._risk_attacks.raw_file_attacks`)."""
    from microagg.metrics.population_risk import population_summary, risky_cells
    from microagg.metrics.survey_risk import survey_risk

    figures: dict[str, Any] = {"survey_risk": survey_risk(
        table, keys, weights=weights, households=households, threshold=threshold, ks=ks,
        missing=missing, strata=strata).summary()}
    figures["risky_cells"] = risky_cells(table, keys, threshold=3)
    if weights is not None or population_size is not None:
        figures["population_risk"] = population_summary(
            table, keys, weights=weights, population_size=population_size, missing=missing,
            strata=strata, ks=ks, uniqueness=uniques)
        if loglinear is not None:
            from microagg.metrics.loglinear_risk import loglinear_risk

            figures["population_risk"]["loglinear"] = loglinear_risk(
                table, keys, weights=weights, population_size=population_size,
                method=loglinear.method, formula=loglinear.formula).summary()
    if suda:
        from microagg.metrics.suda import suda2

        figures["suda"] = suda2(table, keys).summary()  # missing values as sdcMicro's suda2
    if attacks is not None:
        from microagg.cli._risk_attacks import raw_file_attacks

        attacked = raw_file_attacks(table, keys, attacks)
        if attacked is not None:
            figures["attacks"] = attacked
    return figures


def _pct(value: float) -> str:
    return f"{100.0 * value:.4g} %"


def risk_table(figures: dict[str, Any], *, source: str) -> Table:
    """The figures as one table, each row with what it means."""
    s = figures["survey_risk"]
    table = Table(title=f"microagg risk: {source}", show_header=False, title_justify="left")
    table.add_column("measure", style="bold")
    table.add_column("value")
    n = s["n_records"]
    table.add_row("records, key variables", f"{n:,}; {', '.join(s['keys'])}")
    if s.get("strata"):
        table.add_row("strata", f"{s['strata']}: fk and Fk counted within each stratum")
    table.add_row("population frequencies", "estimated with the weights" if s["weighted"]
                  else "none: the file is taken for the population (risk = 1 / fk)")
    for k, count in s["k_anonymity_violations"].items():
        table.add_row(f"records with fk < {k}", f"{count:,} ({_pct(count / n)}): fewer than "
                                                f"{k} records share their keys")
    table.add_row("global risk", f"{s['global_risk_pct']:.4g} %: the mean individual risk "
                                 "(Benedetti & Franconi 1998)")
    table.add_row("expected re-identifications", f"{s['expected_reidentifications']:.4g}: "
                                                 "the sum of the individual risks")
    table.add_row(f"records above {s['threshold']:g}",
                  f"{s['n_above_threshold']:,} ({_pct(s['share_above_threshold'])}); "
                  f"the largest individual risk is {s['max_risk']:.4g}")
    if "household_risk" in s:
        table.add_row("household risk", f"{s['household_risk_pct']:.4g} %: mean over records "
                                        "of 1 - prod(1 - r) over the household's members")
        table.add_row("expected household re-identifications",
                      f"{s['expected_household_reidentifications']:.4g}")
    if "population_risk" in figures:
        _population_rows(table, figures["population_risk"])
    if "risky_cells" in figures:
        _cells_rows(table, figures["risky_cells"])
    if "suda" in figures:
        _suda_rows(table, figures["suda"])
    if "attacks" in figures:
        from microagg.report._attacks import attacks_line

        table.add_row("attacks, highest risk", f"{attacks_line(figures)}: the file attacked "
                                               "as if published unchanged, the baseline a "
                                               "release must lower")
    return table


def _population_rows(table: Table, p: dict[str, Any]) -> None:
    k, u = p["k_map"], p.get("uniqueness")
    source = "the sum of the weights" if p["weighted"] else "given"
    fraction = k["n_records"] / p["population_size"]
    table.add_row("population size", f"{p['population_size']:,.0f} ({source}); sampling "
                                     f"fraction {fraction:.4g}")
    table.add_row("k-map", f"{k['k_map']:.4g}: the smallest estimated number of persons in "
                           "the population sharing a record's keys")
    table.add_row("prosecutor risk", f"largest {k['prosecutor_max']:.4g}, mean "
                                     f"{k['prosecutor_mean']:.4g}: 1 / fk, for an intruder "
                                     "who knows the person is in the file")
    table.add_row("journalist risk", f"{k['journalist_max']:.4g}: largest 1 / Fk, for an "
                                     "intruder who knows only that the person is in the "
                                     "population")
    table.add_row("marketer risk", f"{_pct(k['marketer'])}: the share of records expected "
                                   "re-identified by matching every record at once")
    if "loglinear" in p:
        _loglinear_rows(table, p["loglinear"])
    if u is None:
        table.add_row("population uniques", "not estimated (--population-uniques, or give "
                                            "--population-size)")
        return
    value = u["dankar_uniques"]
    shown = "no estimate" if value is None else f"{value:,.4g} ({_pct(u['dankar_share'])} " \
        "of the population)"
    table.add_row("population uniques", f"{shown}, by the {u['dankar_model']} model "
                                        f"(Dankar et al.'s rule); {u['sample_uniques']:,} "
                                        "sample uniques")
    others = [f"{name} {u[name + '_uniques']:,.4g}" for name in ("pitman", "zayatz", "snb")
              if u[name + "_uniques"] is not None]
    if others:
        table.add_row("population uniques by model", ", ".join(others))


def _loglinear_rows(table: Table, m: dict[str, Any]) -> None:
    table.add_row("log-linear model", f"{m['method']} fit of {m['formula']} to the "
                                      f"{m['n_cells']:,} cells of the key table"
                  + ("" if m["converged"] else " (did not converge: read with care)"))
    table.add_row("sample uniques that are population uniques",
                  f"{m['tau1']:,.4g} of {m['sample_uniques']:,} ({_pct(m['tau1_share'])}; "
                  "tau1, Skinner & Holmes 1998)")
    table.add_row("expected correct matches of sample uniques",
                  f"{m['tau2']:,.4g} ({_pct(m['tau2_share'])}; tau2); sdcMicro's modRisk "
                  f"prints {m['sdcmicro_risk1']:.4g} and {m['sdcmicro_risk2']:.4g}")


def _cells_rows(table: Table, cells: list[dict[str, Any]]) -> None:
    risky = [c for c in cells if c["n_risky"]]
    if not risky:
        table.add_row("risky cells", "no combination of up to 3 keys is held by fewer than "
                                     "3 records")
        return
    top = sorted(risky, key=lambda c: -c["n_risky"])[:5]
    table.add_row("risky cells (< 3 records)", "; ".join(
        f"{' x '.join(c['keys'])}: {c['n_risky']:,}" for c in top)
        + (f"; {len(risky) - 5} more combinations" if len(risky) > 5 else ""))


def _suda_rows(table: Table, s: dict[str, Any]) -> None:
    table.add_row("SUDA2 special uniques", f"{s['records_with_msu']:,} records have a minimal "
                                           f"sample unique ({s['n_msus']:,} in all, by size "
                                           + ", ".join(f"{size}: {n}" for size, n in
                                                       s["msus_by_size"].items()) + ")")
    table.add_row("SUDA score", f"sum {s['score_sum']:.4g}, largest {s['score_max']:.4g}")
    table.add_row("DIS-SUDA", f"sum {s['dis_score_sum']:.4g}, largest "
                              f"{s['dis_score_max']:.4g} (DisFraction {s['dis_fraction']:g})")
    contributions = s.get("attribute_contributions") or {}
    if contributions and s["records_with_msu"]:
        top = sorted(contributions.items(), key=lambda item: -item[1])
        table.add_row("key variables in the special uniques",
                      ", ".join(f"{k} {v:.3g} %" for k, v in top))
