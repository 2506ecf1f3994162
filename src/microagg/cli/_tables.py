"""The tables ``microagg anonymize`` prints after a run: one for a release held in memory, one
for a release an engine wrote to a file (the same :class:`~microagg._pipeline.result.Release`
either way)."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from .._pipeline.certify import better_sse_found

if TYPE_CHECKING:
    from microagg.release import Release

Rows = list[tuple[str, str]]


def _format_float(value: Any, *, scale: float = 1.0, digits: int = 2) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) * scale
        return f"{number:.{digits}f}" if math.isfinite(number) else str(number)
    return "n/a"


def _budget_text(budget: Any) -> str:
    """The method's time budget: seconds, where it came from, and whether it was spent."""
    source = "default for the file size" if budget["default"] else "given"
    if budget["reached"]:
        reached = "reached: the partition depends on the machine"
    elif budget.get("phased"):
        reached = ("not reached, but its phases stop at shares of it: the partition can "
                   "depend on the machine")
    else:
        reached = "not reached"
    return f"{budget['seconds']:g} s ({source}), {reached}; {budget['spent']:.1f} s spent"


def key_value_table(title: str, rows: Rows, warnings: tuple[str, ...] | list[str] = ()
                    ) -> Table:
    """The two-column table every command prints after a run (names in bold; values as
    plain text, never markup), then one ``warning`` row per warning. A value too wide for
    its cell (a long path) is folded onto the next lines, never cut with an ellipsis."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("", overflow="fold")
    for name, value in rows:
        table.add_row(name, Text(value, overflow="fold"))
    for warning in warnings:
        table.add_row("warning", Text(warning))
    return table


def _table(rows: Rows) -> Table:
    return key_value_table("microagg release", rows)


def verdict_row(verdict: Any) -> tuple[str, str]:
    """The first row of every table that judges a release: its verdict's headline
    (:class:`~microagg._pipeline.verdict.Verdict`), the words every output prints."""
    return ("verdict", verdict.headline)


def _head_rows(release: Release, source: str, output: pathlib.Path | str) -> Rows:
    params, metrics = release.params, release.metrics
    qis = list(params.get("quasi_identifiers", ()))
    return [
        ("input", source),
        ("output", str(output)),
        ("method", str(params.get("method", "?"))),
        ("rows", str(release.n_rows)),
        ("quasi-identifiers", f"{len(qis)}: {', '.join(map(str, qis))}"),
        ("groups", str(metrics.get("n_groups", "n/a"))),
        ("aggregation", str(params.get("aggregation", "?"))
         + "".join(f" {n}={v}" for n, v in (params.get("aggregation_params") or {}).items())),
    ]


def _headline_rows(release: Release) -> Rows:
    """The one loss and the one risk to read first (:mod:`microagg.metrics.headline`), each
    with its meaning; a generalized release without DLD gets the class risk."""
    from microagg.metrics.headline import class_risk, headline_loss, headline_risk

    metrics = dict(release.metrics)
    qi = [str(c) for c in release.params.get("quasi_identifiers", ())]
    if "dld_risk" not in metrics and release.data is not None and qi \
            and all(c in release.data.columns for c in qi) and release.n_rows:
        from microagg.audit.check import equivalence_classes

        metrics["class_risk"] = class_risk(equivalence_classes(release.data, qi))
    rows: Rows = []
    for kind, found in (("loss", headline_loss(metrics)), ("risk", headline_risk(metrics))):
        if found is not None:
            measure, value = found
            rows.append((f"{kind}: {measure.short} (%), headline",
                         f"{value:.4g}  {measure.label}: {measure.explanation}"))
    rows += survey_risk_rows(metrics.get("survey_risk"))
    rows += analysis_rows(metrics)
    losses = dict(metrics.get("column_loss") or {})
    if losses:
        worst = max(losses, key=lambda c: losses[c])
        rows.append(("most changed column", f"{worst}: {losses[worst]:.3g} % of its variation "
                                            "removed (SSE/SST of the column)"))
    return rows


def certificate_text(metrics: Mapping[str, Any]) -> str:
    """``certify``'s result in words: the gap and the bound that proves it."""
    cert = metrics["certificate"]
    text = (f"{metrics['certified_gap']:.2f}  (SSE {cert['sse']:.4g}; no partition into "
            f"groups of k or more can go below {cert['sse_lower_bound']:.4g}: "
            f"{cert['bound']} bound, {cert['seconds']:.0f} s)")
    found = better_sse_found(cert)
    if found is not None:
        text += (f"; a partition with SSE {found:.4g} was found while bounding: "
                 "--refine SECONDS searches for one")
    return text


def _privacy_rows(release: Release) -> Rows:
    checks = release.checks
    k_check, group_check = checks.get("k_anonymity", {}), checks.get("group_k", {})
    rows = [
        ("required k", str(group_check.get("required", "n/a"))),
        ("smallest group", str(group_check.get("achieved", "n/a"))),
        ("achieved k (published values)",
         str(k_check.get("achieved", "n/a"))
         + ("" if k_check.get("required") is not None else
            "  (attribute groups: real k, not guaranteed)"
            if release.attribute_partitions else "  (noisy: not k-anonymous)")),
        *_headline_rows(release),
    ]
    if "ncp" in release.metrics:
        rows += [("IL (%), secondary",
                  _format_float(release.metrics.get("information_loss"), digits=4)
                  + "  SSE/SST of the numeric quasi-identifiers only"),
                 ("IL(Omega), normalized, secondary",
                  _format_float(release.metrics["il_omega_normalized"], digits=4)
                  + "  generalization loss over the classes, 0 to 1")]
    if "certified_gap" in release.metrics:
        rows.append(("certified gap (%)", certificate_text(release.metrics)))
    l_check, t_check = checks.get("l_diversity"), checks.get("t_closeness")
    if l_check is not None:
        rows.append((f"l-diversity ({l_check['diversity']})",
                     f"required {l_check['required']}, achieved {l_check['achieved']:.3g}"))
    if t_check is not None:
        rows.append(("t-closeness",
                     f"required {t_check['required']}, achieved {t_check['achieved']:.3g}"))
    return rows


def _risk_rows(metrics: Mapping[str, Any]) -> Rows:
    rows: Rows = []
    if "utility_loss" in metrics and "privacy_of_sensitive" in metrics:
        rows.append(("UL / P(Q) / P(S) (%), secondary",
                     f"{100 * metrics['utility_loss']:.2f} / "
                     f"{100 * metrics['privacy_of_quasi_identifiers']:.2f} / "
                     f"{100 * metrics['privacy_of_sensitive']:.2f}  utility loss / privacy "
                     "of the quasi-identifiers / privacy of the sensitive values"))
    if "homogeneity" in metrics:
        rows.append(("homogeneous classes",
                     "; ".join(f"{c}: {h['homogeneous_classes']} of {h['classes']} "
                               f"({100 * h['homogeneous_share']:.2f}% of records)"
                               for c, h in metrics["homogeneity"].items())))
    if "information_loss_original_units" in metrics:
        rows.append(("IL original units (%), secondary",
                     _format_float(metrics["information_loss_original_units"], digits=4)
                     + "  SSE/SST unscaled: dominated by the largest-variance column"))
    if "dld_risk_known" in metrics:
        rows.append(("DLD risk, intruder's columns (%)",
                     _format_float(metrics["dld_risk_known"], scale=100.0)))
    if "intersection_attack_reidentified" in metrics:
        rows.append(("intersection attack, re-identified (%)",
                     _format_float(metrics["intersection_attack_reidentified"], scale=100.0)))
    from microagg.report._attacks import attacks_line

    attacked = attacks_line(metrics)
    if attacked is not None:
        rows.append(("attacks, highest risk", attacked))
    if "il_ari" in metrics:
        rows.append(("IL_RI / IL_ARI / IL_Jaccard / IL_fuzzy",
                     " / ".join(f"{metrics[m]:.4f}"
                                for m in ("il_rand", "il_ari", "il_jaccard", "il_fuzzy_rand"))))
    return rows


def _tail_rows(release: Release, seconds: float) -> Rows:
    rows: Rows = []
    dp_check = release.checks.get("differential_privacy")
    if dp_check is not None:
        rows.append(("epsilon-DP", f"epsilon={dp_check['epsilon']} " + (
            "(holds)" if dp_check["holds"] else "(does NOT hold: bounds from the data)")))
    if release.params.get("time_budget"):
        rows.append(("time budget", _budget_text(release.params["time_budget"])))
    return [*rows, ("seed", str(release.seed)), ("time (s)", f"{seconds:.2f}")]


def summary_table(release: Release, *, source: str, output: pathlib.Path | str,
                  seconds: float) -> Table:
    """The rich table printed after a run (rows, groups, k, IL, risk, time); a release an
    engine wrote to a file gets :func:`file_table`."""
    if release.data is None:
        return file_table(release, source=source, output=output, seconds=seconds)
    return _table([verdict_row(release.verdict), *_head_rows(release, source, output),
                   *_privacy_rows(release),
                   *_risk_rows(release.metrics), *_tail_rows(release, seconds)])


def file_table(release: Release, *, source: str, output: pathlib.Path | str,
               seconds: float) -> Table:
    """The table of a release an engine wrote block by block (``--engine file`` / ``dask``)."""
    params, metrics = release.params, release.metrics
    qi = [str(c) for c in params["quasi_identifiers"]]
    blocking = params["blocking"]
    if blocking is None:  # a plan of steps run in chunks (no blocks)
        return _table([
            verdict_row(release.verdict), ("input", source), ("output", str(output)),
            ("engine", release.engine), ("method", "plan: " + ", ".join(
                s.step for s in release.steps)),
            ("rows", f"{release.n_rows:,}"), ("quasi-identifiers", f"{len(qi)}: {', '.join(qi)}"),
            ("achieved k (written file)", str(release.k)),
            *[(f"step {c['step']} ({c['name']})", "holds" if c["holds"] else "does NOT hold")
              for c in release.checks.get("steps", ())],
            ("seed", str(release.seed)), ("time (s)", f"{seconds:.2f}")])
    return _table([
        verdict_row(release.verdict), ("input", source), ("output", str(output)),
        ("engine", "local" if release.engine == "memory" else release.engine),
        ("method", f"{params['method']}, blocking {blocking['blocking']}, block size "
                   f"{blocking['block_size']:,}"),
        ("rows", f"{release.n_rows:,}"), ("quasi-identifiers", f"{len(qi)}: {', '.join(qi)}"),
        ("blocks / groups", f"{metrics['n_blocks']:,} / {metrics['n_groups']:,}"),
        ("required k", str(params["k"])), ("achieved k (written file)", str(release.k)),
        *_headline_rows(release),
        ("seed", str(release.seed)), ("time (s)", f"{seconds:.2f}"),
    ])


def analysis_rows(metrics: Mapping[str, Any]) -> Rows:
    """Can an analyst still get the answers? (``metrics["analysis_utility"]``): one row per
    sentence of the report's section."""
    from microagg.report._analysis import analysis_sentences

    return [("analysis" if i == 0 else "", s)
            for i, s in enumerate(analysis_sentences(metrics))]


def survey_risk_rows(risk: Any) -> Rows:
    """The disclosure risk before and after (``metrics["survey_risk"]``, with a weight or a
    household): global risk, expected re-identifications, household risk, fk < k."""
    if not risk:
        return []
    before, after = risk["before"], risk["after"]
    rows: Rows = [
        ("global risk, before -> after", f"{before['global_risk_pct']:.4g} % -> "
                                         f"{after['global_risk_pct']:.4g} %  mean individual "
                                         "risk (Benedetti & Franconi 1998, as sdcMicro)"),
        ("expected re-identifications", f"{before['expected_reidentifications']:.4g} -> "
                                        f"{after['expected_reidentifications']:.4g}"),
    ]
    if "household_risk_pct" in before and "household_risk_pct" in after:
        rows.append(("household risk, before -> after",
                     f"{before['household_risk_pct']:.4g} % -> "
                     f"{after['household_risk_pct']:.4g} %"))
    rows.append(("records with fk < 2 / 3 / 5", " -> ".join(
        " / ".join(f"{side['k_anonymity_violations'].get(k, 0):,}" for k in ("2", "3", "5"))
        for side in (before, after))))
    return rows
