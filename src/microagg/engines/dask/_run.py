"""One run of the Dask engine (:mod:`.engine`): the five steps of its module docstring, each a
method of :class:`DaskRun`, computed on the client's cluster. Validation is assumed."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.validation import resolve_seed
from ..._pipeline.request import Request
from ..._pipeline.unmasked import broken_columns_check, warn_broken_k
from ..._pipeline.verify import group_k_check, k_check
from ...exceptions import InternalError, SchemaError
from ...partition.blocking import BlockTree, fit_block_tree
from ...partition.regroup import REGROUP_BLOCK, fit_rotated_tree
from .._reads_files import constant_columns, engine_params
from ._regroup import RegroupJob, regroup
from ._tasks import (
    BLOCK,
    GROUP,
    ROW,
    SSE,
    BlockJob,
    block_sums,
    column_stats,
    divisions,
    group_stats,
    merge_blocks,
    microaggregate_partition,
    remap,
    route,
    scaled,
    tree_leaf,
)

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    from distributed import Client

__all__ = ["DaskRun"]

_MERGE_BELOW = 2
"""Routed blocks under ``_MERGE_BELOW * k`` rows are merged into their nearest block."""

_ROWS_PER_PARTITION = 8
"""The shuffle makes at least ``n / (_ROWS_PER_PARTITION * block_size)`` partitions."""


def _compute(*collections: Any, client: Client | None) -> tuple[Any, ...]:
    import dask

    if client is None:
        return tuple(dask.compute(*collections))
    return tuple(dask.compute(*collections, scheduler=client))


def _wait(collection: Any, client: Client | None) -> None:
    if client is None:
        return
    from distributed import futures_of, wait

    futures = futures_of(collection)
    if futures:
        wait(futures)


def _smallest_pair_class(data: dd.DataFrame, qi: tuple[str, ...], column: Any,
                         split_out: int) -> Any:
    """The fewest published rows sharing their quasi-identifiers and their value of
    ``column`` (an intruder who also knows it; missing values are one value), as the
    in-memory engine counts them
    (:func:`~microagg._pipeline.unmasked.published_column_checks`): a lazy scalar."""
    keys = [*qi, column]
    return data.loc[:, keys].groupby(keys, dropna=False).size(split_out=split_out).min()


@dataclass
class _Moments:
    """Step 1's result: rows, and per quasi-identifier the centre, spread and whether it
    varies."""

    n: int
    centre: NDArray[np.float64]
    spread: NDArray[np.float64]
    varying: NDArray[np.bool_]


@dataclass
class _Routed:
    """Step 3's result: the routed rows, their meta, the final blocks and their sizes."""

    routed: Any
    meta: pd.DataFrame
    mapping: NDArray[np.int64]
    counts: NDArray[np.int64]
    block_counts: NDArray[np.int64]


class DaskRun:
    """The steps of one release on a cluster; :meth:`run` runs them in order."""

    def __init__(self, request: Request, ddf: dd.DataFrame, sample_size: int,
                 client: Client | None, on_stage: Callable[[str], None] | None) -> None:
        self.request, self.ddf, self.sample_size, self.client = request, ddf, sample_size, client
        self.stage = on_stage or (lambda name: None)
        self.qi = request.quasi_identifiers
        self.seed, _ = resolve_seed(request.random_state)
        self.timings: dict[str, float] = {}
        self.notes: list[str] = []
        self.extra: dict[str, Any] = {}
        self.sample: NDArray[np.float64] = np.empty((0, len(self.qi)))

    def run(self) -> dict[str, Any]:
        """Run the five steps; the published data persisted, verified and measured: the
        keywords of :meth:`Release.of <microagg._pipeline.result.Release.of>` (a face that
        writes the data to a file builds the Release once it is written)."""
        self.stage("statistics")
        moments = self._timed("validate", self._moments)
        self.stage("routing")
        tree = self._timed("sample_and_tree", lambda: self._tree(moments))
        routed = self._timed("route_and_merge", lambda: self._route(moments, tree))
        self.stage("microaggregation")
        processed, meta = self._timed("shuffle_and_microaggregate",
                                      lambda: self._microaggregate(moments, routed))
        checks, stats = self._timed("verify", lambda: self._verify(moments.n, processed, meta))
        return self._fields(moments, routed, processed, checks, stats)

    def _timed(self, name: str, step: Callable[[], Any]) -> Any:
        t = time.perf_counter()
        result = step()
        self.timings[name] = time.perf_counter() - t
        return result

    def _moments(self) -> _Moments:
        """Step 1, one pass: counts, missing/infinite values, moments, ranges."""
        qi = self.qi
        meta = column_stats(self.ddf._meta, qi)
        (stats,) = _compute(self.ddf.map_partitions(column_stats, qi, meta=meta),
                            client=self.client)
        per = stats.groupby("column", sort=False)
        n = int(stats.loc[stats["column"] == qi[0], "rows"].sum())
        missing = per["missing"].sum().reindex(list(qi))
        infinite = per["infinite"].sum().reindex(list(qi))
        self.request.check_rows(n)
        if (missing > 0).any() or (infinite > 0).any():
            bad = [f"{c!r}: {int(missing[c])} missing, {int(infinite[c])} infinite"
                   for c in qi if missing[c] or infinite[c]]
            raise SchemaError(
                f"Quasi-identifiers contain missing or infinite values in {n} rows checked "
                f"({'; '.join(bad)}). The dask engine runs no missing-value strategy: use "
                "the in-memory engine (missing='pattern', the default), or impute or drop "
                "them first.")
        centre, variance, lo, hi = (np.empty(len(qi)) for _ in range(4))
        for j, c in enumerate(qi):  # Chan et al.'s exact combination of partition moments
            s = stats[(stats["column"] == c) & (stats["count"] > 0)]
            cnt = s["count"].to_numpy(dtype=np.float64)
            mu = float((cnt * s["mean"].to_numpy()).sum() / cnt.sum())
            m2 = float(s["m2"].sum() + (cnt * (s["mean"].to_numpy() - mu) ** 2).sum())
            centre[j], variance[j] = mu, (m2 / (n - 1) if n > 1 else 0.0)
            lo[j], hi[j] = float(s["min"].min()), float(s["max"].max())
        varying = hi > lo
        spread = np.where(varying, np.sqrt(variance), 1.0)
        constant_columns(self.request, varying, self.notes)
        return _Moments(n, centre, np.where(spread > 0, spread, 1.0), varying)

    def _tree(self, moments: _Moments) -> BlockTree:
        """Step 2: the block tree fitted on a sample."""
        frac = min(1.0, self.sample_size / moments.n)
        source = self.ddf.loc[:, list(self.qi)]
        if frac < 1.0:
            source = source.sample(frac=frac, random_state=self.seed % 2**32)
        (sample,) = _compute(source, client=self.client)
        S = scaled(sample, self.qi, moments.centre, moments.spread)
        self.sample = S
        leaf = tree_leaf(S.shape[0], moments.n, int(self.request.block_size))
        self.extra.update(sample_rows=int(S.shape[0]), tree_leaf_size=leaf)
        blocking = self.request.blocking or "kd"
        if S.shape[0] >= 2:
            return fit_block_tree(S, leaf, blocking=blocking)[0]
        return fit_block_tree(np.zeros((1, len(self.qi))), 2,  # pragma: no cover - 1 row
                              blocking=blocking)[0]

    def _route(self, moments: _Moments, tree: BlockTree) -> _Routed:
        """Step 3: every row routed, counted and summed per block; small blocks merged."""
        import dask

        qi, ddf = self.qi, self.ddf
        body = ddf.loc[:, [c for c in ddf.columns if c not in self.request.identifiers]]
        meta = route(body._meta, tree, qi, moments.centre, moments.spread)
        # the tree (megabytes for 10^4 blocks) and the block mapping enter the graph once,
        # as shared keys, not copied into every task
        routed = body.map_partitions(route, dask.delayed(tree, pure=True), qi, moments.centre,
                                     moments.spread, meta=meta)
        # per partition a table of blocks, then a tree reduction of those small tables on the
        # workers: the client gets one row per block, whatever the number of partitions
        partial = routed.map_partitions(block_sums, qi, meta=block_sums(meta, qi))
        (table,) = _compute(partial.groupby(BLOCK).sum(split_every=8), client=self.client)
        table = table.sort_index()
        counts = table[ROW].to_numpy(dtype=np.int64)
        if int(counts.sum()) != moments.n:
            raise InternalError(f"Routing placed {int(counts.sum())} of {moments.n} rows in "
                                "blocks.")
        centroids = (table.loc[:, list(qi)].to_numpy(dtype=np.float64) / counts[:, None]
                     - moments.centre) / moments.spread
        final = merge_blocks(centroids, counts, _MERGE_BELOW * self.request.k)
        mapping = np.full(tree.n_blocks, -1, dtype=np.int64)
        mapping[table.index.to_numpy(dtype=np.int64)] = final
        block_counts = np.bincount(final, weights=counts,
                                   minlength=int(final.max()) + 1).astype(np.int64)
        return _Routed(routed, meta, mapping, counts, block_counts)

    def _microaggregate(self, moments: _Moments, routed: _Routed) -> tuple[Any, pd.DataFrame]:
        """Step 4: shuffle by final block, microaggregate every block on a worker, persist."""
        import dask

        request, n = self.request, moments.n
        remapped = routed.routed.map_partitions(remap, dask.delayed(routed.mapping, pure=True),
                                                meta=routed.meta)
        n_blocks = routed.block_counts.size
        npartitions = max(1, min(n_blocks, max(
            self.ddf.npartitions, -(-n // (_ROWS_PER_PARTITION * int(request.block_size))))))
        shuffled = remapped.set_index(BLOCK, divisions=divisions(routed.block_counts,
                                                                 npartitions))
        second = (request.partitioner.refine_across is not None
                  and n > max(REGROUP_BLOCK, int(request.block_size)))
        job = BlockJob(qi=self.qi, centre=moments.centre, spread=moments.spread, k=request.k,
                       method=request.partitioner.name, seed=self.seed,
                       blocking=request.blocking or "kd", block_size=int(request.block_size),
                       params=dict(request.method_params), keep_originals=second)
        columns = tuple(c for c in self.ddf.columns if c not in request.identifiers)
        options = {"job": job, "index_name": self.ddf._meta.index.name, "columns": columns}
        meta = microaggregate_partition(shuffled._meta, **options)
        processed = shuffled.map_partitions(microaggregate_partition, meta=meta,
                                            align_dataframes=False, **options)
        client = self.client
        processed = client.persist(processed) if client is not None else processed.persist()
        _wait(processed, client)
        if second:
            processed, meta = self._regroup(moments, processed, meta, options, npartitions)
        return processed, meta

    def _regroup(self, moments: _Moments, processed: Any, meta: pd.DataFrame,
                 options: dict[str, Any], npartitions: int) -> tuple[Any, pd.DataFrame]:
        """Step 4b: the refinement across block borders (:mod:`._regroup`)."""
        request = self.request
        size = max(REGROUP_BLOCK, int(request.block_size))
        leaf = tree_leaf(self.sample.shape[0], moments.n, size)
        tree = fit_rotated_tree(self.sample, leaf, self.seed + 1)
        job = RegroupJob(qi=self.qi, centre=moments.centre, spread=moments.spread,
                         k=request.k, method=request.partitioner.name, seed=self.seed + 1,
                         params=dict(request.method_params))
        t = time.perf_counter()
        refined = regroup(processed, meta, tree, job, index_name=options["index_name"],
                          columns=options["columns"],
                          npartitions=max(npartitions, -(-moments.n // size)),
                          compute=lambda c: _compute(c, client=self.client))
        client = self.client
        refined = client.persist(refined) if client is not None else refined.persist()
        _wait(refined, client)
        self.timings["refinement_across_blocks"] = time.perf_counter() - t
        self.extra.update(second_blocks=int(tree.n_blocks))
        return refined, refined._meta

    def _verify(self, n: int, processed: Any, meta: pd.DataFrame
                ) -> tuple[dict[str, Any], pd.DataFrame]:
        """Step 5: the published output re-checked: the groups of every partition (on the
        workers), the classes of identical published rows (a distributed groupby), the rows,
        and the k left by each column published unchanged (``published_columns``, with the
        privacy warning, when one breaks k)."""
        qi, k = self.qi, self.request.k
        data = processed.drop(columns=[BLOCK, GROUP, SSE])
        split_out = max(1, processed.npartitions // 4)
        classes = data.loc[:, list(qi)].groupby(list(qi), dropna=False).size(
            split_out=split_out)
        roles = {*qi, *self.request.sensitive, *self.request.identifiers}
        checked = [c for c in data.columns if c not in roles]
        stats, achieved, published, *smallest = _compute(
            processed.map_partitions(group_stats, qi, k, meta=group_stats(meta, qi, k)),
            classes.min(), processed.map_partitions(len).sum(),
            *(_smallest_pair_class(data, qi, col, split_out) for col in checked),
            client=self.client)
        if int(published) != n or int(stats["rows"].sum()) != n:
            raise InternalError(f"The published table has {int(published)} rows; the input "
                                f"has {n}. Nothing was released.")
        group_min = int(stats["group_min"].min())
        checks = {
            "k_anonymity": k_check(k, int(achieved)),
            "group_k": group_k_check(k, group_min, "size of the smallest group over which "
                                     "each mean is computed"),
            "groups_publish_one_value": True,
            "rows": MappingProxyType({"input": n, "published": int(published)}),
        }
        broken = broken_columns_check({str(c): int(v) for c, v in zip(checked, smallest,
                                                                       strict=True)
                                       if int(v) < k}, k)
        if broken is not None:
            checks["published_columns"] = broken
            warn_broken_k(broken, self.notes)
        return checks, stats

    def _fields(self, moments: _Moments, routed: _Routed, processed: Any,
                checks: dict[str, Any], stats: pd.DataFrame) -> dict[str, Any]:
        sse = float(stats["sse"].sum())
        sst = float((moments.n - 1) * int(moments.varying.sum()))
        metrics = {
            "information_loss": 100.0 * sse / sst if sst > 0 else 0.0, "sse": sse, "sst": sst,
            "n_blocks": int(routed.block_counts.size), "n_blocks_routed": int(routed.counts.size),
            "block_size_min": int(routed.block_counts.min()),
            "block_size_max": int(routed.block_counts.max()),
            "n_groups": int(stats["n_groups"].sum()),
            "group_size_min": int(stats["group_min"].min()),
            "group_size_max": int(stats["group_max"].max()),
            "npartitions": int(processed.npartitions),
            **self.extra,  # the sample's rows, the tree's leaf size, the second blocks
        }
        data = processed.drop(columns=[BLOCK, GROUP, SSE])
        self.timings["total"] = time.perf_counter() - self.request.started
        return {"data": data, "labels": None,
                "params": engine_params(self.request, sample_size=self.sample_size),
                "seed": self.seed, "checks": checks, "metrics": metrics,
                "warnings": tuple(self.notes), "timings": dict(self.timings),
                "engine": "dask", "rows": moments.n,
                "columns": tuple(str(c) for c in data.columns)}
