"""The release report: one self-contained HTML file a data steward can open and understand
without reading code.

Built from a :class:`~microagg.release.Release` and the original table: the parameters and
seed; the privacy models reached (k, l, t, epsilon) and what each means; a plan's steps
(what each changed, its figures before and after, :mod:`._steps`); the group sizes;
information loss and disclosure risk; per quasi-identifier the original and masked means,
variances and histograms; the correlation matrices side by side; the warnings, privacy ones
first and highlighted. Inline CSS, plots as embedded PNG: no network, no script.
One headline loss and one headline risk per kind of release
(:mod:`microagg.metrics.headline`); every other measure is labelled as secondary and
explained in one line. The words live in :mod:`._text`, the plots in
:mod:`._plots`.
"""

from __future__ import annotations

import html
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._pipeline.verify import published_classes
from ..io.tables import write_text_atomic
from ..metrics.headline import class_risk, column_losses
from ..release import Release
from ._analysis import analysis_section
from ._attacks import attacks_section
from ._plots import (
    categorical_section,
    fmt,
    group_sizes_section,
    missing_counts,
    numeric_section,
    plots,
    sweep_section,
)
from ._risk import survey_risk_section
from ._steps import steps_section
from ._text import (
    ColumnFacts,
    all_warnings,
    metric_tables,
    plain_words,
    status_line,
    warnings_section,
)

__all__ = ["render_report", "write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1100px;color:#1d2433;line-height:1.45;padding:0 1em}
h1{font-size:1.7em;margin-bottom:.2em} h2{border-bottom:2px solid #dfe3ea;padding-bottom:.2em;
margin-top:1.8em} .sub{color:#5b6475}
table{border-collapse:collapse;margin:.6em 0} td,th{border:1px solid #dfe3ea;padding:.3em .7em;
text-align:right} th{background:#f3f5f9} td.l,th.l{text-align:left}
.cards{display:flex;flex-wrap:wrap;gap:.8em} .card{border:1px solid #dfe3ea;border-radius:8px;
padding:.7em 1em;min-width:170px;background:#fafbfd} .card .v{font-size:1.6em;font-weight:600}
.card .n{color:#5b6475;font-size:.85em} .ok{border-left:6px solid #2e9d5b}
.bad{border-left:6px solid #c9372c} .info{border-left:6px solid #3a6fd8}
.warn{background:#fff4e5;border:1px solid #f0b25a;border-radius:6px;padding:.5em .8em;
margin:.4em 0} .privacy{background:#fdecea;border-color:#e06c62;font-weight:600}
.plain li{margin:.3em 0} .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:.8em}
img{max-width:100%} code{background:#f3f5f9;padding:0 .3em;border-radius:3px}
.status{font-size:1.1em;padding:.5em .8em;border-radius:6px;background:#fafbfd}
"""

_MODELS = {
    "k_anonymity": "k-anonymity: every published combination of quasi-identifiers is shared "
                   "by at least k records",
    "group_k": "group size: the smallest group whose records share one representative",
    "l_diversity": "l-diversity: every class shows at least l 'well-represented' sensitive "
                   "values",
    "t_closeness": "t-closeness: every class's sensitive distribution is within t (Earth "
                   "Mover's Distance) of the whole table's",
    "differential_privacy": "epsilon-differential privacy of the published values",
}


def _check_cards(checks: Mapping[str, Any]) -> str:
    """One card per privacy model checked (entries with an achieved level or epsilon)."""
    cards = []
    for name, check in checks.items():
        if not isinstance(check, Mapping) or not ({"achieved", "epsilon"} & set(check)):
            continue
        required, achieved = check.get("required"), check.get("achieved", check.get("epsilon"))
        if "epsilon" in check and "holds" in check:
            state = "ok" if check.get("holds") else "bad"
            value = f"&epsilon; = {fmt(check.get('epsilon'))}"
            note = "holds" if check.get("holds") else "does NOT hold (bounds from the data)"
        else:
            if required is None:
                state, note = "info", "reported, not required"
            else:
                met = achieved is not None and (achieved <= required
                                                if name.startswith("t_closeness")
                                                else achieved >= required)
                state, note = ("ok" if met else "bad"), f"required {fmt(required)}"
            value = fmt(achieved)
        title = html.escape(_MODELS.get(name, name))
        cards.append(f"<div class='card {state}' title='{title}'><div class='n'>"
                     f"{html.escape(name.replace('_', ' '))}</div><div class='v'>{value}</div>"
                     f"<div class='n'>{html.escape(note)}</div></div>")
    return "<div class='cards'>" + "".join(cards) + "</div>"


def _seed(release: Release) -> str:
    return "unknown" if release.seed < 0 else str(release.seed)


def _dates_as_days(original: pd.DataFrame, published: pd.DataFrame,
                   dates: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The date quasi-identifiers (``params["dates"]``) of both tables as days since
    1970-01-01, so that they are compared as the numbers they were masked as (published
    intervals of dates, which are not one day, count as missing here)."""
    if not dates:
        return original, published
    original, published = original.copy(), published.copy()
    for col, spec in dates.items():
        fmt = str(dict(spec).get("format", "ISO 8601"))
        for frame in (original, published):
            if col in frame.columns and not pd.api.types.is_numeric_dtype(frame[col]):
                when = pd.to_datetime(frame[col], errors="coerce",
                                      format="ISO8601" if fmt == "ISO 8601" else fmt)
                if getattr(when.dtype, "tz", None) is not None:
                    when = when.dt.tz_localize(None)
                frame[col] = (when - pd.Timestamp(0)) / pd.Timedelta(1, "D")
    return original, published


def _numeric_columns(original: pd.DataFrame, published: pd.DataFrame,
                     qi: Sequence[str]) -> list[str]:
    def numeric(series: pd.Series) -> bool:
        return (pd.api.types.is_numeric_dtype(series)
                and not pd.api.types.is_bool_dtype(series))

    return [c for c in qi if c in original.columns and c in published.columns
            and numeric(original[c]) and numeric(published[c])]


def _same(a: pd.Series, b: pd.Series) -> bool:
    """Whether a column was published exactly (missing values equal to missing values)."""
    if len(a) != len(b):
        return False
    if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
        return bool(np.array_equal(a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64),
                                   equal_nan=True))
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())


def _column_facts(original: pd.DataFrame, published: pd.DataFrame, qi: Sequence[str],
                  numeric: list[str]) -> ColumnFacts:
    """The worst numeric and categorical column, missing counts, unchanged columns."""
    worst_numeric = None
    if numeric:
        losses = column_losses(original[numeric].to_numpy(dtype=np.float64),
                               published[numeric].to_numpy(dtype=np.float64))
        if np.isfinite(losses).any():
            j = int(np.nanargmax(losses))
            worst_numeric = (numeric[j], float(losses[j]))
    changed_share = {c: float(np.mean(original[c].astype(str).to_numpy()
                                      != published[c].astype(str).to_numpy()))
                     for c in qi if c not in numeric and c in original.columns}
    worst_categorical = (max(changed_share.items(), key=lambda item: item[1])
                         if changed_share else None)
    others = [str(c) for c in published.columns if str(c) not in set(qi)]
    in_both = [c for c in others if c in original.columns]
    return ColumnFacts(
        worst_numeric=worst_numeric, worst_categorical=worst_categorical,
        missing=missing_counts(original, published,
                               [c for c in qi if c in original.columns]),
        unchanged=tuple(c for c in in_both if _same(original[c], published[c])),
        changed=tuple(c for c in in_both if not _same(original[c], published[c])))


def _shown_metrics(release: Release, published: pd.DataFrame,
                   qi: Sequence[str]) -> dict[str, Any]:
    """The release's metrics, plus the class re-identification risk when it has no
    linkage risk (generalized and mixed releases: the headline risk there)."""
    metrics = dict(release.metrics)
    if "dld_risk" not in metrics and "class_risk" not in metrics and qi \
            and all(c in published.columns for c in qi) and len(published):
        metrics["class_risk"] = (float(metrics.pop("risk_per_record_mean"))
                                 if "risk_per_record_mean" in metrics
                                 else class_risk(published_classes(published, list(qi))))
    return metrics


def render_report(release: Release, original: pd.DataFrame, *, title: str = "microagg "
                  "release report", sweep: pd.DataFrame | None = None) -> str:
    """The report as an HTML string (see the module docstring).

    ``original`` is the table the release was made from (same rows, same order), used for
    the before/after comparisons; nothing of it is embedded except summary statistics and
    histograms of the quasi-identifiers. Missing values (NaN) in it, or in the published
    table, are not counted and are reported per column. ``sweep`` (the table of
    :func:`microagg.sweep.sweep` or ``microagg sweep``) adds the risk-utility map with its
    Pareto front.
    """
    if release.labels is None or not isinstance(release.data, pd.DataFrame):
        raise ValueError(f"The report needs the published table in memory; this release "
                         f"(engine {release.engine!r}) wrote it to {release.output}: use "
                         "`microagg report ORIGINAL PUBLISHED` on the two files.")
    plt = plots()
    params = release.params
    qi = [str(c) for c in params.get("quasi_identifiers", ())]
    original, published = _dates_as_days(original, release.data, params.get("dates") or {})
    numeric = _numeric_columns(original, published, qi)
    facts = _column_facts(original, published, qi, numeric)
    metrics = _shown_metrics(release, published, qi)
    warned = any(all_warnings(release))
    parts = [f"<h1>{html.escape(title)}</h1>", status_line(release),
             _subtitle(release, qi), *warnings_section(release),
             *plain_words(release, qi, facts, metrics=metrics, warned=warned),
             "<h2>What the release guarantees (re-checked on the published data)</h2>",
             _check_cards(release.checks),
             "<ul>" + "".join(f"<li>{html.escape(str(c.get('model', _MODELS.get(n, ''))))}"
                              "</li>" for n, c in release.checks.items()
                              if isinstance(c, Mapping) and ({"achieved", "epsilon"} & set(c)))
             + "</ul>", *steps_section(release), *metric_tables(metrics),
             *survey_risk_section(metrics), *analysis_section(metrics),
             *attacks_section(metrics)]
    parts += group_sizes_section(np.bincount(release.labels), plt)
    if numeric:
        parts += numeric_section(original, published, numeric, plt,
                                 dates=set(params.get("dates") or {}))
    categorical = [c for c in qi if c not in numeric and c in original.columns]
    if categorical:
        parts += categorical_section(original, published, categorical, plt)
    if sweep is not None:
        parts += sweep_section(sweep, plt, release=_sweep_point(release, sweep, qi))
    parts.append("<h2>Parameters (to reproduce this release)</h2>")
    parts.append("<table>" + "".join(
        f"<tr><td class='l'>{html.escape(str(k))}</td><td class='l'>"
        f"{html.escape(_param_text(v))}</td></tr>"
        for k, v in params.items()) + f"<tr><td class='l'>seed</td><td class='l'>"
        f"{_seed(release)}</td></tr></table>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def _param_text(value: Any) -> str:
    """A parameter as plain text: ``a: 1; b: 2`` for a mapping, ``x, y`` for a sequence."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_param_text(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(_param_text, value)) or "none"
    return "none" if value is None else str(value)


def _subtitle(release: Release, qi: list[str]) -> str:
    params = release.params
    return (f"<p class='sub'>{len(release.data):,} records, {len(qi)} quasi-identifiers, "
            f"method <code>{html.escape(str(params.get('method')))}</code>, k = "
            f"{fmt(params.get('k'))}, seed {_seed(release)}"
            + (f", microagg {html.escape(str(params['microagg_version']))}"
               if params.get("microagg_version") else "") + "</p>")


def write_report(release: Release, original: pd.DataFrame, path: str | os.PathLike[str],
                 **kwargs: Any) -> pathlib.Path:
    """Write :func:`render_report` to ``path`` atomically."""
    target = pathlib.Path(path).expanduser()
    write_text_atomic(render_report(release, original, **kwargs), target)
    return target


def _sweep_point(release: Release, sweep: pd.DataFrame, qi: Sequence[str]
                 ) -> tuple[float, float, Sequence[str]] | None:
    """This release's loss and risk in the measures of the sweep's map (the headline loss;
    DLD or the class risk, as the map), to mark it there."""
    from ..metrics.headline import class_risk, headline_loss
    from ..sweep import risk_column

    loss = headline_loss(release.metrics)
    if loss is None:
        return None
    axis = risk_column(sweep)
    if axis == "global_risk":
        survey = release.metrics.get("survey_risk")
        if not survey:
            return None
        risk = float(survey["after"]["global_risk_pct"])
    elif axis == "dld_risk":
        dld = release.metrics.get("dld_risk")
        if dld is None:
            return None
        risk = 100.0 * float(dld)
    else:
        risk = 100.0 * class_risk(published_classes(release.data, list(qi)))
    return loss[1], risk, tuple(qi)
