"""Privacy models checked on published data; each check returns the level achieved."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import PrivacyViolationError
from .generalize import class_nodes
from .hierarchy import HierarchyTables

__all__ = [
    "DIVERSITIES",
    "GROUND_DISTANCES",
    "ILOmegaCost",
    "SensitiveDistribution",
    "check_k_anonymity",
    "check_l",
    "check_l_diversity",
    "check_t",
    "check_t_closeness",
    "earth_movers_distance",
    "enforce_l_diversity",
    "enforce_t_closeness",
    "k_anonymity",
    "l_diversity",
    "t_closeness",
]


def k_anonymity(published: ArrayLike) -> int:
    """The k that the published quasi-identifiers achieve: the size of the smallest set of
    records that share the same values in every column (0 for an empty table).

    Computed from the data alone, never from the labels of a partition.

    Examples
    --------
    >>> k_anonymity([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [3.0, 4.0], [3.0, 4.0]])
    2
    """
    A = np.asarray(published)
    if A.ndim == 1:
        A = A.reshape(-1, 1)
    if A.shape[0] == 0:
        return 0
    if A.dtype.kind == "f":
        A = A + 0.0  # -0.0 and 0.0 are the same published value
    if A.dtype.kind in "fiub":
        # rows as byte strings: one hash-free sort of n keys instead of a p-column lexsort
        rows = np.ascontiguousarray(A).view(np.dtype((np.void, A.dtype.itemsize * A.shape[1])))
        _, counts = np.unique(rows.ravel(), return_counts=True)
    else:
        _, counts = np.unique(A, axis=0, return_counts=True)
    return int(counts.min())


def check_k_anonymity(published: ArrayLike, k: int) -> int:
    """Return the achieved k; raise :class:`PrivacyViolationError` if it is below ``k``."""
    achieved = k_anonymity(published)
    if achieved < k:
        raise PrivacyViolationError(
            f"The published quasi-identifiers are only {achieved}-anonymous, below the "
            f"required k={k}. Nothing was released. This is a bug in microagg."
        )
    return achieved


# ------------------------------------------------------------------------------------------
# l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam, ACM TKDD 1(1), 2007)

DIVERSITIES = ("distinct", "entropy", "recursive")


def _class_counts(classes: NDArray[np.intp], codes: NDArray[np.intp]) -> NDArray[np.int64]:
    """(n_classes, n_values) counts of each sensitive value in each class."""
    n_classes = int(classes.max()) + 1
    n_values = int(codes.max()) + 1
    counts = np.zeros((n_classes, n_values), dtype=np.int64)
    np.add.at(counts, (classes, codes), 1)
    return counts


def _levels(counts: NDArray[np.int64], diversity: str, c: float) -> NDArray[np.float64]:
    """The l each class (row of counts) achieves under ``diversity``."""
    if diversity == "distinct":
        return (counts > 0).sum(axis=1).astype(np.float64)
    if diversity == "entropy":
        total = counts.sum(axis=1, keepdims=True)
        p = np.where(counts > 0, counts / np.maximum(total, 1), 1.0)
        return np.exp(-(p * np.log(p)).sum(axis=1))
    # recursive (c, l): r_1 < c (r_l + r_{l+1} + ... + r_m), r sorted decreasing; the largest
    # such l (0 if even l = 1 fails, which happens only for c <= 1)
    r = -np.sort(-counts, axis=1)
    tails = np.cumsum(r[:, ::-1], axis=1)[:, ::-1]  # tails[:, l-1] = r_l + ... + r_m
    ok = r[:, :1] < c * tails
    ok &= tails > 0
    # ok is monotone in l (tails shrink): the count of True is the largest l
    return ok.sum(axis=1).astype(np.float64)


def l_diversity(classes: ArrayLike, sensitive: ArrayLike, *, diversity: str = "distinct",
                c: float = 2.0) -> float:
    """The l that every class achieves for one sensitive attribute (the minimum over classes).

    Parameters
    ----------
    classes : array-like of shape (n_samples,)
        Equivalence class of each record (ints; derive them from the published data).
    sensitive : array-like of shape (n_samples,)
        Sensitive value of each record (any hashable values; coded internally).
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
        * distinct: the number of distinct sensitive values;
        * entropy: ``exp(H)`` with ``H`` the entropy of the class's sensitive values (a class
          is entropy l-diverse when ``H >= log l``);
        * recursive: the largest l with ``r_1 < c (r_l + ... + r_m)`` for the class's value
          counts sorted decreasingly (Machanavajjhala et al., Def. 4.3; seed 004 prints the
          condition with ``x_1 + x_2 + ...`` on the right, a typo: the sum starts at r_l).
    c : float, default=2.0
        The constant of recursive (c, l)-diversity.

    Returns
    -------
    float
        An integer for distinct and recursive, a real number for entropy.

    Examples
    --------
    >>> l_diversity([0, 0, 0, 1, 1, 1], ["a", "b", "b", "a", "b", "c"])
    2.0
    >>> round(l_diversity([0, 0, 1, 1], ["a", "b", "a", "a"], diversity="entropy"), 3)
    1.0
    >>> l_diversity([0, 0, 0, 0], ["a", "a", "b", "c"], diversity="recursive", c=1.5)
    2.0
    """
    cls = np.asarray(classes, dtype=np.intp).ravel()
    values = np.asarray(sensitive, dtype=object).ravel()
    if cls.shape != values.shape:
        raise ValueError(f"classes has {cls.size} entries but sensitive has {values.size}.")
    if cls.size == 0:
        return 0.0
    if diversity not in DIVERSITIES:
        raise ValueError(f"Unknown diversity {diversity!r}. Valid: {', '.join(DIVERSITIES)}.")
    _, codes = np.unique(values.astype(str), return_inverse=True)
    _, cls = np.unique(cls, return_inverse=True)
    return float(_levels(_class_counts(cls, codes.ravel()), diversity, c).min())


def check_l(l: Any) -> float:
    """``l`` as a float ``>= 1``, or a ValueError naming the allowed range."""
    if isinstance(l, bool) or not isinstance(l, (int, float, np.integer, np.floating)) \
            or not np.isfinite(l) or l < 1:
        raise ValueError(f"The 'l' parameter must be a number >= 1. Got {l!r} instead.")
    return float(l)


def check_t(t: Any) -> float:
    """``t`` as a float in [0, 1], or a ValueError naming the allowed range."""
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(t) <= 1.0:
        raise ValueError(f"The 't' parameter must be a number in [0, 1]. Got {t!r} instead.")
    return float(t)


class _SSECost:
    """Cost of adding a record to a class: the SSE increase (numeric microaggregation)."""

    def __init__(self, X: NDArray[np.float64], labels: NDArray[np.intp], n_classes: int):
        self.X = X
        self.count = np.bincount(labels, minlength=n_classes).astype(np.float64)
        self.sums = np.zeros((n_classes, X.shape[1]))
        np.add.at(self.sums, labels, X)

    def costs(self, row: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        n = self.count[classes]
        centre = self.sums[classes] / n[:, None]
        return n / (n + 1.0) * ((self.X[row] - centre) ** 2).sum(axis=1)

    def merge_cost(self, a: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        na, nb = self.count[a], self.count[classes]
        d = self.sums[a] / na - self.sums[classes] / nb[:, None]
        return na * nb / (na + nb) * (d ** 2).sum(axis=1)

    def add(self, row: int, cls: int) -> None:
        self.count[cls] += 1.0
        self.sums[cls] += self.X[row]

    def merge(self, a: int, b: int) -> None:
        self.count[a] += self.count[b]
        self.sums[a] += self.sums[b]

    def reset(self, cls: int, rows: NDArray[np.intp]) -> None:
        self.count[cls] = rows.size
        self.sums[cls] = self.X[rows].sum(axis=0)


class ILOmegaCost:
    """Cost of adding a record to a class for mixed data: the IL(Omega) increase of seed 002
    (numeric span over the table's range, plus generalization level over hierarchy height,
    times the class size)."""

    def __init__(self, numeric: NDArray[np.float64], codes: NDArray[np.intp],
                 tables: Sequence[HierarchyTables], labels: NDArray[np.intp], n_classes: int):
        self.num = np.asarray(numeric, dtype=np.float64).reshape(labels.size, -1)
        self.codes = np.asarray(codes, dtype=np.intp).reshape(labels.size, -1)
        self.tables = tuple(tables)
        rng = self.num.max(axis=0) - self.num.min(axis=0) if self.num.size else np.zeros(0)
        self.range = np.where(rng > 0, rng, np.inf)
        self.count = np.bincount(labels, minlength=n_classes).astype(np.float64)
        r = self.num.shape[1]
        self.lo = np.full((n_classes, r), np.inf)
        self.hi = np.full((n_classes, r), -np.inf)
        np.minimum.at(self.lo, labels, self.num)
        np.maximum.at(self.hi, labels, self.num)
        self.node = np.zeros((n_classes, len(self.tables)), dtype=np.intp)
        for j, t in enumerate(self.tables):
            self.node[:, j] = class_nodes(self.codes[:, j], labels, t)
        self.per = self._per_record(self.lo, self.hi, self.node)  # each class's IL per record
        # join level of every (node, leaf) pair: a table lookup per candidate class
        self.join_with_leaf = []
        for t in self.tables:
            nodes = np.repeat(np.arange(len(t.node_labels)), len(t.leaves))
            leaves = np.tile(t.ancestor[0], len(t.node_labels))
            self.join_with_leaf.append(
                t.join_level(nodes, leaves).reshape(len(t.node_labels), len(t.leaves)))

    def _per_record(self, lo, hi, node) -> NDArray[np.float64]:
        out = ((hi - lo) / self.range).sum(axis=1)
        for j, t in enumerate(self.tables):
            out = out + t.node_level[node[:, j]] / max(t.height, 1)
        return out

    def _joined(self, node_a, node_b) -> NDArray[np.intp]:
        out = np.empty_like(node_b)
        for j, t in enumerate(self.tables):
            out[:, j] = t.join_level(node_a[..., j], node_b[:, j])
        return out

    def _node_at(self, node_a, node_b) -> NDArray[np.intp]:
        """Node ids of the joins (for the state updates)."""
        out = np.empty_like(node_b)
        for j, t in enumerate(self.tables):
            level = t.join_level(node_a[..., j], node_b[:, j])
            out[:, j] = t.ancestor[level, t.node_leaf[node_b[:, j]]]
        return out

    def costs(self, row: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        x = self.num[row]
        lo = np.minimum(self.lo[classes], x)
        hi = np.maximum(self.hi[classes], x)
        new = ((hi - lo) / self.range).sum(axis=1)
        nodes = self.node[classes]
        for j, t in enumerate(self.tables):  # join levels from the (node, leaf) table
            new += self.join_with_leaf[j][nodes[:, j], self.codes[row, j]] / max(t.height, 1)
        n = self.count[classes]
        return (n + 1.0) * new - n * self.per[classes]

    def merge_cost(self, a: int, classes: NDArray[np.intp]) -> NDArray[np.float64]:
        lo = np.minimum(self.lo[classes], self.lo[a])
        hi = np.maximum(self.hi[classes], self.hi[a])
        node = self._node_at(self.node[a], self.node[classes])
        na, nb = self.count[a], self.count[classes]
        new = self._per_record(lo, hi, node)
        return (na + nb) * new - na * self.per[a] - nb * self.per[classes]

    def add(self, row: int, cls: int) -> None:
        self.reset(cls, None, extra=row)

    def merge(self, a: int, b: int) -> None:
        self.count[a] += self.count[b]
        self.lo[a] = np.minimum(self.lo[a], self.lo[b])
        self.hi[a] = np.maximum(self.hi[a], self.hi[b])
        self.node[a] = self._node_at(self.node[a], self.node[[b]])[0]
        self._refresh(a)

    def _refresh(self, cls: int) -> None:
        self.per[cls] = self._per_record(self.lo[[cls]], self.hi[[cls]], self.node[[cls]])[0]

    def reset(self, cls: int, rows: NDArray[np.intp] | None, *, extra: int | None = None
              ) -> None:
        if rows is not None:  # the class becomes exactly these rows
            self.count[cls] = rows.size
            self.lo[cls] = self.num[rows].min(axis=0)
            self.hi[cls] = self.num[rows].max(axis=0)
            for j, t in enumerate(self.tables):
                self.node[cls, j] = t.group_node(self.codes[rows, j])
            self._refresh(cls)
            return
        assert extra is not None
        self.count[cls] += 1.0
        self.lo[cls] = np.minimum(self.lo[cls], self.num[extra])
        self.hi[cls] = np.maximum(self.hi[cls], self.num[extra])
        leaf_nodes = np.array([[t.ancestor[0, self.codes[extra, j]]
                                for j, t in enumerate(self.tables)]], dtype=np.intp)
        self.node[cls] = self._node_at(self.node[cls], leaf_nodes)[0]
        self._refresh(cls)


def enforce_l_diversity(labels: ArrayLike, sensitive: list[ArrayLike], *, l: float,
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
    if diversity not in DIVERSITIES:
        raise ValueError(f"Unknown diversity {diversity!r}. Valid: {', '.join(DIVERSITIES)}.")
    l = check_l(l)
    codes = []
    for j, values in enumerate(sensitive):
        arr = np.asarray(values, dtype=object).ravel()
        if arr.shape != lab.shape:
            raise ValueError(f"Sensitive attribute {j} has {arr.size} values for "
                             f"{lab.size} records.")
        codes.append(np.unique(arr.astype(str), return_inverse=True)[1].ravel().astype(np.intp))
    whole = np.zeros_like(lab)
    for j, code in enumerate(codes):
        reached = float(_levels(_class_counts(whole, code), diversity, c)[0])
        if reached < l - 1e-12:
            which = f"column {names[j]!r}" if names is not None else f"attribute {j}"
            raise ValueError(
                f"The table cannot be made {diversity} {l:g}-diverse: sensitive {which} "
                f"reaches only l = {reached:.4g} over all {lab.size} records together "
                + ("(too few distinct values)." if diversity == "distinct" else
                   "(its most frequent value dominates)." if diversity == "recursive" else
                   "(its entropy is too low).")
            )
    n_groups = int(lab.max()) + 1
    if cost is None:
        if X is None:
            raise ValueError("enforce_l_diversity needs X (for the SSE cost) or a cost model.")
        cost = _SSECost(np.asarray(X, dtype=np.float64), lab, n_groups)
    counts = [_class_counts(lab, code) for code in codes]
    for j in range(len(counts)):  # every group id gets a row even if a value is absent
        counts[j] = np.pad(counts[j], ((0, n_groups - counts[j].shape[0]), (0, 0)))

    def satisfied(rows: NDArray[np.intp]) -> NDArray[np.bool_]:
        ok = np.ones(rows.size, dtype=bool)
        for cnt in counts:
            ok &= _levels(cnt[rows], diversity, c) >= l - 1e-12
        return ok

    alive = np.ones(n_groups, dtype=bool)
    good = satisfied(np.arange(n_groups))

    def merge(a: int, b: int) -> None:
        cost.merge(a, b)
        for cnt in counts:
            cnt[a] += cnt[b]
            cnt[b] = 0
        lab[lab == b] = a
        alive[b] = False

    # When failing groups outnumber satisfying ones (e.g. k = 2 with l = 3, where no pair can
    # be 3-diverse), dissolving them would pile their records onto the few satisfying groups.
    # Our addition to seed 002: first let each failing group (largest first) absorb its
    # cheapest failing partners until it satisfies the model.
    if (alive & ~good).sum() > (alive & good).sum():
        sizes = np.bincount(lab, minlength=n_groups)
        for a in np.flatnonzero(alive & ~good)[np.argsort(-sizes[alive & ~good], kind="stable")]:
            while alive[a] and not good[a]:
                pool = np.flatnonzero(alive & ~good)
                pool = pool[pool != a]
                if pool.size == 0:
                    break
                merge(int(a), int(pool[np.argmin(cost.merge_cost(int(a), pool))]))
                good[a] = satisfied(np.array([a]))[0]
    # no satisfying group at all: merge failing groups, cheapest first, until one satisfies
    while not good[alive].any():
        ids = np.flatnonzero(alive)
        a = ids[np.argmax(np.bincount(lab, minlength=n_groups)[ids])]
        others = ids[ids != a]
        b = int(others[np.argmin(cost.merge_cost(a, others))])
        merge(int(a), b)
        good[a] = satisfied(np.array([a]))[0]
    failing = np.flatnonzero(alive & ~good)
    rows = np.flatnonzero(np.isin(lab, failing))
    alive[failing] = False
    set_aside = []
    targets = np.flatnonzero(alive)
    for row in rows:
        row_costs = cost.costs(int(row), targets)
        if row_costs.size > 64:  # only the 64 cheapest groups are tried, cheapest first
            near = np.argpartition(row_costs, 63)[:64]
            order = targets[near[np.lexsort((targets[near], row_costs[near]))]]
        else:
            order = targets[np.lexsort((targets, row_costs))]
        placed = False
        for g in order:  # adding a record rarely breaks a group's diversity
            for j, cnt in enumerate(counts):
                cnt[g, codes[j][row]] += 1
            if satisfied(np.array([g]))[0]:
                cost.add(int(row), int(g))
                lab[row] = g
                placed = True
                break
            for j, cnt in enumerate(counts):
                cnt[g, codes[j][row]] -= 1
        if not placed:
            set_aside.append(int(row))
    for cnt in counts:
        cnt[failing] = 0
    if set_aside:
        # the records nobody could take form one group, merged with the cheapest groups
        # until it satisfies the model (the whole table does, so this ends)
        g = int(failing[0])
        alive[g] = True
        lab[set_aside] = g
        cost.reset(g, np.asarray(set_aside, dtype=np.intp))
        for j, cnt in enumerate(counts):
            np.add.at(cnt[g], codes[j][set_aside], 1)
        while not satisfied(np.array([g]))[0] or (lab == g).sum() < k:
            ids = np.flatnonzero(alive)
            others = ids[ids != g]
            if others.size == 0:
                break
            merge(g, int(others[np.argmin(cost.merge_cost(g, others))]))
    return np.unique(lab, return_inverse=True)[1].astype(np.intp)


def check_l_diversity(classes: ArrayLike, sensitive: ArrayLike, l: float, *,
                      diversity: str = "distinct", c: float = 2.0) -> float:
    """Return the achieved l; raise :class:`PrivacyViolationError` if it is below ``l``."""
    achieved = l_diversity(classes, sensitive, diversity=diversity, c=c)
    if achieved < l - 1e-12:
        raise PrivacyViolationError(
            f"The published classes are only {diversity} {achieved:.4g}-diverse, below the "
            f"required l={l}. Nothing was released. This is a bug in microagg."
        )
    return achieved


# ------------------------------------------------------------------------------------------
# t-closeness (Li, Li & Venkatasubramanian, ICDE 2007)

GROUND_DISTANCES = ("equal", "ordered", "hierarchical")


def _emd_rows(P: NDArray[np.float64], q: NDArray[np.float64], distance: str,
              tables: HierarchyTables | None = None) -> NDArray[np.float64]:
    """EMD between each row of ``P`` (class distributions) and ``q`` (the table's)."""
    diff = P - q
    m = q.size
    if distance == "equal":
        return 0.5 * np.abs(diff).sum(axis=1)
    if distance == "ordered":
        if m <= 1:
            return np.zeros(P.shape[0])
        return np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
    assert tables is not None
    H = max(tables.height, 1)
    n_nodes = len(tables.node_labels)
    extra = np.zeros((P.shape[0], n_nodes))
    np.add.at(extra.T, tables.ancestor[0], diff.T)  # leaves
    total = np.zeros(P.shape[0])
    for level in range(1, tables.height + 1):
        # each node at `level - 1` passes its extra to its parent
        child = np.unique(tables.ancestor[level - 1])
        parent = tables.ancestor[level, tables.node_leaf[child]]
        pos = np.zeros((P.shape[0], n_nodes))
        neg = np.zeros((P.shape[0], n_nodes))
        np.add.at(pos.T, parent, np.maximum(extra[:, child], 0.0).T)
        np.add.at(neg.T, parent, np.maximum(-extra[:, child], 0.0).T)
        nodes = np.unique(parent)
        total += (level / H) * np.minimum(pos[:, nodes], neg[:, nodes]).sum(axis=1)
        extra[:, nodes] = pos[:, nodes] - neg[:, nodes]
    return total


def earth_movers_distance(p: ArrayLike, q: ArrayLike, *, distance: str = "equal",
                          hierarchy: HierarchyTables | None = None) -> float:
    """Earth Mover's Distance between two distributions over the same ordered values.

    * ``equal``: every pair of distinct values at distance 1 (categorical):
      ``EMD = sum |p_i - q_i| / 2``;
    * ``ordered``: values in order, distance ``|i - j| / (m - 1)`` (numeric, ordinal):
      ``EMD = sum_i |sum_{j<=i} (p_j - q_j)| / (m - 1)``;
    * ``hierarchical``: distance = level of the lowest common ancestor over the height;
      ``p``, ``q`` follow the hierarchy's leaf codes.

    Li, Li & Venkatasubramanian, "t-Closeness: Privacy beyond k-anonymity and
    l-diversity", ICDE 2007, section 4.

    Examples
    --------
    >>> earth_movers_distance([0.99, 0.01], [0.89, 0.11])  # seed 004's D1, D2
    0.1
    >>> earth_movers_distance([0.6, 0.4], [0.5, 0.5])      # D3, D4: the same EMD
    0.1
    """
    P = np.asarray(p, dtype=np.float64).reshape(1, -1)
    Q = np.asarray(q, dtype=np.float64).ravel()
    if distance not in GROUND_DISTANCES:
        raise ValueError(f"Unknown distance {distance!r}. Valid: {', '.join(GROUND_DISTANCES)}.")
    if P.shape[1] != Q.size:
        raise ValueError(f"p has {P.shape[1]} values and q {Q.size}.")
    if distance == "hierarchical" and hierarchy is None:
        raise ValueError("The hierarchical distance needs the hierarchy's tables.")
    return round(float(_emd_rows(P, Q, distance, hierarchy)[0]), 12)


class SensitiveDistribution:
    """One sensitive column prepared for t-closeness: value codes, ground distance, and the
    table's distribution."""

    def __init__(self, values: ArrayLike, *, distance: str = "auto",
                 hierarchy: Any = None):
        arr = np.asarray(values, dtype=object).ravel()
        if hierarchy is not None:
            tables = hierarchy.tables() if hasattr(hierarchy, "tables") else hierarchy
            codes = hierarchy.encode(arr) if hasattr(hierarchy, "encode") else np.asarray(arr, np.intp)
            self.distance, self.tables, self.codes = "hierarchical", tables, codes
            self.m = len(tables.leaves)
        else:
            numeric = all(isinstance(v, (int, float, np.integer, np.floating))
                          and not isinstance(v, bool) for v in arr)
            if distance == "auto":
                distance = "ordered" if numeric else "equal"
            if distance not in ("equal", "ordered"):
                raise ValueError(f"Unknown distance {distance!r} without a hierarchy: use "
                                 "'equal' or 'ordered'.")
            keys = arr.astype(np.float64) if numeric else arr.astype(str)
            _, codes = np.unique(keys, return_inverse=True)  # sorted: the order of `ordered`
            self.distance, self.tables, self.codes = distance, None, codes.ravel()
            self.m = int(self.codes.max()) + 1
        self.q = np.bincount(self.codes, minlength=self.m) / self.codes.size

    def emd(self, classes: NDArray[np.intp], n_classes: int | None = None
            ) -> NDArray[np.float64]:
        """EMD of every class (0..g-1) to the table's distribution (0 for an empty class)."""
        g = int(classes.max()) + 1 if n_classes is None else int(n_classes)
        counts = np.zeros((g, self.m))
        np.add.at(counts, (classes, self.codes), 1.0)
        sizes = counts.sum(axis=1, keepdims=True)
        P = np.divide(counts, sizes, out=np.tile(self.q, (g, 1)), where=sizes > 0)
        return _emd_rows(P, self.q, self.distance, self.tables)


def t_closeness(classes: ArrayLike, sensitive: ArrayLike | SensitiveDistribution, *,
                distance: str = "auto", hierarchy: Any = None) -> float:
    """The t a release achieves: the largest EMD between a class's sensitive distribution and
    the whole table's (``distance="auto"``: ordered for numbers, equal otherwise;
    hierarchical when a hierarchy is given).

    Examples
    --------
    >>> t_closeness([0, 0, 1, 1], [1, 2, 3, 4])  # ordered: {1,2} vs {1,2,3,4} -> 1/3
    0.333333333333
    """
    cls = np.unique(np.asarray(classes).ravel(), return_inverse=True)[1].ravel()
    dist = sensitive if isinstance(sensitive, SensitiveDistribution) else \
        SensitiveDistribution(sensitive, distance=distance, hierarchy=hierarchy)
    return round(float(dist.emd(cls).max()), 12)


def enforce_t_closeness(labels: ArrayLike, sensitive: list[SensitiveDistribution], *,
                        t: float, cost: Any = None, X: ArrayLike | None = None
                        ) -> NDArray[np.intp]:
    """Merge the class farthest from the table's distribution with its cheapest partner
    until every class is within ``t`` for every sensitive column (after Soria-Comas,
    Domingo-Ferrer, Sánchez & Martínez, "t-closeness through microaggregation", ICDE 2016 /
    IEEE TKDE 2015: merging classes moves their distribution towards the table's). Ends,
    since one class holding every record has EMD 0.

    ``cost`` is a cost model as for :func:`enforce_l_diversity` (default: SSE on ``X``).
    """
    lab = np.unique(np.asarray(labels, dtype=np.intp).ravel(), return_inverse=True)[1].ravel()
    t = check_t(t)
    n_groups = int(lab.max()) + 1
    if cost is None:
        if X is None:
            raise ValueError("enforce_t_closeness needs X (for the SSE cost) or a cost model.")
        cost = _SSECost(np.asarray(X, dtype=np.float64), lab, n_groups)
    alive = np.ones(n_groups, dtype=bool)
    while True:
        worst = np.zeros(n_groups)
        for dist in sensitive:
            worst = np.maximum(worst, dist.emd(lab, n_groups))
        worst[~alive] = -1.0
        a = int(np.argmax(worst))
        if worst[a] <= t + 1e-12 or alive.sum() == 1:
            break
        others = np.flatnonzero(alive)
        others = others[others != a]
        b = int(others[np.argmin(cost.merge_cost(a, others))])
        cost.merge(a, b)
        lab[lab == b] = a
        alive[b] = False
    return np.unique(lab, return_inverse=True)[1].ravel().astype(np.intp)


def check_t_closeness(classes: ArrayLike, sensitive: SensitiveDistribution, t: float) -> float:
    """Return the achieved t; raise :class:`PrivacyViolationError` if it exceeds ``t``."""
    achieved = t_closeness(classes, sensitive)
    if achieved > t + 1e-9:
        raise PrivacyViolationError(
            f"The published classes are only {achieved:.4g}-close, above the required t={t}. "
            "Nothing was released. This is a bug in microagg.")
    return achieved
