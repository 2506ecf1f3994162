"""mdav-scale's kernels (issue 21): the parallel k-d tree, the leaf lists and the sweep's
slabs give what the plain definitions give, whatever the number of threads."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from microagg.partition._neighbour_lists import (
    MEDIAN_SAMPLE,
    SAMPLED_SPLIT_ROWS,
    WIDTH_SAMPLE,
    _median,
    first_lists,
    kd_leaves,
    near_in_leaves,
    refine_lists,
)
from microagg.partition._scale_kernels import group_state, near_groups, sweep
from microagg.partition.scale import (
    DEPTH,
    LEAF_SIZE,
    NEIGHBOURS,
    SLAB_GROUPS,
    SWEEP_PARTS,
    _improve,
    _parts,
    _Search,
    _start,
    mdav_scale,
)


def _reference_leaves(P: np.ndarray, leaf_size: int) -> tuple[list[int], list[int]]:
    """Recursive median splits on the widest column, written plainly: the left half takes
    the rows below the median and the first ties at it, both halves keep the rows' order;
    the widest column of more than 2 * WIDTH_SAMPLE rows is that of WIDTH_SAMPLE of them,
    evenly spread."""
    def split(rows: list[int]) -> tuple[list[int], list[int]]:
        m = len(rows)
        seen = ([rows[t * m // WIDTH_SAMPLE] for t in range(WIDTH_SAMPLE)]
                if m > 2 * WIDTH_SAMPLE else rows)
        axis = int(np.argmax(np.ptp(P[seen], axis=0)))
        keys = P[rows, axis]
        half = len(rows) // 2
        median = np.partition(keys.copy(), half - 1)[half - 1]
        ties = half - int((keys < median).sum())
        left, right = [], []
        for row, key in zip(rows, keys, strict=True):
            if key < median or (key == median and ties > 0):
                ties -= int(key == median)
                left.append(row)
            else:
                right.append(row)
        return left, right

    def leaves(rows: list[int]) -> list[list[int]]:
        if len(rows) <= leaf_size:
            return [rows]
        left, right = split(rows)
        return leaves(left) + leaves(right)

    found = leaves(list(range(P.shape[0])))
    order = [row for leaf in found for row in leaf]
    starts = np.cumsum([0] + [len(leaf) for leaf in found]).tolist()
    return order, starts


@pytest.mark.parametrize(("n", "leaf_size"), [(1, 4), (7, 8), (9, 4), (333, 5), (2_000, 64),
                                              (6_000, 700)])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_kd_leaves_are_the_plain_recursive_splits(n, leaf_size, layout, rng):
    # ties too: a column of few values
    P = np.column_stack([rng.standard_normal((n, 3)), rng.integers(0, 3, n) * 10.0])
    order, starts = kd_leaves(np.asarray(P, order=layout), leaf_size)
    want_order, want_starts = _reference_leaves(P, leaf_size)
    assert order.tolist() == want_order
    assert starts.tolist() == want_starts


@pytest.mark.parametrize(("n", "leaf_size"), [(600, 50), (40, 6)])  # 6: leaves shorter than lists
def test_first_lists_are_the_nearest_within_contiguous_leaves(n, leaf_size, rng):
    P = rng.standard_normal((n, 4))
    order, starts = kd_leaves(P, leaf_size)
    X = np.ascontiguousarray(P[order])
    width = 6
    near_d = np.zeros((n, width))  # written over, whatever was there
    near_i = np.zeros((n, width), dtype=np.int64)
    first_lists(X, starts, near_d, near_i)
    for lo, hi in itertools.pairwise(starts.tolist()):
        for row in range(lo, hi):
            others = np.array([r for r in range(lo, hi) if r != row])
            d = ((X[others] - X[row]) ** 2).sum(axis=1)
            nearest = others[np.argsort(d, kind="stable")[:width]].tolist()
            assert near_i[row].tolist() == nearest + [-1] * (width - len(nearest))
            np.testing.assert_allclose(near_d[row, :len(nearest)], np.sort(d)[:width],
                                       rtol=1e-9, atol=1e-12)
            assert np.isinf(near_d[row, len(nearest):]).all()


@pytest.mark.parametrize("kind", ["normal", "ties", "sorted", "unlucky"])
def test_the_bracketed_median_is_exact(kind, rng):
    m = 3 * SAMPLED_SPLIT_ROWS + 7
    keys = {"normal": rng.standard_normal(m), "ties": rng.integers(0, 4, m) * 1.0,
            "sorted": np.sort(rng.standard_normal(m)),
            "unlucky": rng.standard_normal(m)}[kind]
    if kind == "unlucky":  # the sampled keys are the largest: the bracket misses
        keys[[t * m // MEDIAN_SAMPLE for t in range(MEDIAN_SAMPLE)]] = 100.0
    for r in (0, m // 4, m // 2 - 1, m - 1):
        assert _median(keys.copy(), r) == np.partition(keys, r)[r]


def test_leaf_lists_are_the_nearest_within_the_leaves(rng):
    X = rng.standard_normal((600, 4))
    width = 6
    near_d = np.full((600, width), np.inf)
    near_i = np.full((600, width), -1, dtype=np.int64)
    partitions = [kd_leaves(X, 50), kd_leaves(np.asfortranarray(X @ rng.standard_normal((4, 4))),
                                                80)]
    together = [set() for _ in range(600)]  # the rows that shared a leaf with each row
    for order, starts in partitions:
        near_in_leaves(X, order, starts, near_d, near_i)
        for lo, hi in itertools.pairwise(starts):
            leaf = order[lo:hi].tolist()
            for row in leaf:
                together[row].update(leaf)
    for row in range(600):
        others = np.array(sorted(together[row] - {row}))
        d = ((X[others] - X[row]) ** 2).sum(axis=1)
        nearest = others[np.argsort(d, kind="stable")[:width]]
        assert set(near_i[row].tolist()) == set(nearest.tolist())
        np.testing.assert_allclose(near_d[row], np.sort(d)[:width], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtypes", [(np.float64, np.int64), (np.float32, np.int32)])
def test_refinement_offers_the_lists_of_the_first_sources(dtypes, rng):
    X = rng.standard_normal((400, 3))
    width, sources, depth = 6, 3, 5
    near_d = np.full((400, width), np.inf, dtype=dtypes[0])
    near_i = np.full((400, width), -1, dtype=dtypes[1])
    for P in (X, np.asfortranarray(X @ rng.standard_normal((3, 3)))):  # two small trees
        near_in_leaves(X, *kd_leaves(P, 12), near_d, near_i)
    new_d, new_i = refine_lists(X, near_d, near_i, sources, depth)
    for row in range(400):
        offered = {int(c2) for c in near_i[row, :sources] if c >= 0
                   for c2 in near_i[c, :depth] if c2 >= 0 and c2 != row}
        candidates = np.array(sorted(offered | set(near_i[row][near_i[row] >= 0].tolist())))
        d = ((X[candidates] - X[row]) ** 2).sum(axis=1)
        nearest = candidates[np.argsort(d, kind="stable")[:width]].tolist()
        assert new_i[row].tolist() == nearest + [-1] * (width - len(nearest))  # -1: short
        listed = new_d[row][new_i[row] >= 0]
        np.testing.assert_allclose(listed, np.sort(d)[:width], rtol=1e-6)
    assert (near_i == refine_lists(X, near_d, near_i, 0, depth)[1]).all()  # no source: as is
    assert (new_i != near_i).any()  # the small leaves' lists did improve


def test_sweep_slabs_are_equal_and_ordered(rng):
    cent = rng.standard_normal((1_001, 5))
    part, by_part, starts = _parts(cent, np.random.default_rng(0), SWEEP_PARTS)
    sizes = np.diff(starts)
    assert starts[0] == 0 and starts[-1] == 1_001 and sizes.max() - sizes.min() <= 1
    for q in range(SWEEP_PARTS):
        members = by_part[starts[q]:starts[q + 1]]
        assert (part[members] == q).all() and (np.diff(members) > 0).all()


def test_same_labels_on_one_thread_as_on_all(rng):
    X = rng.standard_normal((6_000, 6))
    here = mdav_scale(X, 5, random_state=3)
    script = ("import json, sys, numpy as np; from microagg.partition.scale import mdav_scale; "
              "X = np.array(json.load(sys.stdin)); "
              "print(json.dumps(mdav_scale(X, 5, random_state=3).tolist()))")
    one = subprocess.run([sys.executable, "-c", script], input=json.dumps(X.tolist()),
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    assert json.loads(one.stdout) == here.tolist()


def test_the_search_with_slabs_ends_at_a_plain_local_optimum(rng):
    # 1,200 groups: the sweeps are cut into slabs first; with tol = 0 the search must end
    # where one more sweep without the cut, over every group, finds no change
    X = rng.standard_normal((6_000, 4))
    order, starts = kd_leaves(X, LEAF_SIZE)
    Xs = np.ascontiguousarray(X[order])
    labels, near_rec = _start(Xs, 5, starts, np.random.default_rng(0))
    labels = _improve(Xs, labels, near_rec, 5, np.random.default_rng(1),
                      _Search(NEIGHBOURS, 1_000, 0.0, np.inf))
    n_groups = int(labels.max()) + 1
    assert n_groups >= SLAB_GROUPS
    state = group_state(Xs, labels, n_groups, 9)
    everyone = np.ones(n_groups, dtype=np.bool_)
    near = near_groups(state[2], labels, state[3], state[1], near_rec, DEPTH, NEIGHBOURS,
                       everyone)
    spread = float(((Xs - Xs.mean(axis=0)) ** 2).sum()) / Xs.shape[0]
    gain, changes = sweep(Xs, labels, near, 5, 9, 1e-9 * spread, state, everyone,
                          np.zeros(n_groups, dtype=np.bool_), 10, *_parts(state[2], rng, 1))
    assert changes == 0 and gain == 0.0


def test_a_sweep_keeps_its_state_exact(rng):
    # the sums, sizes, centroids, members, slots and each record's distance to its own
    # centroid, updated move by move, equal the state rebuilt from the labels
    X = rng.standard_normal((3_000, 4))
    order, starts = kd_leaves(X, LEAF_SIZE)
    Xs = np.ascontiguousarray(X[order])
    labels, near_rec = _start(Xs, 4, starts, np.random.default_rng(0))
    n_groups = int(labels.max()) + 1
    state = group_state(Xs, labels, n_groups, 7)
    everyone = np.ones(n_groups, dtype=np.bool_)
    near = near_groups(state[2], labels, state[3], state[1], near_rec, DEPTH, NEIGHBOURS,
                       everyone)
    _, changes = sweep(Xs, labels, near, 4, 7, 0.0, state, everyone,
                       np.zeros(n_groups, dtype=np.bool_), 8, *_parts(state[2], rng, 1))
    assert changes > 0
    fresh = group_state(Xs, labels, n_groups, 7)
    for kept, rebuilt in zip(state[:3] + state[5:], fresh[:3] + fresh[5:], strict=True):
        np.testing.assert_allclose(kept, rebuilt, rtol=1e-9, atol=1e-12)
    members, slot = state[3], state[4]
    for g in range(n_groups):
        assert sorted(members[g, :state[1][g]].tolist()) == np.flatnonzero(labels == g).tolist()
    assert (members[labels, slot] == np.arange(3_000)).all()


def test_blas_runs_on_one_thread_inside_large_runs_only():
    from threadpoolctl import threadpool_info

    from microagg.partition.scale import ONE_BLAS_THREAD_ROWS, one_blas_thread

    def blas_threads() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info()
                if pool["user_api"] == "blas"]

    before = blas_threads()
    with one_blas_thread(ONE_BLAS_THREAD_ROWS):
        assert blas_threads() and set(blas_threads()) == {1}
    assert blas_threads() == before
    with one_blas_thread(ONE_BLAS_THREAD_ROWS - 1):
        assert blas_threads() == before
