"""Enforcing l-diversity on a partition by merging and reassigning groups (seed 002, section
3). Public through :mod:`microagg.models`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._base.constraints import check_option
from ._costs import SSECost
from ._l_diversity import DIVERSITIES, check_l, class_counts, levels

__all__ = ["enforce_l_diversity"]


def enforce_l_diversity(labels: ArrayLike, sensitive: list[ArrayLike], *, l: float,  # noqa: PLR0913 - public keyword-only options
                        diversity: str = "distinct", c: float = 2.0,
                        cost: Any = None, X: ArrayLike | None = None,
                        k: int = 1, names: Sequence[str] | None = None) -> NDArray[np.intp]:
    """Make every group l-diverse (seed 002, section 3): dissolve the groups that fail and
    give their records, one by one, to the satisfying group whose information loss grows
    least, re-checking that group's diversity after each addition.

    Groups are only merged or enlarged, never split, so every group keeps at least the
    records it had (k is preserved); no record is dropped. If no group satisfies the model
    at the start, failing groups are merged (cheapest merge first) until one does. A record
    that no satisfying group can take without losing its diversity (possible for entropy and
    recursive diversity) is set aside; the records set aside are then merged, as one group,
    with the cheapest groups until the union satisfies the model. When failing groups
    outnumber satisfying ones (k = 2 with l = 3, say), each failing group first absorbs its
    cheapest failing partners until it satisfies (our addition: dissolving them all would
    pile their records onto the few satisfying groups).

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        A partition (0..g-1).
    sensitive : list of array-like of shape (n_samples,)
        One array of sensitive values per sensitive attribute; a group must satisfy the
        model for each of them.
    l : float
        Required level, ``l >= 1``.
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
    c : float, default=2.0
        Constant of recursive (c, l)-diversity.
    cost : object, default=None
        Cost model with ``costs(row, classes)``, ``merge_cost(a, classes)``, ``add(row, cls)``,
        ``merge(a, b)`` and ``reset(cls, rows)``; ``None`` uses the SSE increase on ``X``.
    X : array-like of shape (n_samples, n_features), default=None
        Scaled quasi-identifiers for the default SSE cost.
    k : int, default=1
        Minimum group size to keep: the group of set-aside records keeps merging until it
        has k records too.
    names : sequence of str, default=None
        The sensitive attributes' column names, for the messages (default: their positions).

    Returns
    -------
    labels : ndarray of shape (n_samples,), dtype=intp
        Consecutive group numbers; every group satisfies the model and, if every input
        group had k records, has k records.

    Raises
    ------
    ValueError
        When the whole table does not satisfy the model (then no grouping can, since the
        three models are preserved by unions of groups): names the attribute and the level
        the whole table reaches.
    """
    lab = np.asarray(labels, dtype=np.intp).ravel().copy()
    check_option(diversity, DIVERSITIES, parameter="diversity")
    l = check_l(l)
    codes = _sensitive_codes(sensitive, lab)
    _check_whole_table(codes, lab, diversity=diversity, l=l, c=c, names=names)
    n_groups = int(lab.max()) + 1
    if cost is None:
        if X is None:
            raise ValueError("enforce_l_diversity needs X (for the SSE cost) or a cost model.")
        cost = SSECost(np.asarray(X, dtype=np.float64), lab, n_groups)
    groups = _Groups(lab, codes, cost, n_groups, diversity=diversity, l=l, c=c)
    # When failing groups outnumber satisfying ones (e.g. k = 2 with l = 3, where no pair can
    # be 3-diverse), dissolving them would pile their records onto the few satisfying groups.
    # Our addition to seed 002: first let each failing group (largest first) absorb its
    # cheapest failing partners until it satisfies the model.
    if (groups.alive & ~groups.good).sum() > (groups.alive & groups.good).sum():
        _absorb_failing_partners(groups)
    _merge_until_one_satisfies(groups)
    failing, set_aside = _redistribute(groups)
    if set_aside:
        _merge_set_aside(groups, failing, set_aside, k)
    return np.unique(lab, return_inverse=True)[1].astype(np.intp)


def _sensitive_codes(sensitive: list[ArrayLike], lab: NDArray[np.intp]) -> list[NDArray[np.intp]]:
    """Each sensitive attribute's values as integer codes (one per record, checked)."""
    codes = []
    for j, values in enumerate(sensitive):
        arr = np.asarray(values, dtype=object).ravel()
        if arr.shape != lab.shape:
            raise ValueError(f"Sensitive attribute {j} has {arr.size} values for "
                             f"{lab.size} records.")
        codes.append(np.unique(arr.astype(str), return_inverse=True)[1].ravel().astype(np.intp))
    return codes


def _check_whole_table(codes: list[NDArray[np.intp]], lab: NDArray[np.intp], *, diversity: str,
                       l: float, c: float, names: Sequence[str] | None) -> None:
    """Refuse a table that does not satisfy the model as a whole (no grouping can then)."""
    whole = np.zeros_like(lab)
    for j, code in enumerate(codes):
        reached = float(levels(class_counts(whole, code), diversity, c)[0])
        if reached < l - 1e-12:
            which = f"column {names[j]!r}" if names is not None else f"attribute {j}"
            raise ValueError(
                f"The table cannot be made {diversity} {l:g}-diverse: sensitive {which} "
                f"reaches only l = {reached:.4g} over all {lab.size} records together "
                + ("(too few distinct values)." if diversity == "distinct" else
                   "(its most frequent value dominates)." if diversity == "recursive" else
                   "(its entropy is too low).")
            )


class _Groups:
    """What :func:`enforce_l_diversity` works on: the labels (changed in place), each group's
    count of each sensitive value, which groups are alive and which satisfy the model, and
    the cost model."""

    def __init__(self, lab: NDArray[np.intp], codes: list[NDArray[np.intp]], cost: Any,
                 n_groups: int, *, diversity: str, l: float, c: float):
        self.lab, self.codes, self.cost, self.n_groups = lab, codes, cost, n_groups
        self.diversity, self.l, self.c = diversity, l, c
        counts = [class_counts(lab, code) for code in codes]
        for j in range(len(counts)):  # every group id gets a row even if a value is absent
            counts[j] = np.pad(counts[j], ((0, n_groups - counts[j].shape[0]), (0, 0)))
        self.counts = counts
        self.alive = np.ones(n_groups, dtype=bool)
        self.good = self.satisfied(np.arange(n_groups))

    def satisfied(self, rows: NDArray[np.intp]) -> NDArray[np.bool_]:
        """Whether each of the groups ``rows`` satisfies the model for every attribute."""
        ok = np.ones(rows.size, dtype=bool)
        for cnt in self.counts:
            ok &= levels(cnt[rows], self.diversity, self.c) >= self.l - 1e-12
        return ok

    def satisfies(self, group: int) -> bool:
        """Whether ``group`` satisfies the model for every attribute."""
        return bool(self.satisfied(np.array([group]))[0])

    def merge(self, a: int, b: int) -> None:
        """Group ``b`` joins group ``a``."""
        self.cost.merge(a, b)
        for cnt in self.counts:
            cnt[a] += cnt[b]
            cnt[b] = 0
        self.lab[self.lab == b] = a
        self.alive[b] = False


def _absorb_failing_partners(groups: _Groups) -> None:
    """Each failing group, largest first, absorbs its cheapest failing partners until it
    satisfies the model (or none is left)."""
    alive, good = groups.alive, groups.good
    sizes = np.bincount(groups.lab, minlength=groups.n_groups)
    for a in np.flatnonzero(alive & ~good)[np.argsort(-sizes[alive & ~good], kind="stable")]:
        while alive[a] and not good[a]:
            pool = np.flatnonzero(alive & ~good)
            pool = pool[pool != a]
            if pool.size == 0:
                break
            groups.merge(int(a), int(pool[np.argmin(groups.cost.merge_cost(int(a), pool))]))
            good[a] = groups.satisfies(a)


def _merge_until_one_satisfies(groups: _Groups) -> None:
    """No satisfying group at all: merge failing groups, cheapest first, until one satisfies."""
    alive, good = groups.alive, groups.good
    while not good[alive].any():
        ids = np.flatnonzero(alive)
        a = ids[np.argmax(np.bincount(groups.lab, minlength=groups.n_groups)[ids])]
        others = ids[ids != a]
        b = int(others[np.argmin(groups.cost.merge_cost(a, others))])
        groups.merge(int(a), b)
        good[a] = groups.satisfies(a)


def _redistribute(groups: _Groups) -> tuple[NDArray[np.intp], list[int]]:
    """Dissolve the failing groups and give each of their records to the satisfying group
    whose cost grows least and that stays diverse; returns the dissolved groups and the
    records no group could take."""
    failing = np.flatnonzero(groups.alive & ~groups.good)
    rows = np.flatnonzero(np.isin(groups.lab, failing))
    groups.alive[failing] = False
    set_aside = []
    targets = np.flatnonzero(groups.alive)
    for row in rows:
        if not _place(groups, int(row), targets):
            set_aside.append(int(row))
    for cnt in groups.counts:
        cnt[failing] = 0
    return failing, set_aside


def _place(groups: _Groups, row: int, targets: NDArray[np.intp]) -> bool:
    """Give record ``row`` to the cheapest group of ``targets`` that stays diverse with it."""
    row_costs = groups.cost.costs(int(row), targets)
    if row_costs.size > 64:  # only the 64 cheapest groups are tried, cheapest first
        near = np.argpartition(row_costs, 63)[:64]
        order = targets[near[np.lexsort((targets[near], row_costs[near]))]]
    else:
        order = targets[np.lexsort((targets, row_costs))]
    for g in order:  # adding a record rarely breaks a group's diversity
        for j, cnt in enumerate(groups.counts):
            cnt[g, groups.codes[j][row]] += 1
        if groups.satisfies(g):
            groups.cost.add(int(row), int(g))
            groups.lab[row] = g
            return True
        for j, cnt in enumerate(groups.counts):
            cnt[g, groups.codes[j][row]] -= 1
    return False


def _merge_set_aside(groups: _Groups, failing: NDArray[np.intp], set_aside: list[int],
                     k: int) -> None:
    """The records nobody could take form one group, merged with the cheapest groups until it
    satisfies the model and has k records (the whole table does, so this ends)."""
    g = int(failing[0])
    groups.alive[g] = True
    groups.lab[set_aside] = g
    groups.cost.reset(g, np.asarray(set_aside, dtype=np.intp))
    for j, cnt in enumerate(groups.counts):
        np.add.at(cnt[g], groups.codes[j][set_aside], 1)
    while not groups.satisfies(g) or (groups.lab == g).sum() < k:
        ids = np.flatnonzero(groups.alive)
        others = ids[ids != g]
        if others.size == 0:
            break
        groups.merge(g, int(others[np.argmin(groups.cost.merge_cost(g, others))]))
