"""The release of the file engine's plan of recodings then local suppression
(:mod:`._suppress_release`): the figures of every version of the table on the plan's keys
added up chunk by chunk (:class:`Versions`), the suppression's details counted on the
patterns (:func:`missingness`, :func:`~microagg.steps.suppress.core.missingness_details`
with each pattern weighted by its records), and the :class:`~microagg._pipeline.result.Release`
in the in-memory layout."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ... import __version__
from ..._pipeline.result import Release, StepFigures, StepRecord
from ...steps._state import cells_changed
from ._census_check import KeyFigures
from ._suppress_check import LossSums

__all__ = ["Versions", "missingness", "release"]


class Versions:
    """The table before the plan, after each step, figures on the plan's keys: classes,
    unique share, information loss against the first, cells changed between neighbours."""

    def __init__(self, keys: Sequence[str], count: int) -> None:
        self.keys = list(keys)
        self.classes = [KeyFigures(self.keys, ()) for _ in range(count)]
        self.losses: list[LossSums] = []
        self.cells = [0] * (count - 1)

    def add(self, tables: Sequence[pd.DataFrame]) -> None:
        """The same rows of every version, the original first."""
        original = tables[0]
        if not self.losses:
            self.losses = [LossSums(_numeric(original, table, self.keys)) for table in tables]
        for i, table in enumerate(tables):
            self.classes[i].add(original, table)
            self.losses[i].add(original, table)
            if i:
                self.cells[i - 1] += cells_changed(tables[i - 1].loc[:, self.keys],
                                                   table.loc[:, self.keys])

    def figures(self, i: int, *, loss: float | None = None) -> StepFigures:
        found = self.classes[i].figures()
        return StepFigures(k_anonymity=found["k_anonymity"], unique_share=found["unique_share"],
                           information_loss=self.losses[i].loss() if loss is None else loss)


def _numeric(original: pd.DataFrame, current: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The keys numeric in both tables (not booleans): those the loss is measured on."""
    return [c for c in keys if pd.api.types.is_numeric_dtype(original[c].dtype)
            and pd.api.types.is_numeric_dtype(current[c].dtype)
            and not pd.api.types.is_bool_dtype(original[c].dtype)]


def missingness(patterns: pd.DataFrame, counts: NDArray[np.int64], keys: Sequence[str],
                blank: NDArray[np.bool_]) -> dict[str, Any]:
    """Per key: cells suppressed, their share, missing before and after, and the chi-square
    test of "suppressed here" against each other key's categories (p-value, Cramér's V),
    every pattern weighted by its records (sdcMicro-style missingness report)."""
    from ...steps.suppress.core import blank_association

    n = int(counts.sum())
    out: dict[str, Any] = {}
    for j, key in enumerate(keys):
        here = blank[:, j]
        cells = int(counts[here].sum())
        association = {}
        for other in keys:
            if other == key or not cells or cells == n:
                continue
            cats = pd.factorize(patterns[other], use_na_sentinel=False)[0]
            cross = np.zeros((2, int(cats.max(initial=-1)) + 1))
            np.add.at(cross, (here.astype(np.intp), cats), counts)
            found = blank_association(cross, n)
            if found is not None:
                association[other] = found
        before = int(counts[patterns[key].isna().to_numpy()].sum())
        out[key] = {"cells_suppressed": cells, "share": cells / n if n else 0.0,
                    "missing_before": before, "missing_after": before + cells,
                    "association": association}
    return out


def _entry(position: int, step: Any, result: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType({"step": position, "name": step.name,
                             "quasi_identifiers": step.columns,
                             **{k: v for k, v in result.items() if k != "model"},
                             "model": result["model"]})


def _records(run: Any, measured: Versions, details: list[dict[str, Any]],
             suppress_details: Mapping[str, Any], suppressed: tuple[str, ...]
             ) -> tuple[StepRecord, ...]:
    out = []
    for s, step in enumerate(run.steps, start=1):
        last = s == len(run.steps)
        out.append(StepRecord(
            step=step.name, options=MappingProxyType(step.to_record()),
            details=MappingProxyType(dict(suppress_details if last else details[s - 1])),
            columns_changed=suppressed if last else
            ((step.column,) if run.changed[s - 1] else ()),
            cells_changed=measured.cells[s - 1], groups=0, smallest_group=0,
            before=measured.figures(s - 1, loss=0.0 if s == 1 else None),
            after=measured.figures(s)))
    return tuple(out)


def _rounding(run: Any) -> dict[str, int]:
    """The keys published as integers by default (integer-valued numbers), less those a
    step publishes as it left them (its last step decides)."""
    rounding = {key: 0 for key, flags in run.integer.items() if all(flags)}
    for position, step in enumerate(run.steps, start=1):
        later = {c for after in run.steps[position:] for c in after.columns}
        for column, how in step.publication().items():
            if column in later:
                continue
            if how == "as-is":
                rounding.pop(column, None)
            elif how == "integer":
                rounding[column] = 0
    return {key: rounding[key] for key in run.keys if key in rounding}


def release(run: Any, target: pathlib.Path, seed: int, found: Mapping[str, Any],  # noqa: PLR0913 - what the passes found
            details: list[dict[str, Any]], decision: Any, suppressed: tuple[str, ...],
            broken: Mapping[str, Any] | None, notes: list[str]) -> Release:
    """The release of the plan run over a file (``engine="file"``)."""
    last, measured = run.last, found["measured"]
    suppress_details = {
        "model": f"k-anonymity on {list(last.keys)}, missing={last.missing!r}",
        "mode": last.mode, "cells_suppressed": int((decision.blank * decision.counts[:, None]).sum()),
        "columns": missingness(decision.patterns, decision.counts, last.keys, decision.blank)}
    results = found["steps"]
    steps = tuple(_entry(s, step, r) for s, (step, r) in
                  enumerate(zip(run.steps, results, strict=True), start=1))
    k, position = last.required_k, len(run.steps)
    checks: dict[str, Any] = {"k_anonymity": MappingProxyType({
        "required": k, "achieved": int(results[-1]["achieved"]), "columns": last.keys,
        "model": f"k-anonymity of {', '.join(last.keys)} (promised by step {position} of the "
                 "plan), counted on the published data as that step's check counts it; the "
                 "other keys of the plan promise what their own step's check says"}),
        "steps": steps}
    rounding = _rounding(run)
    final = measured.classes[-1].figures()
    if rounding:
        checks["rounding"] = MappingProxyType({
            "columns": MappingProxyType(dict(rounding)), "dates": MappingProxyType({}),
            "classes_before": final["classes"], "classes_after": final["classes"],
            "k_before": final["k_anonymity"], "k_after": final["k_anonymity"],
            "model": "rounding and date precision applied after aggregation: the classes of "
                     "identical published quasi-identifiers recounted and k (l, t) verified "
                     "again on the final table; metrics describe the values as published"})
    if broken is not None:
        checks["published_columns"] = broken
    as_category = int(results[-1]["achieved_missing_as_category"])
    if last.missing == "any" and k is not None and as_category < k:
        notes.append(f"Step {position} of the plan (suppress) makes {list(last.keys)} {k}-"
                     "anonymous with a missing value matching any value (sdcMicro's rule); "
                     "counted with a missing value as a category of its own, as "
                     f"checks['k_anonymity'] counts, they are {as_category}-anonymous. Use "
                     "missing='category' for k under that count.")
    params = {"method": "plan", "k": k, "quasi_identifiers": run.keys,
              "sensitive": run.sensitive, "identifiers": run.identifiers,
              "scaling": "per step", "method_params": MappingProxyType({}),
              "microagg_version": __version__, "dates": MappingProxyType({}),
              "rounding": MappingProxyType(rounding),
              "plan": [s.to_record() for s in run.steps], "keep": (), "weight": None,
              "household": None, "strata": None}
    metrics = {"information_loss": measured.losses[-1].loss(),
               "unique_share": final["unique_share"], "records_unique": final["records_unique"]}
    return Release.of(data=None, labels=None, params=params, seed=seed, checks=checks,
                      metrics=metrics, warnings=notes, timings=run.timings, engine="file",
                      output=target, rows=run.rows,
                      columns=[c for c in run.columns if c not in run.identifiers],
                      steps=_records(run, measured, details, suppress_details, suppressed))
