"""The passes of the file engine's plan of recodings then local suppression
(:func:`~.plan_suppress.run_suppress_file`) and its release, in the in-memory release's
layout: each step's check on the written file read back beside the input
(``checks["steps"]``), the step records (details merged over the chunks, the figures before
and after each step on the plan's keys) and the published-columns check.

Pass 1 recodes each chunk, counts the suppression keys' patterns and merges the recodings'
details; the heuristic decides on the patterns; pass 2 recodes, blanks and writes (each
published column's values counted with its record's class for the published-columns check);
pass 3 reads the written file back with the input, recodes the input again and runs each
step's verifier: per chunk for the recodings (their promise is per record), on the written
file's patterns for the suppression. Only then is the file renamed onto the output.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pandas as pd

from ..._base.validation import RandomState, resolve_seed
from ..._pipeline.result import Release
from ..._pipeline.unmasked import broken_columns_check, warn_broken_k
from ...io._atomic import atomic_write
from ...io._leftovers import work_folder
from ...steps import STEPS
from ...steps._state import StepRoles, columns_changed
from ...steps.recode.step import _with_details
from ...steps.suppress.patterns import (
    count_patterns,
    pattern_codes,
    pattern_rank,
    suppress_patterns,
)
from .._chunks import chunk_writer, first_rows, iter_chunks, output_separator, read_back
from . import _suppress_plan_release as release_parts
from ._published import PairCounts
from ._suppress_check import finish_details
from .plan_suppress import blanked, check_groups, checked_plan, lookup, recode_versions

__all__ = ["run_suppress"]


@dataclass
class _Run:
    """What the passes share."""

    steps: tuple[Any, ...]
    source: pathlib.Path
    chunk_rows: int
    sep: str | None
    identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    cores: list[tuple[Any, Any]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    details: list[dict[str, Any] | None] = field(default_factory=list)
    changed: list[bool] = field(default_factory=list)
    integer: dict[str, list[bool]] = field(default_factory=dict)
    seen: dict[int, set[Any]] = field(default_factory=dict)
    rows: int = 0

    @property
    def last(self) -> Any:
        return self.steps[-1]

    @property
    def keys(self) -> tuple[str, ...]:
        """The plan's keys: every step's columns, in order."""
        return tuple(dict.fromkeys(c for step in self.steps for c in step.columns))

    def chunks(self) -> Iterator[pd.DataFrame]:
        return iter_chunks(self.source, chunk_rows=self.chunk_rows, sep=self.sep)


def _check_columns(run: _Run) -> None:
    header = first_rows(run.source, sep=run.sep)
    run.columns = [str(c) for c in header.columns]
    named = (*run.keys, *run.identifiers, *run.sensitive)
    absent = [c for c in dict.fromkeys(named) if c not in run.columns]
    if absent:
        raise ValueError(f"The plan names column(s) {absent} that are not in the file "
                         f"{str(run.source)!r}; its columns are {run.columns}.")
    both = [c for c in (*run.identifiers, *run.sensitive) if c in run.keys]
    if both:
        raise ValueError(f"Column(s) {both} are columns of the plan's steps and also "
                         "identifiers or sensitive; give each column one role.")


def _integer_valued(run: _Run, chunk: pd.DataFrame) -> None:
    """Each key's standing for the default rounding (integer-valued numbers): numeric,
    every observed value whole, some value observed."""
    for key in run.keys:
        column = chunk[key]
        flags = run.integer.setdefault(key, [True, True, False])
        numeric = pd.api.types.is_numeric_dtype(column.dtype) \
            and not pd.api.types.is_bool_dtype(column.dtype)
        flags[0] &= numeric
        if not numeric:
            continue
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        values = values[~np.isnan(values)]
        flags[1] &= bool(np.all(np.isfinite(values) & (values == np.round(values))))
        flags[2] |= bool(values.size)


def _first_pass(run: _Run) -> Iterator[pd.DataFrame]:
    """Pass 1: the chunks recoded; the groups' values seen, the details merged, the columns
    each recoding changed and the keys' rounding noted on the way."""
    run.details = [None] * len(run.cores)
    run.changed = [False] * len(run.cores)
    run.seen = {}
    for chunk in run.chunks():
        versions = recode_versions(chunk, run.cores, run.seen, run.details)
        for s, (options, _) in enumerate(run.cores):
            column = [options.column]
            run.changed[s] |= bool(columns_changed(versions[s].loc[:, column],
                                                   versions[s + 1].loc[:, column]))
        _integer_valued(run, chunk)
        run.rows += len(chunk)
        yield versions[-1]


@dataclass
class _Decision:
    """The suppression decided on the patterns: their lookup, the cells to blank, each
    pattern's count and published class."""

    patterns: pd.DataFrame
    counts: Any
    blank: Any
    index: pd.Index
    classes: Any


def _decide(run: _Run, patterns: pd.DataFrame, counts: Any) -> _Decision:
    last = run.last
    if int(counts.sum()) < max(k for _, k in last.requirements):
        raise ValueError(f"Step {len(run.steps)} of the plan (suppress): k is larger than "
                         f"the table, which has {int(counts.sum())} record(s).")
    codes = pattern_codes(patterns, last.keys)
    current = suppress_patterns(codes, counts, last.requirements, last.missing,
                                pattern_rank(codes, last.keys, last.importance))
    classes = np.unique(current, axis=0, return_inverse=True)[1].ravel() if len(current) \
        else np.zeros(0, dtype=np.intp)
    return _Decision(patterns, counts, (current < 0) & (codes >= 0),
                     lookup(patterns, last.keys), classes)


def _written(run: _Run, decision: _Decision, pairs: PairCounts | None
             ) -> Iterator[pd.DataFrame]:
    """Pass 2: the input recoded and blanked, identifiers dropped."""
    for chunk in run.chunks():
        out, where = blanked(recode_versions(chunk, run.cores)[-1], run.last.keys,
                             decision.index, decision.blank)
        if pairs is not None:
            pairs.add(decision.classes[where].astype(np.int64), out)
        yield out.drop(columns=[c for c in run.identifiers if c in out.columns])


def _as_left(run: _Run, position: int, written: pd.DataFrame,
             versions: list[pd.DataFrame], later: set[str]) -> pd.DataFrame:
    """The published table a recoding's verifier reads: its column as it left it where a
    later step changes it."""
    column = run.steps[position - 1].column
    if column not in later:
        return written
    return written.assign(**{column: versions[position][column].to_numpy()})


def _per_chunk(verifier: Callable[..., Any], roles: StepRoles) -> Callable[..., Any]:
    """A recoding's verifier on a chunk (the records changed compared with its details once,
    on the whole file)."""
    return lambda options, before, published: dict(verifier(options, before, published,
                                                            roles, details=None))


def _verify(run: _Run, path: pathlib.Path, out_sep: str, decision: _Decision,
            suppressed: tuple[str, ...]) -> dict[str, Any]:
    """Pass 3: the written file read back beside the input, each step's check, and the
    figures of every version of the table on the plan's keys."""
    from ._suppress_check import PerRecordCheck, SuppressCheck

    roles = StepRoles(quasi_identifiers=run.keys)
    checks = [PerRecordCheck(_per_chunk(STEPS[o.name].load_verifier(), roles), o)
              for o, _ in run.cores]
    suppress = SuppressCheck(run.last)
    measured = release_parts.Versions(run.keys, len(run.cores) + 2)
    later = [{c for step, flag in zip(run.steps[s:-1], run.changed[s:], strict=True)
              if flag for c in step.columns} | set(suppressed) for s in range(1, len(run.steps))]
    first = 0
    for written, chunk in zip(read_back(path, run.chunk_rows, out_sep), run.chunks(),
                              strict=True):
        written = written.reset_index(drop=True)
        chunk = chunk.reset_index(drop=True)
        versions = recode_versions(chunk, run.cores)
        final = blanked(versions[-1], run.last.keys, decision.index, decision.blank)[0]
        measured.add([*versions, final])
        for s, check in enumerate(checks, start=1):
            check.add(versions[s - 1], _as_left(run, s, written, versions, later[s - 1]))
        suppress.add(versions[-1], written)
        first += len(written)
    if first != run.rows:
        raise RuntimeError(f"The written file has {first} rows; {run.rows} were read.")
    results = []
    for s, check in enumerate(checks, start=1):
        result = _with_details(check.result or {}, run.details[s - 1])
        if run.steps[s - 1].column in later[s - 1]:
            result["checked_on"] = (f"the published table with {run.steps[s - 1].column} as "
                                    "this step left them (a later step of the plan changes "
                                    "them)")
        results.append(result)
    return {"steps": [*results, suppress.result()], "measured": measured}


def run_suppress(source: str | Any, target: str | Any, steps: Sequence[Any], *,  # noqa: PLR0913 - the public face's keywords
                 identifiers: Sequence[str] = (), sensitive: Sequence[str] = (),
                 random_state: RandomState = None, chunk_rows: int = 500_000,
                 sep: str | None = None, on_stage: Callable[[str], None] | None = None
                 ) -> Release:
    """The passes of the module docstring; the release (``engine="file"``)."""
    started = time.perf_counter()
    cores, _ = checked_plan(steps)
    run = _Run(tuple(steps), pathlib.Path(source), chunk_rows, sep, tuple(identifiers),
               tuple(sensitive), cores=cores)
    stage = on_stage or (lambda name: None)
    _check_columns(run)
    seed, _ = resolve_seed(random_state)  # the plan is deterministic; the seed is recorded
    stage("reading")
    patterns, counts = count_patterns(_first_pass(run), run.last.keys)
    check_groups(cores, run.seen)
    run.timings["read"] = time.perf_counter() - started
    t = time.perf_counter()
    decision = _decide(run, patterns, counts)
    run.timings["decide"] = time.perf_counter() - t
    cells = (decision.blank * counts[:, None]).sum(axis=0)
    suppressed = tuple(k for k, c in zip(run.last.keys, cells, strict=True) if c)
    out = pathlib.Path(target)
    out_sep = output_separator(out, sep)
    write = chunk_writer(out, out_sep, text=run.last.keys)
    as_is = [c for c in run.columns if c not in run.last.keys and c not in run.sensitive
             and c not in run.identifiers]
    found: dict[str, Any] = {}
    with work_folder(None) as work:
        pairs = PairCounts(as_is, work, -(-max(run.rows, 1) // chunk_rows)) if as_is else None

        def write_and_verify(handle: IO[bytes]) -> None:
            t = time.perf_counter()
            stage("writing")
            write(handle, _written(run, decision, pairs))
            handle.flush()
            run.timings["write"] = time.perf_counter() - t
            t = time.perf_counter()
            stage("verifying")
            found.update(_verify(run, pathlib.Path(handle.name), out_sep, decision,
                                 suppressed))
            run.timings["verify"] = time.perf_counter() - t

        atomic_write(out, write_and_verify)
        smallest = pairs.smallest(np.arange(int(decision.classes.max(initial=-1)) + 1)) \
            if pairs is not None else {}
    k = run.last.required_k
    broken = broken_columns_check({c: v for c, v in smallest.items() if v < k}, k)
    notes: list[str] = []
    warn_broken_k(broken, notes)
    run.timings["total"] = time.perf_counter() - started
    details = [finish_details(d or {}, run.rows) for d in run.details]
    return release_parts.release(run, out, seed, found, details, decision, suppressed,
                                 broken, notes)

