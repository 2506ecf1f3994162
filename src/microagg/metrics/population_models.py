"""How many records are unique in the population: estimates from the sample's table of
equivalence-class sizes and the sampling fraction, as ARX's population risk analysis makes
them (Pitman, Zayatz, SNB and Dankar et al.'s decision rule among them).

The input is the distribution of class sizes: ``c_s``, the number of key combinations seen
``s`` times in the sample (``s = 1``: the sample uniques), with ``n = sum(s c_s)`` records and
``u = sum(c_s)`` classes, and the population size ``N >= n`` (sampling fraction ``f = n/N``).
Each model returns the estimated number of population uniques (key combinations held by one
person in the population); NaN when the model has no estimate on these data (its solver does
not converge or its estimate falls outside ``[0, N]``), which the decision rule then skips.
With ``f = 1`` the sample is the population and every estimate is ``c_1``.

numpy and scipy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ClassSizes", "PopulationUniqueness", "class_sizes", "dankar_uniques",
           "pitman_parameters", "pitman_uniques", "population_uniqueness", "snb_expected",
           "snb_parameters", "snb_uniques", "zayatz_uniques"]


@dataclass(frozen=True, eq=False)
class ClassSizes:
    """The sample's distribution of equivalence-class sizes.

    Attributes
    ----------
    sizes : ndarray of int64, ascending, distinct, >= 1
    counts : ndarray of int64, >= 1
        ``counts[i]`` classes of ``sizes[i]`` records each.
    """

    sizes: NDArray[np.int64]
    counts: NDArray[np.int64]

    @classmethod
    def of(cls, histogram: dict[int, int]) -> ClassSizes:
        """From ``{size: number of classes of that size}`` (zero counts dropped)."""
        items = sorted((int(s), int(c)) for s, c in histogram.items() if int(c) != 0)
        for s, c in items:
            if s < 1 or c < 0:
                raise ValueError(f"class sizes must be >= 1 with counts >= 0; got size {s} "
                                 f"with count {c}.")
        sizes = np.array([s for s, _ in items], dtype=np.int64)
        counts = np.array([c for _, c in items], dtype=np.int64)
        return cls(sizes=sizes, counts=counts)

    @property
    def n_records(self) -> int:
        return int((self.sizes * self.counts).sum())

    @property
    def n_classes(self) -> int:
        return int(self.counts.sum())

    def count(self, size: int) -> int:
        """The number of classes of ``size`` records (``c_size``)."""
        hit = self.counts[self.sizes == size]
        return int(hit[0]) if hit.size else 0


def class_sizes(fk: ArrayLike) -> ClassSizes:
    """The class-size distribution of a partition from each record's class size ``fk``.

    Parameters
    ----------
    fk : array-like of int, shape (n_samples,)
        Each record's sample frequency, as :func:`microagg.metrics.survey_risk.frequencies`
        gives it with ``missing="category"`` (a partition of the records).

    Returns
    -------
    ClassSizes

    Examples
    --------
    >>> c = class_sizes([1, 2, 2, 3, 3, 3, 1])
    >>> c.sizes.tolist(), c.counts.tolist()
    ([1, 2, 3], [2, 1, 1])
    """
    f = np.asarray(fk, dtype=np.int64)
    if f.size and f.min() < 1:
        raise ValueError(f"fk must be >= 1; got {int(f.min())}.")
    sizes, records = np.unique(f, return_counts=True)
    if np.any(records % sizes):
        bad = int(sizes[np.flatnonzero(records % sizes)[0]])
        raise ValueError(f"fk is not a partition: {int(records[sizes == bad][0])} records have "
                         f"fk = {bad}, not a multiple of {bad} (count the frequencies with "
                         "missing='category').")
    return ClassSizes(sizes=sizes.astype(np.int64), counts=(records // sizes).astype(np.int64))


def _check(classes: ClassSizes, population_size: Any, caller: str) -> tuple[int, float]:
    n = classes.n_records
    if isinstance(population_size, bool) or not isinstance(population_size, (int, np.integer,
                                                                             float)):
        raise TypeError(f"{caller}: population_size must be a number; got "
                        f"{type(population_size).__name__}.")
    N = float(population_size)
    if not math.isfinite(N) or N < max(n, 1):
        raise ValueError(f"{caller}: population_size must be >= the sample size {n} (the "
                         f"records in the sample); got {population_size!r}.")
    return n, n / N


def _valid(value: float, N: float) -> float:
    return value if math.isfinite(value) and 0.0 <= value <= N else math.nan


def _pitman_loglik(theta: float, alpha: float, classes: ClassSizes) -> float:
    """Log-likelihood of the Pitman sampling formula (Hoshino 2001, eq. 2), up to a constant:
    ``sum_{i<u} log(theta + i alpha) - sum_{i<n} log(theta + i)
    + sum_s c_s sum_{j<s} log(j - alpha)``, in closed form with log-gamma."""
    from scipy.special import gammaln

    u, n = classes.n_classes, classes.n_records
    first = (u - 1) * math.log(alpha) + gammaln(theta / alpha + u) - gammaln(theta / alpha + 1)
    second = gammaln(theta + n) - gammaln(theta + 1)
    third = float(np.dot(classes.counts, gammaln(classes.sizes - alpha) - gammaln(1 - alpha)))
    return float(first - second + third)


def pitman_parameters(classes: ClassSizes) -> tuple[float, float]:
    """The maximum-likelihood ``(theta, alpha)`` of the Pitman sampling formula on the
    sample's class sizes (Hoshino 2001, eqs. 5-6), ``(nan, nan)`` when it has no maximum with
    ``theta > 0``, ``0 < alpha < 1`` (one class, or every class a unique)."""
    from scipy.optimize import minimize, root

    u, n = classes.n_classes, classes.n_records
    if u in (1, n):
        return math.nan, math.nan
    def objective(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        theta, alpha = math.exp(x[0]), float(x[1])
        value = _pitman_loglik(theta, alpha, classes)
        grad = _pitman_scores(theta, alpha, classes) * np.array([theta, 1.0])
        return (-value, -grad) if math.isfinite(value) else (1e300, np.zeros(2))
    best = None
    for theta0, alpha0 in ((1.0, 0.5), (float(u), 0.5), (10.0, 0.1), (10.0, 0.9)):
        res = minimize(objective, np.array([math.log(theta0), alpha0]), jac=True,
                       method="L-BFGS-B", bounds=[(-20.0, 40.0), (1e-10, 1 - 1e-10)],
                       options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    start = np.array([math.exp(best.x[0]), float(best.x[1])])
    polished = root(lambda x: _pitman_scores(x[0], x[1], classes), start, method="hybr",
                    options={"xtol": 1e-13})
    theta, alpha = (float(v) for v in polished.x)
    if polished.success and theta > 0 and 0 < alpha < 1:
        return theta, alpha
    return float(start[0]), float(start[1])  # the maximum on the edge alpha -> 0 (Ewens)


def _pitman_scores(theta: float, alpha: float, classes: ClassSizes) -> NDArray[np.float64]:
    """The likelihood equations (Hoshino 2001): the derivatives of :func:`_pitman_loglik`
    in ``theta`` and ``alpha``, in closed form with the digamma function."""
    from scipy.special import digamma

    u, n = classes.n_classes, classes.n_records
    if not (theta > 0 and 0 < alpha < 1):
        return np.array([1e6, 1e6])
    ratio = theta / alpha
    harmonic = (digamma(ratio + u) - digamma(ratio + 1)) / alpha  # sum_{i<u} 1/(theta+i a)
    d_theta = harmonic - (digamma(theta + n) - digamma(theta + 1))
    d_alpha = ((u - 1) - theta * harmonic) / alpha - float(
        np.dot(classes.counts, digamma(classes.sizes - alpha) - digamma(1 - alpha)))
    return np.array([d_theta, d_alpha])


def pitman_uniques(classes: ClassSizes, population_size: float) -> float:
    """Population uniques under the Pitman model: ``Gamma(theta+1) / Gamma(theta+alpha) *
    N**alpha`` at the maximum-likelihood ``(theta, alpha)`` of the Pitman sampling formula.

    Assumes the population's classes arise from a Pitman (two-parameter Poisson-Dirichlet)
    random partition, which suits small sampling fractions.

    Parameters
    ----------
    classes : ClassSizes
    population_size : float
        ``N``, at least the sample size.

    Returns
    -------
    float
        NaN when the likelihood has no maximum with ``theta > 0`` (one class, or every class
        unique) or the estimate falls outside ``[0, N]``. A maximum on the edge ``alpha = 0``
        (the Ewens partition) gives ``theta``.

    References
    ----------
    Hoshino, N. "Applying Pitman's sampling formula to microdata disclosure risk
    assessment." Journal of Official Statistics 17(4), 499-520, 2001 (the estimator, eq. 9).
    """
    from scipy.special import gammaln

    n, _ = _check(classes, population_size, "pitman_uniques")
    c1 = classes.count(1)
    if c1 == 0:
        return 0.0
    if population_size == n:
        return float(c1)
    theta, alpha = pitman_parameters(classes)
    if not (theta > 0 and 0 <= alpha < 1):
        return math.nan
    N = float(population_size)
    value = math.exp(gammaln(theta + 1) - gammaln(theta + alpha) + alpha * math.log(N))
    return _valid(value, N)


def _hypergeom_ratio(N: float, sizes: NDArray[np.int64], n: float) -> NDArray[np.float64]:
    """``h(s) / h(1)``, with ``h(s) = s C(N-s, n-1) / C(N, n)`` the probability that exactly
    1 of a class of ``s`` records is drawn when ``n`` of ``N`` are drawn without replacement:
    ``s prod_{j<s} (1 - (n-1)/(N-j))``, summed in logs with ``log1p``, so that it keeps full
    precision at ``N`` in the hundreds of millions (log-gamma differences of numbers near
    ``N log N`` lose about 7 digits there); 0 where ``N - s < n - 1``."""
    j = np.arange(1, int(sizes.max()), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(N - n + 1 - j > 0, np.log1p(-(n - 1) / (N - j)), -np.inf)
    logs = np.concatenate([[0.0], np.cumsum(terms)])
    return sizes.astype(np.float64) * np.exp(logs[sizes - 1])


def zayatz_uniques(classes: ClassSizes, population_size: float) -> float:
    """Population uniques under Zayatz's model: ``c_1 P / f``, with ``P`` the probability
    that a sample unique is a population unique, ``P = c_1 h(1) / sum_s c_s h(s)`` where
    ``h(s)`` is the hypergeometric probability that exactly one record of a population class
    of ``s`` is sampled; the sample's class sizes stand for the population's.

    Assumes the records were drawn by simple random sampling without replacement and the
    population's class-size distribution is the sample's.

    Parameters
    ----------
    classes : ClassSizes
    population_size : float

    Returns
    -------
    float

    References
    ----------
    Zayatz, L. "Estimation of the number of unique population elements using a sample."
    Proceedings of the Section on Survey Research Methods, American Statistical Association,
    369-373, 1991.
    """
    n, f = _check(classes, population_size, "zayatz_uniques")
    c1 = classes.count(1)
    if c1 == 0:
        return 0.0
    ratio = _hypergeom_ratio(float(population_size), classes.sizes, float(n))
    share = c1 / float(np.dot(classes.counts, ratio))  # c_1 h(1) / sum_s c_s h(s)
    return _valid(c1 * share / f, float(population_size))


def _shlosser_classes(classes: ClassSizes, f: float) -> float:
    """Haas et al.'s Shlosser-type estimator ``Sh3`` of the number of classes in the
    population: ``u + c_1 [sum_s s f^2 (1-f^2)^(s-1) c_s] / [sum_s (1-f)^s ((1+f)^s - 1)
    c_s] * ([sum_s (1-f)^s c_s] / [sum_s s f (1-f)^(s-1) c_s])^2``."""
    s, c = classes.sizes.astype(np.float64), classes.counts.astype(np.float64)
    a = np.sum(s * f * f * (1 - f * f) ** (s - 1) * c)
    b = np.sum((1 - f) ** s * ((1 + f) ** s - 1) * c)
    d = np.sum((1 - f) ** s * c)
    e = np.sum(s * f * (1 - f) ** (s - 1) * c)
    return float(classes.n_classes + classes.count(1) * (a / b) * (d / e) ** 2)


def snb_expected(K: float, f: float, alpha: float, beta: float) -> tuple[float, float]:
    """Expected sample classes of size 1 and 2 when ``K`` population class sizes are 1 plus
    a negative binomial (``alpha``, ``beta``) and each record is sampled with probability
    ``f``: with ``d = (1-f)(1-beta)``, ``E c_1 = K f (beta/(1-d))**alpha (1 + alpha d/(1-d))``
    and ``E c_2 = K f^2 alpha (1-beta) beta**alpha (2 + (alpha-1) d) / (2 (1-d)**(alpha+2))``
    (from the probability generating function of the negative binomial)."""
    d = (1 - f) * (1 - beta)
    c1 = K * f * (beta / (1 - d)) ** alpha * (1 + alpha * d / (1 - d))
    c2 = K * f * f * alpha * (1 - beta) * beta**alpha * (2 + (alpha - 1) * d) / (
        2 * (1 - d) ** (alpha + 2))
    return float(c1), float(c2)


def snb_parameters(classes: ClassSizes, f: float) -> tuple[float, float, float]:
    """``(K, alpha, beta)`` of the slide negative binomial model: ``K`` by Haas et al.'s
    ``Sh3``, ``(alpha, beta)`` solving ``E c_1 = c_1``, ``E c_2 = c_2`` (NaN: no solution)."""
    from scipy.optimize import least_squares
    from scipy.special import expit

    c1, c2 = classes.count(1), classes.count(2)
    K = _shlosser_classes(classes, f)
    if c1 == 0 or c2 == 0:
        return K, math.nan, math.nan
    def residuals(x: NDArray[np.float64]) -> NDArray[np.float64]:
        e1, e2 = snb_expected(K, f, math.exp(x[0]), float(expit(x[1])))
        return np.array([e1 / c1 - 1.0, e2 / c2 - 1.0])
    for a0, b0 in ((1.0, 0.5), (0.1, 0.1), (5.0, 0.9), (0.5, 0.01), (2.0, 0.99)):
        res = least_squares(residuals, [math.log(a0), math.log(b0 / (1 - b0))],
                            xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=2000)
        if res.success and np.max(np.abs(res.fun)) < 1e-8:
            return K, math.exp(res.x[0]), float(expit(res.x[1]))
    return K, math.nan, math.nan


def snb_uniques(classes: ClassSizes, population_size: float) -> float:
    """Population uniques under the slide negative binomial model: ``K beta**alpha``, with
    ``K`` the number of population classes (Haas et al.'s ``Sh3`` estimate) and ``(alpha,
    beta)`` solving ``E c_1 = c_1``, ``E c_2 = c_2`` (:func:`snb_expected`).

    Assumes each population class size is one plus a negative-binomial count, the same for
    every class, and Bernoulli sampling with probability ``f``; it needs classes of size 2.

    Parameters
    ----------
    classes : ClassSizes
    population_size : float

    Returns
    -------
    float
        NaN without classes of size 2 or when the moment equations have no solution.

    Notes
    -----
    ARX's ``ModelSNB`` multiplies ``E c_2`` by ``(1-d)**(alpha+2)`` and subtracts 1 from
    every term of the ``Sh3`` denominator; the formulas here follow the derivation and the
    paper, and are checked in the tests against direct sums over the distributions.

    References
    ----------
    Chen, G., Keller-McNulty, S. "Estimation of identification disclosure risk in
    microdata." Journal of Official Statistics 14(1), 79-95, 1998. Haas, P. J., Naughton,
    J. F., Seshadri, S., Stokes, L. "Sampling-based estimation of the number of distinct
    values of an attribute." VLDB 1995, 311-322 (``Sh3``).
    """
    _, f = _check(classes, population_size, "snb_uniques")
    c1, c2 = classes.count(1), classes.count(2)
    if c1 == 0:
        return 0.0
    if f == 1.0:
        return float(c1)
    if c2 == 0:
        return math.nan
    K, alpha, beta = snb_parameters(classes, f)
    return _valid(K * beta**alpha, float(population_size))


def dankar_uniques(classes: ClassSizes, population_size: float) -> tuple[float, str]:
    """Population uniques by Dankar et al.'s decision rule, and the model it chose: with
    ``f <= 0.1`` Pitman's (Zayatz's when Pitman's has no estimate); otherwise the smaller of
    Zayatz's and the SNB's (Zayatz's when the SNB has none); ``"none"`` without sample
    uniques.

    Parameters
    ----------
    classes : ClassSizes
    population_size : float

    Returns
    -------
    (float, str)
        The estimate and ``"pitman"``, ``"zayatz"``, ``"snb"`` or ``"none"``.

    References
    ----------
    Dankar, F. K., El Emam, K., Neisa, A., Roffey, T. "Estimating the re-identification risk
    of clinical data sets." BMC Medical Informatics and Decision Making 12:66, 2012 (the
    decision rule of its figure 5); ARX's ``RiskModelPopulationUniqueness``.
    """
    _, f = _check(classes, population_size, "dankar_uniques")
    if classes.count(1) == 0:
        return 0.0, "none"
    if f <= 0.1:
        pitman = pitman_uniques(classes, population_size)
        if math.isfinite(pitman) and pitman != 0.0:
            return pitman, "pitman"
        return zayatz_uniques(classes, population_size), "zayatz"
    zayatz = zayatz_uniques(classes, population_size)
    snb = snb_uniques(classes, population_size)
    if math.isfinite(snb) and snb != 0.0 and snb <= zayatz:
        return snb, "snb"
    return zayatz, "zayatz"


@dataclass(frozen=True)
class PopulationUniqueness:
    """Result of :func:`population_uniqueness`: the estimated population uniques by model.

    Attributes
    ----------
    population_size : float
    sample_size : int
    sample_uniques : int
    pitman, zayatz, snb, dankar : float
        Estimated numbers of population uniques (NaN: no estimate).
    dankar_model : str
        The model Dankar et al.'s rule chose.
    """

    population_size: float
    sample_size: int
    sample_uniques: int
    pitman: float
    zayatz: float
    snb: float
    dankar: float
    dankar_model: str

    def summary(self) -> dict[str, Any]:
        """Plain numbers for JSON: each estimate as a count and as a share of the population
        (ARX's figure), ``None`` where a model has no estimate."""
        N = self.population_size
        out: dict[str, Any] = {
            "population_size": N, "sample_size": self.sample_size,
            "sampling_fraction": self.sample_size / N, "sample_uniques": self.sample_uniques,
            "dankar_model": self.dankar_model,
        }
        for name in ("dankar", "pitman", "zayatz", "snb"):
            value = getattr(self, name)
            ok = math.isfinite(value)
            out[f"{name}_uniques"] = value if ok else None
            out[f"{name}_share"] = value / N if ok else None
        return out


def population_uniqueness(classes: ClassSizes, population_size: float
                          ) -> PopulationUniqueness:
    """Every model's estimate of the population uniques (see the module docstring).

    Examples
    --------
    >>> c = ClassSizes.of({1: 4, 2: 3})
    >>> population_uniqueness(c, 10).zayatz == population_uniqueness(c, 10).sample_uniques
    True
    """
    _check(classes, population_size, "population_uniqueness")
    dankar, model = dankar_uniques(classes, population_size)
    return PopulationUniqueness(
        population_size=float(population_size), sample_size=classes.n_records,
        sample_uniques=classes.count(1), pitman=pitman_uniques(classes, population_size),
        zayatz=zayatz_uniques(classes, population_size),
        snb=snb_uniques(classes, population_size), dankar=dankar, dankar_model=model)
