"""Hand-worked cases for each method of the MDAV family (small enough to check on paper)."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.partition import cbfs, md, mdav, mdav1, vmdav

# Ten points on a line: two tight clusters and a straggler.
LINE = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0], [12.0], [13.0], [30.0], [31.0]])


def groups(labels: np.ndarray) -> list[list[int]]:
    """The partition as sorted lists of row numbers, independent of label numbering."""
    return sorted(sorted(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels))


def test_mdav_line():
    # n=10, k=3: 10 >= 9 -> centroid 11.3, r = row 9 (31), group {9, 8, 7};
    # s = farthest from 31 = row 0, group {0, 1, 2}; 4 left (< 2k) -> last group.
    assert groups(mdav(LINE, 3)) == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]


def test_mdav1_line():
    # 2k threshold: 10 >= 6 -> groups {9, 8, 7} and {0, 1, 2}; 4 left (k..2k-1): centroid of
    # {3, 10, 11, 12} is 9, farthest is row 3 (3) -> group {3, 4, 5}; row 6 (12) joins the
    # nearest group centroid: {3, 10, 11} has mean 8, {13, 30, 31} has 24.67 -> {3, 4, 5}.
    assert groups(mdav1(LINE, 3)) == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]


def test_md_line():
    # farthest pair (0, 31): rows 0 and 9. Groups {0, 1, 2} then {9, 8, 7}. Four remain
    # (3, 10, 11, 12): >= 2k? no (4 < 6); >= k -> one group.
    assert groups(md(LINE, 3)) == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9]]


def test_md_uses_the_farthest_pair_not_the_centroid():
    # Centroid-based MDAV starts from row 4 (farthest from the centroid); MD from the pair
    # (row 0, row 3), which are farthest apart.
    X = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [3.0, 0.0], [2.9, 0.0], [1.5, 2.6],
                  [1.5, 2.5], [2.8, 0.0]])
    assert groups(md(X, 2))[0] == [0, 1]
    labels = md(X, 2)
    assert labels[3] == labels[4]


def test_cbfs_line():
    # one group per step, centroid recomputed: centroid 11.3 -> row 9 (31): {9, 8, 7};
    # remaining centroid 39/7 = 5.57 -> row 6 (12) is farthest: {6, 5, 4}; remaining
    # {0, 1, 2, 3}, centroid 1.5, rows 0 and 3 tie -> row 0: {0, 1, 2}; row 3 is left (< k)
    # and joins the nearest group centroid (1 vs 11 vs 24.67).
    assert groups(cbfs(LINE, 3)) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    # MDAV forms two groups per step from the same centroid, and differs here
    assert groups(mdav(LINE, 3)) != groups(cbfs(LINE, 3))


def test_vmdav_gamma_zero_is_fixed_size():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 3))
    counts = np.bincount(vmdav(X, 4, gamma=0.0))
    assert (counts[:-1] == 4).all()
    assert 4 <= counts[-1] <= 7


def test_vmdav_extends_groups_over_tight_clusters():
    # Four tight clusters of 4 points far apart, k=3: MDAV's fixed groups of 3 must cut
    # clusters; V-MDAV (gamma = 0.2) takes the 4th point of each cluster into its group,
    # since d_in = 0.1 < 0.2 * d_out (d_out ~ 100: its nearest other unassigned record is in
    # another cluster), then stops at the next cluster (d_in ~ 100 > 0.2 * 0.1).
    centres = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0], [100.0, 100.0]])
    offsets = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1]])
    X = (centres[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    expected = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    assert groups(vmdav(X, 3, gamma=0.2)) == expected
    assert groups(mdav(X, 3)) != expected


def test_vmdav_bad_gamma():
    with pytest.raises(ValueError, match=r"'gamma' parameter of vmdav must be a float >= 0"):
        vmdav(LINE, 3, gamma=-1.0)
    with pytest.raises(TypeError, match=r"'gamma' parameter of vmdav"):
        vmdav(LINE, 3, gamma="big")


def test_kward_keeps_separated_clusters_whole():
    from microagg.partition import kward

    # three tight clusters of 3, 3 and 4 points far apart, k = 3
    X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1],
                  [50.0, 50.0], [50.1, 50.0], [50.0, 50.1],
                  [100.0, 0.0], [100.1, 0.0], [100.0, 0.1], [100.1, 0.1]])
    assert groups(kward(X, 3)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]


def test_kward_splits_large_clusters_recursively():
    from microagg.partition import kward

    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 2))
    counts = np.bincount(kward(X, 3))
    assert counts.min() >= 3
    assert counts.max() <= 5  # groups of 2k or more are always split again
