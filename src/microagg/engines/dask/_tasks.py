"""The Dask engine's tasks (:mod:`.engine`): top-level functions that run on the workers (they
must be picklable and pure), and the client's pure helpers (merging small blocks, cutting
partitions)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._pipeline.verify import GroupVerifier
from ...aggregate.aggregators import group_mean
from ...partition.blocking import BlockTree, blocked_partition, run_block

__all__ = ["BLOCK", "GROUP", "INDEX", "RESERVED", "ROW", "SSE", "BlockJob", "block_sums",
           "column_stats", "divisions", "group_stats", "merge_blocks",
           "microaggregate_partition", "original_column", "partition_blocks",
           "published_rows", "remap",
           "route", "scaled",
           "single_numba_thread", "tree_leaf"]

BLOCK = "__microagg_block__"
ROW = "__microagg_row__"
INDEX = "__microagg_index__"
GROUP = "__microagg_group__"
SSE = "__microagg_sse__"
RESERVED = (BLOCK, ROW, INDEX, GROUP, SSE)
"""Working columns: an input column of one of these names is refused."""

SPLIT_AGAIN = 4
"""A routed block above ``SPLIT_AGAIN * block_size`` rows is blocked again on its worker."""


@dataclass(frozen=True)
class BlockJob:
    """What every block's task needs: the quasi-identifiers and their scaling, the method."""

    qi: tuple[str, ...]
    centre: NDArray[np.float64]
    spread: NDArray[np.float64]
    k: int
    method: str
    seed: int
    blocking: str
    block_size: int
    params: Mapping[str, Any] = field(default_factory=dict)
    keep_originals: bool = False
    """Also return the row id, the index and the original values (:func:`original_column`):
    the refinement across blocks (:mod:`._regroup`) starts from them."""


def original_column(j: int) -> str:
    """Working column of the original values of quasi-identifier ``j``."""
    return f"__microagg_original_{j}__"


def column_stats(part: pd.DataFrame, qi: tuple[str, ...]) -> pd.DataFrame:
    """Per quasi-identifier of one partition: rows, missing, infinite and the moments of the
    finite values (count, mean, M2 = sum of squared deviations, min, max)."""
    V = part.loc[:, list(qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(V).sum(axis=0)
    infinite = np.isinf(V).sum(axis=0)
    finite = np.isfinite(V)
    count = finite.sum(axis=0)
    W = np.where(finite, V, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, W.sum(axis=0) / np.maximum(count, 1), 0.0)
    m2 = (np.where(finite, V - mean, 0.0) ** 2).sum(axis=0)
    lo = np.where(finite, V, np.inf).min(axis=0, initial=np.inf)
    hi = np.where(finite, V, -np.inf).max(axis=0, initial=-np.inf)
    return pd.DataFrame({
        "column": list(qi), "rows": np.full(len(qi), V.shape[0], dtype=np.int64),
        "missing": missing.astype(np.int64), "infinite": infinite.astype(np.int64),
        "count": count.astype(np.int64), "mean": mean, "m2": m2, "min": lo, "max": hi,
    })


def scaled(part: pd.DataFrame, qi: tuple[str, ...], centre: NDArray[np.float64],
           spread: NDArray[np.float64]) -> NDArray[np.float64]:
    V = part.loc[:, list(qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.ascontiguousarray((V - centre) / spread)


def route(part: pd.DataFrame, tree: BlockTree, qi: tuple[str, ...],
          centre: NDArray[np.float64], spread: NDArray[np.float64],
          partition_info: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Add the routed block, a deterministic row id and the index as columns."""
    out = part.copy()
    if len(part):
        blocks = tree.route(scaled(part, qi, centre, spread)).astype(np.int64)
    else:
        blocks = np.zeros(0, dtype=np.int64)
    number = 0 if partition_info is None else int(partition_info["number"])
    out[BLOCK] = blocks
    out[ROW] = (np.int64(number) << np.int64(32)) + np.arange(len(part), dtype=np.int64)
    out[INDEX] = part.index
    return out


def remap(part: pd.DataFrame, mapping: NDArray[np.int64]) -> pd.DataFrame:
    out = part.copy()
    out[BLOCK] = mapping[part[BLOCK].to_numpy(dtype=np.int64)]
    return out


def block_sums(part: pd.DataFrame, qi: tuple[str, ...]) -> pd.DataFrame:
    """Rows (``ROW``) and quasi-identifier sums of every block of one partition."""
    grouped = part.groupby(BLOCK, sort=True)
    sums = grouped[list(qi)].sum().astype(np.float64)
    sums[ROW] = grouped.size().astype(np.int64)
    return sums.reset_index()


@contextmanager
def single_numba_thread() -> Iterator[None]:
    """Run numba's parallel kernels on one thread in this task (the setting is per thread).

    Dask runs one task per worker thread; kernels that also fan out to every core
    oversubscribe the machine (with the OpenMP layer's spinning threads, by 20x)."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def partition_blocks(V: NDArray[np.float64], blocks: NDArray[np.int64],
                     published: NDArray[np.float64], group: NDArray[np.int64], job: BlockJob
                     ) -> None:
    """Fill ``published`` (group means) and ``group`` (global group ids) block by block;
    rows are sorted by block."""
    if not V.shape[0]:
        return
    cuts = np.flatnonzero(np.diff(blocks)) + 1
    starts = np.concatenate(([0], cuts))
    stops = np.concatenate((cuts, [V.shape[0]]))
    for s, e in zip(starts, stops, strict=True):
        b = int(blocks[s])
        Vb = V[s:e]
        A = np.ascontiguousarray((Vb - job.centre) / job.spread)
        if e - s > SPLIT_AGAIN * job.block_size:
            local = blocked_partition(A, job.k, method=job.method, blocking=job.blocking,
                                      block_size=job.block_size, n_jobs=1,
                                      random_state=job.seed + b, **dict(job.params))
        else:
            local = run_block((A, job.k, job.method, job.params, job.seed + b))
        published[s:e] = group_mean(Vb, local)
        group[s:e] = (np.int64(b) << np.int64(32)) + local.astype(np.int64)


def published_rows(ordered: pd.DataFrame, columns: tuple[str, ...], qi: tuple[str, ...],
                   published: NDArray[np.float64], blocks: NDArray[np.int64],
                   group: NDArray[np.int64], sse: NDArray[np.float64]) -> pd.DataFrame:
    """The rows of ``ordered`` (``columns``) with the quasi-identifiers replaced by
    ``published``, plus the block, the global group id and each row's squared error."""
    out = ordered.loc[:, list(columns)].copy()
    for j, c in enumerate(qi):
        out[c] = published[:, j]
    out[BLOCK] = blocks
    out[GROUP] = group
    out[SSE] = sse
    return out


def microaggregate_partition(part: pd.DataFrame, job: BlockJob, index_name: Any,
                             columns: tuple[str, ...]) -> pd.DataFrame:
    """Microaggregate every block of one shuffled partition (index = final block id).

    Returns the published rows (original index, ``columns`` with the quasi-identifiers
    replaced by their group mean) plus the block, a global group id and each row's squared
    error in z-score units."""
    blocks = part.index.to_numpy(dtype=np.int64)
    rows = part[ROW].to_numpy(dtype=np.int64)
    order = np.lexsort((rows, blocks))  # by block, then by input position: deterministic
    blocks = blocks[order]
    ordered = part.iloc[order]
    V = ordered.loc[:, list(job.qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    published = np.empty_like(V)
    group = np.empty(V.shape[0], dtype=np.int64)
    with single_numba_thread():
        partition_blocks(V, blocks, published, group, job)
    out = published_rows(ordered, columns, job.qi, published, blocks, group,
                         (((V - published) / job.spread) ** 2).sum(axis=1))
    if job.keep_originals:
        out[ROW] = ordered[ROW].to_numpy()
        out[INDEX] = ordered[INDEX].to_numpy()
        for j in range(V.shape[1]):
            out[original_column(j)] = V[:, j]
    out.index = pd.Index(ordered[INDEX].to_numpy(), name=index_name)  # not named INDEX
    return out


_STATS_TYPES = {"rows": np.int64, "sse": np.float64, "n_groups": np.int64,
                "group_min": np.int64, "group_max": np.int64}


def group_stats(part: pd.DataFrame, qi: tuple[str, ...], k: int) -> pd.DataFrame:
    """Per block of one published partition: rows, SSE, groups, the smallest and largest
    group, after verifying the partition's groups (:class:`GroupVerifier`: every row of a
    group publishes the same values, every group holds at least k rows; a block, hence each
    of its groups, lies whole in one partition)."""
    if not len(part):
        return pd.DataFrame({name: [] for name in _STATS_TYPES}).astype(_STATS_TYPES)
    codes, uniques = pd.factorize(part[GROUP])
    verifier = GroupVerifier(k=k, n_groups=len(uniques), n_features=len(qi))
    verifier.add(codes, part.loc[:, list(qi)].to_numpy(dtype=np.float64))
    verifier.finish(n_rows=len(part))
    by_group = part.groupby(GROUP, sort=False)
    groups = pd.DataFrame({"block": by_group[BLOCK].first(), "size": by_group.size(),
                           "sse": by_group[SSE].sum()})
    per_block = groups.groupby("block")
    return pd.DataFrame({
        "rows": per_block["size"].sum(), "sse": per_block["sse"].sum(),
        "n_groups": per_block.size(), "group_min": per_block["size"].min(),
        "group_max": per_block["size"].max(),
    }).astype(_STATS_TYPES)


# --------------------------------------------------------------------------- client side


def merge_blocks(centroids: NDArray[np.float64], counts: NDArray[np.int64],
                  min_size: int) -> NDArray[np.int64]:
    """Merge every block under ``min_size`` rows into the block of nearest centroid,
    smallest first (ties: lowest position), updating the merged centroid; returns the final
    block (0..b-1, numbered by first position) of every row of the table."""
    c = np.asarray(centroids, dtype=np.float64).copy()
    n = np.asarray(counts, dtype=np.int64).copy()
    owner = np.arange(n.size)
    alive = np.ones(n.size, dtype=bool)
    while alive.sum() > 1:
        live = np.flatnonzero(alive)
        small = live[n[live] < min_size]
        if small.size == 0:
            break
        victim = int(small[np.argmin(n[small])])
        d = ((c[live] - c[victim]) ** 2).sum(axis=1)
        d[live == victim] = np.inf
        target = int(live[np.argmin(d)])
        total = n[target] + n[victim]
        c[target] = (c[target] * n[target] + c[victim] * n[victim]) / total
        n[target] = total
        alive[victim] = False
        owner[owner == victim] = target
    _, final = np.unique(owner, return_inverse=True)
    return final.ravel().astype(np.int64)


def tree_leaf(sample_rows: int, n: int, block_size: int) -> int:
    """Leaf size of a tree fitted on ``sample_rows`` of ``n`` rows: the sample's share of
    ``block_size``, so that the routed blocks of the full data hold about ``block_size``."""
    return max(2, round(block_size * sample_rows / n))


def divisions(counts: NDArray[np.int64], npartitions: int) -> list[int]:
    """Cut points on block ids 0..b-1 so that partitions hold about equal rows."""
    b = counts.size
    if b == 1 or npartitions <= 1:
        return [0, b - 1]
    cum = np.cumsum(counts)
    targets = cum[-1] * np.arange(1, npartitions) / npartitions
    cuts = np.searchsorted(cum, targets, side="left") + 1  # first block of the next part
    cuts = np.unique(cuts[(cuts > 0) & (cuts < b)])
    return [0, *(int(x) for x in cuts), b - 1]


