"""Spherical MDAV and the spherical centroids (issue 22, part 2): group sizes, a worked
example, an independent dense implementation, unit norms, no densification, determinism."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from microagg.documents import spherical_centroids, spherical_mdav

# Two topics of three unit vectors each (worked by hand below).
A = [[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0], [0.8, 0.6, 0.0, 0.0]]
B = [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.6, 0.8], [0.0, 0.0, 0.8, 0.6]]


def _unit_rows(n: int, n_features: int, density: float, seed: int) -> sp.csr_matrix:
    X = sp.random(n, n_features, density=density, random_state=seed, format="csr")
    X.data += 0.05  # no stored zeros
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X
    return sp.csr_matrix(X)


def _dense_reference(X: np.ndarray, k: int) -> np.ndarray:
    """Spherical MDAV written plainly on a dense array (the same rules, ties to the lowest
    index): an independent check of the sparse implementation."""
    n = X.shape[0]
    labels = np.full(n, -1)
    left = list(range(n))
    group = 0

    def take(r: int) -> None:
        nonlocal group, left
        sims = {i: float(X[i] @ X[r]) for i in left if i != r}
        order = sorted(sims, key=lambda i: (-sims[i], i))[: k - 1]
        for i in [r, *order]:
            labels[i] = group
        left = [i for i in left if labels[i] < 0]
        group += 1

    def farthest(direction: np.ndarray) -> int:
        return min(left, key=lambda i: (float(X[i] @ direction), i))

    while len(left) >= 3 * k:
        r = farthest(X[left].sum(axis=0))
        take(r)
        take(farthest(X[r]))
    if len(left) >= 2 * k:
        take(farthest(X[left].sum(axis=0)))
    labels[left] = group
    return labels


def test_worked_example_groups_are_the_topics_and_centroids_the_normalized_means() -> None:
    X = sp.csr_matrix(np.array(A + B))
    labels = spherical_mdav(X, 3)
    # Mean direction of all six: (2.4, 1.4, 2.4, 1.4). Dot products: rows 0 and 3 give 2.4,
    # rows 1 and 4 give 0.6 * 2.4 + 0.8 * 1.4 = 2.56, rows 2 and 5 give 2.76: rows 0 and 3
    # are the least similar, the tie goes to row 0; its two most similar are rows 2 (0.8)
    # and 1 (0.6). The three left (< 2k) form the last group.
    assert labels.tolist() == [0, 0, 0, 1, 1, 1]
    C = spherical_centroids(X, labels).toarray()
    # each topic sums to (2.4, 1.4) on its two terms: norm sqrt(2.4^2 + 1.4^2) = sqrt(7.72)
    np.testing.assert_allclose(C[0], np.array([2.4, 1.4, 0, 0]) / np.sqrt(7.72), atol=1e-15)
    np.testing.assert_allclose(C[1], np.array([0, 0, 2.4, 1.4]) / np.sqrt(7.72), atol=1e-15)


@pytest.mark.parametrize("k", [2, 3, 5, 7])
@pytest.mark.parametrize("n", [14, 61, 200])
def test_groups_hold_k_and_one_at_most_2k_minus_1(n: int, k: int) -> None:
    labels = spherical_mdav(_unit_rows(n, 40, 0.1, seed=n + k), k)
    sizes = np.bincount(labels)
    assert labels.shape == (n,) and sizes.min() >= k and sizes.max() < 2 * k
    assert (sizes != k).sum() <= 1 and sizes.sum() == n


@pytest.mark.parametrize("seed", range(4))
def test_matches_an_independent_dense_implementation(seed: int) -> None:
    X = _unit_rows(57, 12, 0.25, seed)
    # 57 rows, k = 4: the sparse code compacts its matrix on the way (below half)
    np.testing.assert_array_equal(spherical_mdav(X, 4), _dense_reference(X.toarray(), 4))


def test_ties_and_duplicates_are_broken_by_row_index() -> None:
    X = sp.csr_matrix(np.tile([[1.0, 0.0]], (9, 1)))  # nine identical vectors
    assert spherical_mdav(X, 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_centroids_have_unit_norm() -> None:
    X = _unit_rows(500, 300, 0.02, seed=3)
    C = spherical_centroids(X, spherical_mdav(X, 5))
    norms = np.sqrt(np.asarray(C.multiply(C).sum(axis=1)).ravel())
    assert sp.isspmatrix_csr(C)
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=1e-12)


def test_deterministic_and_random_state_unused() -> None:
    X = _unit_rows(300, 80, 0.05, seed=9)
    first = spherical_mdav(X, 4, random_state=1)
    np.testing.assert_array_equal(first, spherical_mdav(X, 4, random_state=2))
    np.testing.assert_array_equal(first, spherical_mdav(X.toarray(), 4))


def test_never_densifies(monkeypatch: pytest.MonkeyPatch) -> None:
    densified: list[tuple[int, ...]] = []

    def spy(original: Any) -> Any:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            densified.append(self.shape)
            return original(self, *args, **kwargs)
        return wrapper

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array):
        monkeypatch.setattr(cls, "toarray", spy(cls.toarray))
        monkeypatch.setattr(cls, "todense", spy(cls.todense))
    X = _unit_rows(400, 1000, 0.01, seed=2)
    spherical_centroids(X, spherical_mdav(X, 5))
    assert densified == []
    X[:2].toarray()  # the spy is live
    assert densified == [(2, 1000)]


def test_a_vocabulary_too_large_to_densify_runs_in_little_memory() -> None:
    # 2,000 documents x 4,000,000 terms: 64 GB dense; 20 terms per document stored
    n, terms, per_row = 2000, 4_000_000, 20
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((np.full(n * per_row, 1 / np.sqrt(per_row)),
                       rng.integers(0, terms, n * per_row), np.arange(0, n * per_row + 1,
                                                                       per_row)),
                      shape=(n, terms))
    tracemalloc.start()
    labels = spherical_mdav(X, 10)
    spherical_centroids(X, labels)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.bincount(labels).min() >= 10
    assert peak < 400e6  # a few vectors of 4M floats (32 MB each), never n x terms


def test_bad_input_names_the_parameter() -> None:
    X = _unit_rows(4, 5, 0.5, seed=0)
    with pytest.raises(ValueError, match="n_samples=4 should be >= k=5"):
        spherical_mdav(X, 5)
    with pytest.raises(ValueError, match="'k' parameter of spherical_mdav must be an int >= 2"):
        spherical_mdav(X, 1)
    with pytest.raises(TypeError, match="'X' parameter of spherical_mdav must be a 2-D"):
        spherical_mdav(np.ones(5), 2)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="non-finite values"):
        spherical_mdav(bad, 2)
