"""k-anonymity measured on published data."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.exceptions import PrivacyViolationError
from microagg.models import check_k_anonymity, k_anonymity


def test_k_anonymity_counts_identical_rows():
    data = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [3.0, 4.0]])
    assert k_anonymity(data) == 2
    assert k_anonymity(data[:3]) == 3
    assert k_anonymity(np.zeros((0, 2))) == 0


def test_groups_with_equal_representatives_merge():
    # two groups whose centroids coincide count as one equivalence class
    data = np.array([[5.0]] * 4 + [[7.0]] * 3)
    assert k_anonymity(data) == 3


def test_negative_zero_is_the_same_value():
    assert k_anonymity(np.array([[0.0], [-0.0]])) == 2


def test_check_raises_on_shortfall():
    with pytest.raises(PrivacyViolationError, match=r"only 1-anonymous, below the required k=2"):
        check_k_anonymity(np.array([[1.0], [2.0], [2.0]]), 2)
    assert check_k_anonymity(np.array([[2.0], [2.0]]), 2) == 2
