"""Population uniqueness models (Pitman, Zayatz, SNB, Dankar's rule): each formula against a
plain-Python loop of the published formula, the solvers against their estimating equations,
the properties every estimate must have, and ARX's own figures (ARX's risk classes compiled
and run here; see benchmarks/results/2026-12-02-arx-population-models.md)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.special import gamma as gamma_fn

from microagg.metrics.population_models import (
    ClassSizes,
    _hypergeom_ratio,
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


def test_hypergeometric_ratio_is_scipy_hypergeom() -> None:
    N, n = 1000, 58
    sizes = np.array([1, 2, 3, 5, 943, 944])
    h = [stats.hypergeom.pmf(1, N, int(s), n) for s in sizes]
    expected = [v / h[0] for v in h]
    assert _hypergeom_ratio(float(N), sizes, float(n)) == pytest.approx(expected, rel=1e-10,
                                                                        abs=1e-300)


def _zayatz_loop(histogram: dict[int, int], N: int, n: int) -> float:
    """Zayatz (1991), written out in exact rationals: P = c1/u h(1) / sum_s c_s/u h(s),
    h(s) = s C(N-s, n-1) / C(N, n); uniques = c1 P / f."""
    def h(s: int) -> Fraction:
        return Fraction(s * math.comb(N - s, n - 1), math.comb(N, n))
    u = sum(histogram.values())
    total = sum(Fraction(c, u) * h(s) for s, c in histogram.items())
    share = Fraction(histogram[1], u) * h(1) / total
    return float(histogram[1] * share / Fraction(n, N))


@pytest.mark.parametrize("N", [60, 100, 580, 10_000, 10**7])
def test_zayatz_is_the_formula_written_out(N: int) -> None:
    hist = {1: 20, 2: 8, 3: 4, 5: 2}
    assert zayatz_uniques(SMALL, N) == pytest.approx(_zayatz_loop(hist, N, 58), rel=1e-13)


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


# ------------------------------------------------------------------------------ ARX's figures
# ARX source (github.com/arx-deidentifier/arx): ModelPitman.java, ModelZayatz.java,
# ModelSNB.java, RiskModelPopulation.java at commit f8518512443659dabe6e9b6349e3a46a17bce35f,
# RiskModelPopulationUniqueness.java at a3d7fde9e858da894772983fe70f110b2c06c86c, Gamma.java
# and ARXSolverConfiguration.java at 13623f46b9c9c652872d589823f8dc365c1d0717,
# ARXPopulationModel.java at 4c171c9be2b22da322a7c178bee92067f7853941, with the solver of
# github.com/prasser/newtonraphson (NewtonRaphson2D.java at 3fe3c8dab570fb894427df346e61347eb1bd77cf)
# and commons-math3 3.6.1; run here on 2026-12-02 with javac 17 (the procedure and every
# figure: benchmarks/results/2026-12-02-arx-population-models.md). ARX's default solver
# settings and those of its TestAnonymizationRiskBased (iterationsPerTry(15)) gave the same
# digits. Population: ARXPopulationModel.Region.USA = 317,238,626, as in ARX's
# TestAnonymizationRiskBased on ./data/adult.csv, where every column with a hierarchy file (all
# nine) is a quasi-identifier (AbstractAnonymizationTest.getDataObject).
ARX_USA = 317_238_626


@pytest.fixture(scope="module")
def adult_classes() -> ClassSizes:
    from microagg.datasets import load_dataset
    from microagg.metrics.survey_risk import frequencies

    df = load_dataset("adult").data
    fk, _ = frequencies(df, list(df.columns), missing="category")
    return class_sizes(fk)


def test_adult_key_table_is_the_one_given_to_arx(adult_classes: ClassSizes) -> None:
    c = adult_classes
    assert (c.n_records, c.n_classes, c.count(1), c.count(2), int(c.sizes.max())) == (
        30162, 19502, 15512, 2098, 45)


def test_pitman_and_zayatz_match_arx_on_adult(adult_classes: ClassSizes) -> None:
    # ARX: ModelPitman 1.2339373406325705E7, ModelZayatz 8.393014767411424E7 (shares of the
    # USA population 0.038896188531360315 and 0.2645647181504129); Dankar's rule: PITMAN.
    # Pitman: ARX stops its Newton steps when both likelihood equations are below 1e-6, so
    # the two fits agree to about 1e-8 relative, not to the last digit.
    assert pitman_uniques(adult_classes, ARX_USA) == pytest.approx(1.2339373406325705e7,
                                                                   rel=1e-8)
    assert zayatz_uniques(adult_classes, ARX_USA) == pytest.approx(8.393014767411424e7,
                                                                   rel=1e-12)
    value, model = dankar_uniques(adult_classes, ARX_USA)
    assert model == "pitman" and value / ARX_USA == pytest.approx(0.038896188531360315,
                                                                 rel=1e-8)


def test_pitman_and_zayatz_match_arx_on_eusilc() -> None:
    # eusilc's five keys (db040, hsize, rb090, pl030, pb220a, a missing value a category),
    # N = the sum of rb050 rounded (8,182,222). ARX: ModelPitman 608.4027874228135,
    # ModelZayatz 3712.351864395648; Dankar's rule: PITMAN.
    from microagg.datasets import load_dataset
    from microagg.metrics.survey_risk import frequencies

    df = load_dataset("eusilc").data
    fk, _ = frequencies(df, ["db040", "hsize", "rb090", "pl030", "pb220a"], missing="category")
    c, N = class_sizes(fk), 8_182_222
    assert pitman_uniques(c, N) == pytest.approx(608.4027874228135, rel=1e-8)
    assert zayatz_uniques(c, N) == pytest.approx(3712.351864395648, rel=1e-12)
    assert dankar_uniques(c, N)[1] == "pitman"


@pytest.mark.parametrize(("N", "arx_pitman", "arx_zayatz"), [
    (2460, 191.01706908041214, 314.8537499807214),
    (12300, 425.87871345522956, 1360.3154347417153),
    (492, 85.6758497837124, 90.40362338986611),
    (246, 60.65839553137297, 57.73679835991301),
])
def test_pitman_and_zayatz_match_arx_on_a_hand_made_table(N: int, arx_pitman: float,
                                                          arx_zayatz: float) -> None:
    # HEAVY (n = 123) at ARXPopulationModel.create(N); ARX's figures printed by ModelPitman
    # and ModelZayatz.
    c = ClassSizes.of(HEAVY)
    assert pitman_uniques(c, N) == pytest.approx(arx_pitman, rel=1e-8)
    assert zayatz_uniques(c, N) == pytest.approx(arx_zayatz, rel=1e-12)


def test_zayatz_keeps_its_digits_at_a_national_population(adult_classes: ClassSizes) -> None:
    # Zayatz's P summed exactly (Python's decimal, 40 digits, h(s)/h(1) as the product
    # s prod_{j<s} (N-n+1-j)/(N-j)): 83930147.674114287534...; ARX (commons-math3's
    # HypergeometricDistribution) prints 8.393014767411424E7. A log-gamma difference form
    # loses about 7 digits at N = 3e8 (it gave 83930161.1, 1.6e-7 off).
    assert zayatz_uniques(adult_classes, ARX_USA) == pytest.approx(83930147.67411428755,
                                                                   rel=1e-13)


def test_arx_pitman_takes_a_negative_alpha_root_where_ours_takes_the_edge() -> None:
    """Where the Pitman likelihood has no interior maximum (SMALL: it rises towards alpha = 0),
    ARX's Newton iteration, started at its moment guess (theta, alpha) = (85.39, -1.067) and
    constrained only to theta >= 0, converges to the stationary point (87.245, -1.1479),
    outside the Pitman model's 0 <= alpha < 1, and reports Gamma(theta+1)/Gamma(theta+alpha)
    N^alpha there: 4.412628342628279 at N = 1160 and 0.6956334110138096 at N = 5800 (ARX,
    run here). Ours keeps the maximum on the edge, the Ewens partition (theta = 33.56 uniques
    whatever N). The root ARX finds is reproduced here from ARX's starting point."""
    from scipy.optimize import root
    from scipy.special import gammaln

    hist = {1: 20, 2: 8, 3: 4, 5: 2}
    u, n, c1, c2 = 34, 58, 20, 8
    c = c1 * (c1 - 1) / c2  # ModelPitman's initial guess
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    assert (t0, a0) == pytest.approx((85.3932584269663, -1.0674157303370788), rel=1e-12)
    sol = root(lambda x: _pitman_scores(x[0], x[1], hist), [t0, a0], tol=1e-13)
    theta, alpha = sol.x
    assert sol.success and alpha < 0 < theta
    for N, arx in ((1160, 4.412628342628279), (5800, 0.6956334110138096)):
        value = math.exp(gammaln(theta + 1) - gammaln(theta + alpha) + alpha * math.log(N))
        assert value == pytest.approx(arx, rel=1e-6)
        assert pitman_uniques(SMALL, N) == pytest.approx(33.555369, rel=1e-6)


def test_arx_snb_has_no_estimate_so_its_rule_falls_back_to_zayatz() -> None:
    """ARX's ModelSNB gave NaN (no estimate; "not available" in ARX, 0 in its getters) on
    every table run here, adult's included: its second moment equation multiplies by
    (1-d)^(alpha+2) where the negative binomial's generating function divides (see
    snb_expected, checked against direct sums), and its Sh3 denominator subtracts 1 from every
    term; on SMALL at N = 116 and 300 and HEAVY at 246 and 492 a solver started from 1,600
    points finds no root of ARX's equations. So ARX's Dankar rule, for f > 0.1, always takes
    Zayatz's (ARX: 25.229151852993358 on SMALL at N = 116), where ours takes the SNB's when
    it is the smaller (20.876)."""
    value, model = dankar_uniques(SMALL, 116)
    assert model == "snb" and value == pytest.approx(20.876430896503585, rel=1e-6)
    assert zayatz_uniques(SMALL, 116) == pytest.approx(25.229151852993358, rel=1e-12)
    f = 58 / 116
    s = np.array([1.0, 2.0, 3.0, 5.0])
    cnt = np.array([20.0, 8.0, 4.0, 2.0])
    arx_b = float(np.sum((1 - f) ** s * cnt * (1 + f) ** s - 1))  # ModelSNB's var2
    ours_b = float(np.sum((1 - f) ** s * ((1 + f) ** s - 1) * cnt))
    assert arx_b != pytest.approx(ours_b)
