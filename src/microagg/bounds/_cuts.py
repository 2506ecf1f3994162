"""Subset-row cuts for the set-partitioning master (validation assumed done).

For three rows ``R = {a, b, c}``, at most one group of a partition holds two or more of them,
so every partition satisfies ``sum_{T : |T & R| >= 2} x_T <= 1``: a rank-1 Chvatal-Gomory cut
of the partitioning rows of ``R`` with multipliers 1/2 (Jepsen, Petersen, Spoorendonk and
Pisinger, "Subset-row inequalities applied to the vehicle-routing problem with time
windows", Operations Research 56(2), 2008). The LP over groups of ``k`` rows violates them
wherever a tight cluster's size is not a multiple of ``k``: four close rows at ``k = 3`` are
covered by their four triples at 1/3 each, for ``8/9`` of the cluster's SSE as one group
(the mix of the model section of benchmarks/results/bounds-2026.md), and any three of the
four rows see ``4/3 > 1``.

With cut duals ``sigma >= 0`` (``-sigma`` on the ``<=`` rows) a group's reduced cost is
``rc'(T) = SSE(T) - u(T) + sum_{R : |T & R| >= 2} sigma_R``, and for every partition ``P``
into groups of ``k .. 2k-1`` rows (an optimal partition is one), ``SSE(P) >= sum(u) -
sum(sigma) + sum_{T in P} rc'(T)``: each cut's bracket ``1 - #{T in P : |T & R| >= 2}`` is
``>= 0``. The enumeration bound then takes ``rho_i = min rc'(T) / |T|`` over every size
``k .. 2k-1`` (a larger group's penalty is no longer below its ``k``-subsets' mix), and
``(u + rho, sigma)`` is dual feasible for the LP with the cuts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csc_matrix, csr_matrix

_FRACTIONAL = 1e-6
_VIOLATION = 1e-4
MAX_NEW_CUTS = 2000
"""Most cuts added per separation, the most violated first (EIA k = 3 at the LP optimum:
1,282 violated in the first separation, 177, 40, 10 and 4 after it)."""


class CutDuals(NamedTuple):
    """The cuts whose dual is positive, as arrays for the pricing kernels."""

    ptr: NDArray[np.int64]
    """``idx[ptr[j]:ptr[j + 1]]``: the cuts holding row ``j``."""
    idx: NDArray[np.int64]
    rows: NDArray[np.int64]
    """``(cuts, 3)``: each cut's rows."""
    sigma: NDArray[np.float64]
    """Each cut's dual (``> 0``)."""


@dataclass
class SubsetRowCuts:
    """The subset-row cuts of a master LP over ``n`` rows."""

    n: int
    triples: list[tuple[int, int, int]] = field(default_factory=list)
    seen: set[tuple[int, int, int]] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.triples)

    def activation(self, groups: Sequence[NDArray[np.intp]]) -> csr_matrix:
        """``(cuts, groups)`` 0/1: whether a group holds two or more of a cut's rows."""
        if not self.triples or not groups:
            return csr_matrix((len(self.triples), len(groups)))
        counts = (self._incidence().T @ incidence(groups, self.n)).tocsr()
        counts.data = (counts.data >= 2).astype(np.float64)
        counts.eliminate_zeros()
        return counts

    def penalties(self, groups: Sequence[NDArray[np.intp]],
                  sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        """``sum_{R : |T & R| >= 2} sigma_R`` of each group ``T``."""
        if not self.triples or not groups:
            return np.zeros(len(groups))
        return np.asarray(self.activation(groups).T @ sigma, dtype=np.float64)

    def separate(self, groups: Sequence[NDArray[np.intp]], x: NDArray[np.float64],
                 limit: int = MAX_NEW_CUTS) -> int:
        """Add the ``limit`` most violated new cuts at the LP point ``x``; how many."""
        found = sorted(((v, r) for r, v in _violated(groups, x).items()
                        if r not in self.seen), reverse=True)[:limit]
        for _, triple in found:
            self.seen.add(triple)
            self.triples.append(triple)
        return len(found)

    def duals(self, sigma: NDArray[np.float64]) -> CutDuals | None:
        """The kernels' arrays for the cuts with ``sigma > 0`` (``None`` when none is)."""
        live = np.flatnonzero(sigma > 0.0)
        if live.size == 0:
            return None
        rows = np.asarray([self.triples[c] for c in live], dtype=np.int64)
        flat = rows.ravel()
        order = np.argsort(flat, kind="stable")
        ptr = np.zeros(self.n + 1, dtype=np.int64)
        np.add.at(ptr, flat + 1, 1)
        return CutDuals(np.cumsum(ptr), (order // 3).astype(np.int64), rows,
                        np.ascontiguousarray(sigma[live], dtype=np.float64))

    def _incidence(self) -> csc_matrix:
        """``(n, cuts)`` 0/1: the rows of each cut."""
        return incidence([np.asarray(t, dtype=np.intp) for t in self.triples], self.n)


def incidence(groups: Sequence[NDArray[np.intp]], n: int) -> csc_matrix:
    """``(n, groups)`` 0/1: the rows of each group (the master's columns, or the cuts)."""
    rows = np.concatenate(groups)
    ptr = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
    return csc_matrix((np.ones(rows.size), rows, ptr), shape=(n, len(groups)))


def _violated(groups: Sequence[NDArray[np.intp]],
              x: NDArray[np.float64]) -> dict[tuple[int, int, int], float]:
    """Every triple of rows whose cut ``x`` violates, with its left-hand side.

    Only fractional columns can violate a cut (a row covered by a column at 1 is in no
    other). The left-hand side of ``R = {a, b, c}`` is ``w_ab + w_ac + w_bc - 2 w_abc``,
    ``w`` the weight of the fractional columns holding those rows; a violated triple has at
    least two pairs of positive weight, so triples are drawn from each row's neighbours in
    the graph of pairs that share a fractional column.
    """
    pair: dict[tuple[int, int], float] = {}
    triple: dict[tuple[int, int, int], float] = {}
    for j in np.flatnonzero((x > _FRACTIONAL) & (x < 1.0 - _FRACTIONAL)).tolist():
        rows = sorted(int(r) for r in groups[j])
        for ab in combinations(rows, 2):
            pair[ab] = pair.get(ab, 0.0) + float(x[j])
        for abc in combinations(rows, 3):
            triple[abc] = triple.get(abc, 0.0) + float(x[j])
    near: dict[int, list[int]] = {}
    for a, b in pair:
        near.setdefault(a, []).append(b)
        near.setdefault(b, []).append(a)
    out: dict[tuple[int, int, int], float] = {}
    for middle, others in near.items():
        for b, c in combinations(sorted(others), 2):
            a1, b1, c1 = sorted((middle, b, c))
            key = (a1, b1, c1)
            if key in out:
                continue
            lhs = (pair.get((a1, b1), 0.0) + pair.get((a1, c1), 0.0) + pair.get((b1, c1), 0.0)
                   - 2.0 * triple.get(key, 0.0))
            if lhs > 1.0 + _VIOLATION:
                out[key] = lhs
    return out
