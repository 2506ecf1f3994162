"""The headline measures: one loss and one risk per kind of release, each explained in one
line, and the glossary of every other figure a release reports.

One place decides which loss a data steward reads first, so that ``anonymize``'s summary,
``microagg sweep`` and the HTML report agree:

- numeric releases: information loss ``100 * SSE / SST`` on standardized quasi-identifiers
  (Domingo-Ferrer & Mateo-Sanz 2002), the measure of the microaggregation literature; it is
  the mean over the quasi-identifiers of the share of each column's variation removed;
- generalized (categorical or mixed) releases: the normalized certainty penalty (Xu et al.
  2006), which covers every quasi-identifier where SSE/SST covers only the numeric ones.

The headline risk is the distance-based record linkage (DLD) where the published values are
numbers, else the class re-identification risk: the mean over records of ``1 / class size``,
the average success of an intruder who knows a person's quasi-identifiers and picks one record
of the matching published class (the "prosecutor" average risk of El Emam & Dankar 2008; the
individual risk of sdcMicro without weights). It needs no distance between generalized values.

References
----------
Domingo-Ferrer, J. and Mateo-Sanz, J. M. "Practical data-oriented microaggregation for
statistical disclosure control." IEEE TKDE 14(1), 2002.
Xu, J. et al. "Utility-based anonymization using local recoding." KDD 2006.
El Emam, K. and Dankar, F. K. "Protecting privacy using k-anonymity." JAMIA 15(5), 2008.
Domingo-Ferrer, J. and Torra, V. "Disclosure risk assessment in statistical microdata
protection via advanced record linkage." Statistics and Computing 13, 2003.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CLASS_RISK",
    "GENERALIZED_LOSS",
    "GLOSSARY",
    "LABELS",
    "NUMERIC_LOSS",
    "NUMERIC_RISK",
    "Measure",
    "class_risk",
    "column_losses",
    "explain",
    "headline_loss",
    "headline_risk",
]


@dataclass(frozen=True)
class Measure:
    """A reported figure: where it lives in ``Release.metrics``, its name and short name,
    the factor that turns the stored value into the shown percentage, and what it means in
    one line."""

    key: str
    label: str
    short: str
    scale: float
    explanation: str

    def percent(self, metrics: Mapping[str, Any]) -> float | None:
        """The figure in percent, or ``None`` when the release does not have it."""
        value = metrics.get(self.key)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            return None
        return float(value) * self.scale


NUMERIC_LOSS = Measure(
    "information_loss", "information loss (SSE/SST)", "IL", 1.0,
    "share of the quasi-identifiers' variation removed by the masking, each column "
    "standardized, i.e. the mean over the columns: 0 % = nothing lost, 100 % = every value "
    "replaced by its column mean (Domingo-Ferrer & Mateo-Sanz 2002)")
GENERALIZED_LOSS = Measure(
    "ncp", "normalized certainty penalty (NCP)", "NCP", 100.0,
    "share of each quasi-identifier's range (or hierarchy) that a published value covers, "
    "averaged over records and columns: 0 % = exact values, 100 % = fully suppressed "
    "(Xu et al. 2006)")
NUMERIC_RISK = Measure(
    "dld_risk", "record linkage risk (DLD)", "DLD", 100.0,
    "share of records an intruder holding the original values links to the right published "
    "record by nearest distance (Domingo-Ferrer & Torra 2003)")
CLASS_RISK = Measure(
    "class_risk", "re-identification risk by class", "class risk", 100.0,
    "mean over records of 1 / size of its published class: the chance that an intruder who "
    "knows a person's quasi-identifiers picks that person's record (El Emam & Dankar 2008)")

GLOSSARY: Mapping[str, str] = {
    "information_loss": NUMERIC_LOSS.explanation,
    "information_loss_original_units": (
        "SSE/SST in the columns' own units: dominated by the column with the largest "
        "variance; shown for comparison, not as the headline"),
    "information_loss_columns": "the quasi-identifiers that enter SSE/SST (non-constant)",
    "ncp": GENERALIZED_LOSS.explanation,
    "ncp_measured_on": ("the groups the NCP spans: a release's own groups, or in a review of "
                        "two files the classes of identical published records"),
    "il_omega": ("IL(Omega): the generalization loss summed over the equivalence classes "
                 "(class size x the widths of its intervals and hierarchy nodes)"),
    "il_omega_normalized": "IL(Omega) divided by its largest possible value: 0 to 1",
    "utility_loss": ("utility loss UL: mean over records of the root-mean-square loss of its "
                     "quasi-identifiers (0 = nothing lost, 1 = all lost)"),
    "privacy_of_quasi_identifiers": (
        "privacy of the quasi-identifiers P(Q): how much the classes lower the entropy of "
        "the records' identities (0 = every record unique, 1 = one class)"),
    "privacy_of_sensitive": (
        "privacy of the sensitive values P(S): how evenly each class spreads its sensitive "
        "values (0 = every class homogeneous, 1 = as diverse as possible)"),
    "privacy_of_release": "P(Q) and P(S) combined: sqrt((P(Q)^2 + P(S)^2) / 2)",
    "query_answering": ("the same random counting queries run on the original and the "
                        "published file: more published answers = people harder to single "
                        "out"),
    "homogeneity": ("classes whose records all share one sensitive value: placing someone in "
                    "such a class reveals the value"),
    "distinct_l": "the fewest distinct sensitive values in any class (distinct l-diversity)",
    "dld_risk": NUMERIC_RISK.explanation,
    "dld_risk_known": "the same linkage using only the columns the intruder is said to hold",
    "dld_risk_numeric_only": ("the distance linkage on the numeric quasi-identifiers alone "
                              "(ignores the categorical ones: a lower bound)"),
    "dld_risk_sampled_records": "records the linkage risk was estimated on (large files)",
    "class_risk": CLASS_RISK.explanation,
    "risk_per_record_mean": CLASS_RISK.explanation,
    "share_in_classes_below_5": "share of records in published classes of fewer than 5",
    "complete_records": ("records observed in every numeric quasi-identifier: the linkage "
                         "risk and the moments are computed on these"),
    "il1s": ("IL1s: mean absolute change of a value, in units of sqrt(2) x its column's "
             "standard deviation (Yancey, Winkler & Creecy 2002)"),
    "il1s_total": ("IL1s as sdcMicro reports it: the sum over all cells (n x p times the "
                   "per-cell mean il1s)"),
    "eigenvalue_utility": ("sdcMicro's eigenvalue measure: the relative change of the "
                           "eigenvalues of the standardized covariance (0 = the same spectrum)"),
    "interval_disclosure": ("interval disclosure (sdcMicro's dRisk): share of records whose "
                            "original values all lie within +-p standard deviations of the "
                            "published ones (Mateo-Sanz, Sebe & Domingo-Ferrer 2004)"),
    "survey_risk": ("disclosure risk before and after, as statistical offices measure it: "
                    "individual, global and household risk (sdcMicro's measure_risk)"),
    "column_loss": "share of each quasi-identifier's variation removed (SSE/SST per column, %)",
    "mean_change_pct": "mean relative change of the column means (%)",
    "variance_change_pct": "mean relative change of the column variances (%)",
    "covariance_change_pct": "mean relative change of the covariances (%)",
    "correlation_change": "mean absolute change of the correlations (0 to 2)",
    "certified_gap": ("most by which the grouping's SSE can exceed the lowest SSE of any "
                      "grouping into groups of k or more, proved by a lower bound (%)"),
    "certificate": ("the proof behind the certified gap: the SSE, the lower bound, the best "
                    "SSE found while bounding, which bound proved it"),
    "il_rand": "1 - Rand index of a k-means clustering before and after masking",
    "il_ari": "1 - adjusted Rand index of the same clusterings",
    "il_jaccard": "1 - Jaccard pair index of the same clusterings",
    "il_fuzzy_rand": "1 - fuzzy Rand index of fuzzy c-means clusterings before and after",
    "n_groups": "groups of records that share one representative",
    "group_size_min": "records in the smallest group",
    "group_size_max": "records in the largest group",
    "group_size_mean": "mean records per group",
}
"""One line per figure of ``Release.metrics``: what it means (:func:`explain`)."""

LABELS: Mapping[str, str] = {
    "information_loss": "information loss, SSE/SST on z-scores (%)",
    "information_loss_original_units": "information loss, SSE/SST in original units (%)",
    "information_loss_columns": "columns in SSE/SST",
    "ncp": "normalized certainty penalty, NCP (0 to 1)",
    "ncp_measured_on": "NCP measured over",
    "il_omega": "IL(Omega), generalization loss",
    "il_omega_normalized": "IL(Omega), normalized (0 to 1)",
    "utility_loss": "utility loss, UL (0 to 1)",
    "privacy_of_quasi_identifiers": "privacy of the quasi-identifiers, P(Q) (0 to 1)",
    "privacy_of_sensitive": "privacy of the sensitive values, P(S) (0 to 1)",
    "privacy_of_release": "privacy of the release, P(D') (0 to 1)",
    "distinct_l": "distinct l per sensitive column",
    "dld_risk": "record linkage risk, DLD (0 to 1)",
    "dld_risk_known": "record linkage risk on the intruder's columns (0 to 1)",
    "dld_risk_numeric_only": "record linkage risk, numeric columns only (0 to 1)",
    "class_risk": "re-identification risk by class (0 to 1)",
    "risk_per_record_mean": "re-identification risk by class (0 to 1)",
    "share_in_classes_below_5": "share of records in classes below 5 (0 to 1)",
    "complete_records": "records observed in every numeric quasi-identifier",
    "il1s": "IL1s",
    "mean_change_pct": "change of the means (%)",
    "variance_change_pct": "change of the variances (%)",
    "covariance_change_pct": "change of the covariances (%)",
    "correlation_change": "change of the correlations",
    "n_groups": "groups", "group_size_min": "smallest group", "group_size_max": "largest group",
    "group_size_mean": "mean group size",
}
"""A readable name, with its unit, for each figure of ``Release.metrics``."""

_PREFIX = {"intersection_attack_": ("intersection attack (linking attribute group by "
                                    "attribute group, then intersecting): ")}


def explain(key: str) -> str:
    """The one-line meaning of a metric key; an empty string for an unknown key.

    Examples
    --------
    >>> explain("ncp").startswith("share of each quasi-identifier's range")
    True
    """
    if key in GLOSSARY:
        return GLOSSARY[key]
    for prefix, text in _PREFIX.items():
        if key.startswith(prefix):
            return text + key[len(prefix):].replace("_", " ")
    return ""


def _first_present(measures: tuple[Measure, ...], metrics: Mapping[str, Any]
                   ) -> tuple[Measure, float] | None:
    """The first of ``measures`` the release has, with its value in percent."""
    for measure in measures:
        value = measure.percent(metrics)
        if value is not None:
            return measure, value
    return None


def headline_loss(metrics: Mapping[str, Any]) -> tuple[Measure, float] | None:
    """The loss a reader sees first and its value in percent: NCP for a generalized release
    (it has ``ncp``), else SSE/SST; ``None`` when the release has neither.

    Examples
    --------
    >>> measure, value = headline_loss({"information_loss": 12.5, "ncp": 0.2})
    >>> measure.key, value
    ('ncp', 20.0)
    """
    return _first_present((GENERALIZED_LOSS, NUMERIC_LOSS), metrics)


def headline_risk(metrics: Mapping[str, Any]) -> tuple[Measure, float] | None:
    """The risk a reader sees first and its value in percent: DLD when the release has it
    (numeric published values), else the class re-identification risk; ``None`` if neither.

    Examples
    --------
    >>> measure, value = headline_risk({"class_risk": 0.2})
    >>> measure.label, value
    ('re-identification risk by class', 20.0)
    """
    return _first_present((NUMERIC_RISK, CLASS_RISK), metrics)


def class_risk(classes: ArrayLike) -> float:
    """Mean over records of ``1 / size of its class`` (see :data:`CLASS_RISK`).

    Examples
    --------
    >>> class_risk([0, 0, 1, 1, 1, 1])  # 2 records at 1/2, 4 at 1/4
    0.3333333333333333
    """
    cls = np.unique(np.asarray(classes).ravel(), return_inverse=True)[1].ravel()
    if cls.size == 0:
        raise ValueError("class_risk needs at least one record; got 0.")
    sizes = np.bincount(cls)
    return float(np.mean(1.0 / sizes[cls]))


def column_losses(original: ArrayLike, masked: ArrayLike) -> NDArray[np.float64]:
    """Per column, ``100 * sum (x - x')^2 / sum (x - mean x)^2`` over the cells observed in
    both tables (a missing value, NaN, in either is not counted).

    With mean aggregation this is the share of the column's variance the masking removed;
    the numeric headline (:data:`NUMERIC_LOSS`) is the mean of these over the non-constant
    columns. A column with fewer than two observed cells, or constant, gives NaN.

    Examples
    --------
    >>> column_losses([[0.0, 1.0], [2.0, np.nan], [4.0, 3.0]],
    ...               [[1.0, 2.0], [1.0, np.nan], [4.0, 2.0]]).round(2).tolist()
    [25.0, 100.0]
    """
    A = np.asarray(original, dtype=np.float64)
    B = np.asarray(masked, dtype=np.float64)
    if A.ndim == 1:
        A, B = A[:, None], B.reshape(-1, 1)
    if A.shape != B.shape or A.ndim != 2:
        raise ValueError(f"original has shape {A.shape} but masked has shape {B.shape}.")
    out = np.full(A.shape[1], np.nan)
    for j in range(A.shape[1]):
        seen = np.isfinite(A[:, j]) & np.isfinite(B[:, j])
        a, b = A[seen, j], B[seen, j]
        if a.size < 2:
            continue
        scale = float(np.max(np.abs(a))) or 1.0  # scale-free: no overflow at 1e200
        a, b = a / scale, b / scale
        total = float(((a - a.mean()) ** 2).sum())
        if total > 0:
            out[j] = 100.0 * float(((a - b) ** 2).sum()) / total
    return out
