"""numba kernels of :mod:`microagg.metrics.suda`: uniqueness on every subset of the key
variables and the minimal sample uniques (MSUs) of each record. Validation is assumed.

The search walks the lattice of key-variable subsets depth first. Each subset refines the
groups of its parent by one more variable (records pre-sorted by that variable's codes,
O(n) per subset), and one bit per (record, subset) remembers "unique on this subset". A
record has an MSU on subset S when it is unique on S and on none of the subsets S minus one
variable (uniqueness is monotone, so those are the only subsets to check). Time
O(n * sum_{s <= m} C(K, s)); memory O(n * (m + 2^K / 64)) for K key variables and maximum
size m.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._runtime.jit import njit

__all__ = ["find_msus", "full_key_counts", "lattice_msus", "subset_bits"]


@njit(cache=True)
def _refine(gid, n_groups, code, order, new_gid, last, current):
    """Split groups ``gid`` (0..n_groups-1) by ``code``; records visited in ``order``
    (sorted by ``code``), so equal (group, code) pairs are met in one run per group."""
    for g in range(n_groups):
        last[g] = -1
    following = 0
    for i in range(order.shape[0]):
        r = order[i]
        g = gid[r]
        if last[g] != code[r]:
            last[g] = code[r]
            current[g] = following
            following += 1
        new_gid[r] = current[g]
    return following


@njit(cache=True)
def subset_bits(codes, orders, single_counts, usable, max_depth):
    """Unique-on-subset bits and redundant items.

    ``codes`` (K, n) int64, missing values already coded as their own category;
    ``orders`` (K, n) the records sorted by each variable's code; ``single_counts`` (K, n)
    the frequency of each record's value of each variable; ``usable`` (n,) bit ``v`` set
    when the record's item of variable ``v`` may form MSUs. Returns ``bits`` (n, words)
    uint64, bit ``mask`` set when the record is unique on the variables in ``mask``
    (subsets up to ``max_depth`` variables), and ``redundant`` (n,) int64: bit ``v`` set
    when the record's item of variable ``v`` covers exactly the same >= 2 records as its
    usable item of an earlier variable (sdcMicro's "correlated" items, which form no MSUs
    of their own).
    """
    n_vars, n = codes.shape
    words = ((1 << n_vars) + 63) // 64
    bits = np.zeros((n, words), dtype=np.uint64)
    redundant = np.zeros(n, dtype=np.int64)
    gids = np.zeros((max_depth + 1, n), dtype=np.int64)
    n_groups = np.ones(max_depth + 1, dtype=np.int64)
    masks = np.zeros(max_depth + 1, dtype=np.int64)
    next_var = np.zeros(max_depth + 1, dtype=np.int64)
    first_var = np.zeros(max_depth + 1, dtype=np.int64)
    last = np.empty(n, dtype=np.int64)
    current = np.empty(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    depth = 0
    while depth >= 0:
        v = next_var[depth]
        if v >= n_vars or depth >= max_depth:
            depth -= 1
            continue
        next_var[depth] = v + 1
        child = depth + 1
        n_groups[child] = _refine(gids[depth], n_groups[depth], codes[v], orders[v],
                                  gids[child], last, current)
        mask = masks[depth] | (1 << v)
        masks[child] = mask
        next_var[child] = v + 1
        first_var[child] = v if depth == 0 else first_var[depth]
        counts[:n_groups[child]] = 0
        for r in range(n):
            counts[gids[child, r]] += 1
        word, bit = mask >> 6, np.uint64(1) << np.uint64(mask & 63)
        u = first_var[child]
        for r in range(n):
            c = counts[gids[child, r]]
            if c == 1:
                bits[r, word] |= bit
            if (child == 2 and c >= 2 and c == single_counts[v, r]
                    and c == single_counts[u, r] and (usable[r] >> u) & 1):
                redundant[r] |= 1 << v
        depth = child
    return bits, redundant


@njit(cache=True)
def _has_bit(bits, r, mask):
    return (bits[r, mask >> 6] >> np.uint64(mask & 63)) & np.uint64(1)


@njit(cache=True)
def find_msus(bits, usable, n_vars, max_size, weights):  # noqa: C901
    """MSUs of every record from the unique-on-subset ``bits``.

    ``usable`` (n,) int64: bit ``v`` set when the record's item of variable ``v`` may be
    part of an MSU; ``weights`` (max_size + 1,) float64, the score of an MSU of each size.
    Returns ``msu_counts`` (n, max_size) int64 (column ``s - 1``: MSUs of size ``s``),
    ``scores`` (n,) float64 and ``raw_contributions`` (n, K) float64 (the summed score of
    the MSUs that contain each variable).
    """
    n = bits.shape[0]
    msu_counts = np.zeros((n, max_size), dtype=np.int64)
    scores = np.zeros(n)
    raw = np.zeros((n, n_vars))
    for r in range(n):
        own = usable[r]
        sub = own
        while sub != 0:
            size = 0
            for v in range(n_vars):
                size += (sub >> v) & 1
            if size <= max_size and _has_bit(bits, r, sub):
                minimal = True
                for v in range(n_vars):
                    if (sub >> v) & 1:
                        smaller = sub ^ (1 << v)
                        if smaller != 0 and _has_bit(bits, r, smaller):
                            minimal = False
                            break
                if minimal:
                    msu_counts[r, size - 1] += 1
                    scores[r] += weights[size]
                    for v in range(n_vars):
                        if (sub >> v) & 1:
                            raw[r, v] += weights[size]
            sub = (sub - 1) & own
    return msu_counts, scores, raw


@njit(cache=True)
def full_key_counts(codes, orders):
    """Size of each record's group of identical records on all key variables."""
    n_vars, n = codes.shape
    gid = np.zeros(n, dtype=np.int64)
    new_gid = np.empty(n, dtype=np.int64)
    last = np.empty(n, dtype=np.int64)
    current = np.empty(n, dtype=np.int64)
    n_groups = 1
    for v in range(n_vars):
        n_groups = _refine(gid, n_groups, codes[v], orders[v], new_gid, last, current)
        gid, new_gid = new_gid, gid
    counts = np.zeros(n_groups, dtype=np.int64)
    for r in range(n):
        counts[gid[r]] += 1
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = counts[gid[r]]
    return out


def lattice_msus(codes: NDArray[np.int64], usable: NDArray[np.int64], max_size: int,
                 weights: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64],
                                                        NDArray[np.float64], NDArray[np.int64]]:
    """Run the kernels: MSU counts, scores, raw contributions and full-key group sizes.

    ``usable`` loses the redundant items first (see :func:`subset_bits`)."""
    n_vars, n = codes.shape
    orders = np.empty((n_vars, n), dtype=np.int64)
    single_counts = np.empty((n_vars, n), dtype=np.int64)
    for v in range(n_vars):
        orders[v] = np.argsort(codes[v], kind="stable")
        single_counts[v] = np.bincount(codes[v])[codes[v]]
    bits, redundant = subset_bits(codes, orders, single_counts, usable,
                                  max(max_size, min(2, n_vars)))
    usable = usable & ~redundant
    msu_counts, scores, raw = find_msus(bits, usable, n_vars, max_size, weights)
    return msu_counts, scores, raw, full_key_counts(codes, orders)
