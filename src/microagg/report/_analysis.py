"""The report's section "Can an analyst still get the answers?": the analyses repeated on
the release (``Release.metrics["analysis_utility"]``,
:func:`microagg.metrics.analysis_utility.utility_by_analysis`): weighted estimates against
the original's confidence intervals, regression coefficients with Karr et al.'s (2006)
interval overlap, the pMSE (Woo et al. 2009) and a classifier's accuracy. One sentence per
figure, the figure that matters first; the same sentences feed the printed summary.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

__all__ = ["TITLE", "analysis_section", "analysis_sentences"]

TITLE = "Can an analyst still get the answers?"

_SHOWN = 40
"""The most estimates the report's table lists (those outside the interval first)."""


def _g(value: Any) -> str:
    try:
        return f"{float(value):,.4g}"
    except (TypeError, ValueError):
        return "n/a"


def _name(e: Mapping[str, Any]) -> str:
    where = "" if e.get("domain") is None else f" where {e['domain']} = {e['level']}"
    return f"the {e['statistic']} of {e['column']}{where}"


def _estimates_sentence(a: Mapping[str, Any]) -> str | None:
    s = a.get("estimates_summary") or {}
    if not s:
        return None
    text = (f"{s['inside_ci']} of {s['n_estimates']} weighted estimates computed from the "
            "release fall inside the original's 95 % confidence interval")
    worst = s.get("worst")
    if worst:
        text += (f"; the one that moved most is {_name(worst)}: {_g(worst['released'])} "
                 f"against {_g(worst['original'])} "
                 f"({100 * float(worst['relative_difference']):+.3g} %, "
                 f"{'inside' if worst['inside_ci'] else 'OUTSIDE'} the interval)")
    return text + "."


def _model_sentences(a: Mapping[str, Any]) -> list[str]:
    out = []
    for formula, fit in dict(a.get("models") or {}).items():
        low = min(fit["coefficients"], key=lambda c: float(c["overlap"]), default=None)
        text = (f"Model {formula}: mean confidence-interval overlap "
                f"{_g(fit['mean_overlap'])} (1: the same intervals; 0 or below: disjoint)")
        if low is not None:
            text += (f"; lowest for {low['term']}, {_g(low['original'])} -> "
                     f"{_g(low['released'])} (overlap {_g(low['overlap'])})")
        out.append(text + ".")
    return out


def _pmse_sentence(a: Mapping[str, Any]) -> str | None:
    p = a.get("pmse")
    if not p:
        return None
    return (f"A logistic model tells released rows from original ones with pMSE "
            f"{_g(p['pmse'])}, {_g(p['ratio'])} times what two samples of one distribution "
            f"give (0: indistinguishable, 0.25: told apart perfectly; on {p['n_rows']:,} rows "
            "of each).")


def _classification_sentence(a: Mapping[str, Any]) -> str | None:
    c = a.get("classification")
    if not c:
        return None
    return (f"A {str(c['classifier']).replace('_', ' ')} trained on the release predicts "
            f"{c['target']} on {c['n_test']:,} held-back original records with accuracy "
            f"{100 * float(c['released']):.3g} %, against {100 * float(c['original']):.3g} % "
            f"trained on the original ({100 * float(c['majority']):.3g} % by guessing the "
            "commonest class).")


def analysis_sentences(metrics: Mapping[str, Any]) -> list[str]:
    """One plain sentence per figure (estimates, models, pMSE, classification); empty
    without ``metrics["analysis_utility"]``."""
    a = metrics.get("analysis_utility")
    if not isinstance(a, Mapping):
        return []
    found = [_estimates_sentence(a), *_model_sentences(a), _pmse_sentence(a),
             _classification_sentence(a)]
    return [s for s in found if s]


def _estimates_table(a: Mapping[str, Any]) -> str:
    rows = sorted(a.get("estimates") or (), key=lambda e: (
        bool(e["inside_ci"]), -abs(float(e["relative_difference"] or 0.0))))[:_SHOWN]
    if not rows:
        return ""
    body = "".join(
        f"<tr><td class='l'>{html.escape(_name(e))}</td><td>{_g(e['original'])}</td>"
        f"<td>[{_g(e['ci'][0])}, {_g(e['ci'][1])}]</td><td>{_g(e['released'])}</td>"
        f"<td>{'n/a' if e['relative_difference'] is None else _g(100 * float(e['relative_difference'])) + ' %'}"
        f"</td><td>{'yes' if e['inside_ci'] else '<b>no</b>'}</td></tr>" for e in rows)
    return ("<table><tr><th class='l'>estimate</th><th>original</th><th>95 % interval</th>"
            "<th>release</th><th>difference</th><th>inside</th></tr>" + body + "</table>")


def _models_table(a: Mapping[str, Any]) -> str:
    parts = []
    for formula, fit in dict(a.get("models") or {}).items():
        body = "".join(
            f"<tr><td class='l'>{html.escape(str(c['term']))}</td><td>{_g(c['original'])} "
            f"[{_g(c['original_ci'][0])}, {_g(c['original_ci'][1])}]</td>"
            f"<td>{_g(c['released'])} [{_g(c['released_ci'][0])}, "
            f"{_g(c['released_ci'][1])}]</td><td>{_g(c['overlap'])}</td></tr>"
            for c in fit["coefficients"])
        parts.append(f"<h3>{html.escape(str(formula))}</h3><table><tr><th class='l'>term"
                     "</th><th>original [95 %]</th><th>release [95 %]</th><th>overlap</th>"
                     "</tr>" + body + "</table>")
    return "".join(parts)


def analysis_section(metrics: Mapping[str, Any]) -> list[str]:
    """The section: the sentences, how the intervals were computed, then the estimates
    (those outside the interval first) and each model's coefficients; empty without
    ``metrics["analysis_utility"]``."""
    sentences = analysis_sentences(metrics)
    if not sentences:
        return []
    a = metrics["analysis_utility"]
    weights = a.get("weights")
    how = (f"Estimates weighted by {html.escape(str(weights))}" if weights
           else "Estimates with equal weights") + ". " + html.escape(str(a.get("variance", "")))
    return [f"<h2>{TITLE}</h2>",
            "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in sentences) + "</ul>",
            f"<p>{how} An estimate outside the original's interval is one an analyst would "
            "get wrong from the release by more than the sampling error.</p>",
            _estimates_table(a), _models_table(a)]
