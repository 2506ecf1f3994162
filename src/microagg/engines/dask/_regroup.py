"""The Dask engine's refinement across block borders (the second pass of
:mod:`microagg.partition.regroup`), when the method has a ``refine_across`` local search
(``mdav-scale``, the quality mode's method):

1. every published row is routed by its group's centroid (its published values: a group's
   rows all go the same way) through a second block tree fitted on a random rotation of
   the sample;
2. a shuffle brings each second block (whole groups from several first blocks) to one
   partition, where the local search improves it from the first pass's groups (kept in the
   working columns: row id, index, original values) and publishes the new group means.

Each second block's seed is the release's seed plus its number and the rows are sorted by
(second block, row id) first, so the result does not depend on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...aggregate.aggregators import group_mean
from ...exceptions import InternalError
from ...partition import get_partitioner
from ...partition.regroup import RotatedTree
from ._tasks import (
    BLOCK,
    GROUP,
    INDEX,
    ROW,
    divisions,
    original_column,
    published_rows,
    scaled,
    single_numba_thread,
)

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd

__all__ = ["RegroupJob", "regroup", "regroup_partition", "route_groups"]


@dataclass(frozen=True)
class RegroupJob:
    """What every second block's task needs."""

    qi: tuple[str, ...]
    centre: np.ndarray
    spread: np.ndarray
    k: int
    method: str
    seed: int
    params: dict[str, Any]


def route_groups(part: pd.DataFrame, tree: RotatedTree, qi: tuple[str, ...],
                 centre: np.ndarray, spread: np.ndarray) -> pd.DataFrame:
    """``BLOCK`` set to each row's second block, routed by its published (group) values."""
    out = part.copy()
    out[BLOCK] = (tree.route(scaled(part, qi, centre, spread)).astype(np.int64) if len(part)
                  else np.zeros(0, dtype=np.int64))
    return out


def block_counts(part: pd.DataFrame, n_blocks: int) -> pd.DataFrame:
    """Rows of each second block in one partition (one row, ``n_blocks`` columns)."""
    counts = np.bincount(part[BLOCK].to_numpy(dtype=np.int64), minlength=n_blocks)
    return pd.DataFrame(counts[None, :], columns=[str(b) for b in range(n_blocks)])


def regroup_partition(part: pd.DataFrame, job: RegroupJob, index_name: Any,
                      columns: tuple[str, ...]) -> pd.DataFrame:
    """Improve every second block of one shuffled partition (index = second block); returns
    the published rows as :func:`._tasks.microaggregate_partition` does."""
    blocks = part.index.to_numpy(dtype=np.int64)
    order = np.lexsort((part[ROW].to_numpy(dtype=np.int64), blocks))
    blocks = blocks[order]
    ordered = part.iloc[order]
    V = ordered.loc[:, [original_column(j) for j in range(len(job.qi))]].to_numpy(
        dtype=np.float64)
    group = ordered[GROUP].to_numpy(dtype=np.int64).copy()
    published = np.empty_like(V)
    refine = get_partitioner(job.method).refine_across
    if refine is None:  # the client runs this stage only for a method that has one
        raise InternalError(f"{job.method!r} has no search across blocks.")
    cuts = np.flatnonzero(np.diff(blocks)) + 1
    with single_numba_thread():
        for s, e in zip(np.r_[0, cuts], np.r_[cuts, V.shape[0]], strict=True):
            if e <= s:
                continue
            A = np.ascontiguousarray((V[s:e] - job.centre) / job.spread)
            group[s:e] = refine(A, group[s:e], job.k, random_state=job.seed + int(blocks[s]),
                                **job.params)
            _, local = np.unique(group[s:e], return_inverse=True)
            published[s:e] = group_mean(V[s:e], local.ravel())
    out = published_rows(ordered, columns, job.qi, published, blocks, group,
                         (((V - published) / job.spread) ** 2).sum(axis=1))
    out.index = pd.Index(ordered[INDEX].to_numpy(), name=index_name)  # not named INDEX
    return out


def regroup(processed: dd.DataFrame, meta: pd.DataFrame, tree: RotatedTree, job: RegroupJob,
            *, index_name: Any, columns: tuple[str, ...], npartitions: int,
            compute: Any) -> dd.DataFrame:
    """The second pass on the first pass's ``processed`` rows (with their working columns);
    returns the refined rows, not yet persisted. ``compute`` computes a collection."""
    import dask

    shared = dask.delayed(tree, pure=True)
    routed = processed.map_partitions(route_groups, shared, job.qi, job.centre, job.spread,
                                      meta=meta)
    n_blocks = tree.n_blocks
    per_part = routed.map_partitions(block_counts, n_blocks,
                                     meta=block_counts(meta.iloc[:0], n_blocks))
    (table,) = compute(per_part.sum())
    counts = np.asarray(table, dtype=np.int64)
    shuffled = routed.set_index(BLOCK, divisions=divisions(counts, npartitions))
    options = {"job": job, "index_name": index_name, "columns": columns}
    out_meta = regroup_partition(shuffled._meta, **options)
    return shuffled.map_partitions(regroup_partition, meta=out_meta, align_dataframes=False,
                                   **options)

