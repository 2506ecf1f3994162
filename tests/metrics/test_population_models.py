"""Population uniqueness models (Pitman, Zayatz, SNB, Dankar's rule): each formula against a
plain-Python loop of the published formula (no ARX 3.9 output is stored here, nor can ARX run
on this machine), the solvers against their estimating equations, and the properties every
estimate must have."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import gamma as gamma_fn

from microagg.metrics.population_models import (
    ClassSizes,
    _hypergeom_one,
    _shlosser_classes,
    class_sizes,
    dankar_uniques,
    pitman_parameters,
    pitman_uniques,
    population_uniqueness,
    snb_expected,
    snb_parameters,
    snb_uniques,
    zayatz_uniques,
)

# A small sample: 20 uniques, 8 pairs, 4 triples, 2 classes of 5 (n = 58).
SMALL = ClassSizes.of({1: 20, 2: 8, 3: 4, 5: 2})


def test_class_sizes_from_fk_and_its_counts() -> None:
    c = class_sizes([1, 3, 3, 3, 2, 2, 1, 5, 5, 5, 5, 5])
    assert c.sizes.tolist() == [1, 2, 3, 5] and c.counts.tolist() == [2, 1, 1, 1]
    assert (c.n_records, c.n_classes, c.count(1), c.count(4)) == (12, 5, 2, 0)
    with pytest.raises(ValueError, match="not a partition"):
        class_sizes([2, 1, 1])


def test_hypergeometric_term_is_scipy_hypergeom() -> None:
    N, n = 1000, 58
    sizes = np.array([1.0, 2.0, 3.0, 5.0, 943.0, 944.0])
    expected = [stats.hypergeom.pmf(1, N, int(s), n) for s in sizes]
    assert _hypergeom_one(float(N), sizes, float(n)) == pytest.approx(expected, rel=1e-10,
                                                                      abs=1e-300)


def _zayatz_loop(histogram: dict[int, int], N: int, n: int) -> float:
    """Zayatz (1991), written out: P = c1/u h(1) / sum_s c_s/u h(s); uniques = c1 P / f."""
    u = sum(histogram.values())
    total = sum(c / u * stats.hypergeom.pmf(1, N, s, n) for s, c in histogram.items())
    share = histogram[1] / u * stats.hypergeom.pmf(1, N, 1, n) / total
    return histogram[1] * share / (n / N)


@pytest.mark.parametrize("N", [60, 100, 580, 10_000, 10**7])
def test_zayatz_is_the_formula_written_out(N: int) -> None:
    hist = {1: 20, 2: 8, 3: 4, 5: 2}
    assert zayatz_uniques(SMALL, N) == pytest.approx(_zayatz_loop(hist, N, 58), rel=1e-9)


def _pitman_scores(theta: float, alpha: float, hist: dict[int, int]) -> tuple[float, float]:
    """Hoshino (2001)'s likelihood equations as plain sums (the form of ARX's iterative
    implementation): d/dtheta and d/dalpha of the log-likelihood."""
    u = sum(hist.values())
    n = sum(s * c for s, c in hist.items())
    d_theta = sum(1 / (theta + i * alpha) for i in range(1, u)) - sum(
        1 / (theta + i) for i in range(1, n))
    d_alpha = sum(i / (theta + i * alpha) for i in range(1, u)) - sum(
        c * sum(1 / (j - alpha) for j in range(1, s)) for s, c in hist.items())
    return d_theta, d_alpha


HEAVY = {1: 40, 2: 10, 3: 5, 4: 3, 8: 2, 20: 1}  # a long tail: an interior maximum


def test_pitman_fit_solves_the_likelihood_equations() -> None:
    theta, alpha = pitman_parameters(ClassSizes.of(HEAVY))
    assert theta > 0 and 0.05 < alpha < 0.95
    d_theta, d_alpha = _pitman_scores(theta, alpha, HEAVY)
    assert abs(d_theta) < 1e-8 and abs(d_alpha) < 1e-8
    N = 10_000
    expected = gamma_fn(theta + 1) / gamma_fn(theta + alpha) * N**alpha  # Hoshino, eq. 9
    assert pitman_uniques(ClassSizes.of(HEAVY), N) == pytest.approx(expected, rel=1e-9)


def test_pitman_on_the_edge_is_ewens() -> None:
    # SMALL's likelihood grows towards alpha = 0 (the Ewens partition): there the theta
    # equation holds, the alpha derivative is <= 0, and the estimate is theta (the expected
    # uniques of an Ewens population, theta N / (theta + N - 1), for large N).
    theta, alpha = pitman_parameters(SMALL)
    d_theta, d_alpha = _pitman_scores(theta, alpha, {1: 20, 2: 8, 3: 4, 5: 2})
    assert alpha < 1e-6 and abs(d_theta) < 1e-8 and d_alpha <= 0
    assert pitman_uniques(SMALL, 10**6) == pytest.approx(theta, rel=1e-4)


def test_pitman_has_no_estimate_when_every_class_is_unique() -> None:
    assert math.isnan(pitman_uniques(ClassSizes.of({1: 30}), 1000))


def test_snb_expected_counts_are_sums_over_the_distributions() -> None:
    K, f, alpha, beta = 500.0, 0.3, 0.7, 0.2
    sizes = np.arange(1, 2000)
    p_F = stats.nbinom.pmf(sizes - 1, alpha, beta)  # F - 1 ~ NB(alpha, beta)
    e1 = K * np.sum(p_F * stats.binom.pmf(1, sizes, f))
    e2 = K * np.sum(p_F * stats.binom.pmf(2, sizes, f))
    assert snb_expected(K, f, alpha, beta) == pytest.approx((e1, e2), rel=1e-10)


def test_shlosser_sh3_is_the_formula_written_out() -> None:
    f, hist = 0.3, {1: 20, 2: 8, 3: 4, 5: 2}
    a = sum(s * f**2 * (1 - f**2) ** (s - 1) * c for s, c in hist.items())
    b = sum((1 - f) ** s * ((1 + f) ** s - 1) * c for s, c in hist.items())
    d = sum((1 - f) ** s * c for s, c in hist.items())
    e = sum(s * f * (1 - f) ** (s - 1) * c for s, c in hist.items())
    assert _shlosser_classes(SMALL, f) == pytest.approx(34 + 20 * a / b * (d / e) ** 2)


def test_snb_solves_its_moment_equations() -> None:
    N = 58 / 0.3
    K, alpha, beta = snb_parameters(SMALL, 58 / N)
    assert snb_expected(K, 58 / N, alpha, beta) == pytest.approx((20.0, 8.0), rel=1e-7)
    assert snb_uniques(SMALL, N) == pytest.approx(K * beta**alpha, rel=1e-12)


def test_snb_recovers_the_uniques_of_a_simulated_population() -> None:
    # A population drawn from the model itself (K classes of 1 + NB(alpha, beta)), sampled
    # at 30 %: the estimate lands near the population's true count of uniques. Fixed seed:
    # deterministic; the 15 % margin is over 3 standard errors of this estimator here.
    rng = np.random.default_rng(20240607)
    F = 1 + rng.negative_binomial(0.8, 0.35, size=20_000)
    f_sample = rng.binomial(F, 0.3)
    f_sample = f_sample[f_sample > 0]
    classes = class_sizes(np.repeat(f_sample, f_sample))
    truth = int((F == 1).sum())
    assert snb_uniques(classes, float(F.sum())) == pytest.approx(truth, rel=0.15)


@pytest.mark.parametrize("hist", [{1: 20, 2: 8, 3: 4, 5: 2}, {1: 3, 4: 10}, {1: 50, 2: 1}])
def test_every_model_gives_the_sample_uniques_when_the_sample_is_the_population(
        hist: dict[int, int]) -> None:
    c = ClassSizes.of(hist)
    n = c.n_records
    result = population_uniqueness(c, n)
    assert (result.pitman, result.zayatz, result.snb, result.dankar) == (
        hist[1], hist[1], hist[1], hist[1])


@pytest.mark.parametrize("N", [70, 116, 580, 5_800, 10**6])
def test_estimates_are_within_their_bounds(N: int) -> None:
    r = population_uniqueness(SMALL, N)
    f = 58 / N
    # Zayatz: c1 P / f with a probability P; every estimate a count in [0, N].
    assert 0 <= r.zayatz <= 20 / f + 1e-9
    for value in (r.pitman, r.snb, r.dankar):
        assert math.isnan(value) or 0 <= value <= N


def test_no_sample_unique_means_no_population_unique() -> None:
    c = ClassSizes.of({2: 10, 3: 5})
    assert dankar_uniques(c, 10_000) == (0.0, "none")
    assert pitman_uniques(c, 10_000) == zayatz_uniques(c, 10_000) == snb_uniques(c, 10_000) == 0


def test_dankar_rule_picks_pitman_at_small_fractions_and_the_smaller_otherwise() -> None:
    heavy = ClassSizes.of(HEAVY)
    small_f = heavy.n_records * 20  # f = 0.05 <= 0.1
    assert dankar_uniques(heavy, small_f) == (pitman_uniques(heavy, small_f), "pitman")
    for N in (116, 300):  # f = 0.5, 0.19
        z, s = zayatz_uniques(SMALL, N), snb_uniques(SMALL, N)
        value, model = dankar_uniques(SMALL, N)
        assert value == min(z, s) and model == ("snb" if s <= z else "zayatz")
    # Pitman without an estimate (every class unique): Zayatz's instead.
    all_unique = ClassSizes.of({1: 30})
    assert dankar_uniques(all_unique, 3000) == (zayatz_uniques(all_unique, 3000), "zayatz")
    # SNB without an estimate (no class of size 2): Zayatz's.
    no_pairs = ClassSizes.of({1: 10, 3: 10})
    assert dankar_uniques(no_pairs, 80) == (zayatz_uniques(no_pairs, 80), "zayatz")


def test_a_population_smaller_than_the_sample_is_refused() -> None:
    with pytest.raises(ValueError, match=r"population_size must be >= the sample size 58"):
        population_uniqueness(SMALL, 57)
    with pytest.raises(TypeError, match="population_size must be a number"):
        zayatz_uniques(SMALL, "1000")


def test_summary_gives_counts_and_shares() -> None:
    s = population_uniqueness(SMALL, 5_800).summary()
    assert s["sampling_fraction"] == pytest.approx(0.01)
    assert s["dankar_model"] == "pitman"
    assert s["dankar_share"] == pytest.approx(s["dankar_uniques"] / 5_800)
    assert s["sample_uniques"] == 20
