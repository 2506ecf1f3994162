"""Blocking: cut a large file into blocks of near records, microaggregate each block alone.

Exact MDAV costs O(n^2 p / k): minutes at 10^6 records, days at 10^7. Seed 001 (section 2.6)
lists the way out that large-scale microaggregation takes: "define an initial partition of
the data in order to apply microaggregation in each part separately". A block tree splits the
records recursively at the median of a score until every block holds at most ``block_size``
records; any registered partitioner then runs inside each block (in parallel over processes),
and the block labels are offset into one global labels array. Since each block has at least
``ceil(block_size / 2) >= k`` records (median splits, ``block_size >= 2k``), every group of
every block has at least k records: the result satisfies the partitioner contract.

Scores (``blocking=``):

* ``"kd"``: the coordinate of largest spread (a kd-tree that splits the widest axis; the
  2d-tree blocking of Solanas, Martínez-Ballesté, Domingo-Ferrer & Mateo-Sanz, ARES 2006,
  is this tree);
* ``"pca"``: the projection on the block's first principal axis (principal-axis recursive
  median split);
* ``"vp"``: the distance to a vantage point, the record farthest from the block's centroid
  (vantage-point partitioning after Solé, Muntés-Mulero & Nin, 2012).

A fitted :class:`BlockTree` also *routes* records it has not seen (the split thresholds of a
sample applied to the full file), which is how the out-of-core and Dask engines block data
that does not fit in memory; routed blocks can fall below k and are then merged with their
nearest neighbour block (:func:`merge_small_blocks`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_option
from .._base.validation import RandomState, check_k, check_magnitude, check_matrix, resolve_seed
from .._runtime.progress import Progress, current_progress, reporting

__all__ = [
    "BLOCKINGS",
    "BlockTree",
    "blocked_partition",
    "check_blocking",
    "fit_block_tree",
    "merge_small_blocks",
    "microaggregate_blocks",
    "process_pool",
    "run_block",
]

BLOCKINGS = ("kd", "pca", "vp")
"""Split scores of the block tree."""

PROCESSES_FROM = 5_000_000
"""With ``n_jobs=None``, blocks run in worker processes from this many records on. Below it
they run in this process, where MDAV already uses every core inside blocks of 8,192 records
or more: at 10^6 x 10 records (block size 10,000, 2 cores) that took 5.3 s against 5.9 s with
two worker processes, whose start costs about 2 s, and 1.07 GiB of memory against 1.42."""

_RULE_SAMPLE = 20_000
"""Rows a node looks at to choose its split direction or vantage point."""


def check_blocking(blocking: Any, block_size: Any, *, k: int = 1, method: Any = None) -> int:
    """The one check of the blocking options (block tree, blocked partition, every engine's
    Request): a known ``blocking``, ``block_size`` an int ``>= 2k`` (returned as an int), and
    a ``method`` (a registry entry, when given) that can run block by block.

    Examples
    --------
    >>> check_blocking("kd", 10, k=5)
    10
    >>> check_blocking("grid", 10)
    Traceback (most recent call last):
    ...
    ValueError: Unknown blocking 'grid'. Valid: kd, pca, vp.
    """
    check_option(blocking, BLOCKINGS, parameter="blocking")
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or block_size < 2 * k:
        rule = f">= 2k={2 * k}" if k > 1 else ">= 2"
        raise ValueError(f"The 'block_size' parameter must be an int {rule}. "
                         f"Got {block_size!r}.")
    if method is not None and method.needs_sensitive:
        raise ValueError(f"Method {method.name!r} needs the sensitive columns; it cannot run "
                         "block by block.")
    return int(block_size)


@dataclass(frozen=True)
class BlockTree:
    """A binary tree of median splits; leaves are blocks numbered 0..n_blocks-1.

    Node ``i`` sends a record left when its score is ``<= threshold[i]``; the score is
    ``x . direction[i]`` (``"kd"``, ``"pca"``) or ``||x - centre[i]||`` (``"vp"``).
    ``left[i] = -1 - b`` marks a leaf holding block ``b`` (likewise ``right``).
    """

    blocking: str
    direction: NDArray[np.float64]
    centre: NDArray[np.float64]
    threshold: NDArray[np.float64]
    left: NDArray[np.intp]
    right: NDArray[np.intp]
    n_blocks: int

    def route(self, X: ArrayLike) -> NDArray[np.intp]:
        """Block of each row of ``X`` (same columns and scaling as the data fitted)."""
        A = check_matrix(X, caller="BlockTree.route")
        if A.shape[1] != self.direction.shape[1]:
            raise ValueError(f"X has {A.shape[1]} columns; the block tree was fitted on "
                             f"{self.direction.shape[1]}.")
        out = np.empty(A.shape[0], dtype=np.intp)
        if self.threshold.size == 0:  # a single block
            out[:] = 0
            return out
        stack: list[tuple[int, NDArray[np.intp]]] = [(0, np.arange(A.shape[0]))]
        while stack:
            node, rows = stack.pop()
            if rows.size == 0:
                continue
            score = _score(A[rows], self.blocking, self.direction[node], self.centre[node])
            go_left = score <= self.threshold[node]
            for child, part in ((self.left[node], rows[go_left]),
                                (self.right[node], rows[~go_left])):
                if child < 0:
                    out[part] = -1 - child
                else:
                    stack.append((int(child), part))
        return out


def _score(A: NDArray[np.float64], blocking: str, direction: NDArray[np.float64],
           centre: NDArray[np.float64]) -> NDArray[np.float64]:
    if blocking == "vp":
        return np.sqrt(((A - centre) ** 2).sum(axis=1))
    return np.asarray(A @ direction, dtype=np.float64)


def _split_rule(A: NDArray[np.float64], blocking: str
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Direction and centre of a node's score for the records ``A``."""
    p = A.shape[1]
    direction = np.zeros(p)
    centre = np.zeros(p)
    if blocking == "kd":
        direction[int(np.argmax(np.ptp(A, axis=0)))] = 1.0
    elif blocking == "pca":
        centred = A - A.mean(axis=0)
        # the leading eigenvector of the p x p scatter matrix (cheap: p is small)
        _, vectors = np.linalg.eigh(centred.T @ centred)
        direction = vectors[:, -1]
        if not np.all(np.isfinite(direction)) or not np.any(direction):
            direction = np.zeros(p)
            direction[int(np.argmax(np.ptp(A, axis=0)))] = 1.0
    else:  # vp: the record farthest from the centroid is the vantage point
        mean = A.mean(axis=0)
        centre = A[int(np.argmax(((A - mean) ** 2).sum(axis=1)))].copy()
    return direction, centre


def fit_block_tree(X: ArrayLike, block_size: int, *, blocking: str = "kd",
                   min_size: int = 1) -> tuple[BlockTree, NDArray[np.intp]]:
    """Split ``X`` recursively at the median score until every block has at most
    ``block_size`` records; returns the tree and the block of each row of ``X``.

    Every split puts ``floor(m / 2)`` records on one side and ``ceil(m / 2)`` on the other
    (a linear-time selection; ties on the median score are split deterministically), so
    each block holds between
    ``ceil(block_size / 2)`` and ``block_size`` records when ``len(X) > block_size``.
    Splitting stops early for a block whose halves would fall under ``min_size``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled quasi-identifiers.
    block_size : int
        Largest block, ``>= 2``.
    blocking : {"kd", "pca", "vp"}, default="kd"
    min_size : int, default=1
        Smallest block allowed (pass k).

    Examples
    --------
    >>> tree, blocks = fit_block_tree([[0.0], [9.0], [1.0], [8.0]], 2)
    >>> blocks.tolist(), tree.route([[0.5], [8.5]]).tolist()
    ([0, 1, 0, 1], [0, 1])
    """
    A = check_matrix(X, caller="fit_block_tree")
    check_magnitude(A, caller="fit_block_tree")
    block_size = check_blocking(blocking, block_size)
    n, p = A.shape
    directions: list[NDArray[np.float64]] = []
    centres: list[NDArray[np.float64]] = []
    thresholds: list[float] = []
    lefts: list[int] = []
    rights: list[int] = []
    blocks = np.empty(n, dtype=np.intp)
    n_blocks = 0

    def leaf(rows: NDArray[np.intp]) -> int:
        nonlocal n_blocks
        blocks[rows] = n_blocks
        n_blocks += 1
        return -n_blocks  # -1 - (n_blocks - 1)

    def build(rows: NDArray[np.intp]) -> int:
        if rows.size <= block_size or rows.size // 2 < min_size:
            return leaf(rows)
        # the split rule from at most _RULE_SAMPLE rows (evenly spaced: deterministic)
        step = max(1, rows.size // _RULE_SAMPLE)
        direction, centre = _split_rule(A[rows[::step]], blocking)
        if blocking == "kd":
            score = A[rows, int(np.argmax(direction))]
        else:
            score = _score(A[rows], blocking, direction, centre)
        half = rows.size // 2
        order = np.argpartition(score, half - 1)  # O(m): the lower half, then the upper
        node = len(thresholds)
        directions.append(direction)
        centres.append(centre)
        # equal scores at the median go left when routing (the fit itself cuts by rank)
        thresholds.append(float(score[order[:half]].max()))
        lefts.append(0)
        rights.append(0)
        lefts[node] = build(rows[order[:half]])
        rights[node] = build(rows[order[half:]])
        return node

    root = build(np.arange(n))
    if root < 0:  # one block: no split nodes
        directions, centres = [], []
    tree = BlockTree(
        blocking=blocking,
        direction=np.array(directions, dtype=np.float64).reshape(-1, p),
        centre=np.array(centres, dtype=np.float64).reshape(-1, p),
        threshold=np.array(thresholds, dtype=np.float64),
        left=np.array(lefts, dtype=np.intp),
        right=np.array(rights, dtype=np.intp),
        n_blocks=n_blocks,
    )
    return tree, blocks


def merge_small_blocks(X: ArrayLike, blocks: ArrayLike, k: int) -> NDArray[np.intp]:
    """Merge every block under ``k`` records into the block with the nearest centroid
    (smallest first), until all have at least ``k``; blocks renumbered 0..b-1.

    Routed blocks (a sample's thresholds applied to the whole file) can be small or empty;
    this repair keeps the partitioner contract."""
    A = check_matrix(X, caller="merge_small_blocks")
    b = np.asarray(blocks, dtype=np.intp).copy()
    k = check_k(k, n_samples=A.shape[0], caller="merge_small_blocks")
    _, b = np.unique(b, return_inverse=True)
    b = b.ravel()
    while True:
        counts = np.bincount(b)
        small = np.flatnonzero(counts < k)
        if small.size == 0 or counts.size == 1:
            break
        sums = np.zeros((counts.size, A.shape[1]))
        np.add.at(sums, b, A)
        centroids = sums / counts[:, None]
        victim = int(small[np.argmin(counts[small])])
        d = ((centroids - centroids[victim]) ** 2).sum(axis=1)
        d[victim] = np.inf
        b[b == victim] = int(np.argmin(d))
        _, b = np.unique(b, return_inverse=True)
        b = b.ravel()
    return b.astype(np.intp)


def run_block(args: tuple[NDArray[np.float64], int, str, Mapping[str, Any], int]
               ) -> NDArray[np.intp]:
    """One block's partition (top level: picklable for the process pool)."""
    from . import get_partitioner

    A, k, method, params, seed = args
    if A.shape[0] < 2 * k:  # too small to split: one group
        return np.zeros(A.shape[0], dtype=np.intp)
    return get_partitioner(method)(A, k, random_state=seed, **dict(params))


def _init_worker() -> None:  # pragma: no cover - runs in the worker processes
    try:
        import numba

        numba.set_num_threads(1)  # one process per core; no nested threads
    except (ImportError, ValueError):
        pass


def process_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes for blocks: started by a fork server (a fresh interpreter), never by
    forking this process, whose OpenMP runtime (numba's parallel kernels) is not fork-safe;
    each worker runs numba single-threaded."""
    import multiprocessing

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["microagg.partition"])
    return ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=_init_worker)


def _run_blocks(tasks: list[tuple[NDArray[np.float64], int, str, dict[str, Any], int]],
                jobs: int, report: Progress | None, total: int) -> list[NDArray[np.intp]]:
    """Each task's labels, in order: in this process (``jobs == 1``) or by ``jobs`` worker
    processes; ``report(grouped, total)`` at the start and after every block done."""
    pooled = jobs > 1 and len(tasks) > 1
    if pooled or (report is not None and len(tasks) > 1):
        # the smallest block first: the kernels are compiled (or loaded) here, so that
        # numba's cache is written once and the workers only load it, and before the
        # progress clock starts, so that the time left is the blocks' alone
        with reporting(None):
            run_block(min(tasks, key=lambda task: task[0].shape[0]))
    done = 0

    def finished(rows: int) -> None:
        nonlocal done
        done += rows
        if report is not None:
            report(done, total)

    finished(0)
    if not pooled:
        results = []
        with reporting(None):  # each block would report from 0 again
            for task in tasks:
                results.append(run_block(task))
                finished(task[0].shape[0])
        return results
    with process_pool(min(jobs, len(tasks))) as pool:
        futures = {pool.submit(run_block, task): task[0].shape[0] for task in tasks}
        for future in as_completed(futures):
            finished(futures[future])
        return [future.result() for future in futures]


def microaggregate_blocks(X: NDArray[np.float64], blocks: NDArray[np.intp], k: int, *,
                          method: str = "mdav", params: Mapping[str, Any] | None = None,
                          seed: int = 0, n_jobs: int | None = None) -> NDArray[np.intp]:
    """Run partitioner ``method`` inside every block and return global group labels.

    Blocks are processed by ``n_jobs`` worker processes (``None``: one per CPU from
    :data:`PROCESSES_FROM` records on, else in this process; ``1``: in this process).
    Block ``b`` gets the seed ``seed + b``, so the result does not depend on ``n_jobs``.
    Groups are numbered block by block. A listening progress callback
    (:mod:`microagg._runtime.progress`) hears 0 records grouped when the blocks start, then the
    records of every block done (the blocks themselves report nothing)."""
    order = np.argsort(blocks, kind="stable")
    sizes = np.bincount(blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    tasks = [(np.ascontiguousarray(X[order[s:s + m]]), k, method, dict(params or {}),
              seed + b) for b, (s, m) in enumerate(zip(starts, sizes, strict=True)) if m]
    if n_jobs is None:  # starting workers costs seconds: worth it on large files only
        jobs = (os.cpu_count() or 1) if X.shape[0] >= PROCESSES_FROM else 1
    else:
        jobs = max(1, int(n_jobs))
    results = _run_blocks(tasks, jobs, current_progress(), X.shape[0])
    labels = np.empty(X.shape[0], dtype=np.intp)
    offset = 0
    position = 0
    for (s, m) in zip(starts, sizes, strict=True):
        if not m:
            continue
        local = results[position]
        labels[order[s:s + m]] = local + offset
        offset += int(local.max()) + 1
        position += 1
    return labels


def blocked_partition(X: ArrayLike, k: int, *, method: str = "mdav", blocking: str = "kd",
                      block_size: int | None = None, n_jobs: int | None = None,
                      random_state: RandomState = None, **params: Any) -> NDArray[np.intp]:
    """Any registered partitioner run block by block: the wrapper behind ``--blocking``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    method : str, default="mdav"
        The partitioner run inside each block (a key of ``PARTITIONERS``).
    blocking : {"kd", "pca", "vp"}, default="kd"
        The split score (module docstring).
    block_size : int, default=None
        Largest block; at least ``2k``. Smaller blocks are faster (MDAV's cost per block is
        quadratic) and lose a little more information at block borders. ``None``: the
        method's default (10,000; 500,000 for ``mdav-scale``). When the method has a
        ``refine_across`` local search (``mdav-scale``), a second pass improves groups across
        the block borders (:mod:`microagg.partition.regroup`).
    n_jobs : int, default=None
        Worker processes (``None``: one per CPU for files of :data:`PROCESSES_FROM` records
        or more, else none).
    random_state : None, int or numpy.random.Generator, default=None
    **params
        Parameters of ``method``.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Solanas, A., Martínez-Ballesté, A., Domingo-Ferrer, J., Mateo-Sanz, J. M. "A 2d-tree-based
    blocking method for microaggregating very large data sets." ARES 2006; Solé, M.,
    Muntés-Mulero, V., Nin, J. "Efficient microaggregation techniques for large numerical
    data volumes." Int. J. Inf. Secur. 11 (2012); seed 001, section 2.6.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> labels = blocked_partition(X, 5, block_size=200, n_jobs=1)
    >>> int(np.bincount(labels).min()) >= 5
    True
    """
    from . import get_partitioner

    A = check_matrix(X, caller="blocked_partition")
    k = check_k(k, n_samples=A.shape[0], caller="blocked_partition")
    inner = get_partitioner(method)
    block_size = check_blocking(blocking, inner.block_size if block_size is None else block_size,
                                k=k, method=inner)
    seed, _ = resolve_seed(random_state)
    _, blocks = fit_block_tree(A, int(block_size), blocking=blocking, min_size=k)
    labels = microaggregate_blocks(A, blocks, k, method=inner.name, params=params, seed=seed,
                                   n_jobs=n_jobs)
    if inner.refine_across is None or A.shape[0] <= block_size:
        return labels
    from .regroup import REGROUP_BLOCK, regroup_in_memory  # it builds on this module

    return regroup_in_memory(A, labels, k, inner.refine_across, params, seed=seed,
                             block_size=max(REGROUP_BLOCK, int(block_size)))
