"""The MDAV family: MDAV, MDAV-1, CBFS and V-MDAV, on one set of numba kernels."""

from __future__ import annotations

import time
from collections.abc import Callable

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.validation import RandomState, check_k, check_matrix, check_nonnegative
from .._runtime.jit import njit
from .._runtime.progress import PROGRESS_MIN_ROWS, current_progress
from ._kernels import (
    active_sums,
    assign_to_nearest_centroid,
    distance_pass,
    make_workspace,
    remove_flagged,
    sq_dist_one,
    take_group,
)
from ._threads import ThreadChooser

__all__ = ["cbfs", "mdav", "mdav1", "vmdav"]


# relative slack on the pruning bounds: far above float64 rounding of a distance, far below
# any gap that could change which record is farthest or nearest
_SLACK = 1e-9


@njit(cache=True)
def _farthest_from_centroid(Xt, index, m, dist, flagged, sums, labels, pruning):  # pragma: no cover  # noqa: C901 - numba kernel: one loop nest, kept whole for speed
    """Record farthest from the centroid ``sums / m`` of the ``m`` active records.

    Exact, but rarely a full pass. ``pruning = (d0, c0, order, where, head, point)`` holds the
    exact distances ``d0`` (by row) of the records to an earlier centroid ``c0`` and the rows
    in decreasing ``d0`` (``order``). Between steps the centroid moves by
    ``delta = |c - c0|`` (2k records of m leave), so by the triangle inequality only records
    with ``d0 >= max(d0) - 2 delta`` can be the farthest; their exact distances decide. When
    more than m/16 records would have to be checked, a full pass refreshes ``d0`` and ``c0``.
    """
    d0, c0, order, where, head, point = pruning
    p = sums.shape[0]
    for j in range(p):
        point[j] = sums[j] / m
    if head[0] >= 0:
        delta2 = 0.0
        for j in range(p):
            diff = point[j] - c0[j]
            delta2 += diff * diff
        h = head[0]
        while labels[order[h]] >= 0:  # rows already grouped leave the head for good
            h += 1
        head[0] = h
        top = d0[order[h]]
        lim = top - 2.0 * np.sqrt(delta2) - _SLACK * (top + 1.0)
        best = -1
        best_d = -1.0
        n_checked = 0
        t = h
        while t < head[1] and d0[order[t]] >= lim and n_checked * 16 <= m:
            row = order[t]
            t += 1
            if labels[row] >= 0:
                continue
            n_checked += 1
            i = where[row]
            d = sq_dist_one(Xt, i, point)
            if d > best_d or (d == best_d and row < index[best]):
                best_d = d
                best = i
        if n_checked * 16 <= m:
            return best
    # refresh: one full pass gives the answer and new bounds
    no_neighbours = np.empty(0, dtype=np.int64)
    r = distance_pass(Xt, m, point, dist, flagged, index, -1, 0, True, no_neighbours)
    for i in range(m):
        d0[index[i]] = np.sqrt(dist[i])
        where[index[i]] = i
    for j in range(p):
        c0[j] = point[j]
    srt = np.argsort(-dist[:m], kind="mergesort")
    for t in range(m):
        order[t] = index[srt[t]]
    head[0] = 0
    head[1] = m
    return r


@njit(cache=True)
def _drop_groups(Xt, index, m, flagged, positions, sums, state, where):  # pragma: no cover
    """Remove the flagged ``positions`` and keep the column ``sums`` of what remains.

    The sums are updated by subtraction and recomputed exactly whenever the records removed
    since the last exact sum reach 1/8 of those left, so rounding never accumulates over more
    than a few steps (``state[0]`` counts them).
    """
    p = Xt.shape[0]
    for t in range(positions.shape[0]):
        q = positions[t]
        for j in range(p):
            sums[j] -= Xt[j, q]
    m = remove_flagged(Xt, index, m, flagged, positions, where)
    state[0] += positions.shape[0]
    if state[0] * 8 >= m:
        active_sums(Xt, m, sums)
        state[0] = 0
    return m


@njit(cache=True)
def _assign_leftovers(X, labels, n_groups, index, m):  # pragma: no cover - numba
    """The ``m`` active records left over join the group with the nearest centroid."""
    rows = index[:m].copy()
    assign_to_nearest_centroid(X, labels, n_groups, rows)


@njit(cache=True)
def _mdav_start(X):  # pragma: no cover - numba
    """The working state of an MDAV run on ``X`` (see :func:`_mdav_steps`)."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    flagged = np.zeros(n, dtype=np.bool_)
    sums = np.empty(p)
    state = np.zeros(1, dtype=np.int64)
    pruning = (np.empty(n), np.empty(p), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
               np.array([-1, 0], dtype=np.int64), np.empty(p))
    active_sums(Xt, n, sums)
    return Xt, index, labels, np.empty(n), flagged, sums, state, pruning


@njit(cache=True)
def _mdav_steps(Xt, index, labels, dist, flagged, sums, state, pruning, k, threshold, m, g,  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects
                max_steps):  # pragma: no cover - numba
    """At most ``max_steps`` MDAV steps (two groups each) while ``threshold * k`` records
    remain; returns the records left ``m`` and the next label ``g``. The state carries over
    between calls, so any cut into calls gives the labels of one call."""
    pair = np.empty(2 * k, dtype=np.int64)
    where = pruning[3]
    steps = 0
    while m >= threshold * k and steps < max_steps:
        r = _farthest_from_centroid(Xt, index, m, dist, flagged, sums, labels, pruning)
        s = take_group(Xt, index, m, dist, flagged, r, k, pair[:k], labels, g, True)
        take_group(Xt, index, m, dist, flagged, s, k, pair[k:], labels, g + 1, False)
        g += 2
        m = _drop_groups(Xt, index, m, flagged, pair, sums, state, where)
        steps += 1
    return m, g


@njit(cache=True)
def _mdav_finish(X, Xt, index, labels, dist, flagged, sums, state, pruning, k, threshold, m, g):  # noqa: PLR0913 - numba kernel: nopython code takes arrays, not objects  # pragma: no cover
    """MDAV's end game once fewer than ``threshold * k`` records remain; returns the labels."""
    pair = np.empty(k, dtype=np.int64)
    if m >= (threshold - 1) * k:
        r = _farthest_from_centroid(Xt, index, m, dist, flagged, sums, labels, pruning)
        take_group(Xt, index, m, dist, flagged, r, k, pair, labels, g, False)
        g += 1
        m = _drop_groups(Xt, index, m, flagged, pair, sums, state, pruning[3])
    if m >= k:  # MDAV: the last group
        for i in range(m):
            labels[index[i]] = g
    elif m > 0:  # MDAV-1: leftovers
        _assign_leftovers(X, labels, g, index, m)
    return labels


@njit(cache=True)
def _mdav_kernel(X, k, threshold):  # pragma: no cover - numba
    """MDAV (``threshold=3``, see :func:`mdav`) or MDAV-1 (``threshold=2``, see :func:`mdav1`).

    Two groups per step while at least ``threshold * k`` records remain, then one group if
    at least ``(threshold - 1) * k`` remain. What is left then is MDAV's last group
    (``k .. 2k-1`` records) or MDAV-1's leftovers (fewer than ``k``), which join the group
    with the nearest centroid.
    """
    n = X.shape[0]
    Xt, index, labels, dist, flagged, sums, state, pruning = _mdav_start(X)
    m, g = _mdav_steps(Xt, index, labels, dist, flagged, sums, state, pruning, k, threshold,
                       n, 0, n)
    return _mdav_finish(X, Xt, index, labels, dist, flagged, sums, state, pruning, k,
                        threshold, m, g)


ADAPTIVE_MIN_ROWS = 20_000
"""From this many records on, exact MDAV runs in stretches whose threads are chosen by their
measured speed (:mod:`._threads`); below, one kernel call (at most about a second)."""


def _mdav_stretches(X: NDArray[np.float64], k: int, threshold: int,
                    report: Callable[[int, int], None] | None) -> NDArray[np.intp]:
    """:func:`_mdav_kernel` cut into calls of about 1/200 of the records each: the same
    labels. Each call's threads are chosen by :class:`._threads.ThreadChooser`, and
    ``report(grouped, n)``, when given, is called before the first call and after each."""
    n = X.shape[0]
    work = _mdav_start(X)
    steps = max(1, n // (400 * k))
    m, g = n, 0
    given = numba.get_num_threads()
    chooser = ThreadChooser(given)
    if report is not None:
        report(0, n)
    try:
        while m >= threshold * k:
            threads = chooser.next_threads()
            numba.set_num_threads(threads)
            started = time.perf_counter()
            left, g = _mdav_steps(*work, k, threshold, m, g,
                                  max(1, steps // 4) if chooser.probing else steps)
            chooser.record(threads, float(m) * (m - left), time.perf_counter() - started)
            m = left
            if report is not None:
                report(n - m, n)
    finally:
        numba.set_num_threads(given)
    labels: NDArray[np.intp] = _mdav_finish(X, *work, k, threshold, m, g)
    if report is not None:
        report(n, n)
    return labels


def _run_mdav(X: NDArray[np.float64], k: int, threshold: int) -> NDArray[np.intp]:
    """One kernel call for small inputs; else calls in stretches that report progress to a
    listening callback (:mod:`microagg._runtime.progress`) and choose their threads by speed."""
    report = current_progress()
    n = X.shape[0]
    if (report is not None and n >= PROGRESS_MIN_ROWS) or (
            n >= ADAPTIVE_MIN_ROWS and numba.get_num_threads() > 1):
        return _mdav_stretches(X, k, threshold, report)
    labels: NDArray[np.intp] = _mdav_kernel(X, k, threshold)
    return labels


@njit(cache=True)
def _cbfs_kernel(X, k):  # pragma: no cover - numba
    """CBFS of Laszlo & Mukherjee (2005) as seed 003 describes it; see :func:`cbfs`."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    dist = np.empty(n)
    flagged = np.zeros(n, dtype=np.bool_)
    group = np.empty(k, dtype=np.int64)
    sums = np.empty(p)
    state = np.zeros(1, dtype=np.int64)
    pruning = (np.empty(n), np.empty(p), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
               np.array([-1, 0], dtype=np.int64), np.empty(p))
    where = pruning[3]
    active_sums(Xt, n, sums)
    m = n
    g = 0
    while m >= k:
        r = _farthest_from_centroid(Xt, index, m, dist, flagged, sums, labels, pruning)
        take_group(Xt, index, m, dist, flagged, r, k, group, labels, g, False)
        g += 1
        m = _drop_groups(Xt, index, m, flagged, group, sums, state, where)
    if m > 0:
        _assign_leftovers(X, labels, g, index, m)
    return labels


@njit(cache=True)
def _vmdav_kernel(X, k, gamma):  # pragma: no cover - numba  # noqa: C901, PLR0912 - numba kernel: one loop nest, kept whole for speed
    """V-MDAV of Solanas, Martínez-Ballesté & Domingo-Ferrer (2006); see :func:`vmdav`."""
    n, p = X.shape
    Xt, index = make_workspace(X)
    labels = np.full(n, -1, dtype=np.intp)
    dist = np.empty(n)
    d_group = np.empty(n)  # squared distance of each active record to its nearest group member
    flagged = np.zeros(n, dtype=np.bool_)
    members = np.empty(2 * k - 1, dtype=np.int64)
    centroid = np.empty(p)
    active_sums(Xt, n, centroid)
    for j in range(p):
        centroid[j] /= n
    no_neighbours = np.empty(0, dtype=np.int64)
    one = np.empty(1, dtype=np.int64)
    no_where = np.empty(0, dtype=np.int64)
    m = n
    g = 0
    while m >= 2 * k:
        r = distance_pass(Xt, m, centroid, dist, flagged, index, -1, 0, True, no_neighbours)
        take_group(Xt, index, m, dist, flagged, r, k, members[:k], labels, g, False)
        size = k
        # nearest-member distances of the unassigned records
        for i in range(m):
            d_group[i] = np.inf
        for t in range(size):
            point = Xt[:, members[t]].copy()
            distance_pass(Xt, m, point, dist, flagged, index, -1, 0, False, no_neighbours)
            for i in range(m):
                if dist[i] < d_group[i]:
                    d_group[i] = dist[i]
        while size < 2 * k - 1 and m - size > 1:
            e = -1
            for i in range(m):
                if flagged[i]:
                    continue
                if e < 0 or d_group[i] < d_group[e] or (d_group[i] == d_group[e] and index[i] < index[e]):
                    e = i
            point = Xt[:, e].copy()
            distance_pass(Xt, m, point, dist, flagged, index, e, 1, False, one)
            d_in = np.sqrt(d_group[e])
            d_out = np.sqrt(dist[one[0]])
            if not d_in < gamma * d_out:
                break
            flagged[e] = True
            labels[index[e]] = g
            members[size] = e
            size += 1
            for i in range(m):
                if dist[i] < d_group[i]:
                    d_group[i] = dist[i]
        g += 1
        m = remove_flagged(Xt, index, m, flagged, members[:size], no_where)
    if m >= k:
        for i in range(m):
            labels[index[i]] = g
        g += 1
    elif m > 0:
        _assign_leftovers(X, labels, g, index, m)
    return labels


def mdav(X: ArrayLike, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition records with MDAV (maximum distance to average vector).

    While at least ``3k`` records remain: compute the centroid of the remaining records, take
    the record ``r`` farthest from it and the record ``s`` farthest from ``r``; form a group
    with ``r`` and its ``k - 1`` nearest records, then one with ``s`` and its ``k - 1``
    nearest among the rest. If ``2k .. 3k-1`` remain, form one group around the record
    farthest from their centroid and put the others in a last group; if fewer than ``2k``
    remain, they form the last group. Every group has ``k`` records except the last
    (``k .. 2k-1``).

    Distances are squared Euclidean on ``X`` as given (scale it first). Ties are broken in
    favour of the lowest row index, for the farthest records and for the nearest neighbours
    alike; ``s`` is searched among the records not already in ``r``'s group.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused by MDAV; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Group of each record, consecutive from 0 in the order the groups were formed.

    References
    ----------
    Domingo-Ferrer, J. and Torra, V. "Ordinal, continuous and heterogeneous k-anonymity
    through microaggregation." Data Mining and Knowledge Discovery 11(2), 195-212 (2005).
    Called MDAV-generic by Solanas (2008); the MDAV of sdcMicro and µ-ARGUS.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2], [9.0]])
    >>> mdav(X, 3).tolist()  # 7 < 3k: one group around 9.0 (farthest), the rest last
    [1, 1, 1, 1, 0, 0, 0]
    """
    X = check_matrix(X, caller="mdav")
    k = check_k(k, n_samples=X.shape[0], caller="mdav")
    return _run_mdav(X, k, 3)


def mdav1(X: ArrayLike, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition records with MDAV-1 (Lin, Wen, Hsieh & Chang 2010).

    As seed 003 describes it: MDAV with the ``2k`` threshold (while at least ``2k`` records
    remain, form the groups of ``r`` and ``s`` as in :func:`mdav`); then, if ``k .. 2k-1``
    remain, one group of the record farthest from their centroid and its ``k - 1`` nearest;
    each record still left (fewer than ``k``) joins the group whose centroid is nearest
    (centroids as formed, lowest label on ties). Groups may thus exceed ``k`` records.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Lin, J.-L., Wen, T.-H., Hsieh, J.-C., Chang, P.-C. "Density-based microaggregation for
    statistical disclosure control." Expert Systems with Applications 37 (2010); described
    in seed 003, section IV. The original paper was not available to us: the end game
    follows seed 003's wording.
    """
    X = check_matrix(X, caller="mdav1")
    k = check_k(k, n_samples=X.shape[0], caller="mdav1")
    return _run_mdav(X, k, 2)


def cbfs(X: ArrayLike, k: int, *, random_state: RandomState = None) -> NDArray[np.intp]:
    """Partition records with CBFS (centroid-based fixed-size, Laszlo & Mukherjee 2005).

    While at least ``k`` records remain: the record ``r`` farthest from the centroid of the
    remaining records and its ``k - 1`` nearest form a group. The fewer than ``k`` records
    left each join the group whose centroid is nearest. One group per step (MDAV forms two).

    The centroid is recomputed over the remaining records at every step, as seed 003
    ("the current centroid") and public implementations do; we could not check the original
    paper, which some later papers read as growing the group around the group's own
    centroid instead.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Laszlo, M. and Mukherjee, S. "Minimum spanning tree partitioning algorithm for
    microaggregation." IEEE TKDE 17(7), 902-911 (2005).
    """
    X = check_matrix(X, caller="cbfs")
    k = check_k(k, n_samples=X.shape[0], caller="cbfs")
    return _cbfs_kernel(X, k)


def vmdav(
    X: ArrayLike, k: int, *, gamma: float = 0.2, random_state: RandomState = None
) -> NDArray[np.intp]:
    """Partition records with V-MDAV (variable-size MDAV, Solanas et al. 2006).

    ``c`` is the centroid of the whole data set, computed once. While at least ``2k``
    records are unassigned: the unassigned record farthest from ``c`` and its ``k - 1``
    nearest form a group; then, while the group has fewer than ``2k - 1`` records, the
    unassigned record ``e`` nearest to any member (distance ``d_in``) joins if
    ``d_in < gamma * d_out``, where ``d_out`` is the distance from ``e`` to its nearest other
    unassigned record; otherwise the group is closed. At the end, ``k .. 2k-1`` remaining
    records form a group, fewer than ``k`` join the group with the nearest centroid.
    Distances are Euclidean; ties go to the lowest row index.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Scaled numeric quasi-identifiers; must be finite.
    k : int
        Minimum group size, ``k >= 2``.
    gamma : float, default=0.2
        Extension threshold, ``gamma >= 0``; 0 gives fixed groups of ``k`` like MDAV's.
        The authors recommend values around 0.2 for scattered data and up to 1.1 for
        clustered data.
    random_state : None, int or numpy.random.Generator, default=None
        Unused; accepted so that every partitioner has the same signature.

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp

    References
    ----------
    Solanas, A., Martínez-Ballesté, A., Domingo-Ferrer, J. "V-MDAV: a multivariate
    microaggregation with variable group size." COMPSTAT 2006.
    """
    X = check_matrix(X, caller="vmdav")
    k = check_k(k, n_samples=X.shape[0], caller="vmdav")
    gamma = check_nonnegative(gamma, name="gamma", caller="vmdav")
    return _vmdav_kernel(X, k, gamma)
