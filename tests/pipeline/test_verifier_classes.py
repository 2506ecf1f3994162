"""The streaming verifier's class count (GroupVerifier.smallest_class) against a direct
count, and its key-collision path (issue 21: np.unique over 20 million groups took ~7 GB)."""

import numpy as np
import pytest

from microagg._pipeline import verify
from microagg._pipeline.verify import GroupVerifier, smallest_class_of


def _direct(rows, counts):
    """Classes of byte-identical rows, counted one by one."""
    totals = {}
    for row, c in zip(rows, counts, strict=True):
        totals[row.tobytes()] = totals.get(row.tobytes(), 0) + c
    return min(totals.values())


@pytest.mark.parametrize("seed", range(5))
def test_classes_match_a_direct_count(seed):
    rng = np.random.default_rng(seed)
    distinct = rng.normal(size=(40, 3))
    distinct[rng.random(40) < 0.2, 1] = np.nan  # missing values publish as NaN
    rows = distinct[rng.integers(0, 40, size=500)]  # many groups publish the same row
    counts = rng.integers(1, 9, size=500)
    assert smallest_class_of(rows, np.arange(500), counts) == _direct(rows, counts)


def test_a_key_collision_never_merges_two_classes(monkeypatch):
    rows = np.array([[1.0, 2.0], [1.0, 2.0], [5.0, 6.0]])
    monkeypatch.setattr(verify, "_row_keys", lambda r, i: np.zeros(i.size, dtype=np.uint64))
    assert smallest_class_of(rows, np.arange(3), np.array([3, 3, 4])) == 4


def test_the_verifier_counts_classes_over_groups():
    check = GroupVerifier(k=2, n_groups=5, n_features=2)
    values = np.array([[1.0, 1.0]] * 3 + [[2.0, 0.0]] * 2 + [[1.0, 1.0]] * 2 + [[0.0, 2.0]] * 4)
    check.add(np.array([0, 0, 0, 1, 1, 3, 3, 4, 4, 4, 4]), values)  # group 2 publishes none
    assert check.finish(n_rows=11) == 2
    assert check.smallest_class() == 2  # groups 0 and 3 share (1, 1): 5; (2, 0): 2; (0, 2): 4
