"""Aggregators: what replaces each group's values (mean, median, mode, or noisy values).

Contract: ``f(values, labels, *, random_state=None, **params) -> masked`` where ``values`` is a
finite (n_samples, n_columns) float array on the ORIGINAL scale and ``labels`` a partition;
``masked`` has the same shape. For the deterministic aggregators (mean, median, mode) rows
of one group are identical in every column, so the published values are k-anonymous. The
noisy aggregators (``rho`` with rho > 0, ``random-k``) draw a different value for every
record inside its group's range, and ``synthetic`` replaces each group by synthetic records
with the group's exact mean and covariance (hybrid data): the published values are then NOT
k-anonymous (typically every record is unique) and the noise is NOT differential privacy;
see ``docs/guarantees.md``. :data:`NOISY_AGGREGATORS` names them. :data:`AGGREGATORS` holds
one :class:`~microagg.aggregate.registry.Aggregator` entry per aggregation: its parameters and
their constraints, whether it is noisy, the warning it owes and its verifier.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import Interval, unknown_option
from .._base.groups import group_means
from .._base.validation import RandomState, check_labels, check_matrix, resolve_seed
from .._runtime.jit import njit
from .registry import (
    Aggregator,
    check_noise_within_groups,
    fuzzy_random_warning,
    synthetic_warning,
    verify_fuzzy_representatives,
    verify_synthetic_moments,
)
from .synthetic import synthetic_microdata

__all__ = [
    "AGGREGATION_PARAMS",
    "AGGREGATORS",
    "NOISY_AGGREGATORS",
    "Aggregator",
    "aggregate",
    "aggregation_params",
    "check_noise_within_groups",
    "get_aggregator",
    "group_mean",
    "group_median",
    "group_mode",
    "group_ranges",
    "is_noisy",
    "random_k_anonymous",
    "rho_aggregation",
    "synthetic_microdata",
]


def _segments(labels: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Rows sorted by group (stable) and the start of each group in that order."""
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels)
    starts = np.concatenate(([0], np.cumsum(counts)))
    return order, starts


def group_mean(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
               ) -> NDArray[np.float64]:
    """Replace each value by the mean of its group (the classic microaggregation centroid).

    Examples
    --------
    >>> group_mean([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1]).ravel().tolist()
    [2.0, 2.0, 15.0, 15.0]
    """
    V = check_matrix(values, caller="group_mean", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    return group_means(V, lab)[lab]


@njit(cache=True)
def _segment_stat(V, order, starts, stat):  # pragma: no cover - numba
    p = V.shape[1]
    g = starts.shape[0] - 1
    rep = np.empty((g, p))
    for j in range(p):
        for t in range(g):
            seg = np.empty(starts[t + 1] - starts[t])
            for u in range(seg.shape[0]):
                seg[u] = V[order[starts[t] + u], j]
            seg.sort()
            if stat == 0:  # median: mean of the two middle values for an even size
                h = seg.shape[0] // 2
                rep[t, j] = seg[h] if seg.shape[0] % 2 == 1 else 0.5 * (seg[h - 1] + seg[h])
            else:  # mode: most frequent value, the smallest on ties
                best = seg[0]
                best_run = 0
                u = 0
                while u < seg.shape[0]:
                    w = u
                    while w < seg.shape[0] and seg[w] == seg[u]:
                        w += 1
                    if w - u > best_run:
                        best_run = w - u
                        best = seg[u]
                    u = w
                rep[t, j] = best
    return rep


def group_median(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
                 ) -> NDArray[np.float64]:
    """Replace each value by the median of its group (mean of the two middle values if even).

    Examples
    --------
    >>> group_median([[1.0], [2.0], [9.0], [5.0], [6.0], [7.0]], [0, 0, 0, 1, 1, 1]).ravel().tolist()
    [2.0, 2.0, 2.0, 6.0, 6.0, 6.0]
    """
    V = check_matrix(values, caller="group_median", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    order, starts = _segments(lab)
    return _segment_stat(V, order, starts, 0)[lab]


def group_mode(values: ArrayLike, labels: ArrayLike, *, random_state: RandomState = None
               ) -> NDArray[np.float64]:
    """Replace each value by the most frequent value of its group (smallest on ties).

    Meant for discrete columns (counts, codes); the representative is always a value that
    occurs in the data.

    Examples
    --------
    >>> group_mode([[1.0], [2.0], [2.0], [5.0], [6.0], [7.0]], [0, 0, 0, 1, 1, 1]).ravel().tolist()
    [2.0, 2.0, 2.0, 5.0, 5.0, 5.0]
    """
    V = check_matrix(values, caller="group_mode", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    order, starts = _segments(lab)
    return _segment_stat(V, order, starts, 1)[lab]


def group_ranges(values: ArrayLike, labels: ArrayLike
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-group minimum, maximum and mean of every column, each of shape (n_groups, p).

    Examples
    --------
    >>> lo, hi, mean = group_ranges([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1])
    >>> lo.ravel().tolist(), hi.ravel().tolist(), mean.ravel().tolist()
    ([1.0, 10.0], [3.0, 20.0], [2.0, 15.0])
    """
    V = check_matrix(values, caller="group_ranges", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    order, starts = _segments(lab)
    sorted_rows = V[order]
    lo = np.minimum.reduceat(sorted_rows, starts[:-1], axis=0)
    hi = np.maximum.reduceat(sorted_rows, starts[:-1], axis=0)
    mean = np.add.reduceat(sorted_rows, starts[:-1], axis=0) / np.diff(starts)[:, None]
    return lo, hi, mean


def _check_rho(rho: float) -> float:
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(rho) <= 1.0:
        raise ValueError(f"The 'rho' parameter must be a number in [0, 1]. Got {rho!r} instead.")
    return float(rho)


def rho_aggregation(values: ArrayLike, labels: ArrayLike, *, rho: float = 0.5,
                    random_state: RandomState = None) -> NDArray[np.float64]:
    """Random rho-aggregation: each record becomes its group's mean plus bounded uniform noise.

    For a group with mean ``m``, maximum ``a`` and minimum ``b`` in a column, every record of
    the group gets ``m + u`` with ``u`` uniform on ``[rho (b - m), rho (a - m)]``, drawn
    independently per record and column (seed 000, Algorithm 4). ``rho = 0`` is classic
    mean microaggregation; ``rho = 1`` spreads the records uniformly over the group's range.
    The record's own value is not used, only its group's minimum, mean and maximum.

    What it does NOT promise: for rho > 0 the published values are almost surely all
    distinct, so the release is not k-anonymous; and the noise range is set by the data
    (the group's extremes are real records), so it is not differential privacy, whatever the
    paper's proof sketch says. What holds: each published value lies in its group's noise
    interval, and the noise is drawn over a group of at least k records.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns)
        Values on the original scale.
    labels : array-like of shape (n_samples,)
        The partition.
    rho : float in [0, 1], default=0.5
        Scale of the noise interval.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    masked : ndarray of shape (n_samples, n_columns)

    References
    ----------
    Seed 000, section 3.3 (Definition 6, Algorithm 4).

    Examples
    --------
    >>> rho_aggregation([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1], rho=0.0).ravel().tolist()
    [2.0, 2.0, 15.0, 15.0]
    >>> out = rho_aggregation([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1], rho=1.0,
    ...                       random_state=0)
    >>> bool(((out[:2] >= 1) & (out[:2] <= 3)).all() and ((out[2:] >= 10) & (out[2:] <= 20)).all())
    True
    """
    rho = _check_rho(rho)
    V = check_matrix(values, caller="rho_aggregation", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    lo, hi, mean = group_ranges(V, lab)
    if rho == 0.0:
        return mean[lab]
    _, rng = resolve_seed(random_state)
    low = mean + rho * (lo - mean)
    high = mean + rho * (hi - mean)
    u = rng.random(V.shape)
    return low[lab] + u * (high - low)[lab]


def random_k_anonymous(values: ArrayLike, labels: ArrayLike, *,
                       random_state: RandomState = None) -> NDArray[np.float64]:
    """Random k-anonymity noise of Song et al.: each record moved uniformly within its group's
    range, folded back into the range.

    For a group with maximum ``a`` and minimum ``b`` in a column, a record ``x`` becomes
    ``x + u`` with ``u`` uniform on ``[-(a - b)/2, (a - b)/2]``; a value above ``a`` is
    lowered by ``a - b`` and one below ``b`` raised by ``a - b`` (seed 000, Eq. 6), so every
    published value lies in ``[b, a]``. Unlike :func:`rho_aggregation` the noise is centred
    on the record itself. The same caveats apply: not k-anonymous, not differential privacy.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_columns)
    labels : array-like of shape (n_samples,)
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    masked : ndarray of shape (n_samples, n_columns)

    References
    ----------
    Seed 000, section 2.5 and Eq. 6, after Song, Ma, Tian & Al-Rodhaan, IEEE Access 7 (2019).

    Examples
    --------
    >>> out = random_k_anonymous([[1.0], [3.0], [10.0], [20.0]], [0, 0, 1, 1], random_state=0)
    >>> bool(((out[:2] >= 1) & (out[:2] <= 3)).all() and ((out[2:] >= 10) & (out[2:] <= 20)).all())
    True
    """
    V = check_matrix(values, caller="random_k_anonymous", name="values")
    lab = check_labels(labels, n_samples=V.shape[0])
    lo, hi, _ = group_ranges(V, lab)
    _, rng = resolve_seed(random_state)
    width = (hi - lo)[lab]
    out = V + (rng.random(V.shape) - 0.5) * width
    top, bottom = hi[lab], lo[lab]
    out = np.where(out > top, out - width, out)
    out = np.where(out < bottom, out + width, out)
    # rounding can leave a value a hair outside [b, a]: the interval is the promise
    return np.clip(out, bottom, top)


def _rho_is_noisy(params: Mapping[str, Any]) -> bool:
    return _check_rho(params["rho"]) > 0.0  # rho = 0 is classic mean microaggregation


def _always(params: Mapping[str, Any]) -> bool:
    return True


_PROBABILITY = (Interval(float, 0, 1, closed="both"),)

AGGREGATORS: Mapping[str, Aggregator] = MappingProxyType({entry.name: entry for entry in (
    Aggregator("mean", group_mean, "Group mean (classic microaggregation centroid)."),
    Aggregator("median", group_median, "Group median (mean of the two middle values)."),
    Aggregator("mode", group_mode, "Most frequent value of the group (smallest on ties)."),
    Aggregator("rho", rho_aggregation,
               "Group mean plus uniform noise within rho times the group's range.",
               params={"rho": 0.5}, constraints={"rho": _PROBABILITY},
               noisy_when=_rho_is_noisy, verifier=check_noise_within_groups),
    Aggregator("random-k", random_k_anonymous,
               "Each record moved uniformly within its group's range (Song et al.).",
               noisy_when=_always, verifier=check_noise_within_groups),
    Aggregator("synthetic", synthetic_microdata,
               "Synthetic records with each group's exact mean and covariance (hybrid data).",
               noisy_when=_always, warning_text=synthetic_warning,
               verifier=verify_synthetic_moments),
    Aggregator("fuzzy-random", "microagg.partition.fuzzy:fuzzy_random_aggregation",
               "The mean of a group drawn by each record's fuzzy memberships.",
               params={"m": 2.0, "threshold": None, "neighbours": 10},
               constraints={"m": (Interval(float, 1, None, closed="neither"),),
                            "threshold": (None, *_PROBABILITY),
                            "neighbours": (Interval(int, 1, None, closed="left"),)},
               noisy_when=_always, warning_text=fuzzy_random_warning,
               verifier=verify_fuzzy_representatives),
)})
"""Registered aggregators by name (read-only): :class:`~microagg.aggregate.registry.Aggregator`
entries, each callable as ``entry(values, labels, *, random_state=None, **params)``."""

AGGREGATION_PARAMS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {name: entry.params for name, entry in AGGREGATORS.items()})
"""Each aggregator's keyword parameters and their defaults."""

NOISY_AGGREGATORS = frozenset(name for name, entry in AGGREGATORS.items() if entry.may_be_noisy)
"""Aggregators that give each record its own value (no syntactic k-anonymity): noise inside
the group's range (``rho``, ``random-k``) or synthetic records with the group's mean and
covariance (``synthetic``, hybrid data of seed 001, section 2.8) or the mean of a group drawn
by fuzzy membership (``fuzzy-random``, seed 001, section 2.4)."""


def is_noisy(method: str, params: Mapping[str, Any]) -> bool:
    """Whether ``method`` with ``params`` publishes per-record noisy values (rho=0 does not)."""
    entry = AGGREGATORS.get(method)
    return entry is not None and entry.noisy(params)


def aggregate(values: ArrayLike, labels: ArrayLike, *, method: str = "mean",
              random_state: RandomState = None, **params: Any) -> NDArray[np.float64]:
    """Aggregate each group of ``values`` with the named aggregator (see :data:`AGGREGATORS`)."""
    return get_aggregator(method)(values, labels, random_state=random_state, **params)


def get_aggregator(method: str) -> Aggregator:
    """Look an aggregator entry up by name; an unknown name lists the valid ones.

    Examples
    --------
    >>> get_aggregator("rho").noisy({"rho": 0.0})
    False
    """
    try:
        return AGGREGATORS[method]
    except KeyError:
        raise unknown_option("aggregation", method, sorted(AGGREGATORS)) from None


def aggregation_params(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters of aggregator ``method``: its defaults updated by ``params``, checked
    against the entry's constraints (:meth:`Aggregator.check_params`); an unknown name raises
    TypeError listing the allowed ones."""
    return AGGREGATORS[method].check_params(params)
