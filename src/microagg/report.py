"""The release report: one self-contained HTML file a data steward can open and understand
without reading code (issue 10, item 1).

Built from a :class:`~microagg.release.Release` and the original table: the parameters and
seed; the privacy models reached (k, l, t, epsilon) and what each means; the group sizes;
information loss and disclosure risk; per quasi-identifier the original and masked means,
variances and histograms; the correlation matrices side by side; the warnings, privacy ones
first and highlighted. Inline CSS, plots as embedded PNG: no network, no script.
"""

from __future__ import annotations

import base64
import html
import io
import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .io import write_text_atomic
from .release import Release

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


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return ("<img alt='plot' src='data:image/png;base64,"
            + base64.b64encode(buffer.getvalue()).decode("ascii") + "'>")


def _plots() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the report still renders, with the tables only
        return None
    return plt


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return "n/a" if not np.isfinite(value) else f"{float(value):.{digits}g}"
    return html.escape(str(value))


def _check_cards(checks: Mapping[str, Any]) -> str:
    cards = []
    for name, check in checks.items():
        if not isinstance(check, Mapping):
            continue
        required, achieved = check.get("required"), check.get("achieved", check.get("epsilon"))
        if name == "differential_privacy":
            state = "ok" if check.get("holds") else "bad"
            value = f"&epsilon; = {_fmt(check.get('epsilon'))}"
            note = "holds" if check.get("holds") else "does NOT hold (bounds from the data)"
        else:
            if required is None:
                state, note = "info", "reported, not required"
            else:
                met = achieved is not None and (achieved <= required if name == "t_closeness"
                                                else achieved >= required)
                state, note = ("ok" if met else "bad"), f"required {_fmt(required)}"
            value = _fmt(achieved)
        title = html.escape(_MODELS.get(name, name))
        cards.append(f"<div class='card {state}' title='{title}'><div class='n'>"
                     f"{html.escape(name.replace('_', ' '))}</div><div class='v'>{value}</div>"
                     f"<div class='n'>{html.escape(note)}</div></div>")
    return "<div class='cards'>" + "".join(cards) + "</div>"


_LABELS = {
    "information_loss": "information loss, SSE/SST on z-scores (%)",
    "information_loss_original_units": "information loss, SSE/SST in original units (%)",
    "dld_risk": "linkage risk (DLD): fraction of records linked to the right person",
    "dld_risk_known": "linkage risk on the intruder's columns only",
    "il1s": "IL1s (mean absolute change / (sqrt 2 x s.d.))",
    "mean_change_pct": "mean relative change of the means (%)",
    "variance_change_pct": "mean relative change of the variances (%)",
    "covariance_change_pct": "mean relative change of the covariances (%)",
    "correlation_change": "mean absolute change of the correlations",
    "n_groups": "groups", "group_size_min": "smallest group", "group_size_max": "largest group",
    "group_size_mean": "mean group size",
}


def _metric_rows(metrics: Mapping[str, Any]) -> str:
    rows = []
    for key, value in metrics.items():
        name = _LABELS.get(key, key.replace("_", " "))
        if isinstance(value, Mapping):
            value = "; ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
            rows.append(f"<tr><td class='l'>{html.escape(name)}</td><td class='l'>{value}"
                        "</td></tr>")
        else:
            rows.append(f"<tr><td class='l'>{html.escape(name)}</td><td>{_fmt(value)}</td>"
                        "</tr>")
    return "<table><tr><th class='l'>measure</th><th>value</th></tr>" + "".join(rows) + \
        "</table>"


def _plain_words(release: Release, qi: Sequence[str]) -> list[str]:
    """The release in a few sentences: what is protected, the risk left, what was lost and
    what is published unchanged; for a reader who will not read the tables."""
    checks, metrics = release.checks, release.metrics
    items = []
    k_check = checks.get("k_anonymity", {})
    achieved = k_check.get("achieved")
    if k_check.get("required") is not None:
        items.append(f"<b>Protected:</b> every combination of the {len(qi)} quasi-identifiers "
                     f"({html.escape(', '.join(qi[:6]))}{', ...' if len(qi) > 6 else ''}) "
                     f"that is published is shared by at least {_fmt(achieved)} records "
                     "(k-anonymity, counted again on the published file).")
    else:
        items.append(f"<b>Not k-anonymous:</b> the smallest class of identical published "
                     f"quasi-identifiers has {_fmt(achieved)} record(s); see the warnings for "
                     "what this release promises instead.")
    for name, label in (("l_diversity", "distinct values of each sensitive column in every "
                                        "class (l-diversity)"),
                        ("t_closeness", "distance of every class's sensitive distribution "
                                        "to the whole file's (t-closeness)")):
        c = checks.get(name)
        if isinstance(c, Mapping) and c.get("required") is not None:
            items.append(f"<b>Also:</b> {label}: required {_fmt(c['required'])}, achieved "
                         f"{_fmt(c.get('achieved'))}.")
    if metrics.get("dld_risk") is not None:
        items.append(f"<b>Risk left:</b> an intruder who holds the original values of these "
                     f"columns and links each published record to the closest one finds the "
                     f"right person for {100 * float(metrics['dld_risk']):.1f}% of the "
                     "records (distance-based record linkage, DLD).")
    if metrics.get("information_loss") is not None:
        lost = (f"<b>Lost:</b> {float(metrics['information_loss']):.1f}% of the variation of "
                "the quasi-identifiers (SSE/SST)")
        if metrics.get("variance_change_pct") is not None:
            moved = float(metrics.get("mean_change_pct", 0.0))
            lost += ("; means are kept (they move by less than 0.01%)" if moved < 0.01 else
                     f"; means move by {moved:.2f}%") + (
                f" and variances by {float(metrics['variance_change_pct']):.1f}% on average")
        items.append(lost + ".")
    elif metrics.get("ncp") is not None:
        items.append(f"<b>Lost:</b> {100 * float(metrics['ncp']):.1f}% of the precision of the "
                     "quasi-identifiers (normalized certainty penalty of the generalization).")
    unchanged = [str(c) for c in release.data.columns if str(c) not in set(qi)]
    if unchanged:
        items.append(f"<b>Published unchanged:</b> {html.escape(', '.join(unchanged))}: "
                     "their values are exactly the original ones.")
    return ["<h2>In plain words</h2>",
            "<ul class='plain'>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"]


def _seed(release: Release) -> str:
    return "unknown" if release.seed < 0 else str(release.seed)


def _categorical_section(original: pd.DataFrame, published: pd.DataFrame,
                         columns: Sequence[str], plt: Any) -> list[str]:
    """Non-numeric quasi-identifiers (nominal, ordinal, generalized): how many values
    changed, how many distinct values remain, and the most frequent published values."""
    rows, cells = [], []
    for col in columns:
        before = original[col].astype(str).to_numpy()
        after = published[col].astype(str).to_numpy()
        changed = float(np.mean(before != after))
        rows.append(f"<tr><td class='l'>{html.escape(col)}</td>"
                    f"<td>{_fmt(int(pd.Series(before).nunique()))}</td>"
                    f"<td>{_fmt(int(pd.Series(after).nunique()))}</td>"
                    f"<td>{100 * changed:.2f}</td></tr>")
        if plt is not None:
            top = pd.Series(after).value_counts().head(10)[::-1]
            fig, ax = plt.subplots(figsize=(4.2, 0.35 * len(top) + 1.0))
            ax.barh([label if len(label) <= 32 else label[:29] + "..." for label in top.index],
                    top.to_numpy(), color="#3a6fd8")
            ax.set_title(f"{col}: most frequent published values", fontsize=10)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_xlabel("records")
            cells.append(_png(fig))
    parts = ["<h2>Categorical quasi-identifiers before and after</h2>",
             "<table><tr><th class='l'>column</th><th>distinct, original</th><th>distinct, "
             "published</th><th>records whose value changed (%)</th></tr>" + "".join(rows)
             + "</table>"]
    if cells:
        parts.append("<div class='grid'>" + "".join(cells) + "</div>")
    return parts


def _sweep_section(sweep: pd.DataFrame, plt: Any) -> list[str]:
    """The risk-utility map of a sweep (``microagg sweep``) and its Pareto runs."""
    from .sweep import risk_column, sweep_figure

    parts = ["<h2>Choosing k: the risk-utility map</h2>",
             "<p>Each point is one run of the sweep; the dashed line joins the runs no other "
             "run beats on both information loss and linkage risk (the Pareto front).</p>"]
    if plt is not None:
        parts.append(_png(sweep_figure(sweep)))
    errors = sweep["error"].astype(object).where(sweep["error"].notna(), "").astype(str)
    front = sweep[(errors == "") & sweep["pareto"].astype(str).str.lower().isin(["true", "1"])]
    risk = risk_column(sweep)
    parts.append("<table><tr><th class='l'>method</th><th>k</th><th class='l'>aggregation</th>"
                 f"<th>loss (%)</th><th>{'DLD' if risk == 'dld_risk' else 'class risk'} (%)"
                 "</th></tr>" + "".join(
                     f"<tr><td class='l'>{html.escape(str(r['method']))}</td><td>{r['k']}</td>"
                     f"<td class='l'>{html.escape(str(r['aggregation']))}</td>"
                     f"<td>{_fmt(float(r['information_loss']))}</td>"
                     f"<td>{_fmt(float(r[risk]))}</td></tr>"
                     for _, r in front.sort_values("information_loss").iterrows())
                 + "</table>")
    return parts


def render_report(release: Release, original: pd.DataFrame, *, title: str = "microagg "
                  "release report", sweep: pd.DataFrame | None = None) -> str:
    """The report as an HTML string (see the module docstring).

    ``original`` is the table the release was made from (same rows, same order), used for
    the before/after comparisons; nothing of it is embedded except summary statistics and
    histograms of the quasi-identifiers. ``sweep`` (the table of :func:`microagg.sweep.sweep`
    or ``microagg sweep``) adds the risk-utility map with its Pareto front.
    """
    if release.labels is None or not isinstance(release.data, pd.DataFrame):
        raise ValueError(f"The report needs the published table in memory; this release "
                         f"(engine {release.engine!r}) wrote it to {release.output}: use "
                         "`microagg report ORIGINAL PUBLISHED` on the two files.")
    plt = _plots()
    params = release.params
    qi = [str(c) for c in params.get("quasi_identifiers", ())]
    published = release.data
    numeric = [c for c in qi if c in original.columns
               and pd.api.types.is_numeric_dtype(original[c])
               and pd.api.types.is_numeric_dtype(published[c])]
    parts = [f"<h1>{html.escape(title)}</h1>", _subtitle(release, qi)]
    parts += _warnings_section(release.warnings)
    parts += _plain_words(release, qi)
    parts.append("<h2>What the release guarantees (re-checked on the published data)</h2>")
    parts.append(_check_cards(release.checks))
    parts.append("<ul>" + "".join(f"<li>{html.escape(str(c.get('model', _MODELS.get(n, ''))))}"
                                  "</li>"
                                  for n, c in release.checks.items()
                                  if isinstance(c, Mapping)) + "</ul>")
    parts.append("<h2>Information loss and disclosure risk</h2>")
    parts.append(_metric_rows(release.metrics))
    parts += _group_sizes_section(np.bincount(release.labels), plt)
    if numeric:
        parts += _numeric_section(original, published, numeric, plt)
    categorical = [c for c in qi if c not in numeric and c in original.columns]
    if categorical:
        parts += _categorical_section(original, published, categorical, plt)
    if sweep is not None:
        parts += _sweep_section(sweep, plt)
    parts.append("<h2>Parameters (to reproduce this release)</h2>")
    parts.append("<table>" + "".join(
        f"<tr><td class='l'>{html.escape(str(k))}</td><td class='l'>"
        f"{html.escape(str(dict(v) if isinstance(v, Mapping) else v))}</td></tr>"
        for k, v in params.items()) + f"<tr><td class='l'>seed</td><td class='l'>"
        f"{_seed(release)}</td></tr></table>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def _subtitle(release: Release, qi: list[str]) -> str:
    params = release.params
    return (f"<p class='sub'>{len(release.data):,} records, {len(qi)} quasi-identifiers, "
            f"method <code>{html.escape(str(params.get('method')))}</code>, k = "
            f"{_fmt(params.get('k'))}, seed {_seed(release)}"
            + (f", microagg {html.escape(str(params['microagg_version']))}"
               if params.get("microagg_version") else "") + "</p>")


def _warnings_section(warnings: Sequence[str]) -> list[str]:
    """The release's warnings, those about privacy first and highlighted."""
    privacy = [w for w in warnings if any(word in w for word in (
        "NOT", "not k-anonymous", "not differential", "unchanged"))]
    other = [w for w in warnings if w not in privacy]
    if not warnings:
        return []
    return (["<h2>Warnings</h2>"]
            + [f"<div class='warn privacy'>{html.escape(w)}</div>" for w in privacy]
            + [f"<div class='warn'>{html.escape(w)}</div>" for w in other])


def _group_sizes_section(sizes: NDArray[np.intp], plt: Any) -> list[str]:
    parts = ["<h2>Group sizes</h2>",
             f"<p>{sizes.size:,} groups; smallest {sizes.min():,}, largest "
             f"{sizes.max():,}, mean {sizes.mean():.2f}.</p>"]
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 2.6))
        ax.hist(sizes, bins=np.arange(sizes.min(), sizes.max() + 2) - 0.5, color="#3a6fd8")
        ax.set_xlabel("records per group")
        ax.set_ylabel("groups")
        parts.append(_png(fig))
    return parts


def _numeric_section(original: pd.DataFrame, published: pd.DataFrame, numeric: list[str],
                     plt: Any) -> list[str]:
    """Means and variances before and after; histograms and correlations when plotting."""
    rows = []
    for col in numeric:
        a = original[col].astype(float)
        b = published[col].astype(float)
        rows.append(f"<tr><td class='l'>{html.escape(col)}</td><td>{_fmt(a.mean())}</td>"
                    f"<td>{_fmt(b.mean())}</td><td>{_fmt(a.var())}</td>"
                    f"<td>{_fmt(b.var())}</td><td>{_fmt(b.nunique())}</td></tr>")
    parts = ["<h2>Quasi-identifiers before and after</h2>",
             "<table><tr><th class='l'>column</th><th>mean, original</th><th>mean, "
             "published</th><th>variance, original</th><th>variance, published</th>"
             "<th>distinct published values</th></tr>" + "".join(rows) + "</table>"]
    if plt is None:
        return parts
    cells = []
    for col in numeric:
        fig, ax = plt.subplots(figsize=(4.2, 2.6))
        a = original[col].astype(float)
        bins = np.histogram_bin_edges(a, bins=30)
        ax.hist(a, bins=bins, alpha=0.55, label="original", color="#5b6475")
        ax.hist(published[col].astype(float), bins=bins, alpha=0.55,
                label="published", color="#3a6fd8")
        ax.set_title(col, fontsize=10)
        ax.legend(fontsize=7)
        cells.append(_png(fig))
    parts.append("<div class='grid'>" + "".join(cells) + "</div>")
    if len(numeric) > 1:
        fig, axes = plt.subplots(1, 2, figsize=(9, 4))
        for ax, frame, name in ((axes[0], original, "original"),
                                (axes[1], published, "published")):
            corr = frame[numeric].astype(float).corr().to_numpy()
            image = ax.imshow(corr, vmin=-1, vmax=1, cmap="coolwarm")
            ax.set_title(f"correlations, {name}", fontsize=10)
            ax.set_xticks(range(len(numeric)), numeric, rotation=90, fontsize=7)
            ax.set_yticks(range(len(numeric)), numeric, fontsize=7)
        fig.colorbar(image, ax=axes, shrink=0.8)
        parts.append("<h2>Correlations</h2>" + _png(fig))
    return parts


def write_report(release: Release, original: pd.DataFrame, path: str | os.PathLike[str],
                 **kwargs: Any) -> pathlib.Path:
    """Write :func:`render_report` to ``path`` atomically."""
    target = pathlib.Path(path).expanduser()
    write_text_atomic(render_report(release, original, **kwargs), target)
    return target
