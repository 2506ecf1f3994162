"""The block work of the file engine (:mod:`.file`): rows routed to the blocks of a tree fitted
on a sample, spilled to sorted run files, then microaggregated block by block in worker
processes into file-backed result arrays. Validation is assumed."""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._groups import group_means
from .._leftovers import private_file
from .._pipeline.request import Request
from ..exceptions import PrivacyViolationError, SchemaError
from ..partition import get_partitioner
from ..partition.blocking import blocked_partition, fit_block_tree, process_pool

__all__ = ["Blocks", "microaggregate", "plan_blocks", "route", "run_tasks"]


@dataclass
class Blocks:
    """The spilled runs, the plan of blocks, the result files and what the blocks gave."""

    n: int
    p: int
    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    work: pathlib.Path
    runs: list[tuple[str, str]] = field(default_factory=list)
    offsets: list[NDArray[np.int64]] = field(default_factory=list)
    plan: list[list[int]] = field(default_factory=list)
    sse: float = 0.0
    group_min: int = 0
    n_groups: int = 0

    @property
    def result_path(self) -> str:
        return str(self.work / "masked.f64")

    @property
    def label_path(self) -> str:
        return str(self.work / "labels.i64")


def route(request: Request, chunks: Iterable[pd.DataFrame],
          values_of: Callable[[pd.DataFrame, int], NDArray[np.float64]], *, n: int,
          mean: NDArray[np.float64], scale: NDArray[np.float64], sample: NDArray[np.float64],
          work: pathlib.Path) -> Blocks:
    """Pass 2: every row routed to a block of the tree fitted on the scaled sample; each
    chunk's rows (ids and values) spilled to a run file sorted by block; the plan of blocks
    (blocks under 2k join their neighbours in the tree's order)."""
    blocks = Blocks(n=n, p=len(request.quasi_identifiers), mean=mean, scale=scale, work=work)
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


def microaggregate(request: Request, blocks: Blocks, seed: int) -> None:
    """Pass 3: every part of the plan partitioned and aggregated (worker processes), the
    group means and labels written to the result files; each part gets a disjoint range of
    group numbers (at most size // k groups)."""
    n, p, k = blocks.n, blocks.p, request.k
    np.memmap(private_file(blocks.result_path), dtype=np.float64, mode="w+",
              shape=(n, p)).flush()
    np.memmap(private_file(blocks.label_path), dtype=np.int64, mode="w+", shape=(n,)).flush()
    tasks = []
    label_offset = 0
    method, params = request.partitioner.name, dict(request.method_params)
    for i, group in enumerate(blocks.plan):
        pieces = [(r, int(o[group[0]]), int(o[group[-1] + 1]))
                  for r, o in enumerate(blocks.offsets) if o[group[-1] + 1] > o[group[0]]]
        tasks.append((blocks.runs, pieces, n, p, blocks.result_path, blocks.label_path,
                      blocks.mean, blocks.scale, k, method, params, seed + i,
                      int(request.block_size), label_offset))
        label_offset += int(sum(b - a for _, a, b in pieces)) // k + 1
    outcomes = run_tasks(_block_task, tasks, request.n_jobs)
    blocks.sse = float(sum(o[0] for o in outcomes))
    blocks.group_min = min(o[1] for o in outcomes)
    blocks.n_groups = sum(o[2] for o in outcomes)
    if blocks.group_min < k:
        raise PrivacyViolationError(f"A block produced a group of {blocks.group_min} < k={k} "
                                    "records. Nothing was written. This is a bug.")


def run_tasks(task: Callable[[tuple[Any, ...]], tuple[float, int, int]],
              tasks: list[tuple[Any, ...]], n_jobs: int | None) -> list[tuple[float, int, int]]:
    """``task`` over ``tasks`` in ``n_jobs`` worker processes (``None``: one per CPU), or in
    this process when one is asked for or there is one task; results in order."""
    jobs = (os.cpu_count() or 1) if n_jobs is None else max(1, int(n_jobs))
    if jobs == 1 or len(tasks) == 1:
        return [task(t) for t in tasks]
    with process_pool(min(jobs, len(tasks))) as pool:
        return list(pool.map(task, tasks, chunksize=1))


def _block_task(args: tuple[Any, ...]) -> tuple[float, int, int]:
    """Partition one block and write its group means and labels into the result files (top
    level: runs in worker processes).

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
