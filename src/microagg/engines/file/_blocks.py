"""The block work of the file engine (:mod:`.engine`): rows routed to the blocks of a tree fitted
on a sample, spilled to sorted run files, then microaggregated block by block in worker
processes, each block's records written to a part file of its own (:mod:`._parts`).
Validation is assumed."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.groups import group_means
from ..._pipeline.request import Request
from ...exceptions import PrivacyViolationError, SchemaError
from ...io._leftovers import private_file
from ...partition import get_partitioner
from ...partition.blocking import blocked_partition, fit_block_tree, process_pool
from ._parts import Part, write_part

__all__ = ["Blocks", "microaggregate", "plan_blocks", "read_pieces", "remove_runs", "route",
           "run_tasks"]

_T = TypeVar("_T")


@dataclass
class Blocks:
    """The spilled runs, the plan of blocks, the result parts and what the blocks gave;
    ``bucket``: rows per fence of the parts (the chunk size the output is written in)."""

    n: int
    p: int
    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    work: pathlib.Path
    bucket: int
    runs: list[tuple[str, ...]] = field(default_factory=list)
    offsets: list[NDArray[np.int64]] = field(default_factory=list)
    plan: list[list[int]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    sse: float = 0.0
    group_min: int = 0
    n_groups: int = 0

    def record(self, outcomes: list[tuple[float, int, int, Part]]) -> None:
        """Keep what the block tasks returned: SSE, smallest group, groups and parts."""
        self.sse = float(sum(o[0] for o in outcomes))
        self.group_min = min(o[1] for o in outcomes)
        self.n_groups = sum(o[2] for o in outcomes)
        self.parts = [o[3] for o in outcomes]


def route(request: Request, chunks: Iterable[pd.DataFrame],
          values_of: Callable[[pd.DataFrame, int], NDArray[np.float64]], blocks: Blocks,
          sample: NDArray[np.float64]) -> Blocks:
    """Pass 2: every row routed to a block of the tree fitted on the scaled sample; each
    chunk's rows (ids and values) spilled to a run file sorted by block; the plan of blocks
    (blocks under 2k join their neighbours in the tree's order). Fills and returns
    ``blocks`` (made with the counts, scaling, work folder and bucket)."""
    n, mean, scale, work = blocks.n, blocks.mean, blocks.scale, blocks.work
    leaf = max(2, round(request.block_size * sample.shape[0] / n))
    tree, _ = fit_block_tree((sample - mean) / scale, leaf, blocking=request.blocking or "kd")
    start = 0
    for r, chunk in enumerate(chunks):
        values = values_of(chunk, start)
        routed = tree.route((values - mean) / scale)
        order = np.argsort(routed, kind="stable")
        id_file, value_file = str(work / f"run{r}-ids.npy"), str(work / f"run{r}-values.npy")
        np.save(private_file(id_file), (start + order).astype(np.int64))
        np.save(private_file(value_file), values[order])
        blocks.runs.append((id_file, value_file))
        blocks.offsets.append(np.concatenate(
            [[0], np.cumsum(np.bincount(routed, minlength=tree.n_blocks))]))
        start += values.shape[0]
    if start != n:
        raise SchemaError(f"The input changed while it was read: {n} rows, then {start}.")
    counts = np.sum([o[1:] - o[:-1] for o in blocks.offsets], axis=0)
    blocks.plan = plan_blocks(counts, 2 * request.k)
    return blocks


def plan_blocks(counts: NDArray[np.int64], least: int) -> list[list[int]]:
    """Consecutive blocks (the tree's spatial order) joined until each part has ``least``
    rows; a short tail joins the last part."""
    plan: list[list[int]] = []
    current: list[int] = []
    filled = 0
    for b, count in enumerate(counts):
        current.append(b)
        filled += int(count)
        if filled >= least:
            plan.append(current)
            current, filled = [], 0
    if current and plan:
        plan[-1].extend(current)
    elif current:
        plan.append(current)
    return plan


def microaggregate(request: Request, blocks: Blocks, seed: int, *, values: bool) -> None:
    """Pass 3: every part of the plan partitioned and aggregated (worker processes), its
    records written to a part file (with the original ``values`` when a second pass reads
    them); each part gets a disjoint range of group numbers (at most size // k groups). The
    run files are removed once read."""
    n, k = blocks.n, request.k
    tasks = []
    label_offset = 0
    method, params = request.partitioner.name, dict(request.method_params)
    for i, group in enumerate(blocks.plan):
        pieces = [(r, int(o[group[0]]), int(o[group[-1] + 1]))
                  for r, o in enumerate(blocks.offsets) if o[group[-1] + 1] > o[group[0]]]
        tasks.append((blocks.runs, pieces, str(blocks.work / f"part{i}.rec"), n,
                      blocks.mean, blocks.scale, k, method, params, seed + i,
                      int(request.block_size), label_offset, blocks.bucket, values))
        label_offset += int(sum(b - a for _, a, b in pieces)) // k + 1
    blocks.record(run_tasks(_block_task, tasks, request.n_jobs))
    remove_runs(blocks.runs)
    if blocks.group_min < k:
        raise PrivacyViolationError(f"A block produced a group of {blocks.group_min} < k={k} "
                                    "records. Nothing was written. This is a bug.")


def remove_runs(runs: list[tuple[str, ...]]) -> None:
    """Delete spilled run files that have been read (the disk they hold: n rows each)."""
    for names in runs:
        for name in names:
            os.unlink(name)


def run_tasks(task: Callable[[tuple[Any, ...]], _T], tasks: list[tuple[Any, ...]],
              n_jobs: int | None) -> list[_T]:
    """``task`` over ``tasks`` in ``n_jobs`` worker processes (``None``: one per CPU), or in
    this process when one is asked for or there is one task; results in order."""
    jobs = (os.cpu_count() or 1) if n_jobs is None else max(1, int(n_jobs))
    if jobs == 1 or len(tasks) == 1:
        return [task(t) for t in tasks]
    with process_pool(min(jobs, len(tasks))) as pool:
        return list(pool.map(task, tasks, chunksize=1))


def read_pieces(runs: list[tuple[str, ...]], pieces: list[tuple[int, int, int]],
                field: int) -> np.ndarray:
    """Field ``field`` of the rows ``a:b`` of run ``r`` for each ``(r, a, b)`` in ``pieces``,
    in one new array (the runs are memory-mapped)."""
    return np.concatenate([np.load(runs[r][field], mmap_mode="r")[a:b] for r, a, b in pieces])


def _block_task(args: tuple[Any, ...]) -> tuple[float, int, int, Part]:
    """Partition one block and write its records to its part file (top level: runs in
    worker processes).

    Returns (SSE in scaled units, smallest group, number of groups, the part)."""
    (runs, pieces, path, n, mean, scale, k, method, params, seed, block_size, label_offset,
     bucket, keep_values) = args
    ids = read_pieces(runs, pieces, 0)
    scaled = read_pieces(runs, pieces, 1)  # scaled in place: one copy while partitioned
    scaled -= mean
    scaled /= scale
    if scaled.shape[0] > 2 * block_size:  # the sample under-estimated this block
        labels = blocked_partition(scaled, k, method=method, block_size=block_size,
                                   n_jobs=1, random_state=seed, **params)
    elif scaled.shape[0] < 2 * k:
        labels = np.zeros(scaled.shape[0], dtype=np.intp)
    else:
        labels = get_partitioner(method)(scaled, k, random_state=seed, **params)
    del scaled
    values = read_pieces(runs, pieces, 1)  # read again (the page cache has it)
    sizes = np.bincount(labels)
    masked = group_means(values, labels)[labels]
    part = write_part(path, ids, labels.astype(np.int64) + label_offset, masked,
                      values if keep_values else None, bucket=bucket, n=n)
    sse = float((((values - masked) / scale) ** 2).sum())
    return sse, int(sizes.min()), int(sizes.size), part
