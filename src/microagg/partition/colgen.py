"""colgen: a quality mode that lets the set-partitioning LP choose the groups.

mdav-ls (:func:`~microagg.partition.local_search.quality_mode`) stops where moves, swaps and
kicks stop helping. colgen goes on from its partition with the model behind the certified
bounds (:mod:`microagg.bounds`): an optimal partition has groups of ``k .. 2k-1`` records, so
it is the set-partitioning problem over all such groups, whose LP relaxation column
generation solves.

1. **Start**: mdav-ls for a quarter of the budget (on a file larger than one part its
   200-round cap is lifted, and the share stops it).
2. **Decomposition** (as Castro, Gentile and Spagnolo-Arrizabalaga 2022 do for large files):
   the start's groups, whole, are routed by their centroids through a block tree fitted on a
   random rotation of the centroids into parts of at most ``part_size`` records, so that
   partitions of the parts join into one of the file.
3. **Each part**: column generation on its LP (HiGHS master, greedy pricing around every
   record, then rounds of exact enumeration pricing, with subset-row cuts once the LP is
   optimal or near it, so that groups larger than ``k`` enter as columns where the LP without them
   mixes ``k``-record groups: :mod:`microagg.bounds._cuts`), seeded with the part's groups
   of the start and every record's k-NN group; then the **integer master**, the set-partitioning
   problem over the groups generated, by HiGHS's branch and bound
   (:func:`~microagg.bounds._integer.integer_master`), started from the part's current
   groups. The start's groups are columns, so a part's SSE never rises; the integer
   answer is kept only when it is lower.
4. **Join** the parts and run the local search of mdav-ls over the whole file (it mends the
   parts' borders). Steps 2-4 repeat with new rotations until two rounds in a row gain
   nothing or, on a file larger than one part, 60 % of the budget is spent (each part
   gets an equal share of what is left until then, and most finish well within it); a
   file of at most ``part_size`` records is one part and one round, with all the budget.
5. **Regions the whole LP points at** (larger files, with the time left; 2026-11-29): the
   duals of the whole file's LP rank the groups by reduced cost, balls of whole groups
   around the worst are solved as parts, then mdav-ls's iterated local search runs to the
   end of the budget (:mod:`microagg.partition._colgen_regions`). At ``k = 10`` the
   rounds of step 4 gain nothing on Census and EIA; this phase does.

The phases stop at shares of the time budget (step 4 at 60 % of it, each part's column
generation at a share of what is left, step 5's search at its end), so the result can
depend on the machine's speed before the budget is all spent; the release says so every
time (:attr:`~microagg.partition.Partitioner.phased_budget`). Small files converge well
within it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Constraint, Interval, Options, validate_params
from .._base.groups import group_means
from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from ._colgen_regions import guided_regions, solve_part, sse_of
from .local_search import (
    UNCAPPED_ROUNDS,
    default_time_limit,
    local_search,
    quality_mode,
    resolve_time_limit,
)

__all__ = ["CONSTRAINTS", "TIME_BUDGET", "colgen", "default_colgen_time",
           "resolve_colgen_time"]

TIME_BUDGET = (30.0, 60.0, 600.0)
"""Default seconds of colgen: 30 s, plus 60 s per 1,000 records, at most 600 s (the issue's
10 minutes a run; Census, 1,080 records: 94.8 s; EIA, 4,092: 275.5 s)."""

PART_SIZE = 400
"""Default largest part (step 2; parts hold half to all of it). Census, k = 4: a part of
1,080 records ran out of 33 s in the integer master without a feasible answer; parts of
265-275 records took 8.4-8.7 s to an optimal one (1.8 and 3.2 % below mdav-ls's groups
there), parts of 129-136 records 0.1-0.3 s (1.5 and 1.8 %)."""

CONSTRAINTS: Mapping[str, tuple[Constraint, ...]] = {
    "part_size": (Interval(int, 2, None, closed="left"),),
    "time_limit": (Options(("auto",)), Interval(float, 0, None, closed="neither")),
}
"""The allowed values of the parameters (the registry entry uses them too)."""

_START_SHARE = 0.25  # of the budget, for mdav-ls
_PARTS_SHARE = 0.6
"""Where, as a share of the budget from the call, the rounds of parts stop on a file larger
than one part, so that the regions of step 5 get the rest (at k = 10 on Census the first
round's three parts would take all of a 570-s budget)."""
_GAIN = 1e-6  # a round that lowers the SSE by less than this share of it gains nothing
_IDLE_ROUNDS = 2  # rounds in a row that gain nothing end the search


def default_colgen_time(n_samples: int) -> float:
    """Seconds colgen runs by default on ``n_samples`` records (:data:`TIME_BUDGET`).

    >>> default_colgen_time(1_080), default_colgen_time(100_000)
    (94.8, 600.0)
    """
    return default_time_limit(n_samples, TIME_BUDGET)


def resolve_colgen_time(n_samples: int, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``time_limit="auto"`` (or absent) made seconds for ``n_samples``."""
    return resolve_time_limit(n_samples, params, TIME_BUDGET)


def colgen(X: ArrayLike, k: int, *, part_size: int = PART_SIZE,
           time_limit: float | str = "auto", random_state: RandomState = None
           ) -> NDArray[np.intp]:
    """Quality mode by column generation and integer programming on parts (``colgen``).

    mdav-ls, then rounds of: split into parts of whole groups, column generation and the
    integer master on each part, local search on the whole; then regions around the groups
    of highest reduced cost in the whole file's LP, and mdav-ls's search to the end of the
    budget (module docstring). The SSE never rises above mdav-ls's start.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    part_size : int, default=400
        Largest part solved by column generation, ``>= 2``; parts hold whole groups of the
        current partition. Larger parts mend more and cost more (the LP grows with them).
    time_limit : float or "auto", default="auto"
        Seconds in all, ``> 0``; ``"auto"``: :func:`default_colgen_time` of the number of
        records. The last LP or integer solve may overrun it by a few seconds.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds mdav-ls and the rotations of the decomposition.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Groups of ``k`` or more records (``k .. 2k-1`` except where mdav-ls's were larger).

    References
    ----------
    Aloise, D., Hansen, P., Rocha, C. and Santi, E. "Column generation bounds for numerical
    microaggregation." J. Global Optim. 60(2) (2014) (the model and its LP).
    Castro, J., Gentile, C. and Spagnolo-Arrizabalaga, E. "An algorithm for the
    microaggregation problem using column generation." Computers & Operations Research
    (2022) (column generation on parts of a large file).

    Examples
    --------
    >>> import numpy as np
    >>> from microagg.metrics import sse
    >>> X = np.random.default_rng(0).normal(size=(150, 2))
    >>> labels = colgen(X, 3, random_state=0)
    >>> int(np.bincount(labels).min()) >= 3
    True
    >>> from microagg.partition import partition
    >>> bool(sse(X, labels) <= sse(X, partition(X, 3, method="mdav-ls", random_state=0)))
    True
    """
    A = check_matrix(X, caller="colgen")
    k = check_k(k, n_samples=A.shape[0], caller="colgen")
    validate_params({"part_size": part_size, "time_limit": time_limit}, CONSTRAINTS,
                    caller="colgen")
    n = A.shape[0]
    if n < 2 * k:
        return np.zeros(n, dtype=np.intp)
    budget = default_colgen_time(n) if time_limit == "auto" else float(time_limit)
    size = max(int(part_size), 2 * k)
    now = time.perf_counter()
    deadline = now + budget
    parts_end = deadline if n <= size else now + _PARTS_SHARE * budget
    seed, rng = resolve_seed(random_state)
    # one part: mdav-ls's own default rounds, which end by themselves on small files (the
    # same partition on any machine); larger files: its time share stops it
    uncapped: dict[str, Any] = {} if n <= size else {"rounds": UNCAPPED_ROUNDS}
    labels = quality_mode(A, k, time_limit=_START_SHARE * budget, random_state=seed,
                          **uncapped)
    best = sse_of(A, labels)
    idle = 0
    while idle < _IDLE_ROUNDS and time.perf_counter() < parts_end:
        candidate = _round(A, labels, k, size, parts_end - time.perf_counter(), rng)
        value = sse_of(A, candidate)
        idle = 0 if value < best * (1 - _GAIN) else idle + 1
        if value < best:
            labels, best = candidate, value
        if n <= size:
            break
    if n > size:  # the last phase: regions around the groups the whole LP finds worst
        labels = guided_regions(A, labels, k, size, deadline, rng)
    return np.unique(labels, return_inverse=True)[1].ravel().astype(np.intp)


def _round(A: NDArray[np.float64], labels: NDArray[np.intp], k: int, size: int,
           seconds: float, rng: np.random.Generator) -> NDArray[np.intp]:
    """Steps 2-4 once: parts, column generation and the integer master on each, the local
    search on the whole; returns the new labels (never a higher SSE inside a part)."""
    parts = _parts(A, labels, size, int(rng.integers(0, 2**31 - 1)))
    out = np.asarray(labels, dtype=np.intp).copy()
    offset = int(out.max()) + 1
    stop = time.perf_counter() + seconds
    for i, rows in enumerate(parts):
        share = (stop - time.perf_counter()) / (len(parts) - i)
        if share <= 0:
            break
        local = np.unique(out[rows], return_inverse=True)[1].ravel().astype(np.intp)
        better = solve_part(np.ascontiguousarray(A[rows]), local, k, share)
        out[rows] = better + offset
        offset += int(better.max()) + 1
    return local_search(A, np.unique(out, return_inverse=True)[1].ravel().astype(np.intp), k,
                        rng=rng)


def _parts(A: NDArray[np.float64], labels: NDArray[np.intp], size: int,
           seed: int) -> list[NDArray[np.intp]]:
    """Rows of each part: whole groups routed by centroid through a block tree on a random
    rotation of the centroids, leaves of about ``size`` records."""
    from .regroup import fit_rotated_tree  # it builds on the blocking module

    n = A.shape[0]
    if n <= size:
        return [np.arange(n, dtype=np.intp)]
    names, local = np.unique(labels, return_inverse=True)
    local = local.ravel()
    centroids = group_means(A, local)
    leaf = max(2, round(size * names.size / n))
    part_of_group = fit_rotated_tree(centroids, leaf, seed).route(centroids)
    part = part_of_group[local]
    order = np.argsort(part, kind="stable")
    cuts = np.flatnonzero(np.diff(part[order])) + 1
    return [np.sort(rows) for rows in np.split(order, cuts)]
