"""Dask backend: microaggregate a data frame that is spread over a cluster.

The pipeline is the blocked engine of :mod:`microagg.partition.blocking` run out of core:

1. **validate** (one pass): row count, missing and infinite values, and the mean, variance
   (``ddof=1``, combined exactly from per-partition moments) and range of every
   quasi-identifier;
2. **sample and fit**: a random sample of about ``sample_size`` rows, z-scored, fits a
   :class:`~microagg.partition.blocking.BlockTree` whose leaves hold the sample share of
   ``block_size`` rows;
3. **route and merge** (one pass): every partition's rows are routed through the tree; the
   rows and quasi-identifier sums of every block are reduced, and blocks under ``2k`` rows
   are merged into the block of nearest centroid (smallest first);
4. **shuffle and microaggregate**: ``set_index`` on the final block with divisions cut from
   the block counts (every block lands whole in one partition, partitions hold about the
   same number of rows); each partition runs the partitioner block by block (a block above
   ``4 * block_size`` rows is blocked again locally), publishes the group means on the
   original scale and restores the original index. The result is persisted on the cluster;
5. **verify** (on the published output): the smallest number of identical published
   quasi-identifier rows (a distributed ``groupby(...).size().min()``), the smallest group,
   that every group publishes one value, and that no row was lost. A shortfall raises
   :class:`~microagg.exceptions.PrivacyViolationError` and nothing is returned.

Every task is pure: the sample, the tree and the merge are fixed on the client before the
shuffle; inside a block the rows are ordered by a row id derived from the input partition
and position, and block ``b`` uses the seed ``seed + b``. A task that Dask recomputes after
losing a worker therefore yields the same published values.

This module needs ``dask[distributed]`` (the ``dask`` extra: ``pip install microagg[dask]``).
"""

from __future__ import annotations

import json
import os
import pathlib
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import __version__
from ._validation import RandomState, check_k, resolve_seed
from .aggregate import group_mean
from .exceptions import (
    ConstantColumnWarning,
    InternalError,
    PrivacyViolationError,
    SchemaError,
)
from .partition.blocking import (
    BLOCKINGS,
    BlockTree,
    _run_block,
    blocked_partition,
    fit_block_tree,
)

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    from distributed import Client

    from .outofcore import FileRelease

__all__ = ["DaskRelease", "anonymize_dask", "anonymize_dask_file", "connect", "local_client"]

_BLOCK = "__microagg_block__"
_ROW = "__microagg_row__"
_INDEX = "__microagg_index__"
_GROUP = "__microagg_group__"
_SSE = "__microagg_sse__"
_RESERVED = (_BLOCK, _ROW, _INDEX, _GROUP, _SSE)

_SPLIT_AGAIN = 4
"""A routed block above ``_SPLIT_AGAIN * block_size`` rows is blocked again on its worker."""

_MERGE_BELOW = 2
"""Routed blocks under ``_MERGE_BELOW * k`` rows are merged into their nearest block."""

_ROWS_PER_PARTITION = 8
"""The shuffle makes at least ``n / (_ROWS_PER_PARTITION * block_size)`` partitions."""


def _require_dask() -> None:
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "The Dask backend needs dask[distributed]>=2024.1: pip install 'microagg[dask]'."
        ) from exc


@dataclass(frozen=True, eq=False)
class DaskRelease:
    """A verified release computed on a Dask cluster.

    Attributes
    ----------
    data : dask.dataframe.DataFrame
        The published table, persisted on the cluster: the input's columns minus the
        identifiers, with the input's index; quasi-identifiers replaced by their group's
        mean (float64). Rows are ordered by block, not in the input's order: align on the
        index to compare with the input.
    params : Mapping
        Everything needed to reproduce the release.
    seed : int
        The random seed actually used (drawn and recorded when ``random_state=None``).
    checks : Mapping
        Guarantees re-derived from the published data: ``k_anonymity`` (required, achieved),
        ``group_k`` (smallest group), ``groups_publish_one_value`` and ``rows``.
    metrics : Mapping
        ``information_loss`` (``100 * SSE / SST`` on z-scores), ``sse``, ``sst``,
        ``n_blocks``, ``block_size_min``/``max``, ``n_groups``, ``group_size_min``/``max``.
    warnings : tuple of str
        Everything the user should know.
    timings : Mapping
        Seconds spent in each stage (wall clock on the client).
    """

    data: dd.DataFrame
    params: Mapping[str, Any]
    seed: int
    checks: Mapping[str, Any]
    metrics: Mapping[str, Any]
    warnings: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """The k-anonymity achieved by the published quasi-identifiers."""
        return int(self.checks["k_anonymity"]["achieved"])

    def summary(self) -> dict[str, Any]:
        """Everything but the data, as plain JSON-serializable values."""
        from ._pipeline.result import to_plain as _plain

        return {
            "rows": int(self.checks["rows"]["published"]),
            "columns": [str(c) for c in self.data.columns],
            "params": _plain(self.params),
            "seed": self.seed,
            "checks": _plain(self.checks),
            "metrics": _plain(self.metrics),
            "warnings": list(self.warnings),
            "timings": _plain(self.timings),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`summary` as a JSON string."""
        return json.dumps(self.summary(), indent=indent)

    def __repr__(self) -> str:
        return (
            f"DaskRelease(rows={self.checks['rows']['published']}, "
            f"method={self.params['method']!r}, k={self.params['k']}, achieved_k={self.k}, "
            f"information_loss={self.metrics['information_loss']:.4f}, "
            f"npartitions={self.data.npartitions})"
        )


# --------------------------------------------------------------------------- clients


def local_client(n_workers: int = 2, threads_per_worker: int = 1, **kwargs: Any) -> Client:
    """Start a :class:`distributed.LocalCluster` of worker processes and connect to it.

    The CLI's choice when no scheduler address is given. One thread per worker: the
    partitioners hold the GIL in places and numba kernels bring their own threads. Extra
    keyword arguments go to ``LocalCluster`` (e.g. ``memory_limit``). Close the client and
    its cluster with ``client.close(); client.cluster.close()``.
    """
    _require_dask()
    from distributed import Client, LocalCluster

    options: dict[str, Any] = {"processes": True, "dashboard_address": None}
    options.update(kwargs)
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                           **options)
    return Client(cluster)


def connect(address: str, **kwargs: Any) -> Client:
    """Connect to a running Dask scheduler, e.g. ``connect("tcp://10.0.0.5:8786")``."""
    _require_dask()
    from distributed import Client

    if not isinstance(address, str) or not address:
        raise ValueError(f"The 'address' parameter must be a scheduler address such as "
                         f"'tcp://host:8786'. Got {address!r}.")
    return Client(address, **kwargs)


def _active_client(client: Client | None) -> Client | None:
    """The given client, else the default distributed client (if no scheduler is forced)."""
    if client is not None:
        return client
    import dask

    if dask.config.get("scheduler", None) is not None:
        return None
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        return None


# --------------------------------------------------------------------------- tasks
# Top-level functions: they run on the workers and must be picklable and pure.


def _column_stats(part: pd.DataFrame, qi: tuple[str, ...]) -> pd.DataFrame:
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


def _scaled(part: pd.DataFrame, qi: tuple[str, ...], centre: NDArray[np.float64],
            spread: NDArray[np.float64]) -> NDArray[np.float64]:
    V = part.loc[:, list(qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.ascontiguousarray((V - centre) / spread)


def _route(part: pd.DataFrame, tree: BlockTree, qi: tuple[str, ...],
           centre: NDArray[np.float64], spread: NDArray[np.float64],
           partition_info: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Add the routed block, a deterministic row id and the index as columns."""
    out = part.copy()
    if len(part):
        blocks = tree.route(_scaled(part, qi, centre, spread)).astype(np.int64)
    else:
        blocks = np.zeros(0, dtype=np.int64)
    number = 0 if partition_info is None else int(partition_info["number"])
    out[_BLOCK] = blocks
    out[_ROW] = (np.int64(number) << np.int64(32)) + np.arange(len(part), dtype=np.int64)
    out[_INDEX] = part.index
    return out


def _remap(part: pd.DataFrame, mapping: NDArray[np.int64]) -> pd.DataFrame:
    out = part.copy()
    out[_BLOCK] = mapping[part[_BLOCK].to_numpy(dtype=np.int64)]
    return out


def _block_sums(part: pd.DataFrame, qi: tuple[str, ...]) -> pd.DataFrame:
    """Rows (``_ROW``) and quasi-identifier sums of every block of one partition."""
    grouped = part.groupby(_BLOCK, sort=True)
    sums = grouped[list(qi)].sum().astype(np.float64)
    sums[_ROW] = grouped.size().astype(np.int64)
    return sums.reset_index()


@contextmanager
def _single_numba_thread() -> Iterator[None]:
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


def _partition_blocks(V: NDArray[np.float64], blocks: NDArray[np.int64],
                      published: NDArray[np.float64], group: NDArray[np.int64], *,
                      centre: NDArray[np.float64], spread: NDArray[np.float64], k: int,
                      method: str, params: Mapping[str, Any], seed: int, blocking: str,
                      block_size: int) -> None:
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
        A = np.ascontiguousarray((Vb - centre) / spread)
        if e - s > _SPLIT_AGAIN * block_size:
            local = blocked_partition(A, k, method=method, blocking=blocking,
                                      block_size=block_size, n_jobs=1,
                                      random_state=seed + b, **dict(params))
        else:
            local = _run_block((A, k, method, params, seed + b))
        published[s:e] = group_mean(Vb, local)
        group[s:e] = (np.int64(b) << np.int64(32)) + local.astype(np.int64)


def _microaggregate_partition(part: pd.DataFrame, *, qi: tuple[str, ...],
                              centre: NDArray[np.float64], spread: NDArray[np.float64],
                              k: int, method: str, params: Mapping[str, Any], seed: int,
                              blocking: str, block_size: int, index_name: Any,
                              columns: tuple[str, ...]) -> pd.DataFrame:
    """Microaggregate every block of one shuffled partition (index = final block id).

    Returns the published rows (original index, ``columns`` with the quasi-identifiers
    replaced by their group mean) plus the block, a global group id and each row's squared
    error in z-score units."""
    blocks = part.index.to_numpy(dtype=np.int64)
    rows = part[_ROW].to_numpy(dtype=np.int64)
    order = np.lexsort((rows, blocks))  # by block, then by input position: deterministic
    blocks = blocks[order]
    ordered = part.iloc[order]
    V = ordered.loc[:, list(qi)].to_numpy(dtype=np.float64, na_value=np.nan)
    published = np.empty_like(V)
    group = np.empty(V.shape[0], dtype=np.int64)
    with _single_numba_thread():
        _partition_blocks(V, blocks, published, group, centre=centre, spread=spread, k=k,
                          method=method, params=params, seed=seed, blocking=blocking,
                          block_size=block_size)
    out = ordered.loc[:, list(columns)].copy()
    for j, c in enumerate(qi):
        out[c] = published[:, j]
    out[_BLOCK] = blocks
    out[_GROUP] = group
    out[_SSE] = (((V - published) / spread) ** 2).sum(axis=1)
    out.index = pd.Index(ordered[_INDEX], name=index_name)
    return out


def _group_stats(part: pd.DataFrame, qi: tuple[str, ...]) -> pd.DataFrame:
    """Per block of one published partition: rows, SSE, groups, the smallest and largest
    group and the largest spread of a published value inside a group (must be 0)."""
    if not len(part):
        return pd.DataFrame({"rows": [], "sse": [], "n_groups": [], "group_min": [],
                             "group_max": [], "spread": []}).astype(
            {"rows": np.int64, "sse": np.float64, "n_groups": np.int64,
             "group_min": np.int64, "group_max": np.int64, "spread": np.float64})
    by_group = part.groupby(_GROUP, sort=False)
    pub = by_group[list(qi)]
    spread = (pub.max() - pub.min()).max(axis=1)
    groups = pd.DataFrame({
        "block": by_group[_BLOCK].first(),
        "size": by_group.size(),
        "spread": spread,
        "sse": by_group[_SSE].sum(),
    })
    per_block = groups.groupby("block")
    return pd.DataFrame({
        "rows": per_block["size"].sum().astype(np.int64),
        "sse": per_block["sse"].sum().astype(np.float64),
        "n_groups": per_block.size().astype(np.int64),
        "group_min": per_block["size"].min().astype(np.int64),
        "group_max": per_block["size"].max().astype(np.int64),
        "spread": per_block["spread"].max().astype(np.float64),
    })


# --------------------------------------------------------------------------- client side


def _merge_blocks(centroids: NDArray[np.float64], counts: NDArray[np.int64],
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


def _tree_leaf(sample_rows: int, n: int, block_size: int) -> int:
    """Leaf size of a tree fitted on ``sample_rows`` of ``n`` rows: the sample's share of
    ``block_size``, so that the routed blocks of the full data hold about ``block_size``."""
    return max(2, round(block_size * sample_rows / n))


def _divisions(counts: NDArray[np.int64], npartitions: int) -> list[int]:
    """Cut points on block ids 0..b-1 so that partitions hold about equal rows."""
    b = counts.size
    if b == 1 or npartitions <= 1:
        return [0, b - 1]
    cum = np.cumsum(counts)
    targets = cum[-1] * np.arange(1, npartitions) / npartitions
    cuts = np.searchsorted(cum, targets, side="left") + 1  # first block of the next part
    cuts = np.unique(cuts[(cuts > 0) & (cuts < b)])
    return [0, *(int(x) for x in cuts), b - 1]


def _schema_checks(ddf: Any, qi: tuple[str, ...], ids: tuple[str, ...]) -> None:
    from ._pipeline.rules import validate_roles as _validate_roles

    _validate_roles(ddf, qi, (), ids)
    clash = [c for c in ddf.columns if c in _RESERVED]
    if clash:
        raise SchemaError(f"Column name(s) {', '.join(map(repr, clash))} are reserved by the "
                          "Dask backend; rename them.")
    dtypes = ddf.dtypes
    not_numeric = [
        f"{c!r} (dtype {dtypes[c]})" for c in qi
        if not (pd.api.types.is_numeric_dtype(dtypes[c])
                and not pd.api.types.is_bool_dtype(dtypes[c]))
    ]
    if not_numeric:
        raise SchemaError(
            "Quasi-identifiers must be numeric for the numeric methods; not numeric: "
            f"{', '.join(not_numeric)}. Encode them, or pass them as other columns."
        )


def _int_param(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"The {name!r} parameter of anonymize_dask must be an int >= {low}. "
                         f"Got {value!r}.")
    return int(value)


def _shuffle_method(client: Client | None) -> str:
    """P2P on a cluster when pyarrow is there, else the task shuffle (in memory; Dask's own
    default without a client, ``"disk"``, writes local files and needs no cluster)."""
    if client is None:
        return "tasks"
    try:
        import pyarrow  # noqa: F401
    except ImportError:  # pragma: no cover - pyarrow comes with pandas' dask extra
        return "tasks"
    return "p2p"


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


def anonymize_dask(
    ddf: dd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    k: int,
    method: str = "mdav",
    identifiers: str | Sequence[str] = (),
    blocking: str = "kd",
    block_size: int = 10_000,
    sample_size: int = 200_000,
    random_state: RandomState = None,
    client: Client | None = None,
    **params: Any,
) -> DaskRelease:
    """Microaggregate the quasi-identifiers of a Dask data frame, block by block, on a cluster.

    The records are cut into blocks of about ``block_size`` near records by a block tree
    fitted on a sample and applied to every partition; blocks under ``2k`` rows are merged
    into their nearest block; the data are shuffled by block and every block is
    microaggregated on a worker (module docstring). Identifiers are dropped, other columns
    pass through unchanged, the index is kept. The achieved k-anonymity is re-derived from
    the published data by a distributed reduction; a shortfall raises
    :class:`~microagg.exceptions.PrivacyViolationError`.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The microdata, one row per respondent.
    quasi_identifiers : str or sequence of str
        Numeric columns to mask.
    k : int
        Minimum group size, ``2 <= k <= n_rows``.
    method : str, default="mdav"
        The partitioner run inside each block (a key of ``PARTITIONERS`` that does not need
        sensitive columns).
    identifiers : str or sequence of str, default=()
        Direct identifiers: dropped.
    blocking : {"kd", "pca", "vp"}, default="kd"
        Split score of the block tree (:mod:`microagg.partition.blocking`).
    block_size : int, default=10_000
        Target block size, ``>= 2k``. Routed blocks hold about ``block_size / 2`` to
        ``block_size`` rows (plus sampling variation); one above ``4 * block_size`` is
        blocked again on its worker.
    sample_size : int, default=200_000
        Rows sampled to fit the block tree (the whole file when it is smaller).
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the sample and of the randomized partitioners (block ``b`` uses
        ``seed + b``).
    client : distributed.Client, default=None
        The cluster to use; ``None``: the active client, else Dask's default scheduler.
    **params
        Parameters of ``method``.

    Returns
    -------
    DaskRelease
        ``data`` persisted on the cluster, ``checks``, ``metrics``, ``seed``, ``params``,
        ``timings``.

    Raises
    ------
    SchemaError
        Unknown or doubly-assigned columns, non-numeric quasi-identifiers, missing or
        infinite values (counted per column), reserved column names.
    ValueError, TypeError
        Invalid ``k``, ``block_size``, ``sample_size``, ``method``, ``blocking`` or method
        parameters.
    PrivacyViolationError
        The published data are not k-anonymous (a bug; nothing is returned).

    References
    ----------
    Solanas, A., Martínez-Ballesté, A., Domingo-Ferrer, J., Mateo-Sanz, J. M. "A 2d-tree-based
    blocking method for microaggregating very large data sets." ARES 2006; Domingo-Ferrer, J.,
    Torra, V. "Ordinal, continuous and heterogeneous k-anonymity through microaggregation."
    Data Min. Knowl. Disc. 11 (2005); seed 001, section 2.6.

    Examples
    --------
    >>> import dask.dataframe as dd, numpy as np, pandas as pd
    >>> df = pd.DataFrame(np.random.default_rng(0).normal(size=(600, 2)), columns=["a", "b"])
    >>> release = anonymize_dask(dd.from_pandas(df, npartitions=3), quasi_identifiers=["a", "b"],
    ...                          k=3, block_size=100, random_state=0)
    >>> release.k >= 3
    True
    """
    _require_dask()
    import dask
    import dask.dataframe as dd

    from ._pipeline.rules import as_names as _as_names
    from .partition import get_partitioner

    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"The 'ddf' parameter of anonymize_dask must be a dask.dataframe."
                        f"DataFrame. Got {type(ddf).__name__}; use microagg.anonymize for "
                        "pandas, or dask.dataframe.from_pandas.")
    qi = _as_names(quasi_identifiers, "quasi_identifiers")
    ids = _as_names(identifiers, "identifiers")
    _schema_checks(ddf, qi, ids)
    if blocking not in BLOCKINGS:
        raise ValueError(f"The 'blocking' parameter of anonymize_dask must be one of "
                         f"{', '.join(BLOCKINGS)}. Got {blocking!r}.")
    partitioner = get_partitioner(method)
    if partitioner.needs_sensitive:
        raise ValueError(f"Method {partitioner.name!r} needs the sensitive columns; it cannot "
                         "run block by block.")
    unknown = sorted(set(params) - set(partitioner.params))
    if unknown:
        raise TypeError(f"Unknown parameter(s) {', '.join(unknown)} for method "
                        f"{partitioner.name!r}. Its parameters: "
                        f"{', '.join(sorted(partitioner.params)) or 'none'}.")
    k = check_k(k, n_samples=2**62, caller="anonymize_dask")  # type and k >= 2; k <= n later
    block_size = _int_param(block_size, "block_size", 2)
    sample_size = _int_param(sample_size, "sample_size", 2)
    if block_size < 2 * k:
        raise ValueError(f"The 'block_size' parameter of anonymize_dask must be an int >= "
                         f"2k={2 * k}. Got {block_size}.")
    seed, _ = resolve_seed(random_state)
    active = _active_client(client)
    # The client is passed to every compute explicitly, never put into dask.config: a
    # LocalCluster's nanny living in this process copies the config into the worker it
    # restarts after a crash, and a Client cannot be pickled.
    shuffle = dask.config.get("dataframe.shuffle.method", None) or _shuffle_method(active)
    with dask.config.set({"dataframe.shuffle.method": shuffle}):
        return _run(ddf, qi=qi, ids=ids, k=k, method=partitioner.name,
                    params=dict(params), blocking=blocking, block_size=block_size,
                    sample_size=sample_size, seed=seed, client=active, t0=t0,
                    timings=timings)


def _run(ddf: dd.DataFrame, *, qi: tuple[str, ...], ids: tuple[str, ...], k: Any,
         method: str, params: dict[str, Any], blocking: str, block_size: int,
         sample_size: int, seed: int, client: Client | None, t0: float,
         timings: dict[str, float]) -> DaskRelease:
    import dask

    # 1. one pass: counts, missing/infinite values, moments, ranges
    meta = _column_stats(ddf._meta, qi)
    (stats,) = _compute(ddf.map_partitions(_column_stats, qi, meta=meta), client=client)
    per = stats.groupby("column", sort=False)
    n = int(stats.loc[stats["column"] == qi[0], "rows"].sum())
    missing = per["missing"].sum().reindex(list(qi))
    infinite = per["infinite"].sum().reindex(list(qi))
    if n == 0:
        raise SchemaError("The input table has no rows; there is nothing to release.")
    if (missing > 0).any() or (infinite > 0).any():
        bad = [f"{c!r}: {int(missing[c])} missing, {int(infinite[c])} infinite"
               for c in qi if missing[c] or infinite[c]]
        raise SchemaError(
            f"Quasi-identifiers contain missing or infinite values in {n} rows checked "
            f"({'; '.join(bad)}). Impute or drop them first; microagg never imputes silently.")
    k = check_k(k, n_samples=n, caller="anonymize_dask")
    centre = np.empty(len(qi))
    variance = np.empty(len(qi))
    lo = np.empty(len(qi))
    hi = np.empty(len(qi))
    for j, c in enumerate(qi):  # Chan et al.'s exact combination of partition moments
        s = stats[(stats["column"] == c) & (stats["count"] > 0)]
        cnt = s["count"].to_numpy(dtype=np.float64)
        mu = float((cnt * s["mean"].to_numpy()).sum() / cnt.sum())
        m2 = float(s["m2"].sum() + (cnt * (s["mean"].to_numpy() - mu) ** 2).sum())
        centre[j], variance[j] = mu, (m2 / (n - 1) if n > 1 else 0.0)
        lo[j], hi[j] = float(s["min"].min()), float(s["max"].max())
    varying = hi > lo
    spread = np.where(varying, np.sqrt(variance), 1.0)
    spread = np.where(spread > 0, spread, 1.0)
    notes: list[str] = []
    constant = [c for c, v in zip(qi, varying, strict=True) if not v]
    if constant:
        msg = (f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: excluded "
               "from the distances and published unchanged.")
        warnings.warn(msg, ConstantColumnWarning, stacklevel=3)
        notes.append(msg)
    timings["validate"] = time.perf_counter() - t0

    # 2. the block tree from a sample
    t = time.perf_counter()
    frac = min(1.0, sample_size / n)
    source = ddf.loc[:, list(qi)]
    if frac < 1.0:
        source = source.sample(frac=frac, random_state=seed % 2**32)
    (sample,) = _compute(source, client=client)
    S = _scaled(sample, qi, centre, spread)
    leaf = _tree_leaf(S.shape[0], n, block_size)
    if S.shape[0] >= 2:
        tree, _ = fit_block_tree(S, leaf, blocking=blocking)
    else:  # pragma: no cover - a sample of under 2 rows: one block
        tree, _ = fit_block_tree(np.zeros((1, len(qi))), 2, blocking=blocking)
    timings["sample_and_tree"] = time.perf_counter() - t

    # 3. route every row, count and sum per block, merge the small blocks
    t = time.perf_counter()
    kept = [c for c in ddf.columns if c not in ids]
    body = ddf.loc[:, kept]
    route_meta = _route(body._meta, tree, qi, centre, spread)
    # the tree (megabytes for 10^4 blocks) and the block mapping enter the graph once,
    # as shared keys, not copied into every task
    shared_tree = dask.delayed(tree, pure=True)
    routed = body.map_partitions(_route, shared_tree, qi, centre, spread, meta=route_meta)
    # per partition a table of blocks, then a tree reduction of those small tables on the
    # workers: the client gets one row per block, whatever the number of partitions
    partial = routed.map_partitions(_block_sums, qi, meta=_block_sums(route_meta, qi))
    (table,) = _compute(partial.groupby(_BLOCK).sum(split_every=8), client=client)
    table = table.sort_index()
    counts = table[_ROW].to_numpy(dtype=np.int64)
    if int(counts.sum()) != n:
        raise InternalError(f"Routing placed {int(counts.sum())} of {n} rows in blocks.")
    centroids = (table.loc[:, list(qi)].to_numpy(dtype=np.float64) / counts[:, None]
                 - centre) / spread
    final = _merge_blocks(centroids, counts, _MERGE_BELOW * k)
    n_blocks = int(final.max()) + 1
    mapping = np.full(tree.n_blocks, -1, dtype=np.int64)
    mapping[table.index.to_numpy(dtype=np.int64)] = final
    block_counts = np.bincount(final, weights=counts, minlength=n_blocks).astype(np.int64)
    timings["route_and_merge"] = time.perf_counter() - t

    # 4. shuffle by final block, microaggregate every block on a worker, persist
    t = time.perf_counter()
    remapped = routed.map_partitions(_remap, dask.delayed(mapping, pure=True),
                                     meta=route_meta)
    npartitions = max(1, min(n_blocks, max(ddf.npartitions,
                                           -(-n // (_ROWS_PER_PARTITION * block_size)))))
    shuffled = remapped.set_index(_BLOCK, divisions=_divisions(block_counts, npartitions))
    index_name = ddf._meta.index.name
    options = dict(qi=qi, centre=centre, spread=spread, k=k, method=method, params=params,
                   seed=seed, blocking=blocking, block_size=block_size,
                   index_name=index_name, columns=tuple(kept))
    out_meta = _microaggregate_partition(shuffled._meta, **options)
    processed = shuffled.map_partitions(_microaggregate_partition, meta=out_meta,
                                        align_dataframes=False, **options)
    processed = client.persist(processed) if client is not None else processed.persist()
    _wait(processed, client)
    timings["shuffle_and_microaggregate"] = time.perf_counter() - t

    # 5. verify on the published output
    t = time.perf_counter()
    data = processed.drop(columns=[_BLOCK, _GROUP, _SSE])
    group_meta = _group_stats(out_meta, qi)
    classes = data.loc[:, list(qi)].groupby(list(qi), dropna=False).size(
        split_out=max(1, processed.npartitions // 4))
    block_stats, achieved, published_rows = _compute(
        processed.map_partitions(_group_stats, qi, meta=group_meta),
        classes.min(), processed.map_partitions(len).sum(), client=client)
    achieved = int(achieved)
    published_rows = int(published_rows)
    timings["verify"] = time.perf_counter() - t

    group_min = int(block_stats["group_min"].min())
    value_spread = float(block_stats["spread"].max())
    if published_rows != n or int(block_stats["rows"].sum()) != n:
        raise InternalError(f"The published table has {published_rows} rows; the input has "
                            f"{n}. Nothing was released.")
    if achieved < k or group_min < k:
        raise PrivacyViolationError(
            f"The published quasi-identifiers are {achieved}-anonymous and the smallest group "
            f"has {group_min} records; k={k} was required. Nothing was released. This is a "
            "bug in microagg.")
    if value_spread != 0.0:
        raise PrivacyViolationError(
            f"A group publishes different values (spread {value_spread}). Nothing was "
            "released. This is a bug in microagg.")
    sse = float(block_stats["sse"].sum())
    sst = float((n - 1) * int(varying.sum()))
    checks = MappingProxyType({
        "k_anonymity": MappingProxyType({
            "required": k, "achieved": achieved,
            "model": "k-anonymity: smallest number of published records sharing the same "
                     "quasi-identifier values, counted on the published data (distributed "
                     "groupby)"}),
        "group_k": MappingProxyType({
            "required": k, "achieved": group_min,
            "model": "size of the smallest group over which each mean is computed"}),
        "groups_publish_one_value": True,
        "rows": MappingProxyType({"input": n, "published": published_rows}),
    })
    metrics = MappingProxyType({
        "information_loss": 100.0 * sse / sst if sst > 0 else 0.0,
        "sse": sse,
        "sst": sst,
        "n_blocks": n_blocks,
        "n_blocks_routed": int(counts.size),
        "block_size_min": int(block_counts.min()),
        "block_size_max": int(block_counts.max()),
        "n_groups": int(block_stats["n_groups"].sum()),
        "group_size_min": group_min,
        "group_size_max": int(block_stats["group_max"].max()),
        "npartitions": int(processed.npartitions),
    })
    release_params = MappingProxyType({
        "method": method, "k": k, "quasi_identifiers": qi, "identifiers": ids,
        "aggregation": "mean", "scaling": "standard", "blocking": blocking,
        "block_size": block_size, "sample_size": sample_size,
        "sample_rows": int(S.shape[0]), "tree_leaf_size": leaf,
        "method_params": MappingProxyType(params), "backend": "dask",
        "microagg_version": __version__,
    })
    timings["total"] = time.perf_counter() - t0
    return DaskRelease(data=data, params=release_params, seed=seed, checks=checks,
                       metrics=metrics, warnings=tuple(notes),
                       timings=MappingProxyType(dict(timings)))



# --------------------------------------------------------------------------- files


def _with_row_ids(part: pd.DataFrame, offsets: NDArray[np.int64],
                  partition_info: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Index a partition by the global position of its rows in the input file."""
    number = 0 if partition_info is None else int(partition_info["number"])
    start = int(offsets[number])
    out = part.copy()
    out.index = pd.RangeIndex(start, start + len(part), name="_row")
    return out


def anonymize_dask_file(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
                        *, quasi_identifiers: Sequence[str], k: int, method: str = "mdav",
                        identifiers: Sequence[str] = (), blocking: str = "kd",
                        block_size: int = 10_000, random_state: RandomState = None,
                        sep: str | None = None, scheduler: str | None = None,
                        blocksize: str = "64MB",
                        method_params: Mapping[str, Any] | None = None) -> FileRelease:
    """``microagg anonymize --engine dask``: read a CSV or Parquet file with Dask, release it
    with :func:`anonymize_dask` on a cluster (``scheduler`` address, or a local cluster of one
    worker per CPU), and write one output file in the input's row order, atomically.

    The written file is read back before it is renamed onto the output: the smallest number
    of rows sharing their published quasi-identifiers (64-bit row hashes; a hash collision
    could only merge two classes) must be at least ``k``, and the row count must match.
    """
    _require_dask()
    import dask.dataframe as dd

    from .io import _atomic_write, _format_of, _sniff_separator, check_csv_header
    from .outofcore import FileRelease, _chunk_writer, _read_back

    t0 = time.perf_counter()
    source = pathlib.Path(input_path).expanduser()
    target = pathlib.Path(output_path).expanduser()
    fmt, compression = _format_of(source, parameter="input")
    _format_of(target, parameter="output")
    if fmt == "parquet":
        ddf = dd.read_parquet(str(source))
    else:
        separator = sep or _sniff_separator(source, compression)
        check_csv_header(source, sep=separator)  # dask, like pandas, renames a repeated name
        ddf = dd.read_csv(str(source), sep=separator, blocksize=None if compression
                          else blocksize, compression=compression)
    import logging

    # the shuffle plugin logs every shuffle it starts at WARNING; nothing for a user to do
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    client = connect(scheduler) if scheduler else local_client(n_workers=os.cpu_count() or 1)
    try:
        lengths = np.asarray(client.compute(ddf.map_partitions(len)).result(), dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        indexed = ddf.map_partitions(_with_row_ids, offsets,
                                     meta=ddf._meta.rename_axis("_row"))
        release = anonymize_dask(indexed, quasi_identifiers=quasi_identifiers, k=k,
                                 method=method, identifiers=identifiers, blocking=blocking,
                                 block_size=block_size, random_state=random_state,
                                 client=client, **dict(method_params or {}))
        ordered = release.data.reset_index().set_index("_row", sorted=False).persist()
        out_sep = sep or ("\t" if target.name.lower().endswith((".tsv", ".tsv.gz")) else ",")
        write = _chunk_writer(target, out_sep)
        qi = list(release.params["quasi_identifiers"])
        n = int(offsets[-1])

        def chunks() -> Iterator[pd.DataFrame]:
            for i in range(ordered.npartitions):
                part = client.compute(ordered.get_partition(i)).result()
                yield part.sort_index().reset_index(drop=True)

        def write_and_verify(handle: IO[bytes]) -> None:
            write(handle, chunks())
            handle.flush()
            hashes = [pd.util.hash_pandas_object(chunk.loc[:, qi], index=False).to_numpy()
                      for chunk in _read_back(pathlib.Path(handle.name), 500_000, out_sep)]
            flat = np.concatenate(hashes) if hashes else np.empty(0, dtype=np.uint64)
            if flat.size != n:
                raise InternalError(f"The written file has {flat.size} rows, not {n}. Nothing "
                                    "was released.")
            smallest = int(np.unique(flat, return_counts=True)[1].min())
            if smallest < k:
                raise PrivacyViolationError(
                    f"The written file is only {smallest}-anonymous, below k={k}. Nothing was "
                    "released. This is a bug in microagg.")

        t = time.perf_counter()
        _atomic_write(target, write_and_verify)
        write_seconds = time.perf_counter() - t
    finally:
        cluster = None if scheduler else client.cluster
        client.close()
        if cluster is not None:
            cluster.close()
    return FileRelease(
        output=target, rows=n,
        params=MappingProxyType({**release.params, "engine": "dask",
                                 "scheduler": scheduler or "local cluster"}),
        seed=release.seed, checks=release.checks, metrics=release.metrics,
        timings=MappingProxyType({**release.timings, "write_and_verify": write_seconds,
                                  "total": time.perf_counter() - t0}))
