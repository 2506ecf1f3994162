"""The words of the release report (for :mod:`microagg.report`): the protection status under
the title, "In plain words", the warnings, and the measures as plain tables, each with its
one-line meaning.

The status line is the release's one verdict (:mod:`.._pipeline.verdict`), never decided
here.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._pipeline.certify import better_sse_found
from .._pipeline.notes import warning_class
from .._pipeline.verdict import (
    NO_K_REQUIRED,
    NOT_PROTECTED,
    PROTECTED,
    breaking_columns,
    kept_identifiers,
)
from ..exceptions import PrivacyLeakWarning
from ..metrics.headline import LABELS, explain, headline_loss, headline_risk
from ..release import Release
from ._plots import fmt

__all__ = ["ColumnFacts", "all_warnings", "metric_tables", "plain_words", "status_line"]


@dataclass(frozen=True)
class ColumnFacts:
    """What the report measured column by column: the numeric column that lost the most
    variation, the categorical one whose values changed most, the missing counts in the
    original, and the non-quasi-identifier columns published exactly / changed."""

    worst_numeric: tuple[str, float] | None = None
    worst_categorical: tuple[str, float] | None = None
    missing: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    unchanged: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


def _names(names: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(html.escape(str(n)) for n in names[:limit])
    return shown + (", ..." if len(names) > limit else "")


_STATUS_CLASS = {PROTECTED: "ok", NOT_PROTECTED: "bad", NO_K_REQUIRED: "info"}


def status_line(release: Release) -> str:
    """The line under the title: the release's verdict (:attr:`Release.verdict`), its label
    in bold, the same words as every other output."""
    verdict = release.verdict
    return (f"<p class='status {_STATUS_CLASS[verdict.status]}'><b>"
            f"{html.escape(verdict.label)}:</b> {html.escape(verdict.detail)}</p>")


def _k_sentence(release: Release, qi: Sequence[str], warned: bool) -> str:
    k_check = release.checks.get("k_anonymity", {})
    required, achieved = k_check.get("required"), k_check.get("achieved")
    combos = (f"combination of the {len(qi)} quasi-identifiers ({_names(qi)})")
    if required is not None:
        if achieved is not None and achieved >= required:
            return (f"<b>{fmt(required)}-anonymous:</b> every published {combos} is shared by "
                    f"at least {fmt(achieved)} records (k-anonymity, counted again on the "
                    "published file).")
        return (f"<b>Not {fmt(required)}-anonymous:</b> the smallest class of identical "
                f"published quasi-identifiers has {fmt(achieved)} record(s).")
    asked = release.params.get("k")
    if asked is not None and achieved is not None and achieved < asked:
        return ("<b>Not k-anonymous:</b> the smallest class of identical published "
                f"quasi-identifiers has {fmt(achieved)} record(s)"
                + ("; see the warnings for what this release promises instead." if warned
                   else "; this aggregation does not promise k-anonymity."))
    if achieved is not None and achieved < 2:
        return (f"Some published {combos} is unique to one record: the file is only "
                "1-anonymous (no k was required).")
    return (f"Every published {combos} is shared by at least {fmt(achieved)} records: the file "
            f"is {fmt(achieved)}-anonymous (no k was required).")


def _homogeneity_sentences(metrics: Mapping[str, Any]) -> list[str]:
    """One sentence per sensitive column with classes whose records share one value."""
    measured = metrics.get("homogeneity")
    if not isinstance(measured, Mapping):
        return []
    return [f"<b>Sensitive values disclosed:</b> in {int(h['homogeneous_classes']):,} of "
            f"{int(h['classes']):,} classes ({int(h['homogeneous_records']):,} records, "
            f"{100 * float(h['homogeneous_share']):.1f}%) every record has the same "
            f"<b>{html.escape(str(col))}</b>: knowing someone's class tells it. k-anonymity "
            "does not prevent this; l-diversity (-l 2) does."
            for col, h in measured.items() if int(h.get("homogeneous_classes", 0)) > 0]


def _risk_sentence(metrics: Mapping[str, Any]) -> str | None:
    risk = headline_risk(metrics)
    if risk is None:
        return None
    measure, value = risk
    if measure.key == "dld_risk":
        return ("<b>Risk left:</b> an intruder who holds the original values of these "
                "columns and links each published record to the closest one finds the "
                f"right person for {value:.1f}% of the records (distance-based record "
                "linkage, DLD).")
    small = metrics.get("share_in_classes_below_5")
    return ("<b>Risk left:</b> an intruder who knows a person's quasi-identifiers and picks "
            "one record of the matching published class finds the right person with "
            f"probability {value:.1f}% on average (1 / class size, averaged over records)"
            + (f"; {100 * float(small):.1f}% of the records are in classes of fewer than 5"
               if isinstance(small, float) else "") + ".")


def _loss_sentence(metrics: Mapping[str, Any], facts: ColumnFacts) -> str | None:
    loss = headline_loss(metrics)
    if loss is None:
        return None
    measure, value = loss
    worst = ""
    if facts.worst_numeric is not None:
        name, lost = facts.worst_numeric
        worst = f"<b>{html.escape(name)}</b> lost {lost:.1f}% of its variation"
    if measure.key == "information_loss":
        text = (f"<b>Lost:</b> {worst + ', the most of any quasi-identifier; ' if worst else ''}"
                f"on average the quasi-identifiers lost {value:.1f}% of the variation "
                "(SSE/SST)")
        gap = metrics.get("certified_gap")
        if gap is not None:
            text += (f"; <b>certified</b>: within {float(gap):.1f}% of the lowest loss any "
                     "partition into groups of k or more can reach" if gap > 0 else
                     "; <b>certified optimal</b>: no partition into groups of k or more loses "
                     "less")
            cert = metrics.get("certificate") or {}
            found = better_sse_found(cert)
            if found is not None:
                text += (f" (a grouping with {100 * (1 - found / cert['sse']):.0f}% less loss "
                         "was found while bounding: the quality mode, refine, searches for one)")
        moved = metrics.get("mean_change_pct")
        if moved is not None:
            text += ("; means are kept (they move by less than 0.01%)" if moved < 0.01
                     else f"; means move by {float(moved):.2f}%")
    else:
        basis = metrics.get("ncp_measured_on")
        text = (f"<b>Lost:</b> {value:.1f}% of the precision of the quasi-identifiers "
                "(normalized certainty penalty of the generalization"
                + (f", measured over {html.escape(str(basis))})" if basis else ")"))
        if worst:
            text += f"; of the numeric ones, {worst}"
    if facts.worst_categorical is not None:
        name, share = facts.worst_categorical
        text += (f"; the categorical column changed most is <b>{html.escape(name)}</b> "
                 f"({100 * share:.1f}% of the records)")
    return text + "."


def plain_words(release: Release, qi: Sequence[str], facts: ColumnFacts, *,
                metrics: Mapping[str, Any], warned: bool) -> list[str]:
    """The release in a few sentences: what is protected, the risk left, what was lost and
    what is published unchanged; for a reader who will not read the tables."""
    items = [_k_sentence(release, qi, warned)]
    for name, label in (("l_diversity", "distinct values of each sensitive column in every "
                                        "class (l-diversity)"),
                        ("t_closeness", "distance of every class's sensitive distribution "
                                        "to the whole file's (t-closeness)")):
        c = release.checks.get(name)
        if isinstance(c, Mapping) and c.get("required") is not None:
            items.append(f"<b>Also:</b> {label}: required {fmt(c['required'])}, achieved "
                         f"{fmt(c.get('achieved'))}.")
    items += _homogeneity_sentences(metrics)
    items += [s for s in (_risk_sentence(metrics), _loss_sentence(metrics, facts),
                          rounding_sentence(release.checks.get("rounding")))
              if s is not None]
    if facts.missing:
        items.append("<b>Missing values:</b> " + "; ".join(
            f"{html.escape(c)}: {before:,} missing in the original"
            + (f", {after:,} in the published file" if after != before else "")
            for c, (before, after) in facts.missing.items())
            + ". They are not counted in the measures.")
    if facts.unchanged:
        items.append(f"<b>Published unchanged:</b> {_names(facts.unchanged, 12)}: their values "
                     "are exactly the original ones.")
    if facts.changed:
        items.append(f"<b>Changed, not named as quasi-identifiers:</b> "
                     f"{_names(facts.changed, 12)}.")
    return ["<h2>In plain words</h2>",
            "<ul class='plain'>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"]


def _about_privacy(warning: str) -> bool:
    """Whether a release's warning is about privacy: by the class it was raised with
    (:class:`~microagg.exceptions.PrivacyLeakWarning` and its subclasses,
    :func:`~microagg._pipeline.notes.warning_class`); a text without one (warnings read
    back from a summary JSON) by its words."""
    category = warning_class(warning)
    if category is not None:
        return issubclass(category, PrivacyLeakWarning)
    return any(word in warning for word in ("NOT", "not k-anonymous", "not differential",
                                            "unchanged"))


def all_warnings(release: Release) -> tuple[list[str], list[str]]:
    """(privacy warnings, other warnings): the release's, plus one per kept identifier and
    per published column that breaks the required k, unless a warning already names it."""
    privacy = [w for w in release.warnings if _about_privacy(w)]
    other = [w for w in release.warnings if w not in privacy]
    for col, k in breaking_columns(release.checks).items():
        if not any(col in w for w in release.warnings):
            privacy.append(f"Column {col!r} is published and breaks k: with it added to the "
                           f"quasi-identifiers the file is only {k}-anonymous.")
    kept = [c for c in kept_identifiers(release.params) if not any(c in w for w in release.warnings)]
    if kept:
        privacy.append(f"Column(s) {', '.join(map(repr, kept))} look like identifiers and are "
                       "published on purpose (kept): anyone who knows them can find the "
                       "record.")
    return privacy, other


def warnings_section(release: Release) -> list[str]:
    """The warnings, those about privacy first and highlighted; empty when there are none."""
    privacy, other = all_warnings(release)
    if not privacy and not other:
        return []
    return (["<h2>Warnings</h2>"]
            + [f"<div class='warn privacy'>{html.escape(w)}</div>" for w in privacy]
            + [f"<div class='warn'>{html.escape(w)}</div>" for w in other])


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def _row(name: str, value: str, meaning: str) -> str:
    return (f"<tr><td class='l'>{html.escape(name)}</td><td>{value}</td>"
            f"<td class='l'>{html.escape(meaning)}</td></tr>")


def _mapping_table(key: str, value: Mapping[str, Any]) -> str:
    """A dict-valued metric as a plain table: one row per entry; nested mappings (one per
    column) become one row per column and one column per figure."""
    intro = (f"<h3>{html.escape(_label(key))}</h3><p>{html.escape(explain(key))}</p>"
             if explain(key) else f"<h3>{html.escape(_label(key))}</h3>")
    if value and all(isinstance(v, Mapping) for v in value.values()):
        fields = list(dict.fromkeys(f for v in value.values() for f in v))
        head = "".join(f"<th>{html.escape(_label(f))}</th>" for f in fields)
        body = "".join(f"<tr><td class='l'>{html.escape(str(c))}</td>"
                       + "".join(f"<td>{fmt(v.get(f))}</td>" for f in fields) + "</tr>"
                       for c, v in value.items())
        return f"{intro}<table><tr><th class='l'>column</th>{head}</tr>{body}</table>"
    body = "".join(f"<tr><td class='l'>{html.escape(_label(str(k)))}</td><td>{fmt(v)}</td>"
                   "</tr>" for k, v in value.items())
    return f"{intro}<table><tr><th class='l'>entry</th><th>value</th></tr>{body}</table>"


def metric_tables(metrics: Mapping[str, Any]) -> list[str]:
    """The headline loss and risk, then every other measure labelled as secondary with its
    meaning; dict-valued measures as their own tables."""
    head, rows, tables = [], [], []
    shown: set[str] = set()
    for kind, found in (("loss", headline_loss(metrics)), ("risk", headline_risk(metrics))):
        if found is not None:
            measure, value = found
            shown.add(measure.key)
            meaning = measure.explanation
            basis = metrics.get(f"{measure.key}_measured_on")  # a review's NCP: its classes
            if basis:
                shown.add(f"{measure.key}_measured_on")
                meaning += f"; measured over {basis}"
            head.append(_row(f"{kind}: {measure.label}", f"{value:.4g} %", meaning))
    for key, value in metrics.items():
        if key in shown or key in ("survey_risk", "analysis_utility", "attacks"):  # own sections
            continue
        if isinstance(value, Mapping):
            tables.append(_mapping_table(key, value))
        elif isinstance(value, (tuple, list)):
            rows.append(_row(_label(key), html.escape(", ".join(map(str, value))),
                             explain(key)))
        else:
            rows.append(_row(_label(key), fmt(value), explain(key)))
    header = "<tr><th class='l'>measure</th><th>value</th><th class='l'>what it means</th></tr>"
    parts = ["<h2>Information loss and disclosure risk</h2>"]
    if head:
        parts.append("<h3>Headline</h3><table>" + header + "".join(head) + "</table>")
    parts.append("<h3>Secondary measures</h3><table>" + header + "".join(rows) + "</table>")
    return parts + tables


def _digits_words(digits: int) -> str:
    if digits == 0:
        return "whole numbers"
    if digits < 0:
        return f"multiples of {10 ** -digits:,}"
    return f"{digits} decimal{'s' if digits > 1 else ''}"


def rounding_sentence(check: Any) -> str | None:
    """What rounding and date precision did to the classes and to k, from
    ``checks["rounding"]`` (``None`` when nothing was rounded).

    Examples
    --------
    >>> print(rounding_sentence({"columns": {"age": 0}, "dates": {"born": "month"},
    ...     "classes_before": 30, "classes_after": 28, "k_before": 5, "k_after": 5}))
    ... # doctest: +NORMALIZE_WHITESPACE
    <b>Rounded after masking:</b> age to whole numbers; born published by month. Equal
    rounded values merged 30 classes of identical records into 28; k counted again on the
    rounded file: 5 (5 before rounding).
    """
    if not isinstance(check, Mapping):
        return None
    what = [f"{html.escape(str(c))} to {_digits_words(int(d))}"
            for c, d in dict(check.get("columns") or {}).items()]
    what += [f"{html.escape(str(c))} published by {html.escape(str(p))}"
             for c, p in dict(check.get("dates") or {}).items()]
    before, after = check.get("classes_before"), check.get("classes_after")
    merged = (f"Equal rounded values merged {before:,} classes of identical records into "
              f"{after:,}" if before != after else
              f"No two of the {after:,} classes became equal")
    return (f"<b>Rounded after masking:</b> {'; '.join(what)}. {merged}; k counted again on "
            f"the rounded file: {check.get('k_after')} ({check.get('k_before')} before "
            "rounding).")
