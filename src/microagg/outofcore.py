"""Out-of-core release of a file too large for memory: stream, block, microaggregate block by
block, write in the input's order (issue 9; seed 001, section 2.6).

Four streaming passes over the input, each holding one chunk (``chunk_rows`` rows) at a time:

1. **statistics and sample**: exact means and standard deviations of the quasi-identifiers
   (for the z-scores) and a uniform random sample of ``sample_size`` rows;
2. **routing**: a block tree fitted on the scaled sample (:mod:`microagg.partition.blocking`)
   sends every row of every chunk to a block; each chunk's rows are spilled to a temporary
   run file sorted by block;
3. **microaggregation**: block by block (worker processes), the rows of a block are read
   back from every run, partitioned with the chosen method (a block that the sample made
   too large is blocked again in memory; blocks under 2k records join their neighbour in the
   tree's order), and their group means written to a file-backed result array;
4. **output**: the input is read again, its quasi-identifiers replaced, identifiers
   dropped, and the chunks written to a temporary file beside the output, which is then read
   back and verified (every published row equals its group's mean, every group has at
   least k rows, hence the published quasi-identifiers are k-anonymous) before it is renamed
   onto the output. Any failure leaves no output.

Memory: one chunk, the sample, one block per worker, and O(n) integers for the group labels;
the result array lives in a temporary file. Temporary files (the spilled runs hold the
original values) go to a private folder (0700, files 0600) under ``workdir`` (default: the
system temporary folder, ``$TMPDIR``), never beside the output, and are removed at the end;
those of a killed run are removed by the next run (:mod:`microagg._leftovers`).
"""

from __future__ import annotations

import gzip
import os
import pathlib
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import __version__
from ._groups import group_means
from ._leftovers import make_work_folder, private_file, remove_dead_partials
from ._validation import RandomState, check_k, resolve_seed
from .exceptions import PrivacyViolationError, SchemaError
from .io import (
    VERBATIM_CSV,
    _atomic_write,
    _format_of,
    _require_pyarrow,
    _sniff_separator,
    check_csv_header,
)
from .partition import get_partitioner
from .partition.blocking import BLOCKINGS, blocked_partition, fit_block_tree, process_pool
from .schema import check_unique_columns

__all__ = ["FileRelease", "anonymize_file", "iter_chunks"]


@dataclass(frozen=True)
class FileRelease:
    """What a file-to-file release did (``--engine file`` or ``dask``); the data is in the
    output file, verified there."""

    output: pathlib.Path
    rows: int
    params: Mapping[str, Any]
    seed: int
    checks: Mapping[str, Any]
    metrics: Mapping[str, Any]
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return int(self.checks["k_anonymity"]["achieved"])


# ------------------------------------------------------------------------------------------
# reading in chunks


def iter_chunks(path: str | os.PathLike[str], *, chunk_rows: int = 500_000,
                sep: str | None = None, columns: Sequence[str] | None = None,
                verbatim: bool = False) -> Iterator[pd.DataFrame]:
    """Yield a CSV or Parquet file as DataFrames of at most ``chunk_rows`` rows, in order.

    Parquet is read by record batches (pyarrow); CSV by pandas' chunked C parser, whose
    errors name the line of a malformed row (``Expected 3 fields in line 7, saw 4``).
    ``verbatim=True`` keeps every CSV field as its text (:data:`~microagg.io.VERBATIM_CSV`).
    A repeated column name is refused (pandas would rename it).
    """
    file = pathlib.Path(path).expanduser()
    fmt, compression = _format_of(file, parameter="input")
    if fmt == "parquet":
        _require_pyarrow(file)
        import pyarrow.parquet as pq

        reader = pq.ParquetFile(file)
        check_unique_columns(reader.schema_arrow.names, source=f"input file {str(file)!r}")
        for batch in reader.iter_batches(batch_size=chunk_rows,
                                         columns=list(columns) if columns else None):
            yield batch.to_pandas()
        return
    separator = sep or _sniff_separator(file, compression)
    check_csv_header(file, sep=separator)
    with pd.read_csv(file, sep=separator, chunksize=chunk_rows, compression=compression,
                     usecols=list(columns) if columns else None,
                     **(VERBATIM_CSV if verbatim else {})) as reader:
        yield from reader


def _quasi_identifier_chunk(chunk: pd.DataFrame, qi: Sequence[str], first_row: int,
                            csv_lines: bool) -> NDArray[np.float64]:
    """The chunk's quasi-identifiers as float64; errors name the column and the line/row."""
    missing = [c for c in qi if c not in chunk.columns]
    if missing:
        raise SchemaError(f"Quasi-identifier column(s) {', '.join(map(repr, missing))} are not "
                          f"in the input; its columns: {', '.join(map(str, chunk.columns))}.")
    bad = [f"{c!r} (dtype {chunk[c].dtype})" for c in qi
           if not pd.api.types.is_numeric_dtype(chunk[c]) or pd.api.types.is_bool_dtype(chunk[c])]
    where = "line" if csv_lines else "row"
    offset = 2 if csv_lines else 1  # the header is line 1
    if bad:
        col = next(c for c in qi if not pd.api.types.is_numeric_dtype(chunk[c]))
        numbers = pd.to_numeric(chunk[col], errors="coerce")
        first = int(np.flatnonzero(numbers.isna() & chunk[col].notna())[0]) \
            if (numbers.isna() & chunk[col].notna()).any() else 0
        raise SchemaError(
            f"Quasi-identifiers must be numeric; not numeric: {', '.join(bad)}. First "
            f"non-numeric value {chunk[col].iloc[first]!r} in column {col!r} at {where} "
            f"{first_row + first + offset}.")
    values = chunk.loc[:, list(qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(values)
    if not finite.all():
        row, j = np.argwhere(~finite)[0]
        count = int((~finite).sum())
        raise SchemaError(
            f"Quasi-identifier {qi[j]!r} has a missing or infinite value at {where} "
            f"{first_row + int(row) + offset} ({count} such values in rows "
            f"{first_row + offset}..{first_row + len(chunk) + offset - 1}); microagg never "
            "imputes silently.")
    return np.ascontiguousarray(values)


# ------------------------------------------------------------------------------------------
# the block work (top level: runs in worker processes)


def _block_task(args: tuple[Any, ...]) -> tuple[float, int, int]:
    """Partition one block and write its group means and labels into the result files.

    Returns (SSE in scaled units, smallest group, number of groups)."""
    (runs, pieces, n, p, result_path, label_path, mean, scale, k, method, params, seed,
     block_size, label_offset) = args
    ids = np.concatenate([np.load(runs[r][0], mmap_mode="r")[a:b] for r, a, b in pieces])
    values = np.concatenate([np.load(runs[r][1], mmap_mode="r")[a:b] for r, a, b in pieces])
    scaled = (values - mean) / scale
    if values.shape[0] > 2 * block_size:  # the sample under-estimated this block
        labels = blocked_partition(scaled, k, method=method, block_size=block_size,
                                   n_jobs=1, random_state=seed, **params)
    elif values.shape[0] < 2 * k:
        labels = np.zeros(values.shape[0], dtype=np.intp)
    else:
        labels = get_partitioner(method)(scaled, k, random_state=seed, **params)
    sizes = np.bincount(labels)
    masked = group_means(values, labels)[labels]
    # shared file mappings: the other processes see these pages through the page cache, so
    # no msync (flushing every block to disk cost more than the microaggregation)
    result = np.memmap(result_path, dtype=np.float64, mode="r+", shape=(n, p))
    result[ids] = masked
    del result
    out_labels = np.memmap(label_path, dtype=np.int64, mode="r+", shape=(n,))
    out_labels[ids] = labels + label_offset
    del out_labels
    sse = float((((values - masked) / scale) ** 2).sum())
    return sse, int(sizes.min()), int(sizes.size)


# ------------------------------------------------------------------------------------------
# writing in chunks


def _chunk_writer(path: pathlib.Path, sep: str | None
                  ) -> Callable[[IO[bytes], Iterator[pd.DataFrame]], None]:
    fmt, compression = _format_of(path, parameter="output")
    if fmt == "parquet":
        _require_pyarrow(path)

        def write_parquet(handle: IO[bytes], chunks: Iterator[pd.DataFrame]) -> None:
            import pyarrow as pa
            import pyarrow.parquet as pq

            writer = None
            try:
                for chunk in chunks:
                    table = pa.Table.from_pandas(chunk, preserve_index=False)
                    if writer is None:
                        writer = pq.ParquetWriter(handle, table.schema)
                    elif not table.schema.equals(writer.schema):
                        # CSV chunks infer their types alone (integers, then a missing value)
                        try:
                            table = table.cast(writer.schema)
                        except (pa.ArrowInvalid, pa.ArrowNotImplementedError,
                                ValueError) as error:
                            changed = [f.name for f, g in zip(table.schema, writer.schema,
                                                              strict=False) if f != g]
                            raise SchemaError(
                                f"Column type(s) of {', '.join(map(repr, changed))} change "
                                f"between chunks of the input ({error}); write CSV output, "
                                "or read with a larger chunk size.") from None
                    writer.write_table(table)
            finally:
                if writer is not None:
                    writer.close()

        return write_parquet
    separator = sep or ("\t" if path.name.lower().endswith((".tsv", ".tsv.gz")) else ",")

    def write_csv(handle: IO[bytes], chunks: Iterator[pd.DataFrame]) -> None:
        target: Any = gzip.GzipFile(fileobj=handle, mode="wb") if compression else handle
        try:
            for i, chunk in enumerate(chunks):
                target.write(chunk.to_csv(sep=separator, index=False,
                                          header=(i == 0)).encode("utf-8"))
        finally:
            if compression:
                target.close()

    return write_csv


# ------------------------------------------------------------------------------------------


def anonymize_file(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
                   *, quasi_identifiers: Sequence[str], k: int, method: str = "mdav",
                   identifiers: Sequence[str] = (), blocking: str = "kd",
                   block_size: int = 10_000, sample_size: int = 200_000,
                   chunk_rows: int = 500_000, n_jobs: int | None = None,
                   random_state: RandomState = None, sep: str | None = None,
                   method_params: dict[str, Any] | None = None,
                   workdir: str | os.PathLike[str] | None = None,
                   on_stage: Callable[[str], None] | None = None) -> FileRelease:
    """Microaggregate a CSV or Parquet file larger than memory (see the module docstring).

    Parameters
    ----------
    input_path, output_path : path-like
        CSV (``.csv``, ``.tsv``, ``.txt``, optionally ``.gz``) or Parquet files; the output
        must not be the input.
    quasi_identifiers : sequence of str
        Numeric columns to mask (z-scored for the distances, averaged on their own scale).
    k : int
        Minimum group size.
    method : str, default="mdav"
        The partitioner run in each block.
    identifiers : sequence of str, default=()
        Columns dropped from the output. Every other column is copied unchanged.
    blocking : {"kd", "pca", "vp"}, default="kd"
    block_size : int, default=10_000
        Target block size (at least 2k); blocks routed by the sample vary around it.
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
    workdir : path-like, default=None
        Where to create the private work folder (needs about 2 x n x p x 8 bytes; it holds
        the original values); ``None``: the system temporary folder (``$TMPDIR``).
    on_stage : callable, default=None
        Called with the name of each stage as it starts (for progress displays).

    Returns
    -------
    FileRelease

    Raises
    ------
    SchemaError
        A missing, non-numeric or incomplete quasi-identifier (naming the line or row).
    PrivacyViolationError
        The written file fails the k-anonymity check (a bug; the output is removed).
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    source = pathlib.Path(input_path).expanduser()
    target = pathlib.Path(output_path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(f"Input file {str(source)!r} does not exist.")
    if target.exists() and target.resolve() == source.resolve():
        raise ValueError(f"The output {str(target)!r} is the input; microagg never "
                         "overwrites its input.")
    fmt_in, _ = _format_of(source, parameter="input")
    _format_of(target, parameter="output")
    qi = [str(c) for c in quasi_identifiers]
    ids = [str(c) for c in identifiers]
    if not qi:
        raise SchemaError("Name at least one quasi-identifier.")
    if set(qi) & set(ids):
        raise SchemaError(f"Columns {sorted(set(qi) & set(ids))} are both quasi-identifiers "
                          "and identifiers.")
    if blocking not in BLOCKINGS:
        raise ValueError(f"Unknown blocking {blocking!r}. Valid: {', '.join(BLOCKINGS)}.")
    partitioner = get_partitioner(method)
    params = dict(method_params or {})
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2 \
            or block_size < 2 * k:
        raise ValueError(f"k must be an int >= 2 and block_size an int >= 2k. Got k={k!r}, "
                         f"block_size={block_size!r}.")
    seed, rng = resolve_seed(random_state)
    jobs = (os.cpu_count() or 1) if n_jobs is None else max(1, int(n_jobs))
    csv_lines = fmt_in == "csv"

    def stage(name: str) -> None:
        if on_stage is not None:
            on_stage(name)

    remove_dead_partials(target.parent)
    work = make_work_folder(workdir)
    try:
        # 1. statistics and a uniform sample (smallest random keys)
        stage("statistics")
        t = time.perf_counter()
        n = 0
        shift: NDArray[np.float64] | None = None
        s1 = s2 = None
        keys = np.empty(0)
        sample = np.empty((0, len(qi)))
        columns: list[str] = []
        for chunk in iter_chunks(source, chunk_rows=chunk_rows, sep=sep):
            if not columns:
                columns = [str(c) for c in chunk.columns]
                unknown = [c for c in ids if c not in columns]
                if unknown:
                    raise SchemaError(f"Identifier column(s) {unknown} are not in the input.")
            if len(chunk) == 0:
                continue
            values = _quasi_identifier_chunk(chunk, qi, n, csv_lines)
            if shift is None:
                shift = values.mean(axis=0)
                s1 = np.zeros(len(qi))
                s2 = np.zeros(len(qi))
            d = values - shift
            s1 += d.sum(axis=0)
            s2 += (d * d).sum(axis=0)
            draw = rng.random(values.shape[0])
            keys = np.concatenate([keys, draw])
            sample = np.concatenate([sample, values])
            if keys.size > sample_size:
                keep = np.argpartition(keys, sample_size - 1)[:sample_size]
                keys, sample = keys[keep], sample[keep]
            n += values.shape[0]
        if n == 0 or shift is None or s1 is None or s2 is None:
            raise SchemaError(f"The input {str(source)!r} has no rows; there is nothing to "
                              "release.")
        k = check_k(k, n_samples=n, caller="anonymize_file")
        mean = shift + s1 / n
        var = (s2 - s1 * s1 / n) / max(n - 1, 1)
        std = np.sqrt(np.maximum(var, 0.0))
        constant = std <= 1e-12 * np.maximum(1.0, np.abs(mean))
        scale = np.where(constant, 1.0, std)
        timings["statistics"] = time.perf_counter() - t

        # 2. route every row to a block of the sample's tree; spill sorted runs
        stage("routing")
        t = time.perf_counter()
        leaf = max(2, round(block_size * sample.shape[0] / n))
        tree, _ = fit_block_tree((sample - mean) / scale, leaf, blocking=blocking)
        del sample, keys
        n_blocks = tree.n_blocks
        runs: list[tuple[str, str]] = []
        offsets: list[NDArray[np.int64]] = []
        start = 0
        for r, chunk in enumerate(iter_chunks(source, chunk_rows=chunk_rows, sep=sep,
                                              columns=qi)):
            values = _quasi_identifier_chunk(chunk, qi, start, csv_lines)
            blocks = tree.route((values - mean) / scale)
            order = np.argsort(blocks, kind="stable")
            id_file, value_file = str(work / f"run{r}-ids.npy"), str(work / f"run{r}-values.npy")
            np.save(private_file(id_file), (start + order).astype(np.int64))
            np.save(private_file(value_file), values[order])
            runs.append((id_file, value_file))
            offsets.append(np.concatenate([[0], np.cumsum(np.bincount(blocks,
                                                                      minlength=n_blocks))]))
            start += values.shape[0]
        if start != n:
            raise SchemaError(f"The input changed while it was read: {n} rows, then {start}.")
        counts = np.sum([o[1:] - o[:-1] for o in offsets], axis=0)
        # blocks under 2k join their neighbours in the tree's (spatial) order
        plan: list[list[int]] = []
        current: list[int] = []
        filled = 0
        for b in range(n_blocks):
            current.append(b)
            filled += int(counts[b])
            if filled >= 2 * k:
                plan.append(current)
                current, filled = [], 0
        if current:
            if plan:
                plan[-1].extend(current)
            else:
                plan.append(current)
        timings["routing"] = time.perf_counter() - t

        # 3. microaggregate block by block
        stage("microaggregation")
        t = time.perf_counter()
        p = len(qi)
        result_path = str(work / "masked.f64")
        label_path = str(work / "labels.i64")
        np.memmap(private_file(result_path), dtype=np.float64, mode="w+",
                  shape=(n, p)).flush()
        np.memmap(private_file(label_path), dtype=np.int64, mode="w+",
                  shape=(n,)).flush()
        tasks = []
        # group numbers: each block gets a disjoint range (at most size // k groups)
        label_offset = 0
        for i, group in enumerate(plan):
            pieces = [(r, int(offsets[r][group[0]]), int(offsets[r][group[-1] + 1]))
                      for r in range(len(runs))
                      if offsets[r][group[-1] + 1] > offsets[r][group[0]]]
            size = int(sum(b - a for _, a, b in pieces))
            tasks.append((runs, pieces, n, p, result_path, label_path, mean, scale, k,
                          partitioner.name, params, seed + i, int(block_size), label_offset))
            label_offset += size // k + 1
        if jobs == 1 or len(tasks) == 1:
            outcomes = [_block_task(task) for task in tasks]
        else:
            with process_pool(min(jobs, len(tasks))) as pool:
                outcomes = list(pool.map(_block_task, tasks, chunksize=1))
        sse = float(sum(o[0] for o in outcomes))
        group_min = min(o[1] for o in outcomes)
        n_groups = sum(o[2] for o in outcomes)
        if group_min < k:
            raise PrivacyViolationError(f"A block produced a group of {group_min} < k={k} "
                                        "records. Nothing was written. This is a bug.")
        timings["microaggregation"] = time.perf_counter() - t

        # 4. write in the input's order, then verify the written file before renaming it
        stage("writing")
        t = time.perf_counter()
        masked = np.memmap(result_path, dtype=np.float64, mode="r", shape=(n, p))
        labels = np.memmap(label_path, dtype=np.int64, mode="r", shape=(n,))
        kept = [c for c in columns if c not in ids]
        # CSV to CSV: the other columns are copied as their text, byte for byte
        verbatim = csv_lines and _format_of(target, parameter="output")[0] == "csv"

        def published_chunks() -> Iterator[pd.DataFrame]:
            first = 0
            for chunk in iter_chunks(source, chunk_rows=chunk_rows, sep=sep, verbatim=verbatim):
                stop = first + len(chunk)
                out = chunk.loc[:, kept].copy()
                block = np.asarray(masked[first:stop])
                for j, col in enumerate(qi):
                    out[col] = block[:, j]
                first = stop
                yield out

        out_sep = sep or ("\t" if target.name.lower().endswith((".tsv", ".tsv.gz")) else ",")
        write = _chunk_writer(target, out_sep)
        achieved: dict[str, int] = {}

        def write_and_verify(handle: IO[bytes]) -> None:
            write(handle, published_chunks())
            handle.flush()
            t_verify = time.perf_counter()
            achieved["k"] = _verify_written(pathlib.Path(handle.name), qi, labels, k,
                                            chunk_rows, out_sep)
            timings["verify"] = time.perf_counter() - t_verify

        _atomic_write(target, write_and_verify)
        timings["writing"] = time.perf_counter() - t - timings.get("verify", 0.0)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    timings["total"] = time.perf_counter() - t0
    sst = float((n - 1) * np.count_nonzero(~constant))
    return FileRelease(
        output=target,
        rows=n,
        params=MappingProxyType({
            "method": partitioner.name, "k": k, "quasi_identifiers": tuple(qi),
            "identifiers": tuple(ids), "aggregation": "mean", "scaling": "standard",
            "method_params": MappingProxyType(params), "blocking": blocking,
            "block_size": int(block_size), "sample_size": int(sample_size),
            "engine": "file", "microagg_version": __version__,
        }),
        seed=seed,
        checks=MappingProxyType({"k_anonymity": MappingProxyType({
            "required": k, "achieved": achieved["k"],
            "model": "every written row equals its group's mean and every group has >= k "
                     "rows (checked by reading the written file back): the smallest class "
                     "of identical published quasi-identifiers has at least this many rows",
        })}),
        metrics=MappingProxyType({
            "information_loss": 100.0 * sse / sst if sst > 0 else 0.0,
            "n_blocks": len(plan), "n_groups": n_groups, "group_size_min": group_min,
        }),
        timings=MappingProxyType(timings),
    )


def _verify_written(path: pathlib.Path, qi: Sequence[str], labels: NDArray[np.int64], k: int,
                    chunk_rows: int, sep: str | None) -> int:
    """Read the written file back: rows of one group identical, every group >= k rows.

    Returns the smallest group size, a lower bound of the achieved k-anonymity (identical
    values in two groups only make a class larger)."""
    n_labels = int(labels.max()) + 1 if labels.size else 0
    reference = np.full((n_labels, len(qi)), np.nan)
    counts = np.zeros(n_labels, dtype=np.int64)
    first = 0
    for chunk in _read_back(path, chunk_rows, sep):
        values = chunk.loc[:, list(qi)].to_numpy(dtype=np.float64)
        stop = first + values.shape[0]
        lab = np.asarray(labels[first:stop])
        unseen = np.isnan(reference[lab, 0])
        reference[lab[unseen]] = values[unseen]
        if not np.array_equal(reference[lab], values):
            bad = first + int(np.flatnonzero(~np.all(reference[lab] == values, axis=1))[0])
            raise PrivacyViolationError(
                f"Written row {bad} differs from the other rows of its group. Nothing was "
                "released. This is a bug in microagg.")
        counts += np.bincount(lab, minlength=n_labels)
        first = stop
    if first != labels.size:
        raise PrivacyViolationError(f"The written file has {first} rows, not {labels.size}. "
                                    "Nothing was released.")
    used = counts[counts > 0]
    achieved = int(used.min())
    if achieved < k:
        raise PrivacyViolationError(f"A published group has {achieved} < k={k} rows. Nothing "
                                    "was released. This is a bug in microagg.")
    return achieved


def _read_back(path: pathlib.Path, chunk_rows: int, sep: str | None) -> Iterator[pd.DataFrame]:
    """Chunks of the temporary output (its name hides the extension: the format is sniffed)."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic == b"PAR1":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows):
            yield batch.to_pandas()
        return
    compression: Literal["gzip"] | None = "gzip" if magic[:2] == b"\x1f\x8b" else None
    separator = sep or _sniff_separator(path, compression)
    with pd.read_csv(path, sep=separator, chunksize=chunk_rows,
                     compression=compression) as reader:
        yield from reader
