"""Utility by analysis: can an analyst still get the answers the file is for? The weighted
estimates (:mod:`.analysis_estimates`), the regression coefficients with Karr's overlap
(:mod:`.analysis_models`), the pMSE and the classification accuracy
(:mod:`.analysis_learning`) of one original and its release, checked once and gathered in
one JSON-ready mapping (``Release.metrics["analysis_utility"]``).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .._base.validation import RandomState, resolve_seed
from .analysis_estimates import MAX_DOMAIN_LEVELS, VARIANCE_SENTENCE, Design

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Analyses", "utility_by_analysis"]

_CALLER = "utility_by_analysis"


@dataclass(frozen=True)
class Analyses:
    """The analyses to repeat on the release.

    Parameters
    ----------
    columns : tuple of str, default=()
        Numeric columns whose weighted totals and means are compared.
    ratios : tuple of (str, str), default=()
        ``(y, x)`` pairs: the ratio ``sum w y / sum w x``.
    tables : tuple of str, default=()
        Categorical columns: the weighted count of each of their values.
    by : str, default=None
        The domain column: each estimate also in each of its (at most 50) values.
    models : tuple of str, default=()
        Linear models ``"y ~ x1 + C(g)"``, fitted on both tables.
    target : str, default=None
        A categorical column (2 to 50 classes) a classifier predicts.
    features : tuple of str, default=None
        What the classifier reads; ``None``: every other column both tables hold, the
        survey roles aside.
    classifier : str, default="random_forest"
        A name of :data:`~microagg.metrics.analysis_learning.CLASSIFIERS`.
    test_share : float in (0, 1), default=0.3
        The share of the original rows held back to test the classifier.
    pmse : bool, default=True
        Whether to measure the propensity-score MSE.
    pmse_columns : tuple of str, default=None
        The columns of the pMSE model; ``None``: as ``features``.
    sample : int >= 100, default=10000
        The most rows the pMSE and the classifier read (a random sample of larger files).
    confidence : float in [0.5, 1), default=0.95
        The level of every interval.
    """

    columns: tuple[str, ...] = ()
    ratios: tuple[tuple[str, str], ...] = ()
    tables: tuple[str, ...] = ()
    by: str | None = None
    models: tuple[str, ...] = ()
    target: str | None = None
    features: tuple[str, ...] | None = None
    classifier: str = "random_forest"
    test_share: float = 0.3
    pmse: bool = True
    pmse_columns: tuple[str, ...] | None = None
    sample: int = 10_000
    confidence: float = 0.95


@dataclass(frozen=True)
class _Roles:
    weights: str | None
    households: str | None
    strata: str | None

    def names(self) -> set[str]:
        return {c for c in (self.weights, self.households, self.strata) if c is not None}


def _available(table: pd.DataFrame) -> str:
    return ", ".join(map(repr, map(str, table.columns)))


def _check_columns(original: pd.DataFrame, names: Sequence[str], parameter: str, *,
                   numeric: bool = False) -> tuple[str, ...]:
    import pandas as pd

    if isinstance(names, str):
        names = (names,)
    unknown = [str(c) for c in names if c not in original.columns]
    if unknown:
        raise ValueError(f"The {parameter!r} parameter of {_CALLER} names column(s) the "
                         f"original does not have: {', '.join(map(repr, unknown))}; "
                         f"available: {_available(original)}.")
    if numeric:
        for c in names:
            if not pd.api.types.is_numeric_dtype(original[c]) \
                    or pd.api.types.is_bool_dtype(original[c]):
                raise ValueError(f"The {parameter!r} parameter of {_CALLER} names column "
                                 f"{c!r} of dtype {original[c].dtype}; allowed: numeric "
                                 "columns (tabulate a categorical one with 'tables').")
    return tuple(str(c) for c in names)


def _check_options(original: pd.DataFrame, released: pd.DataFrame, a: Analyses) -> None:
    """Every rule of :class:`Analyses` against the two tables, before any work."""
    from .analysis_learning import CLASSIFIERS
    from .analysis_models import parse_formula

    _check_columns(original, a.columns, "columns", numeric=True)
    for pair in a.ratios:
        if len(pair) != 2:
            raise ValueError(f"The 'ratios' parameter of {_CALLER} holds (y, x) pairs; got "
                             f"{pair!r}.")
        _check_columns(original, pair, "ratios", numeric=True)
    _check_columns(original, a.tables, "tables")
    if a.by is not None:
        _check_columns(original, (a.by,), "by")
    for formula in a.models:
        parse_formula(formula, list(original.columns))
    if a.classifier not in CLASSIFIERS:
        raise ValueError(f"The 'classifier' parameter of {_CALLER} must be one of "
                         f"{', '.join(map(repr, CLASSIFIERS))}. Got {a.classifier!r} instead.")
    if not 0.0 < float(a.test_share) < 1.0:
        raise ValueError(f"The 'test_share' parameter of {_CALLER} must be in (0, 1). Got "
                         f"{a.test_share!r} instead.")
    if isinstance(a.sample, bool) or not isinstance(a.sample, numbers.Integral) \
            or a.sample < 100:
        raise ValueError(f"The 'sample' parameter of {_CALLER} must be an int >= 100. Got "
                         f"{a.sample!r} instead.")
    if not 0.5 <= float(a.confidence) < 1.0:
        raise ValueError(f"The 'confidence' parameter of {_CALLER} must be in [0.5, 1). Got "
                         f"{a.confidence!r} instead.")
    if a.target is not None:
        _check_target(original, released, a.target)


def _check_target(original: pd.DataFrame, released: pd.DataFrame, target: str) -> None:
    _check_columns(original, (target,), "target")
    classes = int(original[target].nunique(dropna=True))
    if not 2 <= classes <= MAX_DOMAIN_LEVELS:
        raise ValueError(f"The 'target' parameter of {_CALLER} names column {target!r}, "
                         f"which has {classes} distinct value(s) in the original; allowed: 2 "
                         f"to {MAX_DOMAIN_LEVELS} classes.")
    if target not in released.columns or len(released) != len(original):
        raise ValueError(f"The 'target' {target!r} needs the release to hold the column and "
                         f"the original's rows in the same order ({len(original):,}); it "
                         f"has {len(released):,} rows.")


def _weights(table: pd.DataFrame, roles: _Roles, fallback: NDArray[np.float64] | None
             ) -> NDArray[np.float64]:
    """The table's weights (checked), the original's row for row when the release dropped
    or blanked them, else 1 for every record."""
    from ._survey_checks import check_weights

    if roles.weights is None:
        return np.ones(len(table))
    if fallback is None:
        return check_weights(table, roles.weights, caller=_CALLER)
    if roles.weights in table.columns:
        try:
            return check_weights(table, roles.weights, caller=_CALLER)
        except ValueError:
            pass
    return fallback if len(fallback) == len(table) else np.ones(len(table))


def _codes(table: pd.DataFrame, name: str | None, fallback: NDArray[np.intp] | None
           ) -> NDArray[np.intp] | None:
    import pandas as pd

    if name is None:
        return None
    if name in table.columns and table[name].notna().all():
        return pd.factorize(table[name])[0].astype(np.intp)
    if fallback is not None and len(fallback) == len(table):
        return fallback
    return None


def _designs(original: pd.DataFrame, released: pd.DataFrame, roles: _Roles
             ) -> tuple[Design, Design]:
    from ._survey_checks import check_households, check_strata

    w = _weights(original, roles, None)
    psu = (np.arange(len(original)) if roles.households is None
           else check_households(original, roles.households, caller=_CALLER))
    strata = (None if roles.strata is None else
              check_strata(original, roles.strata, (), caller=_CALLER).astype(np.intp))
    released_psu = _codes(released, roles.households, psu)
    released_strata = _codes(released, roles.strata, strata)
    return (Design(w, psu, strata),
            Design(_weights(released, roles, w),
                   np.arange(len(released)) if released_psu is None else released_psu,
                   released_strata))


def _features(original: pd.DataFrame, released: pd.DataFrame, given: tuple[str, ...] | None,
              roles: _Roles, target: str | None, parameter: str) -> tuple[str, ...]:
    if given is not None:
        return _check_columns(original, given, parameter)
    skip = roles.names() | {target}
    return tuple(str(c) for c in original.columns if c in released.columns and c not in skip)


def _sample(n: int, size: int, rng: np.random.Generator) -> NDArray[np.intp] | None:
    return None if n <= size else np.sort(rng.choice(n, size, replace=False))


def _rows(table: pd.DataFrame, rows: NDArray[np.intp] | None) -> pd.DataFrame:
    return table if rows is None else table.iloc[rows]


def _pmse(original: pd.DataFrame, released: pd.DataFrame, columns: tuple[str, ...],
          sample: int, rng: np.random.Generator) -> dict[str, Any]:
    from .analysis_learning import encode_pair, pmse

    rows_o = _sample(len(original), sample, rng)
    rows_r = rows_o if len(released) == len(original) else _sample(len(released), sample, rng)
    Xo, Xr = encode_pair(_rows(original, rows_o), _rows(released, rows_r), columns)
    if Xo.shape[1] == 0:  # every column constant in both: nothing tells them apart
        n = len(Xo) + len(Xr)
        return {"pmse": 0.0, "null": 0.0, "ratio": float("nan"), "parameters": 1,
                "share_released": len(Xr) / n, "n_rows": len(Xo), "columns": list(columns)}
    return pmse(Xo, Xr).as_dict() | {"columns": list(columns)}


def _classification(original: pd.DataFrame, released: pd.DataFrame, a: Analyses,
                    features: tuple[str, ...], rng: np.random.Generator) -> dict[str, Any]:
    from .analysis_learning import classification_accuracy, encode_pair

    assert a.target is not None
    rows = _sample(len(original), a.sample, rng)
    o, r = _rows(original, rows), _rows(released, rows)
    Xo, Xr = encode_pair(o, r, features)
    y_o = o[a.target].astype(object).where(o[a.target].notna(), None).to_numpy()
    y_r = r[a.target].astype(object).where(r[a.target].notna(), None).to_numpy()
    known = np.array([v is not None for v in y_o], dtype=bool)  # the original's classes
    result = classification_accuracy(Xo[known], Xr[known], y_o[known], y_r[known],
                                     classifier=a.classifier, test_share=a.test_share,
                                     random_state=rng, target=a.target)
    return result.as_dict() | {"features": list(features)}


def _summary(estimates: list[dict[str, Any]]) -> dict[str, Any]:
    """The figure that matters first: how many released estimates fall inside the
    original's interval, and the one that moved most (outside the interval first)."""
    if not estimates:
        return {}
    moved = [e for e in estimates if e["relative_difference"] is not None]
    worst = max(moved, key=lambda e: (not e["inside_ci"], abs(e["relative_difference"])),
                default=None)
    inside = sum(bool(e["inside_ci"]) for e in estimates)
    return {"n_estimates": len(estimates), "inside_ci": inside,
            "inside_ci_share": inside / len(estimates), "worst": worst}


def utility_by_analysis(original: pd.DataFrame, released: pd.DataFrame,
                        analyses: Analyses | None = None, *, weights: str | None = None,
                        households: str | None = None, strata: str | None = None,
                        random_state: RandomState = None) -> dict[str, Any]:
    """The analyses repeated on the original and on the release, side by side.

    Parameters
    ----------
    original, released : pandas.DataFrame
        The table before protection and the published one (the same records; row for row
        for a ``target``).
    analyses : Analyses, default=None
        ``None``: the pMSE only.
    weights, households, strata : str, default=None
        The survey roles: the sampling weight (finite, > 0; equal weights without it), the
        household id (the primary sampling unit of the standard errors; the record without
        it), the design strata.
    random_state : None, int >= 0 or numpy.random.Generator
        The pMSE's and the classifier's samples and the classifier's split; recorded.

    Returns
    -------
    dict
        ``"variance"`` (the estimator in one sentence), ``"estimates"`` (each
        :class:`~microagg.metrics.analysis_estimates.Estimate` as a dict) with
        ``"estimates_summary"``, ``"models"`` (per formula its coefficients and
        ``"mean_overlap"``), ``"pmse"``, ``"classification"``, ``"random_state"``.

    Raises
    ------
    ValueError
        A column the original lacks, a domain or target outside 1 (2) to 50 values, a
        formula naming unknown columns, weights missing, zero or negative.

    References
    ----------
    Karr et al. (2006), The American Statistician 60(3); Woo et al. (2009), J. Privacy and
    Confidentiality 1(1); Snoke et al. (2018), JRSS A 181(3).
    """
    a = Analyses() if analyses is None else analyses
    roles = _Roles(weights, households, strata)
    _check_options(original, released, a)
    seed, rng = resolve_seed(random_state)
    designs = _designs(original, released, roles)
    out: dict[str, Any] = {"variance": VARIANCE_SENTENCE.format(
        units="households" if households else "records",
        strata=f", within the strata of {strata!r}" if strata else ""),
        "weights": weights, "random_state": seed}
    if a.columns or a.ratios or a.tables:
        from .analysis_estimates import weighted_estimates

        found = [e.as_dict() for e in weighted_estimates(
            original, released, designs=designs, columns=a.columns, ratios=a.ratios,
            tables=a.tables, by=a.by, confidence=a.confidence)]
        out["estimates"], out["estimates_summary"] = found, _summary(found)
    if a.models:
        out["models"] = _models(original, released, a, designs, roles)
    if a.pmse:
        columns = _features(original, released, a.pmse_columns, roles, None, "pmse_columns")
        out["pmse"] = _pmse(original, released, columns, a.sample, rng)
    if a.target is not None:
        features = _features(original, released, a.features, roles, a.target, "features")
        out["classification"] = _classification(original, released, a, features, rng)
    return out


def _models(original: pd.DataFrame, released: pd.DataFrame, a: Analyses,
            designs: tuple[Design, Design], roles: _Roles) -> dict[str, Any]:
    from .analysis_models import parse_formula, regression_overlap

    out: dict[str, Any] = {}
    weighted = roles.weights is not None
    for text in a.models:
        coefficients = regression_overlap(
            original, released, parse_formula(text, list(original.columns)),
            weights=(designs[0].weights, designs[1].weights) if weighted else None,
            psu=(designs[0].psu, designs[1].psu) if weighted else None,
            confidence=a.confidence)
        overlaps = [c.overlap for c in coefficients if np.isfinite(c.overlap)]
        out[text] = {"coefficients": [c.as_dict() for c in coefficients],
                     "mean_overlap": float(np.mean(overlaps)) if overlaps else float("nan")}
    return out
