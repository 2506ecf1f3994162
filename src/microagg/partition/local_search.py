"""Quality mode: refine a partition by record moves and swaps, kicks, and re-segmentation.

Starting from the best of several constructions, an iterated local search lowers the SSE:
a local search applies improving moves (a record to a neighbouring group) and swaps (two
records of neighbouring groups) until none is left; a kick swaps a few records between
neighbouring groups at random, the local search runs again, and the result is kept if it is
better. Every few rounds the best partition is laid out as an ordering and cut optimally by
the Hansen-Mukherjee shortest path. No step ever leaves a group below k records.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.groups import within_sse
from .._base.validation import RandomState, check_k, check_matrix, resolve_seed
from .._runtime.jit import njit
from ._neighbour_lists import sq_to_point
from ._scale_kernels import group_state, sq_rows

__all__ = ["UNCAPPED_ROUNDS", "default_time_limit", "local_search", "quality_mode",
           "resolve_time_limit"]

_NEIGHBOUR_GROUPS = 12  # groups searched around each record's own group

UNCAPPED_ROUNDS = 10**9
"""``rounds`` for a search that only its ``time_limit`` should stop: the quality mode
(``refine=SECONDS``), colgen's start on files larger than one part and colgen's last phase."""

TIME_BUDGET = (10.0, 10.0, 300.0)
"""The default time budget of mdav-ls: 10 s, plus 10 s per 1,000 records, at most 300 s
(4,580 records: 55.8 s, where 200 rounds took 521 s)."""


def default_time_limit(n_samples: int,
                       budget: tuple[float, float, float] | None = None) -> float:
    """Seconds a search runs by default on ``n_samples`` records: ``budget`` is (seconds,
    seconds per 1,000 records, most seconds); ``None``: mdav-ls's, :data:`TIME_BUDGET`.

    Examples
    --------
    >>> default_time_limit(4_580), default_time_limit(10**6)
    (55.8, 300.0)
    """
    base, per_thousand, cap = TIME_BUDGET if budget is None else budget
    return round(min(base + per_thousand * n_samples / 1000, cap), 3)


def resolve_time_limit(n_samples: int, params: dict[str, Any],
                       budget: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """``params`` with ``time_limit="auto"`` (or absent) made the default budget in seconds
    (:func:`default_time_limit` of ``budget``)."""
    if params.get("time_limit", "auto") == "auto":
        params["time_limit"] = default_time_limit(n_samples, budget)
    return params


@njit(cache=True)
def _near_groups(sums, count, width):  # pragma: no cover - numba
    """For every group, the ``width`` groups with the nearest centroids (itself excluded)."""
    n_groups, p = sums.shape
    width = min(width, n_groups - 1)
    cent = np.empty((n_groups, p))
    for g in range(n_groups):
        for j in range(p):
            cent[g, j] = sums[g, j] / count[g]
    near = np.empty((n_groups, width), dtype=np.int64)
    d = np.empty(n_groups)
    for g in range(n_groups):
        for h in range(n_groups):
            s = 0.0
            for j in range(p):
                diff = cent[g, j] - cent[h, j]
                s += diff * diff
            d[h] = s
        d[g] = np.inf
        order = np.argsort(d, kind="mergesort")
        for t in range(width):
            near[g, t] = order[t]
    return near


@njit(cache=True)
def _move(X, x, a, b, labels, sums, count, members, slot):  # pragma: no cover - numba  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Move row x from group a to group b (member lists kept compact)."""
    last = members[a, count[a] - 1]
    members[a, slot[x]] = last
    slot[last] = slot[x]
    members[a, count[a] - 1] = -1
    count[a] -= 1
    members[b, count[b]] = x
    slot[x] = count[b]
    count[b] += 1
    labels[x] = b
    for j in range(X.shape[1]):
        sums[a, j] -= X[x, j]
        sums[b, j] += X[x, j]


@njit(cache=True)
def _swap(X, x, a, y, b, labels, sums, members, slot):  # pragma: no cover - numba  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
    """Exchange row x of group a with row y of group b (sizes unchanged)."""
    sx = slot[x]
    sy = slot[y]
    members[a, sx] = y
    members[b, sy] = x
    slot[x] = sy
    slot[y] = sx
    labels[x] = b
    labels[y] = a
    for j in range(X.shape[1]):
        diff = X[x, j] - X[y, j]
        sums[a, j] -= diff
        sums[b, j] += diff


@njit(cache=True)
def _descend(X, labels, k, cap, order, width, tol, max_passes):  # pragma: no cover - numba  # noqa: C901 - numba kernel: one loop nest, kept whole for speed
    """Apply improving moves and swaps until none is left; returns the SSE decrease.

    For a record x of group A (centroid a, size nA) and a neighbouring group B (b, nB):
    moving x to B changes the SSE by ``nB/(nB+1) |x-b|^2 - nA/(nA-1) |x-a|^2`` (allowed
    while nA > k and nB < cap); swapping x with y of B by
    ``|y-a|^2 - |x-a|^2 - |x-y|^2/nA + |x-b|^2 - |y-b|^2 - |x-y|^2/nB``.
    Each record takes its best improving change, if any. A change counts only if it lowers
    the SSE by more than ``tol`` (a small fraction of the data's spread: rounding in the
    running sums must not make a change and its reverse both look improving), and at most
    ``max_passes`` sweeps are made.
    """
    n, p = X.shape
    n_groups = int(labels.max()) + 1
    sums, count, _, members, slot, _ = group_state(X, labels, n_groups, cap)
    a_c = np.empty(p)
    b_c = np.empty(p)
    gain = 0.0
    improved = True
    passes = 0
    while improved and passes < max_passes:
        improved = False
        passes += 1
        near = _near_groups(sums, count, width)
        for t in range(n):
            x = order[t]
            a = labels[x]
            na = count[a]
            for j in range(p):
                a_c[j] = sums[a, j] / na
            dxa = sq_to_point(X, x, a_c)
            best = -tol
            best_b = -1
            best_y = -1
            for u in range(near.shape[1]):
                b = near[a, u]
                nb = count[b]
                for j in range(p):
                    b_c[j] = sums[b, j] / nb
                dxb = sq_to_point(X, x, b_c)
                if na > k and nb < cap:
                    delta = nb / (nb + 1.0) * dxb - na / (na - 1.0) * dxa
                    if delta < best:
                        best = delta
                        best_b = b
                        best_y = -1
                for v in range(nb):
                    y = members[b, v]
                    dxy = sq_rows(X, x, y)
                    delta = (sq_to_point(X, y, a_c) - dxa - dxy / na
                             + dxb - sq_to_point(X, y, b_c) - dxy / nb)
                    if delta < best:
                        best = delta
                        best_b = b
                        best_y = y
            if best_b >= 0:
                if best_y < 0:
                    _move(X, x, a, best_b, labels, sums, count, members, slot)
                else:
                    _swap(X, x, a, best_y, best_b, labels, sums, members, slot)
                gain -= best
                improved = True
    return gain


@njit(cache=True)
def _kick(X, labels, xs, candidates):  # pragma: no cover - numba
    """For each row ``xs[t]``, swap it with the nearest of ``candidates[t]`` that lies in
    another group (sizes unchanged). The random draws come from the caller's Generator."""
    for t in range(xs.shape[0]):
        x = xs[t]
        best = -1
        best_d = np.inf
        for u in range(candidates.shape[1]):
            y = candidates[t, u]
            if labels[y] == labels[x]:
                continue
            d = sq_rows(X, x, y)
            if d < best_d:
                best_d = d
                best = y
        if best >= 0:
            tmp = labels[x]
            labels[x] = labels[best]
            labels[best] = tmp


def local_search(X: NDArray[np.float64], labels: NDArray[np.intp], k: int, *,
                 rng: np.random.Generator) -> NDArray[np.intp]:
    """Moves and swaps to a local optimum (groups stay within k..max(2k-1, largest))."""
    out = np.asarray(labels, dtype=np.intp).copy()
    spread = float(((X - X.mean(axis=0)) ** 2).sum()) / X.shape[0]
    if spread == 0.0:  # all records alike: nothing can improve
        return np.unique(out, return_inverse=True)[1].astype(np.intp)
    cap = max(2 * k - 1, int(np.bincount(out).max()))
    _descend(X, out, k, cap, rng.permutation(X.shape[0]), _NEIGHBOUR_GROUPS,
             1e-9 * spread, 1000)
    return np.unique(out, return_inverse=True)[1].astype(np.intp)


_COMPILED: set[tuple[str, ...]] = set()


def _compile_kernels(starts: tuple[str, ...]) -> None:
    """Run the whole search once on a tiny matrix (with no time limit), so that numba's
    first-call compilation (seconds) is not counted in a time budget: a small file then
    finishes its rounds, and gives the same result, whether its kernels were cached or not."""
    if starts in _COMPILED:
        return
    tiny = np.random.default_rng(0).standard_normal((12, 2))
    quality_mode(tiny, 2, start=starts[0] if len(starts) == 1 else "auto", rounds=10,
           time_limit=None, random_state=0)
    _COMPILED.add(starts)


def quality_mode(X: ArrayLike, k: int, *, start: str = "auto", rounds: int = 200,
                 time_limit: float | str | None = "auto", random_state: RandomState = None
           ) -> NDArray[np.intp]:
    """Quality mode: iterated local search from good starting partitions (``mdav-ls``).

    1. Start: the lowest-SSE partition among MDAV, MDAV-2, TFRP-2 and CBFS (``start="auto"``)
       or the named registered method, improved by :func:`local_search`.
    2. Each round: kick (swap a few random records with a nearby record of another group),
       local search again, keep the result if its SSE is lower. Every 10 rounds the best
       partition is laid out as an ordering and cut optimally (Hansen-Mukherjee), then
       searched locally.
    3. Stop after ``rounds`` rounds or ``time_limit`` seconds, whichever comes first. The
       budget counts from the call: starts after the first are skipped once it is spent.

    With ``time_limit=None`` the result depends only on the data and ``random_state``; a
    time limit makes the number of rounds, hence the result, depend on the machine when it
    is reached. The default, ``"auto"``, is :func:`default_time_limit` (10 s plus 10 s per
    1,000 records, at most 300 s): small files finish their rounds well within it.

    Scale: each local-search sweep finds every group's nearest groups by brute force
    (O(g^2 p) for g groups) and the MDAV-2 / TFRP-2 starts are O(g^2 p) too, so the quality
    mode is meant for files of up to some tens of thousands of records (the benchmark files
    take seconds per round set); on larger files use ``start="mdav"`` with a time limit, or
    a plain method.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    start : str, default="auto"
    rounds : int, default=200
    time_limit : float, "auto" or None, default="auto"
        Seconds; ``"auto"`` is :func:`default_time_limit` of the number of records, ``None``
        no limit.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Every group has at least k records.
    """
    A = check_matrix(X, caller="mdav-ls")
    k = check_k(k, n_samples=A.shape[0], caller="mdav-ls")
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 0:
        raise ValueError(f"The 'rounds' parameter of mdav-ls must be an int >= 0. Got {rounds!r}.")
    if time_limit == "auto":
        time_limit = default_time_limit(A.shape[0])
    if time_limit is not None and (isinstance(time_limit, (str, bool)) or not time_limit > 0):
        raise ValueError(
            "The 'time_limit' parameter of mdav-ls must be None, 'auto' or a number of "
            f"seconds > 0. Got {time_limit!r}."
        )
    _, rng = resolve_seed(random_state)
    starts = ("mdav", "mdav2", "tfrp2", "cbfs") if start == "auto" else (start,)
    if time_limit is not None:
        _compile_kernels(starts)  # compiling is not searching: it never eats the budget
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    best, best_sse = _best_start(A, k, starts, rng, deadline)
    return _iterate(A, k, best, best_sse, rounds=int(rounds), rng=rng, deadline=deadline)


def _best_start(A: NDArray[np.float64], k: int, starts: tuple[str, ...],
                rng: np.random.Generator, deadline: float | None
                ) -> tuple[NDArray[np.intp], float]:
    """Step 1 of :func:`quality_mode`: the lowest-SSE start after local search."""
    from . import PARTITIONERS, get_partitioner

    best = None
    best_sse = np.inf
    for name in starts:
        if name not in PARTITIONERS:
            get_partitioner(name)  # raises with the valid names
        if best is not None and deadline is not None and time.perf_counter() > deadline:
            break
        candidate = local_search(A, PARTITIONERS[name](A, k), k, rng=rng)
        cost = within_sse(A, candidate)
        if cost < best_sse:
            best, best_sse = candidate, cost
    assert best is not None
    return best, best_sse


def _iterate(A: NDArray[np.float64], k: int, best: NDArray[np.intp], best_sse: float, *,
             rounds: int, rng: np.random.Generator, deadline: float | None
             ) -> NDArray[np.intp]:
    """Steps 2-3 of :func:`quality_mode`: kick (or re-cut), search, keep the better."""
    from .sorting import mhm_segment, order_from_groups

    n = A.shape[0]
    for r in range(rounds):
        if deadline is not None and time.perf_counter() > deadline:
            break
        trial = best.copy()
        if r % 10 == 9:
            order = order_from_groups(A, trial, paired=False)
            trial, _ = mhm_segment(A, order, k)
        else:
            n_swaps = int(rng.integers(2, max(3, n // 50)))
            _kick(A, trial, rng.integers(0, n, n_swaps), rng.integers(0, n, (n_swaps, 32)))
        trial = local_search(A, trial, k, rng=rng)
        cost = within_sse(A, trial)
        if cost < best_sse - 1e-12 * max(1.0, best_sse):
            best, best_sse = trial, cost
    return best
