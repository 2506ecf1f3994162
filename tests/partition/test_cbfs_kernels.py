"""mdav-scale's start (issue 21): CBFS on neighbour lists, and the cut of its seed share."""

from __future__ import annotations

import numpy as np

from microagg.partition._cbfs_kernels import CUT_SAMPLE, SEED_SHARE, _share_cut, greedy_groups


def test_the_share_cut_keeps_about_a_share_of_the_candidates(rng):
    d = -rng.random(50_000)  # minus squared distances: the farthest come first
    cut = _share_cut(d)
    kept = int((d <= cut).sum())
    assert abs(kept - d.size / SEED_SHARE) <= 0.2 * d.size / SEED_SHARE
    sample = d[np.arange(CUT_SAMPLE) * d.size // CUT_SAMPLE]
    assert cut == np.sort(sample)[CUT_SAMPLE // SEED_SHARE]  # evenly spread, deterministic
    ties = np.repeat(-np.arange(10.0), 1_000)  # ties at the cut are all kept
    assert (ties <= _share_cut(ties)).sum() % 1_000 == 0


def test_cbfs_on_exact_lists_groups_the_farthest_with_its_nearest(rng):
    X = rng.standard_normal((4_000, 3))  # over SEED_SORT_ALL seeds: the share is cut
    k, width = 4, 12
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d2, np.inf)
    near_i = np.argsort(d2, axis=1, kind="stable")[:, :width]
    near_d = np.take_along_axis(d2, near_i, axis=1)
    labels, g = greedy_groups(X, near_i, near_d, k)
    sizes = np.bincount(labels[labels >= 0], minlength=g)
    assert g > 0 and (sizes == k).all()  # every group: a seed and its k - 1 nearest
    assert (labels < 0).sum() < 0.05 * X.shape[0]  # the few whose lists ran dry
    first = np.flatnonzero(labels == 0)  # the first seed is the farthest from the centroid
    far = int(np.argmax(((X - X.mean(axis=0)) ** 2).sum(axis=1)))
    assert far in first
    others = first[first != far]
    assert set(others.tolist()) == set(near_i[far, :k - 1].tolist())
