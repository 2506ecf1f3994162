"""The file engine's refinement across block borders (issue 21; the second pass of
:mod:`microagg.partition.regroup`), out of core.

After the blocks (:mod:`._file_blocks`), when the method has a ``refine_across`` local
search (``mdav-scale``: the quality mode's method for files):

1. the run files are read again one at a time; each row's group centroid is its published
   row (the result file), and every group's rows, whatever their run, are routed by it
   through a second block tree fitted on a random rotation of the sample, into new run
   files sorted by second block (ids, values, first-pass labels);
2. each second block (whole groups from several first blocks) is improved by the local
   search in a worker process, and its group means and labels overwrite the result files.

Memory: one run at a time, then one second block per worker. Validation is assumed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._groups import group_means
from .._leftovers import private_file
from .._pipeline.request import Request
from ..exceptions import PrivacyViolationError
from ..partition.regroup import REGROUP_BLOCK, fit_rotated_tree
from ._file_blocks import Blocks, plan_blocks, run_tasks

__all__ = ["regroup"]


def regroup(request: Request, blocks: Blocks, sample: np.ndarray, seed: int) -> bool:
    """Run the second pass when the method has one and the file is larger than one second
    block; returns whether it ran (``blocks`` then holds the new SSE and group counts)."""
    refine = request.partitioner.refine_across
    size = max(REGROUP_BLOCK, int(request.block_size))
    if refine is None or blocks.n <= size:
        return False
    n, p = blocks.n, blocks.p
    leaf = max(2, round(size * sample.shape[0] / n))
    tree = fit_rotated_tree((sample - blocks.mean) / blocks.scale, leaf, seed + 1)
    runs, offsets = [], []
    for r, (id_file, value_file) in enumerate(blocks.runs):
        ids = np.load(id_file)
        values = np.load(value_file)
        # mapped run by run: a mapping held over all runs would keep every page resident
        masked = np.memmap(blocks.result_path, dtype=np.float64, mode="r", shape=(n, p))
        labels = np.memmap(blocks.label_path, dtype=np.int64, mode="r", shape=(n,))
        second = tree.route((np.asarray(masked[ids]) - blocks.mean) / blocks.scale)
        order = np.argsort(second, kind="stable")
        names = [str(blocks.work / f"regroup{r}-{part}.npy") for part in
                 ("ids", "values", "labels")]
        for name, array in zip(names, (ids[order], values[order], np.asarray(labels[ids])[order]),
                               strict=True):
            np.save(private_file(name), array)
        runs.append(tuple(names))
        del masked, labels
        offsets.append(np.concatenate([[0], np.cumsum(np.bincount(second,
                                                                 minlength=tree.n_blocks))]))
    counts = np.sum([o[1:] - o[:-1] for o in offsets], axis=0)
    tasks = []
    for i, group in enumerate(plan_blocks(counts, 2 * request.k)):
        pieces = [(r, int(o[group[0]]), int(o[group[-1] + 1]))
                  for r, o in enumerate(offsets) if o[group[-1] + 1] > o[group[0]]]
        # what a task needs, not the Blocks (their per-run offsets would be pickled into
        # every task: about 1.6 MB each at 10^8 rows)
        tasks.append((runs, pieces, blocks.result_path, blocks.label_path, (n, p),
                      blocks.mean, blocks.scale, request.k, refine,
                      dict(request.method_params), seed + 1 + i))
    outcomes = run_tasks(_regroup_task, tasks, request.n_jobs)
    blocks.sse = float(sum(o[0] for o in outcomes))
    blocks.group_min = min(o[1] for o in outcomes)
    blocks.n_groups = sum(o[2] for o in outcomes)
    if blocks.group_min < request.k:
        raise PrivacyViolationError(f"The refinement across blocks produced a group of "
                                    f"{blocks.group_min} < k={request.k} records. Nothing was "
                                    "written. This is a bug.")
    return True


def _regroup_task(args: tuple[Any, ...]) -> tuple[float, int, int]:
    """Improve one second block and write its group means and labels into the result files
    (top level: runs in worker processes). Returns (SSE in scaled units, smallest group,
    number of groups)."""
    runs, pieces, result_path, label_path, shape, mean, scale, k, refine, params, seed = args
    ids, values, start = (np.concatenate([np.load(runs[r][part], mmap_mode="r")[a:b]
                                          for r, a, b in pieces]) for part in range(3))
    scaled = np.ascontiguousarray((values - mean) / scale)
    labels = np.asarray(refine(scaled, start, k, random_state=seed, **params), dtype=np.int64)
    _, local = np.unique(labels, return_inverse=True)
    local = local.ravel()
    masked = group_means(values, local)[local]
    result = np.memmap(result_path, dtype=np.float64, mode="r+", shape=shape)
    result[ids] = masked
    del result
    out_labels = np.memmap(label_path, dtype=np.int64, mode="r+", shape=(shape[0],))
    out_labels[ids] = labels
    del out_labels
    sizes = np.bincount(local)
    sse = float((((values - masked) / scale) ** 2).sum())
    return sse, int(sizes.min()), int(sizes.size)
