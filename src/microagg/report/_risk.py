"""The report's disclosure-risk section: the risk before and after masking, as
statistical offices measure it (``Release.metrics["survey_risk"]``, with a weight or a
household; :mod:`microagg.metrics.survey_risk`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

__all__ = ["survey_risk_section"]

_POPULATION = (
    ("k-map (smallest population class)", "k_map",
     "the fewest persons of the population estimated to share a record's key variables "
     "(Sweeney 2001; the weighted class size, as ARX and sdcMicro's Fk)"),
    ("journalist risk, largest", "journalist_max",
     "1 / k-map: the chance that an intruder who knows a person of the population and "
     "matches the most exposed record picks the right one (El Emam 2013)"),
    ("marketer risk", "marketer",
     "the mean of 1 / Fk: the share of all records an intruder matching every record at "
     "once is expected to re-identify (El Emam 2013)"),
    ("prosecutor risk, largest", "prosecutor_max",
     "1 / fk of the riskiest record, for an intruder who knows the person is in the file"),
)

_LOGLINEAR = (
    ("sample uniques", "sample_uniques", "records alone with their key values in the file"),
    ("of them population uniques (log-linear)", "tau1",
     "the expected number of sample uniques that are also unique in the population, under a "
     "Poisson log-linear model of the key table with the keys' main effects (Skinner & "
     "Holmes 1998; sdcMicro's modRisk)"),
    ("expected correct matches (log-linear)", "tau2",
     "the expected number of sample uniques an intruder matching them against the "
     "population identifies correctly, under the same model"),
)

_ROWS = (
    ("global risk (%)", "global_risk_pct",
     "the mean individual risk: the probability that an intruder who knows a record's key "
     "variables and draws one person of the population with them picks the right one "
     "(Benedetti & Franconi 1998; sdcMicro's measure_risk)"),
    ("expected re-identifications", "expected_reidentifications",
     "the sum of the individual risks"),
    ("largest individual risk", "max_risk", "the riskiest record"),
    ("records above the threshold", "n_above_threshold",
     "records whose individual risk is above the threshold (0.05 unless set)"),
    ("household risk (%)", "household_risk_pct",
     "mean over records of 1 - prod(1 - r) over the members of its household: a household "
     "is re-identified when any member is"),
    ("expected household re-identifications", "expected_household_reidentifications", ""),
)


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(f"{value:,}" if isinstance(value, int) else str(value))


def survey_risk_section(metrics: Mapping[str, Any]) -> list[str]:
    """A before / after table of the survey risk, each row explained; empty without it."""
    risk = metrics.get("survey_risk")
    if not isinstance(risk, Mapping):
        return []
    before, after = risk["before"], risk["after"]
    rows = [(label, before.get(key), after.get(key), meaning)
            for label, key, meaning in _ROWS if key in before or key in after]
    ks = sorted(set(before.get("k_anonymity_violations", {}))
                | set(after.get("k_anonymity_violations", {})), key=int)
    rows += [(f"records with fk < {k}", before["k_anonymity_violations"].get(k),
              after["k_anonymity_violations"].get(k),
              f"fewer than {k} records in the file share their key variables")
             for k in ks]
    rows += _suda_rows(before.get("suda"), after.get("suda"))
    rows += _population_rows(before.get("population"), after.get("population"))
    body = "".join(f"<tr><td class='l'>{html.escape(label)}</td><td>{_cell(b)}</td>"
                   f"<td>{_cell(a)}</td><td class='l'>{html.escape(meaning)}</td></tr>"
                   for label, b, a, meaning in rows)
    weighted = ("population frequencies estimated with the sampling weights"
                if before.get("weighted") else "no weights: the file is taken for the "
                "population (individual risk = 1 / fk)")
    return ["<h2>Disclosure risk before and after</h2>",
            f"<p>Key variables: {html.escape(', '.join(before.get('keys', [])))}; {weighted}. "
            "Numeric key variables count as they are: before masking most of their values "
            "are unique, which is what the masking removes."
            f"{_population_sentence(after.get('population'))}</p>",
            "<table><tr><th class='l'>measure</th><th>original</th><th>published</th>"
            "<th class='l'>what it means</th></tr>" + body + "</table>"]


def _top_keys(suda: Mapping[str, Any] | None) -> str | None:
    if not suda or not suda.get("records_with_msu"):
        return "none" if suda else None
    shares = sorted(dict(suda["attribute_contributions"]).items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.3g} %" for k, v in shares[:3])


def _suda_rows(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
               ) -> list[tuple[str, Any, Any, str]]:
    """SUDA2 rows: records with a special unique, DIS-SUDA, the keys that contribute most."""
    if before is None and after is None:
        return []
    b, a = before or {}, after or {}
    return [
        ("records with a minimal sample unique", b.get("records_with_msu"),
         a.get("records_with_msu"),
         "records that a few of their key values single out (SUDA2, Manning, Haglin & "
         "Keane 2008)"),
        ("DIS-SUDA, largest", b.get("dis_score_max"), a.get("dis_score_max"),
         "the highest probability of a correct match from a special unique (Elliot et al.; "
         "DisFraction 0.01)"),
        ("keys in the special uniques", _top_keys(before), _top_keys(after),
         "the key variables that appear most in them: the ones to recode first"),
    ]


def _population_rows(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
                     ) -> list[tuple[str, Any, Any, str]]:
    """The population rows (``survey_risk[side]["population"]``, with a weight): k-map, the
    journalist, marketer and prosecutor risks, the records with ``Fk < k``."""
    if before is None and after is None:
        return []
    b, a = dict((before or {}).get("k_map", {})), dict((after or {}).get("k_map", {}))
    rows = [(label, b.get(key), a.get(key), meaning) for label, key, meaning in _POPULATION]
    ks = sorted(set(b.get("k_map_violations", {})) | set(a.get("k_map_violations", {})),
                key=int)
    rows += [(f"records with Fk < {k}", b.get("k_map_violations", {}).get(k),
              a.get("k_map_violations", {}).get(k),
              f"fewer than {k} persons of the population (estimated) share their keys")
             for k in ks]
    lb, la = dict((before or {}).get("loglinear", {})), dict((after or {}).get("loglinear", {}))
    if lb or la:
        rows += [(label, lb.get(key), la.get(key), meaning)
                 for label, key, meaning in _LOGLINEAR]
    return rows


def _population_sentence(population: Mapping[str, Any] | None) -> str:
    """" In the population: every published record shares its keys with at least 12.5
    persons (k-map) ..." in plain words; empty without a weight."""
    if not population:
        return ""
    risk = population["k_map"]
    return (f" In the population ({population['population_size']:,.0f} persons, from the "
            f"weights): every published record shares its key variables with at least "
            f"{risk['k_map']:.4g} persons (k-map), so an intruder who knows someone of the "
            f"population picks the right record with a chance of at most "
            f"{100 * risk['journalist_max']:.3g} % (journalist risk); one matching every "
            f"record is expected to re-identify {100 * risk['marketer']:.3g} % of them "
            "(marketer risk)." + _loglinear_sentence(population.get("loglinear")))


def _loglinear_sentence(model: Mapping[str, Any] | None) -> str:
    """" A log-linear model of the key table expects 0.2 of the 294 sample uniques ..."."""
    if not model or "tau1" not in model:
        return ""
    return (f" A log-linear model of the key table (main effects of the keys; Skinner & "
            f"Holmes 1998) expects {model['tau1']:,.3g} of the {model['sample_uniques']:,} "
            f"sample uniques to be unique in the population too, and an intruder matching "
            f"them to identify {model['tau2']:,.3g} correctly: it assumes the keys' "
            "combinations are Poisson counts whose logarithm is additive in the keys.")
