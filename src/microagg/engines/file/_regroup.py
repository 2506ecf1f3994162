"""The file engine's refinement across block borders (the second pass of
:mod:`microagg.partition.regroup`), out of core.

After the blocks (:mod:`._blocks`), when the method has a ``refine_across`` local
search (``mdav-scale``: the quality mode's method for files):

1. the first pass's parts (:mod:`._parts`) are read one at a time; each row's group
   centroid is its group mean, and every group's rows are routed by it through a second
   block tree fitted on a random rotation of the sample; rows are gathered until a chunk's
   worth and spilled as a run file sorted by second block (ids, values, first-pass labels);
2. each second block (whole groups from several first blocks) is improved by the local
   search in a worker process and written as a part of its own; these parts replace the
   first pass's.

Memory: about one chunk of rows, then one second block per worker. Validation is assumed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._base.groups import group_means
from ..._pipeline.request import Request
from ...exceptions import PrivacyViolationError
from ...io._leftovers import private_file
from ...partition.regroup import REGROUP_BLOCK, fit_rotated_tree
from ._blocks import Blocks, plan_blocks, read_pieces, remove_runs, run_tasks
from ._parts import Part, read_part, remove_parts, write_part

__all__ = ["regroup", "second_pass_follows"]


def second_pass_follows(request: Request, n: int) -> bool:
    """Whether :func:`regroup` runs on ``n`` rows: the method has a ``refine_across`` local
    search and the file is larger than one second block."""
    size = max(REGROUP_BLOCK, int(request.block_size))
    return request.partitioner.refine_across is not None and n > size


def regroup(request: Request, blocks: Blocks, sample: np.ndarray, seed: int) -> bool:
    """Run the second pass when the method has one and the file is larger than one second
    block; returns whether it ran (``blocks`` then holds the new parts, SSE and group
    counts). The first pass's parts and the second pass's runs are removed once read."""
    refine = request.partitioner.refine_across
    if refine is None or not second_pass_follows(request, blocks.n):
        return False
    size = max(REGROUP_BLOCK, int(request.block_size))
    leaf = max(2, round(size * sample.shape[0] / blocks.n))
    tree = fit_rotated_tree((sample - blocks.mean) / blocks.scale, leaf, seed + 1)
    runs, offsets = _spill_by_second_block(blocks, tree, blocks.bucket)
    counts = np.sum([o[1:] - o[:-1] for o in offsets], axis=0)
    tasks = []
    for i, group in enumerate(plan_blocks(counts, 2 * request.k)):
        pieces = [(r, int(o[group[0]]), int(o[group[-1] + 1]))
                  for r, o in enumerate(offsets) if o[group[-1] + 1] > o[group[0]]]
        tasks.append((runs, pieces, str(blocks.work / f"second{i}.rec"), blocks.n,
                      blocks.bucket, blocks.mean, blocks.scale, request.k, refine,
                      dict(request.method_params), seed + 1 + i))
    blocks.record(run_tasks(_regroup_task, tasks, request.n_jobs))
    remove_runs(runs)
    if blocks.group_min < request.k:
        raise PrivacyViolationError(f"The refinement across blocks produced a group of "
                                    f"{blocks.group_min} < k={request.k} records. Nothing was "
                                    "written. This is a bug.")
    return True


def _spill_by_second_block(blocks: Blocks, tree: Any, least: int
                           ) -> tuple[list[tuple[str, ...]], list[np.ndarray]]:
    """Step 1: the first pass's parts read one by one and removed, their rows routed by
    their group's mean, spilled in runs of at least ``least`` rows sorted by second block;
    returns the runs (ids, values, labels files) and each run's offsets per second block."""
    runs: list[tuple[str, ...]] = []
    offsets: list[np.ndarray] = []
    pending: list[np.ndarray] = []

    def spill() -> None:
        records = np.concatenate(pending)
        pending.clear()
        second = tree.route((records["masked"] - blocks.mean) / blocks.scale)
        order = np.argsort(second, kind="stable")
        names = tuple(str(blocks.work / f"regroup{len(runs)}-{field}.npy")
                      for field in ("row", "value", "label"))
        for name, field in zip(names, ("row", "value", "label"), strict=True):
            np.save(private_file(name), records[field][order])
        runs.append(names)
        offsets.append(np.concatenate([[0], np.cumsum(np.bincount(second,
                                                                 minlength=tree.n_blocks))]))

    gathered = 0
    for part in blocks.parts:
        pending.append(read_part(part))
        remove_parts([part])
        gathered += part.size
        if gathered >= least:
            spill()
            gathered = 0
    if pending:
        spill()
    return runs, offsets


def _regroup_task(args: tuple[Any, ...]) -> tuple[float, int, int, Part]:
    """Improve one second block and write it as a part (top level: runs in worker
    processes). Returns (SSE in scaled units, smallest group, number of groups, the part)."""
    runs, pieces, path, n, bucket, mean, scale, k, refine, params, seed = args
    ids, scaled, start = (read_pieces(runs, pieces, field) for field in range(3))
    scaled -= mean  # scaled in place: one copy of the values while searched
    scaled /= scale
    labels = np.asarray(refine(scaled, start, k, random_state=seed, **params), dtype=np.int64)
    del scaled
    values = read_pieces(runs, pieces, 1)  # read again (the page cache has it)
    _, local = np.unique(labels, return_inverse=True)
    local = local.ravel()
    masked = group_means(values, local)[local]
    part = write_part(path, ids, labels, masked, None, bucket=bucket, n=n)
    sizes = np.bincount(local)
    sse = float((((values - masked) / scale) ** 2).sum())
    return sse, int(sizes.min()), int(sizes.size), part
