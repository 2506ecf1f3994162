"""The one-step form's release settings besides k and the method: the missing-value strategy
(``missing=``), the aggregation (``aggregation=``: only those that apply to the keys' types)
and the intruder's knowledge (``intruder_knows=``: a subset of the quasi-identifiers), read
from the form, checked on the server, and written as the ``microagg anonymize`` flags and
the Python keywords that reproduce the release.

Form fields (stable names, also used by the tests): ``missing`` (blank: ``pattern``, the
default), ``aggregation`` (blank: the method's own), ``knows-N`` (one checkbox per
quasi-identifier, N from 0, its value the column's name). The strategies are
:data:`microagg._pipeline.missing.MISSING_STRATEGIES`; the aggregations are the registry's
(:data:`microagg.aggregate.aggregators.AGGREGATORS`), or, when a quasi-identifier is a
category (the release generalizes), the numeric columns' representatives of a generalizing
release (:data:`microagg.aggregate.generalize.NUMERIC_MODES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KNOWS_FIELD", "aggregations", "flags", "missing_strategies", "parse_settings",
           "python_keywords", "settings_problems"]

KNOWS_FIELD = "knows-"
"""The prefix of the intruder's-knowledge checkboxes (``knows-0``, ``knows-1``, ...)."""

_MISSING_HELP = {
    "pattern": "records grouped by which keys they miss; missing stays missing (default)",
    "category": "a category's missing value grouped as one more category",
    "impute:median": "missing numbers filled with the column's median (recorded)",
    "impute:mean": "missing numbers filled with the column's mean (recorded)",
    "refuse": "a table with missing keys is refused",
}


def missing_strategies() -> list[dict[str, str]]:
    """Every missing-value strategy of a release, with what it does in a few words."""
    from microagg._pipeline.missing import MISSING_STRATEGIES

    return [{"name": name, "help": _MISSING_HELP.get(name, "")} for name in MISSING_STRATEGIES]


def aggregations(categorical: Sequence[str], generalizing: bool) -> list[dict[str, str]]:
    """The aggregations that apply: the registry's for numeric keys (plus ``interval`` when
    an offered method generalizes, ``generalizing``); with a categorical key only the
    numeric columns' representatives of a generalizing release.

    Parameters
    ----------
    categorical : sequence of str
        The quasi-identifiers a release treats as categories.
    generalizing : bool
        Whether an offered method publishes ranges (``Partitioner.generalizes``).
    """
    from microagg.aggregate.aggregators import AGGREGATORS
    from microagg.aggregate.generalize import NUMERIC_MODES

    interval = {"name": "interval", "summary": "the group's range [min, max] (generalizing "
                "releases)"}
    if categorical:
        return [{"name": m, "summary": AGGREGATORS[m].summary} if m in AGGREGATORS
                else interval for m in NUMERIC_MODES]
    listed = [{"name": name, "summary": entry.summary + (
        " Noisy: not k-anonymous." if entry.may_be_noisy else "")}
        for name, entry in AGGREGATORS.items()]
    return [*listed, interval] if generalizing else listed


def parse_settings(form: Mapping[str, str]) -> dict[str, Any]:
    """The form's ``missing``, ``aggregation`` and ``intruder_knows`` as keywords of
    :func:`microagg.anonymize`; a blank one is left out (the release's default)."""
    out: dict[str, Any] = {}
    for name in ("missing", "aggregation"):
        text = form.get(name, "").strip()
        if text:
            out[name] = text
    knows = [value.strip() for key, value in form.items()
             if key.startswith(KNOWS_FIELD) and value.strip()]
    if knows:
        out["intruder_knows"] = list(dict.fromkeys(knows))
    return out


def settings_problems(options: Mapping[str, Any], *, keys: Sequence[str],
                      categorical: Sequence[str], generalizing: bool) -> list[str]:
    """Every posted setting that does not apply (the server never trusts the form): an
    unknown strategy, an aggregation not offered for these keys, a column the intruder
    knows that is not a quasi-identifier, intruder's knowledge with categorical keys."""
    problems = []
    strategies = [s["name"] for s in missing_strategies()]
    if options.get("missing") is not None and options["missing"] not in strategies:
        problems.append(f"missing must be one of {', '.join(strategies)}; got "
                        f"{options['missing']!r}.")
    allowed = [a["name"] for a in aggregations(categorical, generalizing)]
    if options.get("aggregation") is not None and options["aggregation"] not in allowed:
        problems.append(f"aggregation {options['aggregation']!r} does not apply to these "
                        f"quasi-identifiers; the ones that do: {', '.join(allowed)}.")
    knows = list(options.get("intruder_knows") or ())
    unknown = [c for c in knows if c not in keys]
    if unknown:
        problems.append(f"The intruder's knowledge names {', '.join(map(repr, unknown))}, "
                        f"which are not quasi-identifiers; quasi-identifiers: "
                        f"{', '.join(keys)}.")
    elif knows and categorical:
        problems.append("The intruder's knowledge applies to numeric microaggregation: "
                        f"{', '.join(categorical)} are categories, and the release "
                        "generalizes them.")
    return problems


def flags(options: Mapping[str, Any]) -> list[str]:
    """The ``microagg anonymize`` flags of these settings, in a fixed order."""
    out: list[str] = []
    if options.get("missing") is not None:
        out += ["--missing", str(options["missing"])]
    if options.get("aggregation") is not None:
        out += ["--aggregation", str(options["aggregation"])]
    if options.get("intruder_knows"):
        out += ["--intruder-knows", ",".join(options["intruder_knows"])]
    return out


def python_keywords(options: Mapping[str, Any]) -> list[str]:
    """The same settings as keywords of :func:`microagg.anonymize` (``name=value``)."""
    return [f"{name}={options[name]!r}" for name in ("missing", "aggregation",
                                                     "intruder_knows")
            if options.get(name) is not None]
