"""Survey disclosure risk of categorical key variables as sdcMicro measures it: sample
frequencies ``fk``, weighted population estimates ``Fk``, the individual risk, the global risk,
the household risk and the k-anonymity violation counts (Handbook on SDC, 2nd ed. 2024, 3.3).

The individual risk is the posterior mean of ``1/F`` given ``f`` under the negative-binomial
super-population model of Benedetti & Franconi (1998), in the form of sdcMicro's
``measure_risk`` / ``indivRisk`` (method ``"approx"``): exact closed forms for ``fk = 1`` and
``fk = 2``, the approximation of Franconi & Polettini (2004) for ``fk > 2``, and ``1/fk``
where ``fk = Fk`` (a population). Every step is vectorized: factorized codes and
``np.bincount``; memory O(n).

**Strata** (``strata=``, sdcMicro's ``strataVar``): the stratum (a region, a design stratum)
is a key the intruder may know, so ``fk`` and ``Fk`` are counted within each stratum, as on
the keys plus the stratum; the individual, global and household risks follow from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._base.validation import check_choice
from ._survey_checks import (
    check_households,
    check_keys,
    check_ks,
    check_strata,
    check_threshold,
    check_weights,
    household_codes,
)
from ._survey_freq import frequency_counts, key_codes

__all__ = ["SurveyRisk", "frequencies", "household_risk", "individual_risk", "survey_risk"]

_MISSING = ("any", "category")


def frequencies(df: pd.DataFrame, keys: Any, *, weights: str | None = None,
                missing: str = "any", strata: str | None = None
                ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Sample frequency ``fk`` and estimated population frequency ``Fk`` of each record's key.

    Parameters
    ----------
    df : pandas.DataFrame of shape (n_samples, ...)
        The microdata.
    keys : sequence of str
        Categorical key variables (quasi-identifiers); any dtype, compared by value.
    weights : str, default=None
        Column of sampling weights (finite, > 0). ``None``: ``Fk = fk`` (a population).
    missing : {"any", "category"}, default="any"
        ``"any"``, sdcMicro's ``freqCalc`` rule: a missing key value matches any value, so
        two records match when they agree on every key that both have. As in sdcMicro, a
        record whose keys are all missing gets ``fk = n`` (``Fk`` = total weight), and with
        two or more keys it is not counted for the records without a missing key.
        ``"category"``: a missing value is one more category of its variable.
    strata : str, default=None
        Column of strata (none missing, not a key): the frequencies are counted within each
        stratum, as on the keys plus the stratum (sdcMicro's ``strataVar``); the missing-value
        rule applies within each stratum.

    Returns
    -------
    fk : ndarray of shape (n_samples,), dtype=int64
    Fk : ndarray of shape (n_samples,), dtype=float64
        Sum of the weights of the matching records.

    References
    ----------
    Templ, M., Kowarik, A., Meindl, B. "Statistical Disclosure Control for Micro-Data Using
    the R Package sdcMicro." Journal of Statistical Software 67(4), 2015 (``freqCalc``).

    Examples
    --------
    >>> df = pd.DataFrame({"status": ["single", "married", "married", "single", None]})
    >>> frequencies(df, ["status"])[0].tolist()
    [3, 3, 3, 3, 5]
    >>> frequencies(df, ["status"], missing="category")[0].tolist()
    [2, 2, 2, 2, 1]
    >>> df["region"] = ["north", "north", "south", "south", "south"]
    >>> frequencies(df, ["status"], strata="region")[0].tolist()
    [1, 1, 2, 2, 3]
    """
    keys = check_keys(df, keys, caller="frequencies")
    missing = check_choice(missing, _MISSING, name="missing", caller="frequencies")
    w = None if weights is None else check_weights(df, weights, caller="frequencies")
    s = None if strata is None else check_strata(df, strata, keys, caller="frequencies")
    return frequency_counts(key_codes(df, keys, missing=missing), w, s)


def individual_risk(fk: ArrayLike, Fk: ArrayLike) -> NDArray[np.float64]:
    """Individual re-identification risk of each record from ``fk`` and ``Fk``.

    With ``p = fk / Fk``: ``fk = 1``: ``p/(1-p) * log(1/p)``; ``fk = 2``:
    ``p/(1-p) - (p/(1-p))**2 * log(1/p)`` (both exact); ``fk > 2``: ``p / (fk - (1-p))``
    (approximation); ``fk = Fk``: ``1/fk``.

    Parameters
    ----------
    fk : array-like of shape (n_samples,)
        Sample frequencies, >= 1.
    Fk : array-like of shape (n_samples,)
        Estimated population frequencies, >= fk for meaningful weights.

    Returns
    -------
    ndarray of shape (n_samples,), dtype=float64

    References
    ----------
    Benedetti, R., Franconi, L. "Statistical and technological solutions for controlled data
    dissemination." Pre-proceedings of NTTS, 1998. Franconi, L., Polettini, S. "Individual
    risk estimation in mu-Argus: a review." Privacy in Statistical Databases, LNCS 3050,
    262-272, 2004.

    Examples
    --------
    >>> individual_risk([1, 2, 3], [1, 2, 3]).tolist()
    [1.0, 0.5, 0.3333333333333333]
    >>> round(float(individual_risk([3], [30])[0]), 6)
    0.047619
    """
    f = np.asarray(fk, dtype=np.float64)
    F = np.asarray(Fk, dtype=np.float64)
    if f.shape != F.shape or f.ndim != 1:
        raise ValueError(f"fk and Fk must be 1-dimensional of the same length; got shapes "
                         f"{f.shape} and {F.shape}.")
    if f.size and not (np.isfinite(f).all() and f.min() >= 1):
        raise ValueError(f"fk must hold finite counts >= 1: {int((~(f >= 1)).sum())} of "
                         f"{f.size} do not.")
    risk = np.zeros(f.size)
    population = f == F
    for fk_case in ("one", "two", "more"):
        rows = _rows(f, fk_case) & ~population
        p = f[rows] / F[rows]
        odds = p / (1.0 - p)
        if fk_case == "one":
            risk[rows] = odds * np.log(1.0 / p)
        elif fk_case == "two":
            risk[rows] = odds - odds**2 * np.log(1.0 / p)
        else:
            risk[rows] = p / (f[rows] - (1.0 - p))
    risk[population] = 1.0 / f[population]
    return risk


def _rows(f: NDArray[np.float64], case: str) -> NDArray[np.bool_]:
    return f == 1 if case == "one" else f == 2 if case == "two" else f > 2


def household_risk(risk: ArrayLike, households: ArrayLike) -> NDArray[np.float64]:
    """Household risk ``1 - prod(1 - r_j)`` over the members ``j`` of each record's household,
    given to every member (as sdcMicro's ``measure_risk`` with ``hid``).

    Parameters
    ----------
    risk : array-like of shape (n_samples,)
        Individual risks.
    households : array-like of shape (n_samples,)
        Household id of each record (any hashable values, none missing).

    Returns
    -------
    ndarray of shape (n_samples,), dtype=float64
        Its mean over records is sdcMicro's ``hier_risk``, its sum ``hier_risk_ER``.

    Examples
    --------
    >>> household_risk([0.5, 0.5, 0.1], ["a", "a", "b"]).tolist()
    [0.75, 0.75, 0.1]
    """
    r = np.asarray(risk, dtype=np.float64)
    codes = household_codes(households, "households", caller="household_risk")
    if codes.size != r.size or r.ndim != 1:
        raise ValueError(f"risk ({r.size} rows) and households ({codes.size} rows) must be "
                         "1-dimensional of the same length.")
    return _household_risk(r, codes)


def _household_risk(r: NDArray[np.float64], codes: NDArray[np.intp]) -> NDArray[np.float64]:
    if r.size and r.max() < 1.0:
        log_safe = np.bincount(codes, weights=np.log1p(-r))
        return -np.expm1(log_safe)[codes]
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    safe = np.multiply.reduceat(1.0 - r[order], starts) if r.size else np.empty(0)
    per_household = np.empty(int(codes.max(initial=-1)) + 1)
    per_household[sorted_codes[starts]] = 1.0 - safe
    return per_household[codes]


@dataclass(frozen=True, eq=False)
class SurveyRisk:
    """Result of :func:`survey_risk`: per-record arrays (read-only) and :meth:`summary`.

    Attributes
    ----------
    keys : tuple of str
    risk, fk, Fk : ndarray of shape (n_samples,)
        Individual risk, sample frequency, estimated population frequency.
    household_risk : ndarray of shape (n_samples,) or None
        Risk of each record's household (``None`` without households).
    threshold : float
    ks : tuple of int
    weighted : bool
    missing : str
    strata : str or None
        The strata column the frequencies were counted within (``None``: none).
    """

    keys: tuple[str, ...]
    risk: NDArray[np.float64]
    fk: NDArray[np.int64]
    Fk: NDArray[np.float64]
    household_risk: NDArray[np.float64] | None
    threshold: float
    ks: tuple[int, ...]
    weighted: bool
    missing: str
    strata: str | None = None

    def summary(self) -> dict[str, Any]:
        """Plain numbers for JSON: global risk (mean individual risk), in %, expected
        re-identifications (sum), the count and share above ``threshold``, the household risk
        (mean over records, as sdcMicro) and its expected count, and ``fk < k`` counts;
        ``"strata"``: the strata column, when the counts were made within strata."""
        n = int(self.risk.size)
        expected = float(self.risk.sum())
        above = int((self.risk > self.threshold).sum())
        out: dict[str, Any] = {
            "n_records": n, "keys": list(self.keys), "weighted": self.weighted,
            "missing": self.missing, "global_risk": expected / n,
            "global_risk_pct": 100.0 * expected / n, "expected_reidentifications": expected,
            "max_risk": float(self.risk.max()), "threshold": self.threshold,
            "n_above_threshold": above, "share_above_threshold": above / n,
            "k_anonymity_violations": {str(k): int((self.fk < k).sum()) for k in self.ks},
        }
        if self.strata is not None:
            out["strata"] = self.strata
        if self.household_risk is not None:
            hier = float(self.household_risk.sum())
            out |= {"household_risk": hier / n, "household_risk_pct": 100.0 * hier / n,
                    "expected_household_reidentifications": hier}
        return out


def survey_risk(df: pd.DataFrame, keys: Any, *, weights: str | None = None,
                households: str | None = None, threshold: float = 0.05,
                ks: Any = (2, 3, 5), missing: str = "any",
                strata: str | None = None) -> SurveyRisk:
    """Individual, global and household disclosure risk of categorical key variables.

    Parameters
    ----------
    df : pandas.DataFrame
    keys : sequence of str
        Categorical key variables.
    weights : str, default=None
        Sampling-weight column (finite, > 0); ``None``: the data are the population and
        the risk is ``1/fk``.
    households : str, default=None
        Household-id column (none missing); adds the household risk.
    threshold : float in (0, 1], default=0.05
        Records with a risk above it are counted in :meth:`SurveyRisk.summary`.
    ks : sequence of int >= 2, default=(2, 3, 5)
        Count the records with ``fk < k`` (violating k-anonymity) for each.
    missing : {"any", "category"}, default="any"
        Missing key values, see :func:`frequencies`.
    strata : str, default=None
        Strata column (sdcMicro's ``strataVar``; none missing, not a key): ``fk`` and ``Fk``
        are counted within each stratum, and every risk follows from them.

    Returns
    -------
    SurveyRisk

    References
    ----------
    Franconi, L., Polettini, S. (2004), see :func:`individual_risk`; Hundepool, A. et al.
    Handbook on Statistical Disclosure Control, 2nd ed. (2024), section 3.3; Templ, M.
    Statistical Disclosure Control for Microdata, Springer (2017), chapter 3.

    Examples
    --------
    >>> df = pd.DataFrame({"sex": ["f", "f", "m"], "w": [10.0, 10.0, 5.0], "h": [1, 1, 2]})
    >>> res = survey_risk(df, ["sex"], weights="w", households="h")
    >>> res.fk.tolist(), res.summary()["k_anonymity_violations"]
    ([2, 2, 1], {'2': 1, '3': 3, '5': 3})
    """
    caller = "survey_risk"
    keys = check_keys(df, keys, caller=caller)
    missing = check_choice(missing, _MISSING, name="missing", caller=caller)
    threshold = check_threshold(threshold, caller=caller)
    ks = check_ks(ks, caller=caller)
    w = None if weights is None else check_weights(df, weights, caller=caller)
    hh = None if households is None else check_households(df, households, caller=caller)
    s = None if strata is None else check_strata(df, strata, keys, caller=caller)
    fk, Fk = frequency_counts(key_codes(df, keys, missing=missing), w, s)
    risk = individual_risk(fk, Fk)
    hier = None if hh is None else _household_risk(risk, hh)
    for array in (fk, Fk, risk, hier):
        if array is not None:
            array.flags.writeable = False
    return SurveyRisk(keys=keys, risk=risk, fk=fk, Fk=Fk, household_risk=hier,
                      threshold=threshold, ks=ks, weighted=w is not None, missing=missing,
                      strata=strata)
