"""The file engine: release a file too large for memory: stream, block, microaggregate block
by block, write in the input's order (seed 001, section 2.6).

Four streaming passes over the input, each holding one chunk (``chunk_rows`` rows) at a time:

1. **statistics and sample**: exact means and standard deviations of the quasi-identifiers
   (for the z-scores) and a uniform random sample of ``sample_size`` rows;
2. **routing**: a block tree fitted on the scaled sample (:mod:`microagg.partition.blocking`)
   sends every row of every chunk to a block; each chunk's rows are spilled to a temporary
   run file sorted by block;
3. **microaggregation**: block by block (worker processes), the rows of a block are read
   back from every run, partitioned with the chosen method (a block that the sample made
   too large is blocked again in memory; blocks under 2k records join their neighbour in the
   tree's order), and each block's records (row, group, group mean) written contiguously
   to a part file of its own, sorted by row (:mod:`._blocks`, :mod:`._parts`);
   When the method has a ``refine_across`` local search (``mdav-scale``, the quality
   mode's method for files), whole groups are then routed again by their centroids through
   a second tree on a random rotation and each second block is improved by that search,
   which mends the first blocks' borders (:mod:`._regroup`);
4. **output**: the input is read again, its quasi-identifiers replaced (the parts merged
   back into input order, chunk by chunk), identifiers
   dropped, and the chunks written to a temporary file beside the output, which is then read
   back and verified (:class:`~microagg._pipeline.verify.GroupVerifier`: every published row
   equals its group's mean, every group has at least k rows, and the classes of identical
   published rows are counted) before it is renamed onto the output. Any failure leaves no
   output.

The other columns are published as the in-memory engine publishes them
(:mod:`._published`): as read (CSV to CSV byte for byte; CSV to Parquet a column as
numbers only when every field of the file round-trips, pass 1 judging it, else as its text),
and each one without a role is checked for the k it leaves to an intruder who knows it too
(``checks["published_columns"]``, counted as the output is written and read back).

Memory: one chunk, the sample, one block per worker, and a few integers per block and chunk
(the parts' fences); the verification keeps one row per group (n p / k numbers: 1.6 GB at
10^8 x 10, k = 5), and the check of the published columns one bucket of (group, value)
counts at a time (about a chunk's rows; the buckets are spilled to the work folder). Temporary files (the spilled runs, and the first
pass's parts when a second pass follows, hold original values; each is deleted once read)
go to a private folder (0700, files 0600) under ``workdir`` (default: the
system temporary folder, ``$TMPDIR``), never beside the output, and are removed at the end;
those of a killed run are removed by the next run (:mod:`microagg.io._leftovers`).
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.validation import RandomState, resolve_seed
from ..._pipeline.request import Request
from ..._pipeline.result import Release
from ..._pipeline.unmasked import broken_columns_check, warn_broken_k
from ..._pipeline.verify import GroupVerifier, group_k_check, k_check
from ...exceptions import PrivacyViolationError, SchemaError
from ...io._atomic import atomic_write
from ...io._formats import format_of
from ...io._leftovers import private_file, remove_dead_partials, work_folder
from .._chunks import chunk_writer, iter_chunks, output_separator, quasi_identifier_chunk, read_back
from .._reads_files import constant_columns, engine_params, file_paths, file_request, plan_options
from ._blocks import Blocks, microaggregate, route
from ._parts import InputOrder
from ._prefetch import prefetched
from ._published import AsText, PairCounts
from ._regroup import regroup, second_pass_follows

if TYPE_CHECKING:  # pragma: no cover
    from ...steps import Plan

__all__ = ["anonymize_file", "iter_chunks", "run_file"]


@dataclass
class _Reading:
    """How the passes read the input, and what the first pass learned."""

    source: pathlib.Path
    sep: str | None
    chunk_rows: int
    csv_lines: bool
    n: int = 0
    columns: list[str] = field(default_factory=list)
    mean: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    scale: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    varying: NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, dtype=bool))
    sample: NDArray[np.float64] = field(default_factory=lambda: np.empty((0, 0)))
    as_text: AsText = field(default_factory=lambda: AsText(()))
    """The pass-through columns judged for a typed output (CSV to Parquet; else none)."""

    def chunks(self, **options: Any) -> Iterator[pd.DataFrame]:
        """The input's chunks, the next read in a thread while this one is worked on."""
        return prefetched(iter_chunks(self.source, chunk_rows=self.chunk_rows, sep=self.sep,
                                      **options))

    def with_text(self, columns: Sequence[str], **options: Any
                  ) -> Iterator[tuple[pd.DataFrame, pd.DataFrame | None]]:
        """The input's chunks, each with the same rows' fields of ``columns`` as their text
        (a second reader in step; ``None`` when no column is asked for)."""
        if not columns:
            for chunk in self.chunks(**options):
                yield chunk, None
            return
        yield from zip(self.chunks(**options),
                       self.chunks(verbatim=True, columns=list(columns)), strict=True)

    def first_pass(self) -> Iterator[pd.DataFrame]:
        """The parsed chunks of pass 1, the pass-through columns judged on the way."""
        for chunk, fields in self.with_text(list(self.as_text.rules)):
            if fields is not None:
                self.as_text.add(chunk, fields)
            yield chunk


def anonymize_file(input_path: str | os.PathLike[str],  # noqa: PLR0913 - the public face: one keyword per option
                   output_path: str | os.PathLike[str], *,
                   quasi_identifiers: Sequence[str] | None = None, k: int | None = None,
                   method: str | None = None, sensitive: str | Sequence[str] = (),
                   identifiers: Sequence[str] = (), keep: str | Sequence[str] = (),
                   blocking: str = "kd", block_size: int | None = None, sample_size: int = 200_000,
                   chunk_rows: int = 500_000, n_jobs: int | None = None,
                   random_state: RandomState = None, sep: str | None = None,
                   method_params: dict[str, Any] | None = None,
                   refine: float | None = None, plan: Plan | None = None,
                   households: str | None = None, workdir: str | os.PathLike[str] | None = None,
                   on_stage: Callable[[str], None] | None = None) -> Release:
    """Microaggregate a CSV or Parquet file larger than memory (see the module docstring).

    The options of :func:`microagg.anonymize` this face lacks are those the file engine
    does not run (the others of :data:`~microagg.engines.REFUSABLE`: survey roles, privacy
    models, noisy or DP releases, dates, rounding, missing values; ``microagg anonymize
    --engine file`` refuses each by name): use :func:`microagg.anonymize` for them.

    Parameters
    ----------
    input_path, output_path : path-like
        CSV (``.csv``, ``.tsv``, ``.txt``, optionally ``.gz``) or Parquet files; the output
        must not be the input.
    quasi_identifiers : sequence of str
        Numeric columns to mask (z-scored for the distances, averaged on their own scale);
        from ``plan`` when given.
    k : int
        Minimum group size; from ``plan`` when given.
    method : str, default=None
        The partitioner run in each block (``None``: ``"mdav"``).
    sensitive : str or sequence of str, default=()
        Confidential columns: published unchanged, recorded in ``params["sensitive"]``, and
        not counted by the check of the columns published unchanged.
    identifiers : sequence of str, default=()
        Columns dropped from the output. Every other column is copied unchanged.
    keep : str or sequence of str, default=()
        Columns published unchanged on purpose although they look like direct identifiers
        (otherwise refused); recorded in ``params["keep"]``, as in memory.
    blocking : {"kd", "pca", "vp"}, default="kd"
    block_size : int, default=None
        Target block size (at least 2k; blocks routed by the sample vary around it).
        ``None``: the method's default (10,000; for ``mdav-scale``, the quality mode's
        method, 2,500,000 records of up to 10 columns, 25 million values in wider data:
        3.0 GiB in all for 10^7 rows of 10 columns with two workers).
    sample_size : int, default=200_000
        Rows sampled to fit the block tree.
    chunk_rows : int, default=500_000
        Rows per chunk read.
    n_jobs : int, default=None
        Worker processes (``None``: one per CPU).
    random_state : None, int or numpy.random.Generator, default=None
        The single seed (recorded).
    sep : str, default=None
        CSV separator (detected when omitted).
    method_params : dict, default=None
        Parameters of ``method``.
    refine : float, default=None
        The quality mode: seconds of local search (``> 0``); with ``method`` ``"mdav"``
        (the default) or ``"mdav-scale"`` it runs ``mdav-scale`` in the blocks and then
        across their borders (the module docstring, pass 3).
    plan : microagg.steps.Plan, default=None
        A plan of one ``microaggregate`` step: the same release as its options given as
        keywords (``quasi_identifiers``, ``k``, ``method``... then not given). Two plans of
        more steps run in chunks, the same runners as ``microagg anonymize --engine file``:
        ``swap_households`` then at most one ``pram``
        (:func:`~microagg.engines.file.plan_census.run_census_file`; give ``households``),
        and ``recode`` / ``band`` with breaks / ``topcode`` with fixed codes then one
        heuristic ``suppress`` (:func:`~microagg.engines.file.plan_suppress.run_suppress_file`;
        ``sensitive`` published unchanged). With them only ``identifiers``,
        ``random_state``, ``chunk_rows``, ``sep`` and ``on_stage`` apply (and ``households``
        or ``sensitive``); any other keyword given is refused by name (TypeError). Every
        other plan runs in memory only and is refused (:func:`microagg.anonymize`).
    households : str, default=None
        The household id column of a plan that swaps households (dropped from the output).
    workdir : path-like, default=None
        Where to create the private work folder (needs about 2 x n x p x 8 bytes; it holds
        the original values); ``None``: the system temporary folder (``$TMPDIR``).
    on_stage : callable, default=None
        Called with the name of each stage as it starts (for progress displays).

    Returns
    -------
    Release
        ``engine="file"``: ``data`` and ``labels`` are ``None``, the table is in
        :attr:`~Release.output` (``rows``, ``columns``); ``checks`` are re-derived from the
        written file.

    Raises
    ------
    SchemaError
        A missing, non-numeric or incomplete quasi-identifier (naming the line or row).
    PrivacyViolationError
        The written file fails a check (a bug; the output is removed).
    TypeError, ValueError
        A plan run in chunks with a keyword it does not take, or a step it cannot run in
        chunks (naming the step and the in-memory engine).
    """
    from ._plans import chunked_plan, plan_kind

    if plan is not None and plan_kind(plan) is not None:
        return chunked_plan(plan, input_path, output_path, dict(
            quasi_identifiers=quasi_identifiers, k=k, method=method, keep=keep,
            blocking=None if blocking == "kd" else blocking, block_size=block_size,
            n_jobs=n_jobs, method_params=method_params, refine=refine, workdir=workdir,
            sample_size=None if sample_size == 200_000 else sample_size),
            households=households, identifiers=identifiers, sensitive=sensitive,
            random_state=random_state, chunk_rows=chunk_rows, sep=sep, on_stage=on_stage)
    options = plan_options(plan, engine="file", caller="anonymize_file",
                           quasi_identifiers=quasi_identifiers, k=k, method=method,
                           method_params=method_params)
    source, target = file_paths(input_path, output_path)
    request = file_request(source, engine="file", sep=sep, sensitive=sensitive,
                           identifiers=identifiers, keep=keep, blocking=blocking,
                           block_size=block_size, n_jobs=n_jobs, random_state=random_state,
                           refine=refine, **options)
    return run_file(request, source, target, sep=sep, on_stage=on_stage,
                    sample_size=sample_size, chunk_rows=chunk_rows, workdir=workdir)


def run_file(request: Request, source: pathlib.Path, target: pathlib.Path, *,
             sep: str | None = None, on_stage: Callable[[str], None] | None = None,
             sample_size: int = 200_000, chunk_rows: int = 500_000,
             workdir: str | os.PathLike[str] | None = None) -> Release:
    """Run ``request`` (built by :func:`~.._reads_files.file_request` with ``engine="file"``) from
    ``source`` to ``target``; the passes of the module docstring. Validation is assumed."""
    timings: dict[str, float] = {}
    notes: list[str] = []
    seed, rng = resolve_seed(request.random_state)
    stage = on_stage or (lambda name: None)
    reading = _Reading(source, sep, chunk_rows, format_of(source, parameter="input")[0] == "csv")
    if reading.csv_lines and format_of(target, parameter="output")[0] != "csv":
        reading.as_text = AsText(c for c in map(str, request.data.columns)
                                 if c not in request.quasi_identifiers
                                 and c not in request.identifiers)
    remove_dead_partials(target.parent)
    with work_folder(workdir) as work:
        stage("statistics")
        t = time.perf_counter()
        _statistics(request, reading, rng, sample_size)
        constant_columns(request, reading.varying, notes)
        timings["statistics"] = time.perf_counter() - t
        stage("routing")
        t = time.perf_counter()
        blocks = route(request, reading.chunks(columns=list(request.quasi_identifiers)),
                       _checked_values(request, reading),
                       Blocks(n=reading.n, p=len(request.quasi_identifiers), mean=reading.mean,
                              scale=reading.scale, work=work, bucket=reading.chunk_rows),
                       reading.sample)
        timings["routing"] = time.perf_counter() - t
        stage("microaggregation")
        t = time.perf_counter()
        microaggregate(request, blocks, seed, values=second_pass_follows(request, reading.n))
        timings["microaggregation"] = time.perf_counter() - t
        t = time.perf_counter()
        if regroup(request, blocks, reading.sample, seed):
            timings["refinement_across_blocks"] = time.perf_counter() - t
        stage("writing")
        checks = _write_and_verify(request, reading, blocks, target, timings, notes)
    timings["total"] = time.perf_counter() - request.started
    return _release(request, reading, blocks, target, checks, seed, notes, timings,
                    sample_size)


def _checked_values(request: Request, reading: _Reading
                    ) -> Callable[[pd.DataFrame, int], NDArray[np.float64]]:
    qi = request.quasi_identifiers
    return lambda chunk, first: quasi_identifier_chunk(chunk, qi, first, reading.csv_lines)


def _statistics(request: Request, reading: _Reading, rng: np.random.Generator,
                sample_size: int) -> None:
    """Pass 1: the rows counted, exact means and standard deviations (shifted sums), and a
    uniform sample (the rows of the smallest random keys)."""
    qi = request.quasi_identifiers
    n = 0
    shift = s1 = s2 = None
    peak = np.zeros(len(qi))  # each column's largest magnitude, to name an overflow
    keys = np.empty(0)
    sample = np.empty((0, len(qi)))
    for chunk in reading.first_pass():
        reading.columns = reading.columns or [str(c) for c in chunk.columns]
        if len(chunk) == 0:
            continue
        values = quasi_identifier_chunk(chunk, qi, n, reading.csv_lines)
        if shift is None:
            shift, s1, s2 = values.mean(axis=0), np.zeros(len(qi)), np.zeros(len(qi))
        peak = np.maximum(peak, np.abs(values).max(axis=0))
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, by column
            d = values - shift
            s1, s2 = s1 + d.sum(axis=0), s2 + (d * d).sum(axis=0)
        keys = np.concatenate([keys, rng.random(values.shape[0])])
        sample = np.concatenate([sample, values])
        if keys.size > sample_size:
            keep = np.argpartition(keys, sample_size - 1)[:sample_size]
            keys, sample = keys[keep], sample[keep]
        n += values.shape[0]
    request.check_rows(n)
    assert shift is not None and s1 is not None and s2 is not None  # n > 0
    mean = shift + s1 / n
    with np.errstate(over="ignore", invalid="ignore"):
        std = np.sqrt(np.maximum((s2 - s1 * s1 / n) / max(n - 1, 1), 0.0))
    _refuse_overflow(qi, np.isfinite(mean) & np.isfinite(std), peak)
    reading.varying = std > 1e-12 * np.maximum(1.0, np.abs(mean))
    reading.n, reading.mean, reading.sample = n, mean, sample
    reading.scale = np.where(reading.varying, std, 1.0)


def _refuse_overflow(qi: Sequence[str], finite: NDArray[np.bool_],
                     peak: NDArray[np.float64]) -> None:
    """Refuse the columns whose squared deviations overflow, naming each and its largest
    magnitude (the engine standardizes them with a variance summed from the squares)."""
    bad = [f"{col!r} (largest magnitude {peak[j]:.3g})" for j, col in enumerate(qi)
           if not finite[j]]
    if bad:
        raise SchemaError(
            f"The file engine cannot standardize quasi-identifier(s) {', '.join(bad)}: the "
            "squares of values of that magnitude overflow the largest float. Divide the "
            "column by a power of ten first, or use the in-memory engine, which rescales "
            "such columns exactly.")


def _published_chunks(request: Request, reading: _Reading, results: InputOrder,
                      verbatim: bool, labels_out: IO[bytes], pairs: PairCounts | None
                      ) -> Iterator[pd.DataFrame]:
    """The input again, quasi-identifiers replaced, identifiers dropped (CSV to CSV: the other
    columns as their text, byte for byte; CSV to Parquet: the columns of
    ``reading.as_text`` as their text); each row's group label appended to ``labels_out``
    in the same order (for the verification, which then need not merge the parts again), and
    the parsed rows counted in ``pairs`` (the check of the published columns)."""
    kept = [c for c in reading.columns if c not in request.identifiers]
    text = reading.as_text.columns
    first = 0
    for chunk, fields in reading.with_text(text, verbatim=verbatim):
        stop = first + len(chunk)
        out = chunk.loc[:, kept].copy()
        labels, block = results.take(first, stop)
        labels.tofile(labels_out)
        if pairs is not None:
            pairs.add(labels, chunk)
        for j, col in enumerate(request.quasi_identifiers):
            out[col] = block[:, j]
        if fields is not None:
            for col in text:  # as in memory: the fields, an empty one missing
                out[col] = fields[col].where(fields[col] != "").set_axis(out.index)
        first = stop
        yield out


def _write_and_verify(request: Request, reading: _Reading, blocks: Blocks,
                      target: pathlib.Path, timings: dict[str, float], notes: list[str]
                      ) -> dict[str, Any]:
    """Pass 4: write the published chunks to a temporary file, read it back and verify it
    (:class:`GroupVerifier`, and the published columns that break k), then rename it onto
    ``target``; returns the checks (a broken column's warning goes to ``notes``)."""
    t = time.perf_counter()
    n, p, k = reading.n, len(request.quasi_identifiers), request.k
    verbatim = reading.csv_lines and format_of(target, parameter="output")[0] == "csv"
    out_sep = output_separator(target, reading.sep)
    write = chunk_writer(target, out_sep, text=reading.as_text.columns)
    checks: dict[str, Any] = {}
    results = InputOrder(blocks.parts, bucket=blocks.bucket, p=p)
    roles = {*request.quasi_identifiers, *request.sensitive, *request.identifiers}
    checked = [c for c in reading.columns if c not in roles]
    pairs = PairCounts(checked, blocks.work, -(-n // reading.chunk_rows)) if checked else None

    def write_and_verify(handle: IO[bytes]) -> None:
        with open(private_file(blocks.work / "labels.i64"), "wb") as labels_out:
            # CSV to CSV publishes text: its parsed values are counted as read back
            write(handle, _published_chunks(request, reading, results, verbatim, labels_out,
                                            None if verbatim else pairs))
        handle.flush()
        t_verify = time.perf_counter()
        verifier = GroupVerifier(k=k, n_groups=results.most + 1, n_features=p)
        with open(blocks.work / "labels.i64", "rb") as labels_in:
            for chunk in prefetched(read_back(pathlib.Path(handle.name), reading.chunk_rows,
                                              out_sep)):
                values = chunk.loc[:, list(request.quasi_identifiers)].to_numpy(np.float64)
                labels = np.fromfile(labels_in, dtype=np.int64, count=len(chunk))
                if labels.size != len(chunk):
                    raise PrivacyViolationError(
                        f"The written file has more rows than the {n} published. Nothing "
                        "was released. This is a bug in microagg.")
                verifier.add(labels, values)
                if verbatim and pairs is not None:
                    pairs.add(labels, chunk)
        group_min = verifier.finish(n_rows=n)
        checks["k_anonymity"] = k_check(k, verifier.smallest_class())
        checks["group_k"] = group_k_check(
            k, group_min, "size of the smallest group over which each mean is computed "
            "(read back from the written file)")
        if pairs is not None:
            _published_columns(pairs, verifier, k, checks, notes)
        timings["verify"] = time.perf_counter() - t_verify

    atomic_write(target, write_and_verify)
    timings["writing"] = time.perf_counter() - t - timings.get("verify", 0.0)
    return checks


def _published_columns(pairs: PairCounts, verifier: GroupVerifier, k: int,
                       checks: dict[str, Any], notes: list[str]) -> None:
    """``checks["published_columns"]`` and its warning, when a published column breaks k."""
    smallest = pairs.smallest(verifier.group_classes())
    check = broken_columns_check({c: v for c, v in smallest.items() if v < k}, k)
    if check is not None:
        checks["published_columns"] = check
        warn_broken_k(check, notes)


def _release(request: Request, reading: _Reading, blocks: Blocks, target: pathlib.Path,  # noqa: PLR0913 - everything a release records
             checks: dict[str, Any], seed: int, notes: list[str], timings: dict[str, float],
             sample_size: int) -> Release:
    sst = float((reading.n - 1) * np.count_nonzero(reading.varying))
    return Release.of(
        data=None, labels=None,
        params=engine_params(request, sample_size=int(sample_size)),
        seed=seed, checks=checks,
        metrics={
            "information_loss": 100.0 * blocks.sse / sst if sst > 0 else 0.0,
            "n_blocks": len(blocks.plan), "n_groups": blocks.n_groups,
            "group_size_min": blocks.group_min,
        },
        warnings=notes, timings=timings, engine="file", output=target, rows=reading.n,
        columns=(c for c in reading.columns if c not in request.identifiers))
