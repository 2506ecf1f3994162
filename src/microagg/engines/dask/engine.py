"""The Dask engine: microaggregate a data frame that is spread over a cluster.

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
   original scale and restores each row's index (its position in the input: the input's
   own index is never published). The result is persisted on the cluster;
5. **verify** (on the published output): the smallest number of identical published
   quasi-identifier rows (a distributed ``groupby(...).size().min()``), and, partition by
   partition on the workers (:class:`~microagg._pipeline.verify.GroupVerifier`), that every
   group publishes one value and holds at least k rows; and that no row was lost. A shortfall raises
   :class:`~microagg.exceptions.PrivacyViolationError` and nothing is returned. Each column
   published unchanged (no role) is added to the quasi-identifiers in turn and the smallest
   class counted the same way (``checks["published_columns"]`` and a
   :class:`~microagg.exceptions.PrivacyLeakWarning` when it leaves fewer than k rows, as in
   memory).

Every task is pure: the sample, the tree and the merge are fixed on the client before the
shuffle; inside a block the rows are ordered by a row id derived from the input partition
and position, and block ``b`` uses the seed ``seed + b``. A task that Dask recomputes after
losing a worker therefore yields the same published values.

This module needs ``dask[distributed]`` (the ``dask`` extra: ``pip install microagg[dask]``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..._base.validation import RandomState
from ..._pipeline.request import Request
from ..._pipeline.result import Release
from ..._pipeline.rules import require_numeric
from ...exceptions import SchemaError
from ._run import DaskRun
from ._tasks import RESERVED

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe as dd
    from distributed import Client

__all__ = ["anonymize_dask", "by_row_position", "check_reserved", "connect",
           "dask_release_fields", "dask_request", "local_client", "require_dask", "run_dask"]

def require_dask() -> None:
    """Import Dask, or say what to install."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "The Dask backend needs dask[distributed]>=2024.1: pip install 'microagg[dask]'."
        ) from exc


# --------------------------------------------------------------------------- clients


def local_client(n_workers: int = 2, threads_per_worker: int = 1, **kwargs: Any) -> Client:
    """Start a :class:`distributed.LocalCluster` of worker processes and connect to it.

    The CLI's choice when no scheduler address is given. One thread per worker: the
    partitioners hold the GIL in places and numba kernels bring their own threads. Extra
    keyword arguments go to ``LocalCluster`` (e.g. ``memory_limit``). Close the client and
    its cluster with ``client.close(); client.cluster.close()``.
    """
    require_dask()
    from distributed import Client, LocalCluster

    options: dict[str, Any] = {"processes": True, "dashboard_address": None}
    options.update(kwargs)
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                           **options)
    return Client(cluster)


def connect(address: str, **kwargs: Any) -> Client:
    """Connect to a running Dask scheduler, e.g. ``connect("tcp://10.0.0.5:8786")``."""
    require_dask()
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


# --------------------------------------------------------------------------- the face


def anonymize_dask(  # noqa: PLR0913 - the public face: one keyword per option
    ddf: dd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    k: int,
    method: str = "mdav",
    sensitive: str | Sequence[str] = (),
    identifiers: str | Sequence[str] = (),
    keep: str | Sequence[str] = (),
    blocking: str = "kd",
    block_size: int | None = None,
    sample_size: int = 200_000,
    random_state: RandomState = None,
    client: Client | None = None,
    refine: float | None = None,
    **params: Any,
) -> Release:
    """Microaggregate the quasi-identifiers of a Dask data frame, block by block, on a cluster.

    The records are cut into blocks of about ``block_size`` near records by a block tree
    fitted on a sample and applied to every partition; blocks under ``2k`` rows are merged
    into their nearest block; the data are shuffled by block and every block is
    microaggregated on a worker (module docstring). The options of :func:`microagg.anonymize`
    it lacks are those the Dask engine does not run (``ENGINES["dask"].runs``; worker
    processes are the cluster's, so no ``n_jobs``; a plan of one step is given as its
    options here, :func:`~.file.anonymize_dask_file` takes ``plan=``). Identifiers are
    dropped, other columns pass through unchanged; the published rows are indexed by their
    position in the input (0 .. n-1, as in memory: the input's index is never published, and
    one that looks like an identifier by its name is refused). The achieved k-anonymity is
    re-derived from the published data by a distributed reduction; a shortfall raises
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
    sensitive : str or sequence of str, default=()
        Confidential columns: published unchanged, recorded in ``params["sensitive"]``, and
        not counted by the check of the columns published unchanged (as in memory).
    identifiers : str or sequence of str, default=()
        Direct identifiers: dropped.
    keep : str or sequence of str, default=()
        Columns without a role published unchanged on purpose although their names look
        like direct identifiers (otherwise refused); recorded in ``params["keep"]``, and the
        release's verdict is then never "protected", as in memory.
    blocking : {"kd", "pca", "vp"}, default="kd"
        Split score of the block tree (:mod:`microagg.partition.blocking`).
    block_size : int, default=None
        Target block size, ``>= 2k``. Routed blocks hold about ``block_size / 2`` to
        ``block_size`` rows (plus sampling variation); one above ``4 * block_size`` is
        blocked again on its worker. ``None``: the method's default (10,000; for
        ``mdav-scale`` 2,500,000 records of up to 10 columns, 25 million values in wider
        data).
    sample_size : int, default=200_000
        Rows sampled to fit the block tree (the whole file when it is smaller).
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the sample and of the randomized partitioners (block ``b`` uses
        ``seed + b``).
    client : distributed.Client, default=None
        The cluster to use; ``None``: the active client, else Dask's default scheduler.
    refine : float, default=None
        The quality mode: seconds of local search (``> 0``); with ``method`` ``"mdav"`` or
        ``"mdav-scale"`` it runs ``mdav-scale`` in the blocks, then across their borders
        (:mod:`._regroup`: whole groups shuffled into second blocks and improved).
    **params
        Parameters of ``method``.

    Returns
    -------
    Release
        ``engine="dask"``: ``data`` the published Dask DataFrame, persisted on the cluster
        (indexed by input row position; rows ordered by block: ``data.compute().sort_index()``
        is in the input's order), ``labels`` ``None``; ``checks`` (``k_anonymity``, ``group_k``,
        ``groups_publish_one_value``, ``rows``, and ``published_columns`` when a column
        published unchanged breaks k), ``metrics`` (``information_loss``, ``sse``,
        ``sst``, blocks and groups), ``warnings``, ``seed``, ``params``, ``timings``.

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
    request = dask_request(ddf, quasi_identifiers=quasi_identifiers, k=k, method=method,
                           sensitive=sensitive, identifiers=identifiers, keep=keep, blocking=blocking,
                           block_size=block_size,
                           random_state=random_state, method_params=params, refine=refine)
    active = _active_client(client)
    return run_dask(request, by_row_position(ddf, active)[0], sample_size=sample_size,
                    client=active)


def dask_request(ddf: dd.DataFrame, **options: Any) -> Request:
    """The Request of a Dask data frame (:meth:`Request.build` on its empty meta frame, with
    ``engine="dask"``), after refusing a frame of another type and reserved column names."""
    require_dask()
    import dask.dataframe as dd

    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"The 'ddf' parameter of anonymize_dask must be a dask.dataframe."
                        f"DataFrame. Got {type(ddf).__name__}; use microagg.anonymize for "
                        "pandas, or dask.dataframe.from_pandas.")
    check_reserved(ddf.columns)
    return Request.build(ddf._meta, engine="dask", **options)


def _with_row_positions(part: pd.DataFrame, offsets: NDArray[np.int64], name: str | None,
                        partition_info: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Index a partition by the global position of its rows in the input."""
    number = 0 if partition_info is None else int(partition_info["number"])
    start = int(offsets[number])
    out = part.copy()
    out.index = pd.RangeIndex(start, start + len(part), name=name)
    return out


def by_row_position(ddf: dd.DataFrame, client: Client | None, *, name: str | None = None
                    ) -> tuple[dd.DataFrame, int]:
    """``ddf`` indexed by the position of each row in the input (0 .. n-1), and n.

    A release never publishes the input's index (its labels may identify: an id, a name):
    as in memory, the published rows carry their positions (one pass counts the rows of
    every partition)."""
    import dask

    counted = ddf.map_partitions(len)
    lengths = (client.compute(counted).result() if client is not None
               else dask.compute(counted)[0])
    offsets = np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))])
    meta = ddf._meta.reset_index(drop=True).rename_axis(name)
    return (ddf.map_partitions(_with_row_positions, offsets, name, meta=meta),
            int(offsets[-1]))


def check_reserved(columns: Sequence[Any]) -> None:
    """Refuse input columns named like the engine's working columns."""
    clash = [c for c in columns if c in RESERVED]
    if clash:
        raise SchemaError(f"Column name(s) {', '.join(map(repr, clash))} are reserved by the "
                          "Dask backend; rename them.")


def run_dask(request: Request, ddf: dd.DataFrame, *, sample_size: int = 200_000,
             client: Client | None = None,
             on_stage: Callable[[str], None] | None = None) -> Release:
    """Run ``request`` (built by :func:`dask_request`) on the rows of ``ddf`` (the module
    docstring's five steps); the release's ``data`` is persisted on the cluster."""
    return Release.of(**dask_release_fields(request, ddf, sample_size=sample_size,
                                            client=client, on_stage=on_stage))


def dask_release_fields(request: Request, ddf: dd.DataFrame, *, sample_size: int = 200_000,
                        client: Client | None = None,
                        on_stage: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:func:`run_dask` up to its Release: the keywords of
    :meth:`Release.of <microagg._pipeline.result.Release.of>`, for a face that completes them
    (the file it writes, its check and timings) before the one Release is built."""
    import dask

    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)) \
            or sample_size < 2:
        raise ValueError(f"The 'sample_size' parameter of anonymize_dask must be an int >= 2. "
                         f"Got {sample_size!r}.")
    require_numeric(ddf.dtypes, request.quasi_identifiers)
    active = _active_client(client)
    # The client is passed to every compute explicitly, never put into dask.config: a
    # LocalCluster's nanny living in this process copies the config into the worker it
    # restarts after a crash, and a Client cannot be pickled.
    shuffle = dask.config.get("dataframe.shuffle.method", None) or _shuffle_method(active)
    with dask.config.set({"dataframe.shuffle.method": shuffle}):
        return DaskRun(request, ddf, int(sample_size), active, on_stage).run()
