"""A census plan, targeted record swapping of households then PRAM, run over a CSV or
Parquet file in chunks (sdcMicro ``recordSwap`` and ``pram``, Templ, Kowarik & Meindl 2015,
J. Stat. Softw. 67(4); Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, J. Off. Stat. 14(4)).

Pass 1 reads only the columns the swap needs (the household id, the hierarchy, the
similarity, risk and carried-along columns) and PRAM's columns: the swap is decided on them
with the in-memory kernels (:func:`~microagg.steps.record_swap.core.decide_swap`, the same
random draws, so the same swaps as the in-memory release for the same seed), and PRAM's
categories and frequencies are counted. Pass 2 reads the whole file again chunk by chunk,
gives every member of a swapped household its partner's geography and carried-along values,
applies PRAM to the chunk and writes it to a temporary file. PRAM's uniforms come from one
stream per column consumed in file order (a copy of the generator where the in-memory
release starts that column's draws), so the file engine's PRAM draws equal the in-memory
ones too: the written table is the in-memory release's, value for value. Pass 3 reads the
written file back with the input and verifies it: the swap's checks (every household moved
as a whole, the geography nests, the similarity profiles kept, the swap rate, the record's
count of swapped households) and PRAM's (its recorded matrices against the observed
transitions); only then is the file renamed onto the output (a failure, a kill or Ctrl-C
leaves no output).

Memory: the swap's columns of every record (pass 1; about 60 bytes per person with three
levels, size and two risk variables), a few integers per record and household, and one
chunk. Runs: one ``swap_households`` then at most one ``pram`` (without strata, on columns
the swap does not read). Anything else is refused, naming the in-memory engine.
"""

from __future__ import annotations

import copy
import os
import pathlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.validation import RandomState, resolve_seed
from ..._pipeline.publish import round_numbers, rounding_for
from ...io._atomic import atomic_write
from ...steps.perturb.options import Pram
from ...steps.perturb.pram import base_matrix, column_details, draw, pram_matrix, restore
from ...steps.record_swap.core import decide_swap, risk_keys, source_rows, swap_details
from ...steps.record_swap.options import SwapHouseholds
from .._chunks import chunk_writer, first_rows, iter_chunks, output_separator, read_back
from ._pram_counts import PramColumn, pram_columns

__all__ = ["CensusPlan", "census_plan", "run_census_file"]

SKIP = 1 << 20
"""Uniforms drawn at a time when a generator is moved past a column's draws."""


@dataclass(frozen=True)
class CensusPlan:
    """The steps this module runs: one swap, then PRAM (or none)."""

    swap: SwapHouseholds
    pram: Pram | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        """The plan's keys: every step's columns, in order."""
        return (*self.swap.columns, *(self.pram.variables if self.pram else ()))


def census_plan(steps: Sequence[Any]) -> CensusPlan:
    """The plan of ``steps`` if this module runs it, else a ValueError naming the step that
    needs the in-memory engine."""
    names = [getattr(s, "name", s) for s in steps]
    if not steps or not isinstance(steps[0], SwapHouseholds) or len(steps) > 2 \
            or (len(steps) == 2 and not isinstance(steps[1], Pram)):
        raise ValueError(f"The file engine runs a plan of one 'swap_households' step, then at "
                         f"most one 'pram' step; got {names!r}. Use --engine local.")
    swap = steps[0]
    pram = steps[1] if len(steps) == 2 else None
    if pram is not None:
        read = {*swap.columns, *swap.similar}
        both = [c for c in pram.variables if c in read]
        if both:
            raise ValueError(f"Step 2 of the plan (pram) perturbs {both!r}, which step 1 "
                             "(swap_households) moves or matches on; in chunks PRAM runs on "
                             "other columns only. Use --engine local.")
    return CensusPlan(swap, pram)


@dataclass
class _Run:
    """What the passes share."""

    plan: CensusPlan
    source: pathlib.Path
    households: str
    chunk_rows: int
    sep: str | None
    identifiers: tuple[str, ...]
    out_sep: str = ","
    timings: dict[str, float] = field(default_factory=dict)

    def chunks(self, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame]:
        return iter_chunks(self.source, chunk_rows=self.chunk_rows, sep=self.sep,
                           columns=columns)


def _swap_columns(plan: CensusPlan, households: str) -> list[str]:
    swap = plan.swap
    named = [households, *swap.hierarchy, *swap.similar, *swap.risk_variables,
             *swap.carry_along]
    return list(dict.fromkeys(named))


def _first_pass(run: _Run) -> tuple[pd.DataFrame, list[PramColumn], list[str]]:
    """The swap's columns of every record, PRAM's columns counted, the file's columns."""
    wanted = _swap_columns(run.plan, run.households)
    pram = run.plan.pram
    header = first_rows(run.source, sep=run.sep)
    columns = [str(c) for c in header.columns]
    absent = [c for c in (*wanted, *(pram.variables if pram else ())) if c not in columns]
    if absent:
        raise ValueError(f"The plan names column(s) {absent} that are not in the file "
                         f"{str(run.source)!r}; its columns are {columns}.")
    read = list(dict.fromkeys([*wanted, *(pram.variables if pram else ())]))
    parts, counting = [], pram_columns(pram) if pram else []
    for chunk in run.chunks(read):
        parts.append(chunk.loc[:, wanted])
        for column in counting:
            column.count(chunk[column.name])
    table = pd.concat(parts, ignore_index=True) if parts else header.loc[:, wanted]
    del parts
    if len(table) == 0:
        raise ValueError(f"The file {str(run.source)!r} has no rows.")
    return table, counting, columns


def _skip(rng: np.random.Generator, n: int) -> None:
    """Move ``rng`` past ``n`` uniforms (the draws of one column, made elsewhere)."""
    for start in range(0, n, SKIP):
        rng.random(min(SKIP, n - start))


def _pram_streams(counting: list[PramColumn], pram: Pram, rng: np.random.Generator,
                  n: int) -> None:
    """Each column's base matrix, applied matrix and stream of uniforms, drawn from ``rng``
    in the in-memory release's order: a random diagonal, then one uniform per row."""
    for column in counting:
        base = base_matrix(pram, column.name, column.categories,
                           rng if pram.random_diagonal and column.name not in pram.matrix
                           else None)
        column.base = base
        column.matrix = pram_matrix(base, column.frequencies(), alpha=pram.alpha,
                                    invariant=pram.invariant)
        column.stream = copy.deepcopy(rng)
        _skip(rng, n)


def _written(run: _Run, table: pd.DataFrame, rows: NDArray[np.int64],
             counting: list[PramColumn], rounding: dict[str, int]
             ) -> Iterator[pd.DataFrame]:
    """Pass 2: the input's chunks swapped, PRAMed, identifiers dropped, rounded as the
    in-memory release publishes the plan's keys."""
    drop = [run.households, *run.identifiers]
    first = 0
    swap = run.plan.swap
    for chunk in run.chunks():
        stop = first + len(chunk)
        out = chunk.drop(columns=[c for c in drop if c in chunk.columns])
        for column in swap.columns:
            out[column] = pd.Series(table[column].to_numpy()[rows[first:stop]],
                                    index=chunk.index, dtype=table[column].dtype)
        for counted in counting:
            codes = counted.codes(chunk[counted.name])
            new = draw(codes, np.zeros(len(chunk), dtype=np.intp), [counted.matrix],
                       counted.stream.random(len(chunk)))
            counted.changed(codes, new)
            out[counted.name] = restore(chunk[counted.name], counted.categories, new)
        first = stop
        yield round_numbers(out, rounding)
    if first != len(rows):
        raise RuntimeError(f"The input has {first} rows now and had {len(rows)} in pass 1; "
                           "it changed between the passes.")


def run_census_file(source: str | os.PathLike[str], target: str | os.PathLike[str],  # noqa: PLR0913 - the public face: one keyword per option
                    steps: Sequence[Any], *, households: str,
                    identifiers: Sequence[str] = (), random_state: RandomState = None,
                    chunk_rows: int = 500_000, sep: str | None = None,
                    on_stage: Callable[[str], None] | None = None) -> Any:
    """Run ``steps`` (:func:`census_plan`) over ``source`` and write ``target`` (CSV or
    Parquet) atomically, rows in the input's order; the release (``engine="file"``) with
    the in-memory release's checks (``checks["steps"]``: each step's verifier, on the
    written file) and step records (PRAM's matrices in its details)."""
    from ._census_release import census_release, verify_written

    started = time.perf_counter()
    plan = census_plan(steps)
    run = _Run(plan, pathlib.Path(source), households, chunk_rows, sep, tuple(identifiers))
    stage = on_stage or (lambda name: None)
    stage("reading")
    table, counting, columns = _first_pass(run)
    run.timings["read"] = time.perf_counter() - started
    seed, rng = resolve_seed(random_state)
    t = time.perf_counter()
    hh, partner, counts = decide_swap(table, plan.swap, rng, households=households)
    details = swap_details(hh, partner, counts, plan.swap, risk_keys(table, plan.swap))
    if plan.pram is not None:
        _pram_streams(counting, plan.pram, rng, len(table))
    rows = source_rows(hh, partner)
    rounding = dict(rounding_for(table, plan.swap.columns, {}, {}))
    run.timings["decide"] = time.perf_counter() - t
    out = pathlib.Path(target)
    run.out_sep = output_separator(out, sep)
    write = chunk_writer(out, run.out_sep)
    checked: dict[str, Any] = {}

    def write_and_verify(handle: IO[bytes]) -> None:
        t = time.perf_counter()
        stage("writing")
        write(handle, _written(run, table, rows, counting, rounding))
        handle.flush()
        run.timings["write"] = time.perf_counter() - t
        t = time.perf_counter()
        stage("verifying")
        checked.update(verify_written(run, pathlib.Path(handle.name), table, hh, details,
                                      counting))
        run.timings["verify"] = time.perf_counter() - t

    atomic_write(out, write_and_verify)
    run.timings["total"] = time.perf_counter() - started
    return census_release(run, out, seed, details, counting, checked, columns, rounding)


def read_written(run: _Run, path: pathlib.Path) -> Iterator[pd.DataFrame]:
    """The written file's chunks (its temporary name hides its format)."""
    return read_back(path, run.chunk_rows, run.out_sep)


def pram_details(counting: list[PramColumn]) -> dict[str, Any]:
    """PRAM's details as the in-memory step records them."""
    return {"strata": None, "columns": {
        c.name: column_details(c.categories, c.base, [c.matrix], ["all"],
                               changed=c.records_changed, before=c.before, after=c.after,
                               missing=c.missing) for c in counting}}
