"""A plan of per-record recodings and local suppression to k run over a CSV or Parquet file in
chunks, in two passes, the table never held whole (sdcMicro's ``globalRecode`` /
``localSuppression``, Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)).

Pass 1 reads the file chunk by chunk, applies the recodings to each chunk (each record's new
value depends on that record alone) and counts the distinct patterns of the suppression's
keys, merged over the chunks. The heuristic decides on the patterns which keys to blank in
each (:func:`microagg.steps.suppress.patterns.suppress_patterns`: the in-memory heuristic's
decisions, round for round). Pass 2 reads the file again, recodes, blanks each record's
keys by its pattern and writes the chunk. The written file is then read back in chunks and
k counted on its patterns under the step's missing semantics.

Runs: ``recode``, ``band`` with ``breaks``, ``topcode`` with fixed codes (``top`` /
``bottom``, ``replacement="code"``), then one ``suppress`` in its heuristic mode, without
strata or household keys. Anything else (quantile bands or codes, which need the whole
column; the exact mode; PRAM, noise) is refused, naming the in-memory engine. The
suppressed keys are published as text (a category column's values as their text).
"""

from __future__ import annotations

import os
import pathlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...hierarchy import as_labels
from ...steps.recode import bands, categories, topcode
from ...steps.recode._common import counts
from ...steps.recode.options import Band, Recode, TopCode
from ...steps.suppress.options import SuppressToK
from ...steps.suppress.patterns import (
    count_patterns,
    pattern_codes,
    pattern_rank,
    pattern_sizes,
    suppress_patterns,
)
from .._chunks import chunk_writer, iter_chunks, read_back

__all__ = ["blanked", "per_record_core", "recode_versions", "run_suppress_file", "suppress_file",
           "verify_file"]

_Core = Callable[..., tuple[pd.DataFrame, dict[str, Any]]]


def per_record_core(options: Any) -> _Core | None:
    """The core of a recoding whose value for a record depends on that record alone (so it
    runs chunk by chunk), or ``None``."""
    if isinstance(options, Recode):
        return categories.apply_recode
    if isinstance(options, Band) and options.breaks is not None:
        return bands.apply_band
    if isinstance(options, TopCode) and options.top_quantile is None \
            and options.bottom_quantile is None and options.replacement == "code":
        return topcode.apply_topcode
    return None


def checked_plan(steps: Sequence[Any]) -> tuple[list[tuple[Any, _Core]], SuppressToK]:
    """The recodings with their cores and the final suppression, or a ValueError naming the
    step that cannot run in two passes."""
    if not steps or not isinstance(steps[-1], SuppressToK):
        raise ValueError("The two-pass file plan ends with one 'suppress' step; got "
                         f"{[getattr(s, 'name', s) for s in steps]!r}.")
    last = steps[-1]
    if last.mode != "heuristic" or last.household_keys:
        raise ValueError(f"Step {len(steps)} of the plan (suppress): mode={last.mode!r}, "
                         f"household_keys={list(last.household_keys)!r}; in two passes only "
                         "mode='heuristic' without household keys runs. Use --engine local.")
    cores = []
    for position, options in enumerate(steps[:-1], start=1):
        core = per_record_core(options)
        if core is None:
            raise ValueError(f"Step {position} of the plan ({options.name}) needs the whole "
                             "column (or is not a recoding); in two passes only recode, band "
                             "with breaks and topcode with fixed codes run. Use --engine "
                             "local.")
        cores.append((options, core))
    return cores, last


def _in_chunk(options: Any, column: pd.Series, seen: dict[int, set[Any]] | None,
              position: int) -> Any:
    """A recoding by groups restricted to the values this chunk has (the whole file's are
    checked after pass 1: a chunk lacks rare values), the values seen recorded."""
    if not isinstance(options, Recode) or options.groups is None:
        return options
    present = set(as_labels(column.dropna().unique()))
    if seen is not None:
        seen.setdefault(position, set()).update(present)
    groups = {new: tuple(old for old in olds if old in present)
              for new, olds in options.groups.items()}
    kept = {new: olds for new, olds in groups.items() if olds}
    return replace(options, groups=kept) if kept else None


def _as_text(column: pd.Series) -> pd.Series:
    """A column as the recoding publishes one it leaves alone: its labels as text."""
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
        return column
    labels = pd.Series(as_labels(column.to_numpy()), index=column.index, dtype=object)
    return labels.where(column.notna())


def recode_versions(chunk: pd.DataFrame, cores: list[tuple[Any, _Core]],
                    seen: dict[int, set[Any]] | None = None,
                    details: list[dict[str, Any] | None] | None = None) -> list[pd.DataFrame]:
    """The chunk as read and after each recoding in turn (``details``: each step's details
    merged into it, chunk after chunk)."""
    from ._suppress_check import merged_details

    rng = np.random.default_rng(0)  # the recodings are deterministic; taken by the contract
    versions = [chunk]
    for position, (options, core) in enumerate(cores, start=1):
        here = _in_chunk(options, chunk[options.column], seen, position)
        if here is None:  # none of its values in this chunk: the chunk as it is, as text
            text = _as_text(chunk[options.column])
            chunk = chunk.assign(**{options.column: text})
            found: dict[str, Any] = {"mapping": {}, "counts": counts(text),
                                     "records_changed": 0, "missing": int(text.isna().sum())}
        else:
            chunk, found = core(chunk, here, rng)
        if details is not None:
            details[position - 1] = merged_details(details[position - 1], found)
        versions.append(chunk)
    return versions


def _recoded(chunks: Iterator[pd.DataFrame], cores: list[tuple[Any, _Core]],
             seen: dict[int, set[Any]] | None = None) -> Iterator[pd.DataFrame]:
    for chunk in chunks:
        yield recode_versions(chunk, cores, seen)[-1]


def check_groups(cores: list[tuple[Any, _Core]], seen: dict[int, set[Any]]) -> None:
    """What the in-memory recoding refuses: a group naming a value the column lacks."""
    for position, (options, _) in enumerate(cores, start=1):
        if not isinstance(options, Recode) or options.groups is None:
            continue
        unknown = [old for olds in options.groups.values() for old in olds
                   if old not in seen.get(position, set())]
        if unknown:
            raise ValueError(f"Step {position} of the plan (recode): the 'groups' option "
                             f"names {len(unknown)} value(s) that column {options.column!r} "
                             f"does not have: {', '.join(map(repr, unknown[:10]))}.")


def lookup(patterns: pd.DataFrame, keys: tuple[str, ...]) -> pd.Index:
    return pd.MultiIndex.from_frame(patterns.loc[:, list(keys)].astype(object))


def blanked(chunk: pd.DataFrame, keys: tuple[str, ...], index: pd.Index,
            blank: NDArray[np.bool_]) -> tuple[pd.DataFrame, NDArray[np.intp]]:
    """The chunk with each record's keys blanked as its pattern's, the keys as text, and
    each record's pattern."""
    where = index.get_indexer(pd.MultiIndex.from_frame(chunk.loc[:, list(keys)].astype(object)))
    if (where < 0).any():
        raise RuntimeError("a record's key pattern was not counted in pass 1; the file "
                           "changed between the passes")
    out = chunk.copy()
    for j, key in enumerate(keys):
        column = chunk[key].astype(object)
        out[key] = column.where(~blank[where, j] & column.notna(), None)
    return out, where


def suppress_file(source: str | os.PathLike[str], target: str | os.PathLike[str],
                  steps: Sequence[Any], *, chunk_rows: int = 500_000,
                  sep: str | None = None) -> dict[str, Any]:
    """Run ``steps`` (recodings, then one suppression to k) over ``source`` in two passes of
    ``chunk_rows`` rows and write ``target`` (CSV or Parquet), rows in the input's order.

    Returns the figures: rows, distinct patterns, cells suppressed per key, seconds per
    pass, and the check of :func:`verify_file` on the written file.
    """
    cores, last = checked_plan(steps)
    keys = last.keys
    times = {}
    start = time.perf_counter()
    seen: dict[int, set[Any]] = {}
    patterns, counts = count_patterns(
        _recoded(iter_chunks(source, chunk_rows=chunk_rows, sep=sep), cores, seen), keys)
    check_groups(cores, seen)
    if int(counts.sum()) < max(k for _, k in last.requirements):
        raise ValueError(f"Step {len(steps)} of the plan (suppress): k is larger than the "
                         f"table, which has {int(counts.sum())} record(s).")
    times["count"] = time.perf_counter() - start
    codes = pattern_codes(patterns, keys)
    current = suppress_patterns(codes, counts, last.requirements, last.missing,
                                pattern_rank(codes, keys, last.importance))
    blank = (current < 0) & (codes >= 0)
    times["decide"] = time.perf_counter() - start - times["count"]
    index = lookup(patterns, keys)
    out = pathlib.Path(target)
    write = chunk_writer(out, sep, text=keys)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream, (blanked(chunk, keys, index, blank)[0] for chunk in
                           _recoded(iter_chunks(source, chunk_rows=chunk_rows, sep=sep),
                                    cores)))
        os.replace(temporary, out)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    times["write"] = time.perf_counter() - start - times["count"] - times["decide"]
    check = verify_file(out, last, chunk_rows=chunk_rows, sep=sep)
    times["verify"] = time.perf_counter() - start - sum(times.values())
    cells = (blank * counts[:, None]).sum(axis=0)
    return {"rows": int(counts.sum()), "patterns": len(patterns),
            "cells_suppressed": int(cells.sum()),
            "per_key": {key: int(c) for key, c in zip(keys, cells, strict=True)},
            "seconds": {name: round(s, 2) for name, s in times.items()}, "check": check}


def run_suppress_file(source: str | os.PathLike[str], target: str | os.PathLike[str],  # noqa: PLR0913 - the public face: one keyword per option
                      steps: Sequence[Any], *, identifiers: Sequence[str] = (),
                      sensitive: Sequence[str] = (), random_state: Any = None,
                      chunk_rows: int = 500_000, sep: str | None = None,
                      on_stage: Callable[[str], None] | None = None) -> Any:
    """Run ``steps`` (recodings, then one suppression to k: what :func:`suppress_file`
    runs) over ``source`` and write ``target`` (CSV or Parquet) atomically, rows in the
    input's order; the release (``engine="file"``) in the in-memory layout: each step's
    check on the written file read back with the input (``checks["steps"]``), the step
    records (details, ``columns_changed``, figures before and after each step), the
    published-columns check, the verdict. A failure, a kill or Ctrl-C leaves no output.

    ``identifiers`` are dropped; ``sensitive`` columns are published unchanged and not
    counted by the published-columns check; ``random_state`` is recorded (the plan is
    deterministic).
    """
    from ._suppress_release import run_suppress

    return run_suppress(source, target, steps, identifiers=identifiers, sensitive=sensitive,
                        random_state=random_state, chunk_rows=chunk_rows, sep=sep,
                        on_stage=on_stage)


def verify_file(path: str | os.PathLike[str], options: SuppressToK, *,
                chunk_rows: int = 500_000, sep: str | None = None) -> dict[str, Any]:
    """k on every required subset of the keys of the written file, read back in chunks and
    counted on its distinct patterns under the step's missing semantics (sdcMicro's
    ``freqCalc`` rule for ``"any"``)."""
    file = pathlib.Path(path)
    chunks = (chunk.loc[:, list(options.keys)] for chunk in read_back(file, chunk_rows, sep))
    patterns, counts = count_patterns(chunks, options.keys)
    codes = pattern_codes(patterns, options.keys)
    subsets = []
    for subset, k in options.requirements:
        sizes = pattern_sizes(codes[:, list(subset)], counts, options.missing)
        subsets.append({"keys": [options.keys[j] for j in subset], "k": k,
                        "achieved": int(sizes.min(initial=int(counts.sum()))),
                        "violating": int(counts[sizes < k].sum())})
    return {"model": f"k-anonymity on {list(options.keys)}, missing={options.missing!r}, "
                     "counted on the written file",
            "holds": all(s["violating"] == 0 for s in subsets), "rows": int(counts.sum()),
            "subsets": subsets}
