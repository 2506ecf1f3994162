"""The report's "Attacks" section: what an intruder who tries learns
(``Release.metrics["attacks"]``, :func:`microagg.metrics.attacks.attack_release`: singling
out, linkability and inference against records held out before the release; anonymeter's
method, Giomi et al. 2023, PoPETs 2023(2))."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

__all__ = ["attacks_line", "attacks_section"]

_LEAVE_ONE_OUT = "leave-one-out"  # microagg.metrics.attacks.LEAVE_ONE_OUT (no import: light)

_WHAT = {
    "singling_out": "statements that hold for exactly one published record (one column)",
    "singling_out_multivariate": "statements on several columns that hold for exactly one "
                                 "published record",
    "linkability": "two sources on the same people (each with part of the known columns) "
                   "linked through the nearest published record",
}


def _pct(value: float) -> str:
    return f"{100 * float(value):.3g} %"


def _interval(ci: Any) -> str:
    return f"[{float(ci[0]):.2f}, {float(ci[1]):.2f}]"


def _compared(result: Mapping[str, Any]) -> str:
    """Whom the control attack was tried on, in words."""
    if result.get("compared_with") == _LEAVE_ONE_OUT:
        return "the same people with their own record left out"
    return "the held-out people"


def _sentence(name: str, result: Mapping[str, Any]) -> str:
    """The risk first, then success against control and random guessing, in plain words."""
    head = (f"<b>{html.escape(name)}</b>: risk {float(result['risk']):.2f} "
            f"{_interval(result['risk_ci'])}: ")
    if not result.get("beats_baseline", True):
        return (head + f"the attack did no better than random guessing ({_pct(result['success'])}"
                f" against {_pct(result['baseline'])}): it says nothing either way.")
    return (head + f"the attack succeeded on {_pct(result['success'])} of the people in the "
            f"release, {_pct(result['control'])} of {_compared(result)} and "
            f"{_pct(result['baseline'])} by random guessing.")


def _attacks(attacks: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(name, what the attack does, result) for each attack run."""
    out = [(key.replace("_", " "), what, attacks[key]) for key, what in _WHAT.items()
           if isinstance(attacks.get(key), Mapping)]
    for column, result in dict(attacks.get("inference") or {}).items():
        out.append((f"inference of {column}", f"guess {column} as the value of the nearest "
                    "published record on the known columns", result))
    return out


def attacks_section(metrics: Mapping[str, Any]) -> list[str]:
    """The "Attacks" section: a sentence per attack (its risk first), then the table of
    success, control, baseline and risk with their intervals; empty without attacks."""
    attacks = metrics.get("attacks")
    if not isinstance(attacks, Mapping):
        return []
    found = _attacks(attacks)
    worst = max(found, key=lambda t: float(t[2]["risk"]), default=None)
    known = ", ".join(str(c) for c in attacks.get("known", ()))
    if attacks.get("compared_with") == _LEAVE_ONE_OUT:
        against = (f"repeated on each attacked person with her own released record left out "
                   f"of the release (the control; {html.escape(str(attacks.get('sentence', '')))})")
    else:
        against = (f"repeated on {int(attacks.get('n_control', 0)):,} original records held "
                   "out before the release (the control)")
    lead = ("" if worst is None else
            f"<p>The highest risk: <b>{html.escape(worst[0])}</b>, "
            f"{float(worst[2]['risk']):.2f} {_interval(worst[2]['risk_ci'])}: the share of the "
            "people in the file the attack learns something about because they are in it "
            "(0: no more than about anyone else; 1: everyone).</p>")
    rows = "".join(
        f"<tr><td class='l'>{html.escape(name)}</td><td>{float(r['risk']):.2f} "
        f"{_interval(r['risk_ci'])}</td><td>{_pct(r['success'])}</td>"
        f"<td>{_pct(r['control'])}</td><td>{_pct(r['baseline'])}</td>"
        f"<td class='l'>{html.escape(what)}</td></tr>" for name, what, r in found)
    return ["<h2>Attacks</h2>", lead,
            f"<p>The release was attacked as an intruder who knows {html.escape(known)} "
            f"would, on {int(attacks.get('n_attacked', 0)) or 'all'} attacked records, and each "
            f"attack {against}: risk = (success - "
            "control) / (1 - control), with its 95 % interval (Giomi et al. 2023, "
            "anonymeter's attacks). A risk near 0 says these attacks did not work; it is not "
            f"a guarantee against a cleverer intruder. Seed {attacks.get('random_state')}.</p>",
            "<ul>" + "".join(f"<li>{_sentence(name, r)}</li>" for name, _, r in found)
            + "</ul>",
            "<table><tr><th class='l'>attack</th><th>risk [95 %]</th><th>success</th>"
            "<th>control</th><th>random guess</th><th class='l'>what it tries</th></tr>"
            + rows + "</table>"]


def attacks_line(metrics: Mapping[str, Any]) -> str | None:
    """The highest attack risk in one line (the terminal's summary), ``None`` without
    attacks: ``"0.02 [0.00, 0.05] (linkability), against own record left out"``."""
    attacks = metrics.get("attacks")
    if not isinstance(attacks, Mapping):
        return None
    found = _attacks(attacks)
    if not found:
        return None
    name, _, worst = max(found, key=lambda t: float(t[2]["risk"]))
    against = ("own record left out" if attacks.get("compared_with") == _LEAVE_ONE_OUT
               else "held-out records")
    return (f"{float(worst['risk']):.2f} {_interval(worst['risk_ci'])} ({name}), "
            f"against {against}")
