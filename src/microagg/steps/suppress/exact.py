"""The exact mode of local suppression to k-anonymity: an integer program on the distinct key
patterns, solved by HiGHS (Huangfu & Hall 2018, Math. Prog. Comp. 10) within a time budget,
that proves the fewest cells or reports the best count found, its lower bound and the gap.

Pattern p (``c_p`` records) may have any subset S of its observed keys blanked: ``x[p,S]``
records (integer, 0..c_p) become pattern q = p with S missing, ``sum_S x[p,S] = c_p``. For
each result q, ``z[q]`` counts its records and a binary ``y[q]`` says it is used
(``z[q] <= U_q y[q]``). For every required subset T of keys with its k, the class of q on T
is ``sum z[q']`` over the q' matching q on T; the constraint is ``class >= k y[q]``. Under
``"any"`` a match is agreement on the keys both observe (with ``freqCalc``'s rule that
complete keys do not count all-missing keys), so the class of q is written as a sum over the
missing masks M present of an aggregate ``w[T, M, K, v]`` (records with mask M on T whose
projection on ``K = observed(q) - M`` is v): linear, not quadratic, in the patterns.
Objective: ``min sum |S| x[p,S]``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["exact_blanks"]


class _Rows:
    """Triplets of a sparse constraint matrix and the rows' bounds."""

    def __init__(self) -> None:
        self.r: list[int] = []
        self.c: list[int] = []
        self.v: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add(self, cols: list[int], vals: list[float], lower: float, upper: float) -> None:
        row = len(self.lower)
        self.r.extend([row] * len(cols))
        self.c.extend(cols)
        self.v.extend(vals)
        self.lower.append(lower)
        self.upper.append(upper)


def _choices(uniq: NDArray[np.int64]) -> tuple[list[tuple[int, tuple[int, ...]]],
                                                 dict[tuple[int, ...], int]]:
    """Every (pattern, blanked keys) and the index of each result pattern."""
    choices: list[tuple[int, tuple[int, ...]]] = []
    results: dict[tuple[int, ...], int] = {}
    for p, row in enumerate(uniq):
        observed = [j for j, v in enumerate(row) if v >= 0]
        for size in range(len(observed) + 1):
            for keys in combinations(observed, size):
                q = tuple(-1 if j in keys else int(v) for j, v in enumerate(row))
                results.setdefault(q, len(results))
                choices.append((p, keys))
    return choices, results


def _class_terms(results: dict[tuple[int, ...], int], subset: tuple[int, ...],
                 missing: str, first: int) -> tuple[dict[tuple[Any, ...], int],
                                                    list[tuple[int, list[int]]]]:
    """Aggregates (index from ``first``) and, per result q, the aggregates its class on
    ``subset`` sums (empty list: q is all missing on T, its class is the whole table)."""
    def key_of(q: tuple[int, ...], mask: frozenset[int], keys: tuple[int, ...]) -> Any:
        return (mask, keys, tuple(q[j] for j in keys))

    if missing == "category":
        groups: dict[Any, int] = {}
        terms = []
        for q, i in results.items():
            g = groups.setdefault(tuple(q[j] for j in subset), first + len(groups))
            terms.append((i, [g]))
        return {("all", g): idx for g, idx in groups.items()}, terms
    masks = {frozenset(j for j in subset if q[j] < 0) for q in results}
    wanted: dict[Any, int] = {}
    terms = []
    full = frozenset(subset)
    for q, i in results.items():
        mine = frozenset(j for j in subset if q[j] < 0)
        if mine == full:
            continue
        cols = []
        for mask in masks:
            if mask == full and not mine and len(subset) > 1:
                continue  # freqCalc: complete keys do not count all-missing keys
            keys = tuple(j for j in subset if j not in mine and j not in mask)
            cols.append(wanted.setdefault(key_of(q, mask, keys), first + len(wanted)))
        terms.append((i, cols))
    return wanted, terms


def exact_blanks(codes: NDArray[np.int64], requirements: list[tuple[tuple[int, ...], int]],
                 missing: str, time_limit: float,
                 start: NDArray[np.bool_] | None = None) -> tuple[NDArray[np.bool_],
                                                                   dict[str, Any]]:
    """The fewest cells to blank in ``codes`` (one stratum; ``-1`` missing) so that each
    ``(subset of columns, k)`` of ``requirements`` holds under ``missing``, and the
    certificate ``{"optimal", "cells", "lower_bound", "gap", "seconds", "status"}``.

    ``start``: a feasible mask (the heuristic's) given to HiGHS as its first incumbent and
    returned when HiGHS finds nothing better in time. Validation is assumed.
    """
    began = time.perf_counter()
    n, width = codes.shape
    uniq, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    choices, results = _choices(uniq)
    nx, nq = len(choices), len(results)
    rows = _Rows()
    cost = [float(len(keys)) for _, keys in choices]
    upper = [float(counts[p]) for p, _ in choices]
    by_pattern: defaultdict[int, list[int]] = defaultdict(list)
    into: defaultdict[int, list[int]] = defaultdict(list)
    for i, (p, keys) in enumerate(choices):
        by_pattern[p].append(i)
        row = uniq[p]
        into[results[tuple(-1 if j in keys else int(v) for j, v in enumerate(row))]].append(i)
    for p, cols in by_pattern.items():
        rows.add(cols, [1.0] * len(cols), float(counts[p]), float(counts[p]))
    z0, y0 = nx, nx + nq  # z[q] then y[q]
    cost += [0.0] * (2 * nq)
    upper += [float(n)] * nq + [1.0] * nq
    for q, cols in into.items():
        rows.add([*cols, z0 + q], [1.0] * len(cols) + [-1.0], 0.0, 0.0)
        rows.add([z0 + q, y0 + q], [1.0, -float(n)], -np.inf, 0.0)
    first = nx + 2 * nq
    first = _add_classes(rows, results, requirements, missing, first, (z0, y0),
                         (cost, upper), n)
    model = _solve(rows, cost, upper, first, nx, nq,
                   time_limit - (time.perf_counter() - began))
    info = model.getInfo()
    found = None
    if info.primal_solution_status == 2:  # feasible
        found = _mask_of(np.asarray(model.getSolution().col_value)[:nx], choices, inverse,
                         width)
    best = found if start is None or (found is not None and found.sum() <= start.sum()) \
        else start
    if best is None:
        raise RuntimeError("the exact mode found no solution in time and had no start")
    status = model.modelStatusToString(model.getModelStatus())
    bound = float(np.ceil(info.mip_dual_bound - 1e-6)) if np.isfinite(info.mip_dual_bound) \
        else 0.0
    cells = int(best.sum())
    bound = min(max(bound, 0.0), float(cells))
    return best, {"optimal": bool(bound >= cells), "cells": cells, "lower_bound": int(bound),
                  "gap": (cells - bound) / cells if cells else 0.0,
                  "seconds": round(time.perf_counter() - began, 3), "status": status,
                  "patterns": len(uniq), "variables": int(first),
                  "constraints": len(rows.lower)}


def _add_classes(rows: _Rows, results: dict[tuple[int, ...], int],
                 requirements: list[tuple[tuple[int, ...], int]], missing: str, first: int,
                 zy: tuple[int, int], columns: tuple[list[float], list[float]],
                 n: int) -> int:
    """The aggregates and the class rows of every requirement; the next free column."""
    z0, y0 = zy
    cost, upper = columns
    for subset, k in requirements:
        aggregates, terms = _class_terms(results, subset, missing, first)
        members: defaultdict[int, list[int]] = defaultdict(list)
        for pat, qi in results.items():
            for key in _contributions(pat, subset, missing, aggregates):
                members[key].append(qi)
        for idx in range(first, first + len(aggregates)):
            cols = [z0 + qi for qi in members.get(idx, [])]
            rows.add([*cols, idx], [1.0] * len(cols) + [-1.0], 0.0, 0.0)
        for qi, cols in terms:
            rows.add([*cols, y0 + qi], [1.0] * len(cols) + [-float(k)], 0.0, np.inf)
        cost += [0.0] * len(aggregates)
        upper += [float(n)] * len(aggregates)
        first += len(aggregates)
    return first


def _quiet_highs(highspy: Any) -> Any:
    """A ``highspy.Highs()`` whose banner (written to file descriptor 1 by the first one a
    process builds, before any option can be set) does not reach the standard output, where
    the CLI may be writing the published table."""
    import os
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w", encoding="utf-8") as sink:
            os.dup2(sink.fileno(), 1)
            return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _solve(rows: _Rows, cost: list[float], upper: list[float], ncol: int, nx: int, nq: int,
           time_limit: float) -> Any:
    """HiGHS on the model: x and y integer, z and the aggregates continuous."""
    import highspy
    from scipy import sparse

    matrix = sparse.csc_matrix((rows.v, (rows.r, rows.c)), shape=(len(rows.lower), ncol))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = ncol, len(rows.lower)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.asarray(cost), np.zeros(ncol), \
        np.asarray(upper)
    lp.row_lower_, lp.row_upper_ = np.asarray(rows.lower), np.asarray(rows.upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = \
        matrix.indptr, matrix.indices, matrix.data
    lp.integrality_ = [highspy.HighsVarType.kInteger] * nx + \
        [highspy.HighsVarType.kContinuous] * nq + [highspy.HighsVarType.kInteger] * nq + \
        [highspy.HighsVarType.kContinuous] * (ncol - nx - 2 * nq)
    model = _quiet_highs(highspy)
    model.setOptionValue("output_flag", False)
    model.setOptionValue("time_limit", max(float(time_limit), 1.0))
    model.setOptionValue("mip_rel_gap", 0.0)
    model.passModel(lp)
    model.run()
    return model


def _contributions(q: tuple[int, ...], subset: tuple[int, ...], missing: str,
                   aggregates: dict[Any, int]) -> list[int]:
    """The aggregates that count the records of result q."""
    if missing == "category":
        idx = aggregates.get(("all", tuple(q[j] for j in subset)))
        return [] if idx is None else [idx]
    mask = frozenset(j for j in subset if q[j] < 0)
    observed = [j for j in subset if q[j] >= 0]
    out = []
    for size in range(len(observed) + 1):
        for keys in combinations(observed, size):
            idx = aggregates.get((mask, keys, tuple(q[j] for j in keys)))
            if idx is not None:
                out.append(idx)
    return out


def _mask_of(x: NDArray[np.float64], choices: list[tuple[int, tuple[int, ...]]],
             inverse: NDArray[np.intp], width: int) -> NDArray[np.bool_]:
    """The cell mask of a solution: each pattern's records take its choices in row order."""
    blank = np.zeros((inverse.size, width), dtype=bool)
    rows_of = [np.flatnonzero(inverse == p) for p in range(int(inverse.max()) + 1)]
    taken = [0] * len(rows_of)
    for i, (p, keys) in enumerate(choices):
        m = round(x[i])
        if m and keys:
            rows = rows_of[p][taken[p]:taken[p] + m]
            blank[np.ix_(rows, np.asarray(keys, dtype=np.intp))] = True
        taken[p] += m
    return blank
