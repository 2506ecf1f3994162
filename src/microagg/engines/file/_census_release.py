"""The verification of the file engine's census plan on the written file (pass 3 of
:mod:`.plan_census`) and its release: the in-memory release's checks (``checks["steps"]``:
each step's verifier, ``checks["k_anonymity"]`` reported over the plan's keys), its step
records (the swap's figures, PRAM's applied matrices) and its metrics, all counted on the
written file read back in chunks beside the input."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ... import __version__
from ..._pipeline.result import Release, StepFigures, StepRecord
from ..._pipeline.verify import k_check
from ...steps.perturb.verify import TransitionCounts, check_level
from ...steps.record_swap._prepare import Households
from ...steps.record_swap.core import risk_keys
from ...steps.record_swap.step import donor_notes
from ...steps.record_swap.verify import household_report
from ._census_check import KeyFigures, SwapCheck
from ._pram_counts import PramColumn

__all__ = ["census_release", "verify_written"]

PRAM_MODEL = ("PRAM: values moved by the recorded transition matrices (binomial bounds per "
              "transition, Bonferroni false-alarm rate {:g})")


ROUNDING_MODEL = ("rounding and date precision applied after aggregation: the classes of "
                  "identical published quasi-identifiers recounted and k (l, t) verified again "
                  "on the final table; metrics describe the values as published")


def _sources(run: Any, path: pathlib.Path, pram: Sequence[str]
             ) -> Iterator[tuple[pd.DataFrame, pd.DataFrame | None]]:
    from .plan_census import read_written

    written = read_written(run, path)
    if not pram:
        for chunk in written:
            yield chunk, None
        return
    yield from zip(written, run.chunks(list(pram)), strict=True)


def verify_written(run: Any, path: pathlib.Path, table: pd.DataFrame, hh: Households,
                   details: Mapping[str, Any], counting: list[PramColumn]) -> dict[str, Any]:
    """Pass 3: the written file read back in chunks with the input's PRAM columns; the
    swap's and PRAM's checks, and the figures on the plan's keys before the swap, after it
    and as published."""
    plan, swap = run.plan, run.plan.swap
    check = SwapCheck(swap, hh, {c: table[c] for c in (*swap.columns, *swap.similar)})
    transitions = {c.name: TransitionCounts([str(v) for v in c.categories], 1)
                   for c in counting}
    numeric = [c for c in swap.columns if pd.api.types.is_numeric_dtype(table[c])
               and not pd.api.types.is_bool_dtype(table[c])]
    versions = [KeyFigures(plan.keys, numeric) for _ in range(3)]
    cells = dict.fromkeys(plan.keys, 0)
    first = 0
    for written, original in _sources(run, path, [c.name for c in counting]):
        stop = first + len(written)
        if stop > len(table):
            raise RuntimeError(f"The written file has more rows than the {len(table)} read.")
        check.add(written, first)
        before = table.loc[first:stop - 1, list(swap.columns)].reset_index(drop=True)
        swapped = written.loc[:, list(swap.columns)].reset_index(drop=True)
        for column in swap.columns:
            cells[column] += int((check.coders[column](before[column])
                                  != check.coders[column](swapped[column])).sum())
        if original is not None:
            original = original.reset_index(drop=True)
            prammed = written.loc[:, list(original.columns)].reset_index(drop=True)
            for name, counts in transitions.items():
                counts.add(original[name], prammed[name], np.zeros(len(written), np.intp))
            before, swapped = (pd.concat([before, original], axis=1),
                               pd.concat([swapped, original], axis=1))
            published = pd.concat([swapped.loc[:, list(swap.columns)], prammed], axis=1)
        else:
            published = swapped
        for version, current in zip(versions, (before, swapped, published), strict=True):
            version.add(before, current)
        first = stop
    if first != len(table):
        raise RuntimeError(f"The written file has {first} rows; {len(table)} were read.")
    report = household_report(swap, hh, **check.households(), keys=risk_keys(table, swap),
                              details=details)
    return {"swap": report, "pram": _pram_report(plan.pram, counting, transitions),
            "figures": [v.figures() for v in versions], "cells": cells}


def _pram_report(options: Any, counting: list[PramColumn],
                 transitions: Mapping[str, TransitionCounts]) -> dict[str, Any] | None:
    """:func:`~microagg.steps.perturb.verify.verify_pram`'s report from the counts."""
    if options is None:
        return None
    found = {c.name: ([str(v) for v in c.categories], [c.matrix]) for c in counting}
    level = check_level(found)
    report: dict[str, Any] = {"model": PRAM_MODEL.format(1e-6), "columns": {}}
    holds = True
    for name, counts in transitions.items():
        entry = counts.judge(found[name], level, invariant=options.invariant)
        holds &= entry["holds"]
        report["columns"][name] = entry
    report["holds"] = bool(holds)
    return report


def _entry(position: int, step: Any, result: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType({"step": position, "name": step.name,
                             "quasi_identifiers": step.columns,
                             **{k: v for k, v in result.items() if k != "model"},
                             "model": result["model"]})


def _figures(found: Mapping[str, Any]) -> StepFigures:
    return StepFigures(k_anonymity=found["k_anonymity"], unique_share=found["unique_share"],
                       information_loss=found["information_loss"])


def _records(run: Any, details: Mapping[str, Any], counting: list[PramColumn],
             checked: Mapping[str, Any]) -> tuple[StepRecord, ...]:
    from .plan_census import pram_details

    plan, figures, cells = run.plan, checked["figures"], checked["cells"]
    out = [StepRecord(step=plan.swap.name, options=MappingProxyType(plan.swap.to_record()),
                      details=MappingProxyType(dict(details)),
                      columns_changed=tuple(c for c in plan.swap.columns if cells[c]),
                      cells_changed=sum(cells[c] for c in plan.swap.columns), groups=0,
                      smallest_group=0, before=_figures({**figures[0], "information_loss": 0.0}),
                      after=_figures(figures[1]))]
    if plan.pram is not None:
        out.append(StepRecord(step=plan.pram.name,
                              options=MappingProxyType(plan.pram.to_record()),
                              details=MappingProxyType(pram_details(counting)),
                              columns_changed=tuple(c.name for c in counting
                                                    if c.records_changed),
                              cells_changed=sum(c.records_changed for c in counting),
                              groups=0, smallest_group=0, before=_figures(figures[1]),
                              after=_figures(figures[2])))
    return tuple(out)


def census_release(run: Any, target: pathlib.Path, seed: int, details: Mapping[str, Any],
                   counting: list[PramColumn], checked: Mapping[str, Any],
                   columns: Sequence[str], rounding: Mapping[str, int]) -> Release:
    """The release of a census plan run over a file (``engine="file"``)."""
    plan = run.plan
    published = checked["figures"][-1]
    steps = [_entry(1, plan.swap, checked["swap"])]
    if plan.pram is not None:
        steps.append(_entry(2, plan.pram, checked["pram"]))
    checks: dict[str, Any] = {"k_anonymity": k_check(None, published["k_anonymity"]),
                              "steps": tuple(steps)}
    if rounding:  # integer-valued keys published as integers: the classes are the same
        checks["rounding"] = MappingProxyType({
            "columns": MappingProxyType(dict(rounding)), "dates": MappingProxyType({}),
            "classes_before": published["classes"], "classes_after": published["classes"],
            "k_before": published["k_anonymity"], "k_after": published["k_anonymity"],
            "model": ROUNDING_MODEL})
    dropped = {run.households, *run.identifiers}
    params = {"method": "plan", "k": None, "quasi_identifiers": plan.keys,
              "sensitive": (), "identifiers": tuple(sorted(dropped)), "scaling": "per step",
              "method_params": MappingProxyType({}), "microagg_version": __version__,
              "dates": MappingProxyType({}), "rounding": MappingProxyType(dict(rounding)),
              "plan": [s.to_record() for s in (plan.swap, plan.pram) if s is not None],
              "keep": (), "household": run.households}
    metrics = {k: published[k] for k in ("information_loss", "unique_share",
                                          "records_unique")}
    return Release.of(data=None, labels=None, params=params, seed=seed, checks=checks,
                      metrics=metrics, warnings=donor_notes(plan.swap, details),
                      timings=run.timings, engine="file", output=target,
                      rows=int(details["records"]),
                      columns=[c for c in columns if c not in dropped],
                      steps=_records(run, details, counting, checked))
