"""The stream engine from CSV to CSV (``microagg stream``): read and written incrementally,
re-checked as it is written, summed up in one :class:`~microagg._pipeline.result.Release`."""

from __future__ import annotations

import csv
import gzip
import io
import os
import pathlib
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ... import __version__
from ..._base.constraints import check_int
from ..._base.validation import RandomState, resolve_seed
from ..._pipeline.request import Request
from ..._pipeline.result import Release
from ..._pipeline.verify import group_k_check, k_check
from ...exceptions import SchemaError
from ...io._atomic import atomic_write
from ...io.tables import check_output_path
from ...partition import get_partitioner
from ...schema.schema_file import check_unique_columns
from ...steps import Microaggregate, Plan
from .. import release_params
from ._buffer import Batch, StreamEngine, checked_records
from ._input import check_params, check_scale, frame_to_matrix
from .check import StreamCheck, StreamChecker

__all__ = ["stream_csv", "stream_release"]

_EXTENSIONS = (".csv", ".txt", ".tsv", ".csv.gz", ".txt.gz", ".tsv.gz")


def _open_source(source: Any) -> tuple[Any, bool]:
    """``(what pandas reads, is_path)`` for a path, ``"-"`` (stdin) or a text handle."""
    if isinstance(source, str) and source == "-":
        return sys.stdin, False
    if isinstance(source, (str, os.PathLike)):
        path = pathlib.Path(source).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"The 'source' file {str(path)!r} does not exist.")
        return path, True
    return source, False


@dataclass(frozen=True)
class _Job:
    """The checked options of one :func:`stream_csv` call."""

    columns: list[str]
    keep: list[str]
    k: int
    delay: int
    flush_age: int
    method: str
    scale: str | NDArray[np.float64]
    seed: int
    rng: np.random.Generator
    shuffle: np.random.Generator
    sep: str
    chunk_rows: int
    index_column: str | None
    cluster_column: str | None
    delay_column: str | None

    @property
    def out_names(self) -> list[str]:
        return [*([] if self.index_column is None else [self.index_column]), *self.columns,
                *self.keep, *(c for c in (self.cluster_column, self.delay_column)
                              if c is not None)]

    @property
    def params(self) -> Mapping[str, Any]:
        """``Release.params`` in the one layout (:func:`~microagg.engines.release_params`):
        the stream's window of arrivals (``delay``, ``flush_age``) under ``blocking``, its
        running or fixed scales under ``scaling``."""
        return release_params(
            method=get_partitioner(self.method).name, k=self.k,
            quasi_identifiers=tuple(self.columns), sensitive=(), identifiers=(),
            aggregation="mean", aggregation_params=MappingProxyType({}),
            scaling=self.scale if isinstance(self.scale, str) else tuple(self.scale.tolist()),
            method_params=MappingProxyType({}), intruder_knows=(),
            t_distance=MappingProxyType({}),
            blocking=MappingProxyType({"blocking": "arrival", "delay": self.delay,
                                       "flush_age": self.flush_age}),
            group_methods=MappingProxyType({}), microagg_version=__version__,
            dates=MappingProxyType({}), rounding=MappingProxyType({}),
            plan=Plan([Microaggregate(tuple(self.columns), self.k,
                                      method=get_partitioner(self.method).name)]).to_records(),
            keep=tuple(self.keep))


def _job(options: dict[str, Any]) -> _Job:
    """Every option of :func:`stream_csv` checked (the stream's own rules, then the names)."""
    caller = "stream_csv"
    k, delay, age = check_params(options["k"], options["delay"], options["flush_age"], caller)
    scale = check_scale(options["scale"], caller)
    get_partitioner(options["method"])
    seed, rng = resolve_seed(options["random_state"])
    shuffle = np.random.default_rng(rng.integers(0, 2**63 - 1))  # own stream: same groups
    chunk_rows = check_int(options["chunk_rows"], parameter="chunk_rows", low=1,
                           caller=caller)
    job = _Job(columns=[str(c) for c in options["columns"]],
               keep=[str(c) for c in options["keep"]], k=k, delay=delay, flush_age=age,
               method=options["method"], scale=scale, seed=seed, rng=rng, shuffle=shuffle,
               sep=options["sep"], chunk_rows=chunk_rows,
               index_column=options["index_column"],
               cluster_column=options["cluster_column"], delay_column=options["delay_column"])
    if not job.columns:
        raise SchemaError("The 'columns' parameter of stream_csv must name at least one "
                          "column.")
    names = job.out_names
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise SchemaError(f"Column name(s) {', '.join(map(repr, dupes))} appear twice in the "
                          "output (columns, keep, index/cluster/delay columns).")
    return job


def stream_csv(source: str | os.PathLike[str] | IO[str],  # noqa: PLR0913 - the public face: one keyword per option
               destination: str | os.PathLike[str] | IO[str], *, columns: Sequence[str],
               k: int, delay: int, keep: Sequence[str] = (), sep: str = ",",
               chunk_rows: int = 10_000, flush_age: int = 0, method: str = "mdav",
               scale: str | ArrayLike = "running", random_state: RandomState = None,
               index_column: str | None = None, cluster_column: str | None = None,
               delay_column: str | None = None) -> Release:
    """Microaggregate a CSV stream into a CSV file, reading and writing incrementally.

    The input is read ``chunk_rows`` rows at a time; each published record is written as
    soon as it is released, in publication order, grouped by cluster: the optional arrival
    index, the ``columns`` (published values), the ``keep`` columns (copied verbatim), then
    the optional cluster and delay columns. The output is re-checked as it is written
    (:class:`StreamChecker`).

    The arrival index is not written by default: whoever knows when a person's record
    arrived would find its row by that index (and read its ``keep`` columns), whatever
    ``k``. Without it, rows are shuffled within each cluster (seeded by ``random_state``),
    so the row order does not reveal the arrival order either. The delay column reveals the
    arrival index too (arrival = publication - delay).

    The options of :func:`microagg.anonymize` this face lacks are those the stream engine does
    not run (``ENGINES["stream"].runs`` is empty: each is refused by name when a Request asks
    for it): it publishes the ``columns`` and the ``keep`` columns only, so it needs no
    identifiers or sensitive roles (every other column is dropped), and it groups records
    within a window of ``delay`` arrivals instead of blocking them
    (``Release.params["blocking"]``).

    Parameters
    ----------
    source : path, "-" or text handle
        CSV with a header row; ``"-"`` reads standard input. ``.gz`` paths are decompressed.
    destination : path, "-" or text handle
        A path is written to a temporary file beside it and renamed onto it at the end
        (nothing is left on failure); ``"-"`` (standard output) or a handle is written as
        the stream goes and flushed after each publication, so a failure leaves what was
        already published there.
    columns : sequence of str
        The numeric quasi-identifiers to microaggregate.
    k, delay, flush_age, method, scale, random_state
        As in :func:`~.engine.anonymize_stream`.
    keep : sequence of str, default=()
        Other columns published unchanged (e.g. sensitive attributes); every other input
        column is dropped. Never list identifiers here.
    sep : str, default=","
        Field separator of input and output.
    chunk_rows : int, default=10_000
        Rows read at a time (smaller means lower latency on a live pipe).
    index_column : str, optional
        When given, write the arrival index (0-based) first under that name, to join the
        output back to the input; keep such a file with the data holder (see above).
    cluster_column, delay_column : str, optional
        When given, also write each record's cluster number / delay under that name.

    Returns
    -------
    Release
        The end-of-stream summary (``engine="stream"``; ``data`` and ``labels`` are
        ``None``): ``checks`` re-derived from the written output (:class:`StreamChecker`:
        ``k_anonymity``, ``group_k``, ``delay``), ``metrics`` (clusters, records published
        with a reused cluster), ``output`` (the path, or ``None`` for a handle), ``rows``.

    Raises
    ------
    SchemaError
        A listed column is missing from the header (the valid names are listed), or a column
        is listed twice.
    ValueError, TypeError
        As :func:`anonymize_stream`, with the arrival index (the data row number, 0-based)
        and the column of a bad value.
    """
    started = time.perf_counter()
    options = dict(locals())
    job = _job(options)
    reader_input, is_path = _open_source(source)
    target: pathlib.Path | None = None
    if isinstance(destination, (str, os.PathLike)) and str(destination) != "-":
        target = check_output_path(destination, inputs=[reader_input] if is_path else [],
                                   extensions=_EXTENSIONS, parameter="destination")
    if target is None:
        handle = sys.stdout if destination is None or str(destination) == "-" else destination
        checker, check = _run(job, reader_input, handle, flush=True)  # type: ignore[arg-type]
    else:
        checker, check = _write_atomically(job, reader_input, target)
    return stream_release(checker, check, params=job.params, seed=job.seed, output=target,
                          columns=tuple(job.out_names),
                          timings={"total": time.perf_counter() - started})


def _frames(job: _Job, reader_input: Any) -> Iterator[tuple[pd.DataFrame, NDArray[Any]]]:
    """The source in chunks: the quasi-identifiers, and the kept columns as text."""
    wanted = set(job.columns) | set(job.keep)
    reader = pd.read_csv(reader_input, sep=job.sep, chunksize=job.chunk_rows,
                         usecols=lambda c: c in wanted, dtype=dict.fromkeys(job.keep, str),
                         keep_default_na=False, **_checked_header(job, reader_input))
    with reader:
        first = True
        for chunk in reader:
            if first:
                missing = [c for c in (*job.columns, *job.keep) if c not in chunk.columns]
                if missing:
                    raise SchemaError(f"Column(s) {', '.join(map(repr, missing))} are not in "
                                      "the header of stream_csv's source.")
                _request(job, chunk)
                first = False
            yield chunk[job.columns], chunk[job.keep].to_numpy(dtype=object)


def _checked_header(job: _Job, reader_input: Any) -> dict[str, Any]:
    """Refuse a header that repeats a column name (pandas would read the second ``age`` as
    ``age.1`` and the stream would mask only the first), as every command does
    (:func:`~microagg.schema.check_unique_columns`); the keywords that read the rest.

    A file's header is read on its own first; a stream's (standard input, a handle) is read
    off it here, and its names handed to pandas for the rest (``header=None``)."""
    if isinstance(reader_input, pathlib.Path):
        try:
            head = pd.read_csv(reader_input, sep=job.sep, header=None, nrows=1, dtype=str,
                               keep_default_na=False)
        except pd.errors.EmptyDataError:
            return {}
        names = [str(v) for v in head.iloc[0]] if len(head) else []
        check_unique_columns([n for n in names if n], source=f"input file {str(reader_input)!r}")
        return {}
    line = reader_input.readline()
    if not line.strip():  # no header: pandas says so, as for a file
        return {}
    names = next(csv.reader([line], delimiter=job.sep))
    check_unique_columns([n for n in names if n], source="the input stream")
    return {"header": None,
            "names": [n or f"Unnamed: {i}" for i, n in enumerate(names)]}


def _request(job: _Job, first_rows: pd.DataFrame) -> Request:
    """The Request of the stream, built from its first rows: the roles, the column types and
    the method checked as for every engine (the stream's own options, delay and flush age,
    were checked by :func:`_job`)."""
    return Request.build(first_rows.loc[:, [*job.columns, *job.keep]],
                         quasi_identifiers=job.columns, k=job.k, method=job.method,
                         random_state=job.seed, engine="stream")


def _run(job: _Job, reader_input: Any, handle: IO[str], *, flush: bool
         ) -> tuple[StreamChecker, StreamCheck]:
    """Stream ``reader_input`` into ``handle``, checking every written record."""
    writer = csv.writer(handle, delimiter=job.sep, lineterminator="\n")
    writer.writerow(job.out_names)
    checker = StreamChecker(k=job.k, delay=job.delay)
    engine: StreamEngine | None = None
    for frame, payload in _frames(job, reader_input):
        start = 0 if engine is None else engine.n_seen
        X = frame_to_matrix(frame, start, job.columns)
        if X.shape[0] == 0:
            continue
        if engine is None:
            engine = StreamEngine(X.shape[1], k=job.k, delay=job.delay, flush_age=job.flush_age,
                             method=job.method, scale=job.scale, rng=job.rng,
                             payload_width=len(job.keep))
        for batch in engine.push(X, payload):
            _write_batch(writer, batch, job, checker)
            if flush:
                handle.flush()
    if engine is not None:
        for batch in engine.close():
            _write_batch(writer, batch, job, checker)
    handle.flush()
    return checker, checker.result(None if engine is None else engine.n_seen)


def _write_atomically(job: _Job, reader_input: Any, target: pathlib.Path
                      ) -> tuple[StreamChecker, StreamCheck]:
    """:func:`_run` into a temporary file beside ``target`` (gzip for ``.gz``), renamed onto
    it when the whole stream is written and checked."""
    results: list[tuple[StreamChecker, StreamCheck]] = []

    def write(raw: IO[bytes]) -> None:
        binary: IO[bytes] = raw
        gz = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if target.suffix == ".gz" \
            else None
        if gz is not None:
            binary = gz  # type: ignore[assignment]
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        try:
            results.append(_run(job, reader_input, text, flush=False))
            text.flush()
        finally:
            text.detach()
            if gz is not None:
                gz.close()

    atomic_write(target, write)
    return results[0]


def _write_batch(writer: Any, batch: Batch, job: _Job, checker: StreamChecker) -> None:
    records = checked_records(batch, job.k)
    payload = batch.payload
    order: Iterable[int] = range(len(records))
    if job.index_column is None and len(records):
        # without the arrival index, shuffle within each cluster so that the order of the
        # rows does not reveal the order of arrival either
        perm = job.shuffle.permutation(len(records))
        order = perm[np.argsort(batch.cluster[perm], kind="stable")].tolist()
    for r in order:
        record = records[r]
        checker.update(record)
        row: list[Any] = [record.arrival] if job.index_column is not None else []
        row.extend(record.values)
        if payload is not None:
            row.extend(payload[r])
        if job.cluster_column is not None:
            row.append(record.cluster)
        if job.delay_column is not None:
            row.append(record.delay)
        writer.writerow(row)


def stream_release(checker: StreamChecker, check: StreamCheck, *, params: Mapping[str, Any],
                   seed: int, output: pathlib.Path | None, columns: tuple[str, ...],
                   timings: dict[str, float]) -> Release:
    """The end-of-stream summary of a checked stream, as a Release (``engine="stream"``):
    the verifier's levels as ``checks`` (:func:`~microagg._pipeline.verify.k_check`,
    :func:`~microagg._pipeline.verify.group_k_check`, the delay), the clusters as
    ``metrics``."""
    k = checker.k
    checks: dict[str, Any] = {"k_anonymity": MappingProxyType({
        "required": k, "achieved": 0, "model": "nothing was published (an empty stream)"})}
    if check.n_samples:
        checks = {"k_anonymity": k_check(k, check.k), "group_k": group_k_check(
            k, checker.smallest_cluster, "records of the smallest cluster when it was first "
            "published (the stream's tail may join a published cluster later)")}
    checks["delay"] = MappingProxyType({
        "required": checker.delay, "achieved": check.max_delay,
        "model": "largest number of arrivals between a record's own and its publication"})
    return Release.of(data=None, labels=None, params=params, seed=seed, checks=checks,
                      metrics={"n_clusters": check.n_clusters, "n_reused": check.n_reused},
                      timings=timings, engine="stream", output=output,
                      rows=check.n_samples, columns=columns)
