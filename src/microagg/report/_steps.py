"""The report's table of a plan's steps: one row per step (``Release.steps``), built from its
:class:`~microagg._pipeline.result.StepRecord` alone, the same for every step: its columns,
what it changed (records, or cells, and their share), k, unique share and information loss
before and after it, its short details and whether its verifier holds on the published
table (sdcMicro's risk and utility after each method, Templ, Kowarik & Meindl 2015, J.
Stat. Softw. 67(4)). Every text is escaped."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from .._pipeline.result import StepRecord
from ..release import Release

__all__ = ["steps_section"]

_SHOWN_DETAILS = 8
"""The most scalar details shown per step."""


def _pct(share: float) -> str:
    return f"{100.0 * share:.1f}%"


def _columns(record: StepRecord, check: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The step's columns: those its check names, else its options' column fields."""
    if check is not None and check.get("quasi_identifiers"):
        return tuple(map(str, check["quasi_identifiers"]))
    for key in ("columns", "quasi_identifiers", "column"):
        value = record.options.get(key)
        if value:
            return (str(value),) if isinstance(value, str) else tuple(map(str, value))
    return ()


def _changed(record: StepRecord, n_rows: int, n_columns: int) -> str:
    """Records changed (when the step counted them) or cells changed, with the share."""
    records = record.details.get("records_changed")
    if isinstance(records, int) and not isinstance(records, bool) and n_rows:
        return f"{records:,} of {n_rows:,} records ({_pct(records / n_rows)})"
    cells = n_rows * max(n_columns, 1)
    share = f" ({_pct(record.cells_changed / cells)} of its cells)" if cells else ""
    return f"{record.cells_changed:,} cells{share}"


def _details(details: Mapping[str, Any]) -> str:
    """The step's scalar details (numbers, texts), at most :data:`_SHOWN_DETAILS`."""
    shown = [(k, v) for k, v in details.items() if k != "records_changed"
             and (v is None or isinstance(v, (str, int, float, bool)))][:_SHOWN_DETAILS]
    return "; ".join(f"{k}: {_value(v)}" for k, v in shown)


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "none" if value is None else str(value)


def _before_after(before: float, after: float, *, share: bool = False) -> str:
    text = _pct if share else (lambda v: f"{v:.4g}")
    return f"{text(before)} &rarr; {text(after)}"


def _row(position: int, record: StepRecord, check: Mapping[str, Any] | None,
         n_rows: int) -> str:
    columns = _columns(record, check)
    verified = "" if check is None else ("holds" if check.get("holds") else "does NOT hold")
    cells = [str(position), html.escape(record.step), html.escape(", ".join(columns)),
             html.escape(_changed(record, n_rows, len(columns))),
             _before_after(record.before.k_anonymity, record.after.k_anonymity),
             _before_after(record.before.unique_share, record.after.unique_share, share=True),
             _before_after(record.before.information_loss, record.after.information_loss),
             html.escape(_details(record.details)), html.escape(verified)]
    left = {1, 2, 3, 7, 8}
    return "<tr>" + "".join(f"<td class='l'>{c}</td>" if i in left else f"<td>{c}</td>"
                            for i, c in enumerate(cells)) + "</tr>"


def steps_section(release: Release) -> list[str]:
    """The heading and table of the release's steps: for a plan of several steps, or a
    step that recorded details (as ``Release.summary()["steps"]``); nothing for the
    one-step shorthand, whose figures the rest of the report gives."""
    records: Sequence[StepRecord] = release.steps or ()
    if len(records) < 2 and not any(r.details for r in records):
        return []
    checks = {int(c["step"]): c for c in release.checks.get("steps", ())
              if isinstance(c, Mapping) and "step" in c}
    n_rows = len(release.data) if release.data is not None else 0
    head = ("<tr><th>#</th><th class='l'>step</th><th class='l'>columns</th>"
            "<th class='l'>what changed</th><th>k on the keys</th><th>unique share</th>"
            "<th>information loss (%)</th><th class='l'>details</th>"
            "<th class='l'>its promise</th></tr>")
    rows = "".join(_row(i, r, checks.get(i), n_rows) for i, r in enumerate(records, start=1))
    return ["<h2>The plan's steps</h2>",
            "<p>Each step in order, on the working table before publication: what it changed, "
            "and k, the share of records unique and the information loss on the plan's keys "
            "before and after it. Its promise is re-checked on the published table.</p>",
            f"<table>{head}{rows}</table>"]
