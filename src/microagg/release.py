"""The release pipeline: validate, scale, partition, aggregate, verify, measure -> Release."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from . import __version__
from ._advice import low_utility_message, time_budget
from ._pipeline.result import Release
from ._scaling import (
    SAFE_MAGNITUDE,
    SCALINGS,
    apply_scaler,
    fit_scaler,
    from_safe_range,
    safe_exponents,
    to_safe_range,
)
from ._validation import RandomState, check_k, check_labels, resolve_seed
from .aggregate import (
    AGGREGATORS,
    NOISY_AGGREGATORS,
    aggregate,
    group_ranges,
    is_noisy,
)
from .aggregate import aggregation_params as checked_aggregation_params
from .dp import check_epsilon, dp_microaggregation
from .exceptions import (
    ConstantColumnWarning,
    InternalError,
    LowUtilityWarning,
    PrivacyLeakWarning,
    PrivacyViolationError,
    SchemaError,
)
from .fuzzy import check_fuzzy_representatives
from .generalize import NUMERIC_MODES, generalize
from .hierarchy import Hierarchy
from .metrics import (
    clustering_information_loss,
    dld_risk,
    fuzzy_clustering_information_loss,
    group_size_summary,
    homogeneity,
    il1s,
    il_omega,
    information_loss,
    intersection_attack,
    moment_changes,
    normalized_certainty_penalty,
    privacy_of_quasi_identifiers,
    privacy_of_release,
    privacy_of_sensitive,
    query_answering,
    utility_loss,
)
from .models import (
    DIVERSITIES,
    GROUND_DISTANCES,
    ILOmegaCost,
    SensitiveDistribution,
    check_k_anonymity,
    check_l,
    check_l_diversity,
    check_t,
    check_t_closeness,
    enforce_l_diversity,
    enforce_t_closeness,
    k_anonymity,
    l_diversity,
)
from .partition import PARTITIONERS, get_partitioner
from .partition.attribute_groups import resolve_attribute_groups
from .partition.dissimilar import Columns
from .partition.mixed import MixedData
from .schema import check_unique_columns
from .synthetic import check_synthetic_moments

__all__ = ["CATEGORICAL_AGGREGATIONS", "SCALINGS", "Release", "anonymize"]

DLD_SAMPLE_ABOVE = 100_000
DLD_SAMPLE = 2_000
"""Files with more than DLD_SAMPLE_ABOVE rows get the DLD risk estimated on DLD_SAMPLE
records, each linked against all the originals (an unbiased estimate, standard error at most
0.5 / sqrt(2000) = 0.011, and sqrt(r (1 - r) / 2000) for a risk r: 0.008 at r = 0.15): a
nearest-neighbour query in 10 dimensions costs about 0.8 ms per record at 10^6 records."""

CATEGORICAL_AGGREGATIONS = ("generalize", "mode")
"""Representatives of nominal quasi-identifiers in a mixed release."""


def _as_names(value: str | Sequence[str] | None, role: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    names = tuple(value)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise TypeError(f"Column names in {role!r} must be strings. Got {bad!r}.")
    return names


def _validate_roles(
    df: pd.DataFrame, quasi_identifiers: tuple[str, ...], sensitive: tuple[str, ...],
    identifiers: tuple[str, ...],
) -> None:
    """Every role names existing columns, no column has two roles; lists every problem."""
    check_unique_columns(df.columns, source="the DataFrame")  # else df[name] is ambiguous
    problems: list[str] = []
    available = [str(c) for c in df.columns]
    if not quasi_identifiers:
        problems.append("No quasi-identifiers given: name at least one column to mask.")
    seen: dict[str, str] = {}
    for role, names in (("quasi_identifiers", quasi_identifiers), ("sensitive", sensitive),
                        ("identifiers", identifiers)):
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            problems.append(f"{role} lists {', '.join(map(repr, dup))} more than once.")
        for name in names:
            if name not in df.columns:
                problems.append(f"Unknown column {name!r} in {role}.")
            elif name in seen and seen[name] != role:
                problems.append(f"Column {name!r} is both in {seen[name]} and in {role}.")
            seen.setdefault(name, role)
    if problems:
        if any(p.startswith("Unknown column") for p in problems):
            problems.append(f"Available columns: {', '.join(map(repr, available))}.")
        raise SchemaError(" ".join(problems))


def _quasi_identifier_matrix(df: pd.DataFrame, columns: tuple[str, ...]) -> NDArray[np.float64]:
    """The quasi-identifiers as float64, with errors that name columns, dtypes and counts."""
    not_numeric = [
        f"{c!r} (dtype {df[c].dtype})" for c in columns
        if not (pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]))
    ]
    if not_numeric:
        raise SchemaError(
            "Quasi-identifiers must be numeric for the numeric methods; not numeric: "
            f"{', '.join(not_numeric)}. Encode them, or pass them as sensitive or other columns."
        )
    values = df.loc[:, list(columns)].to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(values)
    if not finite.all():
        bad = [
            f"{c!r}: {int(n_nan)} missing, {int(n_inf)} infinite"
            for c, n_nan, n_inf in zip(
                columns, np.isnan(values).sum(axis=0), np.isinf(values).sum(axis=0), strict=True
            )
            if n_nan or n_inf
        ]
        raise SchemaError(
            f"Quasi-identifiers contain missing or infinite values in {len(df)} rows checked "
            f"({'; '.join(bad)}). Impute or drop them first; microagg never imputes silently."
        )
    return np.ascontiguousarray(values)


def _bounds_for(
    df: pd.DataFrame, qi: tuple[str, ...], values: NDArray[np.float64],
    bounds: Mapping[str, Sequence[float]] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[str, ...]]:
    """Public bounds per quasi-identifier: from ``bounds``, else the data's range (named)."""
    given = dict(bounds or {})
    unknown = sorted(set(given) - set(qi))
    if unknown:
        raise SchemaError(
            f"bounds name column(s) {', '.join(map(repr, unknown))} that are not "
            f"quasi-identifiers; quasi-identifiers: {', '.join(map(repr, qi))}."
        )
    lower = values.min(axis=0)
    upper = values.max(axis=0)
    for j, col in enumerate(qi):
        if col not in given:
            continue
        pair = given[col]
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds[{col!r}] must be a pair (lower, upper) of numbers. Got {pair!r}."
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
            raise ValueError(
                f"bounds[{col!r}] must be finite with lower <= upper. Got ({lo}, {hi})."
            )
        lower[j], upper[j] = lo, hi
    with np.errstate(over="ignore"):
        span = upper - lower
    wide = [f"{col!r} (from {lower[j]:g} to {upper[j]:g})"
            for j, col in enumerate(qi) if not np.isfinite(span[j])]
    if wide:
        raise SchemaError(
            f"The bounds of {', '.join(wide)} span more than the largest float (1.8e308); the "
            "epsilon-DP release rescales each column by its bounds' span. Divide the column "
            "by a power of ten (e.g. 1e10) first.")
    from_data = tuple(c for c in qi if c not in given)
    return lower, upper, from_data


def _syntactic_k_check(k_required: int | None, achieved: int) -> Mapping[str, Any]:
    return MappingProxyType({
        "required": k_required,
        "achieved": achieved,
        "model": "k-anonymity: smallest number of published records sharing the same "
                 "quasi-identifier values, counted on the published data"
                 + ("" if k_required is not None else
                    " (reported, not promised: a noisy aggregation gives each record its own "
                    "values)"),
    })


def _check_noise_within_groups(values: NDArray[np.float64], masked: NDArray[np.float64],
                               labels: NDArray[np.intp], qi: tuple[str, ...]) -> None:
    """Every noisy value must lie in its group's [min, max] on the original data."""
    lo, hi, _ = group_ranges(values, labels)
    tol = 1e-9 * np.maximum(1.0, np.abs(values).max(axis=0))
    outside = (masked < lo[labels] - tol) | (masked > hi[labels] + tol)
    if outside.any():
        cols = [qi[j] for j in np.flatnonzero(outside.any(axis=0))]
        raise PrivacyViolationError(
            f"{int(outside.sum())} published values of {', '.join(map(repr, cols))} lie "
            "outside their group's range. Nothing was released. This is a bug in microagg."
        )


def anonymize(
    df: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str],
    k: int,
    method: str | None = None,
    sensitive: str | Sequence[str] = (),
    identifiers: str | Sequence[str] = (),
    aggregation: str | None = None,
    aggregation_params: Mapping[str, Any] | None = None,
    scaling: str | None = None,
    random_state: RandomState = None,
    method_params: Mapping[str, Any] | None = None,
    epsilon: float | None = None,
    bounds: Mapping[str, Sequence[float]] | None = None,
    intruder_knows: str | Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike[str]] | None = None,
    l: float | None = None,
    diversity: str = "distinct",
    diversity_c: float = 2.0,
    t: float | None = None,
    t_distance: str = "auto",
    attribute_groups: str | Sequence[Sequence[str]] | None = None,
    n_attribute_groups: int | None = None,
    categorical_aggregation: str = "generalize",
    clustering_il: int | None = None,
    blocking: str | None = None,
    block_size: int = 10_000,
    n_jobs: int | None = None,
) -> Release:
    """Mask the quasi-identifiers of ``df`` by microaggregation and return a verified release.

    Records are grouped on the scaled quasi-identifiers (groups of at least ``k``) and each
    group's quasi-identifiers are replaced by the group's representative, computed on the
    original scale. Identifiers are dropped; sensitive and other columns pass through
    unchanged; the row order is kept. The achieved k-anonymity is re-derived from the
    published quasi-identifiers and a shortfall raises :class:`PrivacyViolationError`.

    Two further modes:

    * a noisy aggregation (``aggregation="rho"`` with ``rho > 0``, or ``"random-k"``) gives
      every record its own value inside its group's range. ``checks["group_k"]`` then holds
      the group size the noise is drawn over (verified, at least ``k``) and
      ``checks["k_anonymity"]`` the syntactic k of the published values (reported, usually
      1). Neither mode is differential privacy.
    * ``epsilon=...`` makes an epsilon-differentially private release (:mod:`microagg.dp`):
      an insensitive partition on the bound-rescaled quasi-identifiers, Laplace noise on the
      group means, rows shuffled. The noise comes from fresh operating-system entropy, not
      from ``random_state`` (a recorded seed would let anyone remove it), so such a release
      cannot be reproduced. Every published column must be a quasi-identifier (other
      columns would void the guarantee) and the bounds should come from ``bounds``.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent.
    quasi_identifiers : str or sequence of str
        Numeric columns to mask (key variables an intruder may know).
    k : int
        Minimum group size, ``2 <= k <= len(df)``.
    method : str, default=None
        A partitioner name, see :data:`microagg.partition.PARTITIONERS`; ``None`` means
        ``"mdav"`` (and the insensitive partition with ``epsilon``).
    sensitive : str or sequence of str, default=()
        Confidential columns: published unchanged (later privacy models check them).
    identifiers : str or sequence of str, default=()
        Direct identifiers: removed from the release.
    aggregation : {"mean", "median", "mode", "rho", "random-k", "interval"}, default=None
        Group representative for the quasi-identifiers (see
        :data:`~microagg.aggregate.AGGREGATORS`); ``None`` means ``"mean"``, and
        ``"interval"`` for ``cdt`` (which publishes ranges). ``"interval"`` exists only for
        releases that generalize (categorical quasi-identifiers, ``cdt``).
    aggregation_params : mapping, default=None
        Parameters of the aggregation, e.g. ``{"rho": 0.5}``.
    scaling : {"standard", "minmax", "none"}, default=None
        Scaling of the quasi-identifiers for the distances (z-scores with ddof=1, min-max to
        [0, 1], or none; ``None`` means ``"standard"``). It affects grouping only;
        aggregation uses the original values. Not allowed with ``epsilon`` (the bounds scale).
    random_state : None, int or numpy.random.Generator, default=None
        The single source of randomness. ``None`` draws a seed, which is recorded in
        ``Release.seed`` so that the release can be reproduced.
    method_params : mapping, default=None
        Extra parameters of the method (e.g. ``{"gamma": 0.5}`` for ``vmdav``).
    epsilon : float, default=None
        Make an epsilon-differentially private release with this budget (> 0).
    bounds : mapping of column -> (lower, upper), default=None
        Public bounds of the quasi-identifiers for ``epsilon``. Columns left out get the
        data's range, with a :class:`PrivacyLeakWarning`: then the guarantee does not hold.
    intruder_knows : str or sequence of str, default=None
        Quasi-identifiers an intruder holds; adds ``metrics["dld_risk_known"]``, the linkage
        risk on those columns only.
    hierarchies : mapping of column -> Hierarchy or path, default=None
        Generalization hierarchies (ARX-style CSV files or :class:`Hierarchy` objects). A
        quasi-identifier with a hierarchy, or with a non-numeric type, is categorical: the
        release then uses a mixed-data method (``mage`` by default) and publishes each
        categorical value as its group's closest common generalization; numeric
        quasi-identifiers get the group mean (``aggregation="mean"``) or the group's
        interval (``aggregation="interval"``).
    l : float, default=None
        Require l-diversity of every sensitive column in every published class: failing
        groups are dissolved and their records reassigned (seed 002, section 3), and the
        achieved l is re-derived from the published data.
    diversity : {"distinct", "entropy", "recursive"}, default="distinct"
    diversity_c : float, default=2.0
        The constant c of recursive (c, l)-diversity.
    t : float, default=None
        Require t-closeness of every sensitive column: the Earth Mover's Distance between
        each published class's distribution and the table's is at most ``t``; classes are
        merged (the farthest with its cheapest partner) until it holds, and the achieved t
        is re-derived from the published data.
    t_distance : {"auto", "equal", "ordered", "hierarchical"}, default="auto"
        Ground distance of the EMD: ``auto`` is hierarchical for a sensitive column with a
        hierarchy (in ``hierarchies``), ordered for a numeric one, equal otherwise.
    attribute_groups : {"individual", "correlation"} or sequence of sequences of str
        Microaggregate groups of quasi-identifiers separately (seed 001, section 2.3):
        ``"individual"`` one column at a time (per-variable microaggregation, by default
        with the optimal univariate method), ``"correlation"`` groups of correlated columns
        (Nin, Herranz & Torra 2008), or the groups listed. Each group gets its own partition
        of groups of at least ``k`` (``method``; ``None`` means ``univariate-optimal`` for a
        single column and ``mdav`` for several). The published records are then NOT
        k-anonymous: ``checks["k_anonymity"]`` reports the real k-anonymity (smallest number
        of identical published records, often 1) with ``required: None``, a
        :class:`PrivacyLeakWarning` says so, and ``metrics`` add the intersection attack.
    n_attribute_groups : int, default=None
        Number of groups for ``attribute_groups="correlation"`` (default: about three
        columns per group).
    categorical_aggregation : {"generalize", "mode"}, default="generalize"
        Representative of a group's nominal quasi-identifiers: the closest common
        generalization in the hierarchy (semantic microaggregation; ``*`` with a flat
        hierarchy when the values differ) or the group's most frequent value (Torra 2004).
        Ordinal quasi-identifiers (pandas ordered categoricals without a hierarchy) always get
        the group's median category (or ``[low, high]`` with ``aggregation="interval"``).
    blocking : {"kd", "pca", "vp"}, default=None
        Run ``method`` block by block (:mod:`microagg.partition.blocking`): the records are
        split at median scores into blocks of at most ``block_size`` and the method runs in
        each, in parallel. For large files: far faster than one exact run, at a small
        information-loss cost at block borders (see ``docs/topics/scale.md``).
    block_size : int, default=10_000
        Largest block with ``blocking`` (at least 2k).
    n_jobs : int, default=None
        Worker processes for the blocks (``None``: one per CPU from 5,000,000 records on,
        else none: MDAV's own threads use the cores; see ``PROCESSES_FROM`` in
        :mod:`microagg.partition.blocking`).
    clustering_il : int, default=None
        Also measure the clustering-based information loss of seed 001, section 3: k-means
        and fuzzy c-means with this many clusters on the original and the published
        quasi-identifiers, ``metrics["il_rand"]``, ``["il_ari"]``, ``["il_jaccard"]`` and
        ``["il_fuzzy_rand"]`` (numeric releases; seconds on large files).

    Returns
    -------
    Release

    Warns
    -----
    ConstantColumnWarning
        A quasi-identifier is constant: it is excluded from the distances and from the
        information loss (it identifies nobody and is published exactly unchanged).
    LowUtilityWarning
        The groups average more than 10 k records, or a deterministic release loses at
        least 90 % (information loss, or NCP when generalizing); names a method or setting
        that would serve (see :mod:`microagg._advice`).
    PrivacyLeakWarning
        ``epsilon`` with bounds computed from the data, or a noisy aggregation (not
        k-anonymous, not differentially private).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [24, 31, 32, 57, 49, 43], "income": [21, 19, 22, 43, 39, 32]})
    >>> release = anonymize(df, quasi_identifiers=["age", "income"], k=3, random_state=0)
    >>> release.k, release.data["age"].round(2).tolist()
    (3, [29.0, 29.0, 29.0, 49.67, 49.67, 49.67])
    >>> noisy = anonymize(df, quasi_identifiers=["age", "income"], k=3, aggregation="rho",
    ...                   aggregation_params={"rho": 0.5}, random_state=0)
    >>> noisy.checks["group_k"]["achieved"], noisy.k
    (3, 1)
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    t_level = t  # `t` is reused as a stopwatch below
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"anonymize expects a pandas DataFrame. Got {type(df).__name__} instead.")
    qi = _as_names(quasi_identifiers, "quasi_identifiers")
    sens = _as_names(sensitive, "sensitive")
    ids = _as_names(identifiers, "identifiers")
    known = _as_names(intruder_knows, "intruder_knows")
    _validate_roles(df, qi, sens, ids)
    not_qi = [c for c in known if c not in qi]
    if not_qi:
        raise SchemaError(f"intruder_knows names {', '.join(map(repr, not_qi))}, which are not "
                          f"quasi-identifiers; quasi-identifiers: {', '.join(map(repr, qi))}.")
    if df.shape[0] == 0:
        raise SchemaError("The input table has no rows; there is nothing to release.")
    k = check_k(k, n_samples=df.shape[0], caller="anonymize")
    if l is not None:
        _check_diversity_request(df, sens, l, diversity, diversity_c)
    _check_quasi_identifier_types(df, qi, hierarchies)
    loaded, sensitive_hierarchies = _load_hierarchies(df, qi, sens, hierarchies)
    closeness = _closeness_targets(df, sens, t, t_distance, sensitive_hierarchies)
    if categorical_aggregation not in CATEGORICAL_AGGREGATIONS:
        raise ValueError(f"Unknown categorical_aggregation {categorical_aggregation!r}. "
                         f"Valid: {', '.join(CATEGORICAL_AGGREGATIONS)}.")
    if attribute_groups is not None:
        _check_attribute_group_request(loaded, method, epsilon, aggregation, l, t,
                                       method_params)
    elif n_attribute_groups is not None:
        raise ValueError("n_attribute_groups needs attribute_groups='correlation'.")
    if blocking is not None and (loaded or method == "cdt" or epsilon is not None):
        raise SchemaError("blocking applies to numeric microaggregation: not to categorical "
                          "quasi-identifiers, cdt or the epsilon-DP release.")
    if loaded or method == "cdt":
        if epsilon is not None or bounds is not None or is_noisy_name(aggregation or "") \
                or aggregation_params or scaling is not None or known \
                or clustering_il is not None:
            what = (f"Categorical quasi-identifiers ({', '.join(map(repr, loaded))})"
                    if loaded else "The cdt method")
            raise SchemaError(
                f"{what} generalize: epsilon, bounds, the noisy aggregations, scaling, "
                "intruder_knows and clustering_il apply to numeric microaggregation only.")
        return _anonymize_mixed(
            df, qi=qi, sens=sens, ids=ids, k=k, method=method, hierarchies=loaded,
            categorical_aggregation=categorical_aggregation,
            aggregation=aggregation, random_state=random_state, method_params=method_params,
            l=l, diversity=diversity, diversity_c=diversity_c, t=t, closeness=closeness,
            t0=t0)
    if scaling is not None and scaling not in SCALINGS:  # checked early: before any work
        raise ValueError(f"Unknown scaling {scaling!r}. Valid scalings: {', '.join(SCALINGS)}.")
    aggregation = aggregation or "mean"
    if aggregation not in AGGREGATORS:
        raise ValueError(
            f"Unknown aggregation {aggregation!r}. "
            f"Valid aggregations: {', '.join(sorted(AGGREGATORS))}."
        )
    agg_params = checked_aggregation_params(aggregation, aggregation_params)
    noisy = is_noisy(aggregation, agg_params)
    if (l is not None or t is not None) and (noisy or epsilon is not None):
        raise SchemaError("l-diversity and t-closeness are checked on the published classes; a noisy "
                          "aggregation or an epsilon release has none (every published record "
                          "differs or rows are shuffled). Drop l, or use a deterministic "
                          "aggregation without epsilon.")
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
        _check_dp_request(df, qi, ids, method, aggregation, scaling, method_params)
    elif bounds is not None:
        raise ValueError("bounds are used only with epsilon (the differentially private "
                         "release); pass epsilon too, or drop bounds.")
    seed, rng = resolve_seed(random_state)
    values = _quasi_identifier_matrix(df, qi)
    notes: list[str] = []
    varying = values.max(axis=0) > values.min(axis=0)  # np.ptp overflows at 1e308
    constant = [c for c, v in zip(qi, varying, strict=True) if not v]
    if constant:
        msg = (f"Quasi-identifier(s) {', '.join(map(repr, constant))} are constant: excluded "
               "from the distances and the information loss, and published unchanged.")
        warnings.warn(msg, ConstantColumnWarning, stacklevel=2)
        notes.append(msg)
    timings["validate"] = time.perf_counter() - t0

    checks: dict[str, Any] = {}
    partitions: dict[str, NDArray[np.intp]] = {}
    group_methods: dict[str, str] = {}
    groups: tuple[tuple[str, ...], ...] = ()
    published = df.drop(columns=list(ids))
    budget: Mapping[str, Any] | None = None
    alternative: str | None = None  # a method that keeps groups near k, for the advice
    t = time.perf_counter()
    if epsilon is None:
        partitioner = get_partitioner(method or "mdav")
        if blocking is not None:
            partitioner = _blocked(partitioner, blocking, block_size, n_jobs, k)
        params = partitioner.resolved_params(values.shape[0], method_params or {})
        alternative = None if partitioner.fixed_size else "mdav"
        scaling = scaling or "standard"
        scaler = fit_scaler(values, scaling)
        scaled = apply_scaler(values, scaler)
        if attribute_groups is not None:
            groups = resolve_attribute_groups(attribute_groups, qi, scaled,
                                              n_groups=n_attribute_groups)
            masked, partitions, group_methods = _by_attribute_groups(
                values, scaled, groups, qi, k, method, params, aggregation, agg_params, rng,
                blocking=(blocking, block_size, n_jobs))
            labels = np.zeros(values.shape[0], dtype=np.intp)  # published classes, below
            timings["partition_and_aggregate"] = time.perf_counter() - t
        else:
            labels = _checked_partition(partitioner, scaled, k, rng, params)
            timings["partition"] = time.perf_counter() - t
        if l is not None:
            t = time.perf_counter()
            labels = enforce_l_diversity(labels, [df[c].to_numpy() for c in sens], l=l,
                                         diversity=diversity, c=diversity_c, X=scaled, k=k,
                                         names=sens)
            timings["l_diversity"] = time.perf_counter() - t
        if closeness:
            t = time.perf_counter()
            labels = enforce_t_closeness(labels, list(closeness.values()), t=float(t_level or 0.0), X=scaled)
            timings["t_closeness"] = time.perf_counter() - t
        if attribute_groups is None:
            t = time.perf_counter()
            masked = _aggregate_safely(values, labels, method=aggregation, random_state=rng,
                                       **agg_params)
            timings["aggregate"] = time.perf_counter() - t
        method_name = partitioner.name if method is not None or attribute_groups is None \
            else "per-group default"
        all_params = MappingProxyType({**partitioner.params, **params})
        budget, budget_note = time_budget(
            partitioner.name, all_params,
            timings.get("partition", timings.get("partition_and_aggregate", 0.0)),
            values.shape[0], given="time_limit" in (method_params or {}))
        if budget_note:
            notes.append(budget_note)
        if noisy and aggregation == "synthetic":
            sizes = (np.concatenate([np.bincount(g) for g in partitions.values()])
                     if partitions else np.bincount(labels))
            msg = (f"Aggregation 'synthetic' replaces every group of at least {k} records by "
                   "synthetic records with the group's exact mean and covariance (hybrid "
                   "data): the published quasi-identifiers are not k-anonymous and this is not "
                   "differential privacy.")
            if sizes.min() <= 2:
                msg += (f" {int(np.sum(sizes == 2))} groups have 2 records: a pair with a "
                        "given mean and covariance is the original pair, so they are "
                        "published unchanged (possibly swapped); use k >= 3.")
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=2)
            notes.insert(0, msg)
        elif noisy and aggregation == "fuzzy-random":
            msg = (f"Aggregation 'fuzzy-random' gives each record the mean of a group drawn by "
                   f"its fuzzy memberships, not always its own: the published "
                   f"quasi-identifiers are not {k}-anonymous (a mean may be drawn by fewer "
                   f"than {k} records; see checks['k_anonymity']) and this is not "
                   "differential privacy.")
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=2)
            notes.insert(0, msg)
        elif noisy:
            msg = (f"Aggregation {aggregation!r} gives every record its own noisy values: the "
                   f"published quasi-identifiers are not k-anonymous (the noise is drawn over "
                   f"groups of at least {k}), and bounded data-dependent noise is not "
                   "differential privacy.")
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=2)
            notes.insert(0, msg)
    else:
        lower, upper, from_data = _bounds_for(df, qi, values, bounds)
        if from_data:
            msg = (f"Bounds of {', '.join(map(repr, from_data))} were computed from the data: "
                   "they reveal the extreme records, so the release is NOT "
                   f"{epsilon}-differentially private. Pass public bounds (bounds=... / "
                   "--bounds) for the guarantee to hold.")
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=2)
            notes.insert(0, msg)
        # The noise and the shuffle come from fresh OS entropy, never from the recorded
        # seed: anyone holding the seed could regenerate the noise and subtract it.
        secret_rng = np.random.default_rng()
        result = dp_microaggregation(values, k, epsilon=epsilon, lower=lower, upper=upper,
                                     random_state=secret_rng)
        labels, masked = result.labels, result.masked
        timings["partition_and_noise"] = time.perf_counter() - t
        method_name, scaling = "insensitive", "bounds"
        all_params = MappingProxyType({})
        scaler = fit_scaler(values, "standard")  # for the measurements only
        scaled = apply_scaler(values, scaler)
        checks["differential_privacy"] = MappingProxyType({
            "epsilon": epsilon,
            "holds": not from_data,
            "neighbouring": "one record replaced by another (n is public)",
            "covered_columns": qi,
            "bounds": MappingProxyType({c: (float(lower[j]), float(upper[j]))
                                        for j, c in enumerate(qi)}),
            "bounds_from_data": from_data,
            "sensitivity_l1": result.sensitivity,
            "laplace_scale_rescaled": result.laplace_scale,
            "noise_source": "operating-system entropy, not recorded: the release is not "
                            "reproducible from its seed, by design",
            "model": "epsilon-differential privacy of the published values and group labels "
                     "as an unordered table (rows shuffled); the metrics in this release are "
                     "computed from the original data and are not covered",
        })
        if result.clipped_values:
            notes.append(f"{result.clipped_values} values lay outside their bounds and were "
                         "clipped before the noise (this count is not private).")
    for j, col in enumerate(qi):
        published[col] = masked[:, j]

    t = time.perf_counter()
    if partitions:
        labels = _published_classes(published, qi)
        achieved = k_anonymity(published.loc[:, list(qi)].to_numpy(dtype=np.float64))
        guaranteed = len(partitions) == 1 and not noisy  # one group of every column
        if guaranteed:
            achieved = check_k_anonymity(
                published.loc[:, list(qi)].to_numpy(dtype=np.float64), k)
        checks["k_anonymity"] = _syntactic_k_check(k if guaranteed else None, achieved)
        if len(partitions) > 1:
            checks["k_anonymity"] = MappingProxyType({
                **checks["k_anonymity"],
                "model": "real k-anonymity (Nin, Herranz & Torra 2008): the smallest number of "
                         "identical published quasi-identifier records; microaggregation by "
                         "attribute groups does not guarantee k-anonymity",
            })
            msg = (f"The quasi-identifiers were microaggregated in {len(partitions)} attribute "
                   f"groups separately: every group has at least {k} records in each "
                   f"attribute group, but the published records are NOT {k}-anonymous (real "
                   f"k-anonymity {achieved}; unique records: "
                   f"{int(np.sum(np.bincount(labels) == 1))}), and an "
                   "intruder can intersect the groups (metrics['intersection_attack_*']).")
            warnings.warn(msg, PrivacyLeakWarning, stacklevel=2)
            notes.insert(0, msg)
    elif noisy:
        _verify_noisy(aggregation, values, masked, labels, qi)
        achieved = k_anonymity(published.loc[:, list(qi)].to_numpy(dtype=np.float64))
        checks["k_anonymity"] = _syntactic_k_check(None, achieved)
    else:
        achieved = check_k_anonymity(published.loc[:, list(qi)].to_numpy(dtype=np.float64), k)
        checks["k_anonymity"] = _syntactic_k_check(k, achieved)
    group_min = (min(int(np.bincount(g).min()) for g in partitions.values()) if partitions
                 else int(np.bincount(labels).min()))
    if group_min < k:  # pragma: no cover - check_labels / dp guarantee it
        raise PrivacyViolationError(f"A group has {group_min} < k={k} records. Nothing was "
                                    "released. This is a bug in microagg.")
    checks["group_k"] = MappingProxyType({
        "required": k,
        "achieved": group_min,
        "model": "size of the smallest group over which each representative"
                 + (" and its noise are" if noisy or epsilon is not None else " is")
                 + " computed (from the release's labels)"
                 + (", in every attribute group's own partition" if partitions else ""),
    })
    classes = (_published_classes(published, qi) if sens and not noisy and epsilon is None
               else None)
    if classes is not None:
        checks.update(_sensitive_checks(classes, published, sens, l, diversity, diversity_c))
        checks.update(_closeness_checks(classes, closeness, t_level))
    timings["verify"] = time.perf_counter() - t

    t = time.perf_counter()
    masked_scaled = apply_scaler(masked, scaler)
    safe = safe_exponents(values)  # the metrics below are scale-free column by column
    original_safe, masked_safe = to_safe_range(values, safe), to_safe_range(masked, safe)
    metrics: dict[str, Any] = {
        "information_loss": information_loss(scaled, masked_scaled),
        "information_loss_columns": tuple(c for c, v in zip(qi, varying, strict=True) if v),
        "information_loss_original_units": information_loss(values, masked),
        "dld_risk": dld_risk(scaled, masked_scaled, sample=(
            DLD_SAMPLE if values.shape[0] > DLD_SAMPLE_ABOVE else None)),
        **group_size_summary(labels),
    }
    if classes is not None:
        metrics.update(_sensitive_metrics(classes, published, sens))
    if values.shape[0] > DLD_SAMPLE_ABOVE:
        metrics["dld_risk_sampled_records"] = DLD_SAMPLE
    metrics["il1s"] = il1s(original_safe, masked_safe)
    metrics.update(moment_changes(original_safe, masked_safe))
    if clustering_il is not None:
        metrics.update(clustering_information_loss(original_safe, masked_safe,
                                                   n_clusters=clustering_il))
        metrics["il_fuzzy_rand"] = fuzzy_clustering_information_loss(
            original_safe, masked_safe, n_clusters=clustering_il)
    if partitions:
        position = {c: j for j, c in enumerate(qi)}
        attack = intersection_attack(
            scaled, masked_scaled, [[position[c] for c in g] for g in groups],
            known=[position[c] for c in known] if known else None)
        metrics.update({f"intersection_attack_{name}": value for name, value in attack.items()})
    if known:  # the linkage on the known columns only (constant ones tell nobody apart)
        cols = [int(varying[:j].sum()) for j, c in enumerate(qi) if c in known and varying[j]]
        metrics["dld_risk_known"] = (dld_risk(
            scaled, masked_scaled, attributes=cols,
            sample=DLD_SAMPLE if values.shape[0] > DLD_SAMPLE_ABOVE else None)
            if cols else 1.0 / values.shape[0])
    advice = low_utility_message(  # noise is chosen, not lost: only the grouping's loss counts
        labels, k, None if noisy or epsilon is not None else metrics["information_loss"] / 100,
        loss_name="information loss", method=method_name, alternative=alternative,
        cause=_loss_cause(l, closeness))
    if advice:
        warnings.warn(advice, LowUtilityWarning, stacklevel=2)
        notes.append(advice)
    timings["measure"] = time.perf_counter() - t

    if epsilon is not None:  # the input order would say which rows share a rank block
        order = secret_rng.permutation(published.shape[0])
        published = published.iloc[order].reset_index(drop=True)
        labels = labels[order]
    timings["total"] = time.perf_counter() - t0

    return Release(
        data=published,
        labels=labels,
        params=MappingProxyType({
            "method": method_name,
            "k": k,
            "quasi_identifiers": qi,
            "sensitive": sens,
            "identifiers": ids,
            "aggregation": aggregation,
            "aggregation_params": MappingProxyType(agg_params),
            "scaling": scaling,
            "method_params": all_params,
            "epsilon": epsilon,
            "intruder_knows": known,
            **_privacy_params(l, diversity, t_level, closeness),
            "attribute_groups": tuple(groups) if partitions else None,
            "blocking": (MappingProxyType({"blocking": blocking, "block_size": block_size})
                         if blocking is not None else None),
            "group_methods": MappingProxyType(group_methods),
            "time_budget": budget,
            "microagg_version": __version__,
        }),
        seed=seed,
        checks=MappingProxyType(checks),
        metrics=MappingProxyType(metrics),
        warnings=tuple(notes),
        timings=MappingProxyType(timings),
        attribute_partitions=MappingProxyType(partitions),
    )


def _blocked(partitioner: Any, blocking: str, block_size: int, n_jobs: int | None,
             k: int) -> Any:
    """The same partitioner run block by block (its name and parameters unchanged)."""
    from dataclasses import replace
    from functools import partial

    from .partition.blocking import BLOCKINGS, blocked_partition

    if blocking not in BLOCKINGS:
        raise ValueError(f"Unknown blocking {blocking!r}. Valid: {', '.join(BLOCKINGS)}.")
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or block_size < 2 * k:
        raise ValueError(f"The 'block_size' parameter must be an int >= 2k={2 * k}. "
                         f"Got {block_size!r}.")
    if partitioner.mixed and partitioner.needs_sensitive:
        raise SchemaError(f"Method {partitioner.name!r} cannot run block by block.")
    return replace(partitioner, function=partial(
        blocked_partition, method=partitioner.name, blocking=blocking,
        block_size=int(block_size), n_jobs=n_jobs))


def _aggregate_safely(values: NDArray[np.float64], labels: NDArray[np.intp], *, method: str,
                      random_state: np.random.Generator, **params: Any) -> NDArray[np.float64]:
    """:func:`aggregate` with constant columns published exactly (a mean of 0.1s may come
    out as 0.10000000000000002) and extreme columns aggregated near 1 (a mean of values
    near 1e308 overflows; an exact power of two brings them in range and back)."""
    safe = safe_exponents(values)
    masked = from_safe_range(aggregate(to_safe_range(values, safe), labels, method=method,
                                       random_state=random_state, **params), safe)
    constant = values.max(axis=0) == values.min(axis=0)
    if constant.any():
        masked = np.array(masked, dtype=np.float64)
        masked[:, constant] = values[:, constant]
    return masked


def _refuse_extreme_magnitudes(numeric: NDArray[np.float64], columns: tuple[str, ...],
                               method: str) -> None:
    """The generalizing methods square values and ranges unscaled: refuse magnitudes whose
    squares overflow (``anonymize``'s numeric methods scale such columns safely)."""
    peak = np.abs(numeric).max(axis=0) if numeric.size else np.zeros(numeric.shape[1])
    extreme = [f"{col!r} (largest magnitude {peak[j]:g})" for j, col in enumerate(columns)
               if peak[j] > SAFE_MAGNITUDE]
    if extreme:
        raise SchemaError(
            f"Quasi-identifier(s) {', '.join(extreme)} exceed {SAFE_MAGNITUDE:.3g} in "
            f"magnitude: method {method!r} squares differences of the original values, which "
            "overflow beyond the largest float (1.8e308). Divide the column by a power of ten "
            "first, or use a numeric method (mdav), which scales such columns safely.")


def _loss_cause(l: float | None, closeness: Mapping[str, Any]) -> str | None:
    """What besides the method makes a release lose much, for the low-utility advice."""
    names = [name for name, on in (("l-diversity", l is not None),
                                   ("t-closeness", bool(closeness))) if on]
    if not names:
        return None
    return (f"{' and '.join(names)} merged groups to reach the required level; a lower "
            "level (or fewer sensitive columns) keeps more.")


def _check_quasi_identifier_types(df: pd.DataFrame, qi: tuple[str, ...],
                                  hierarchies: Mapping[str, Any] | None) -> None:
    """Refuse quasi-identifiers no method can mask, naming each and what to do instead."""
    given = set(hierarchies or {})
    problems = []
    for col in qi:
        dtype = df[col].dtype
        if pd.api.types.is_complex_dtype(dtype):
            problems.append(f"{col!r} is complex-valued (dtype {dtype}) and its imaginary "
                            "part would be lost: make its real and imaginary parts two "
                            "columns")
        elif col not in given and (pd.api.types.is_datetime64_any_dtype(dtype)
                                   or pd.api.types.is_timedelta64_dtype(dtype)
                                   or isinstance(dtype, pd.PeriodDtype)):
            how = (f"df[{col!r}].dt.total_seconds()" if pd.api.types.is_timedelta64_dtype(dtype)
                   else f"df[{col!r}].dt.year, or days since a reference date")
            problems.append(f"{col!r} holds dates or durations (dtype {dtype}), which are "
                            "neither numbers to average nor categories: convert it first, to "
                            f"a number (e.g. {how}) or to text categories")
    if problems:
        raise SchemaError("Quasi-identifiers of a type microagg cannot mask: "
                          + "; ".join(problems) + ".")


def _verify_noisy(aggregation: str, values: NDArray[np.float64], masked: NDArray[np.float64],
                  labels: NDArray[np.intp], qi: Sequence[str]) -> None:
    """The promise of each noisy aggregator, re-checked on its output."""
    safe = safe_exponents(values)  # group sums of values near 1e308 would overflow
    values, masked = to_safe_range(values, safe), to_safe_range(masked, safe)
    if aggregation == "synthetic":
        check_synthetic_moments(values, masked, labels)
    elif aggregation == "fuzzy-random":
        check_fuzzy_representatives(values, masked, labels)
    else:
        _check_noise_within_groups(values, masked, labels, tuple(qi))


def _check_attribute_group_request(loaded: Mapping[str, Any], method: str | None,
                                   epsilon: float | None, aggregation: str | None,
                                   l: float | None, t: float | None,
                                   method_params: Mapping[str, Any] | None) -> None:
    """Refuse what microaggregation by attribute groups cannot combine with."""
    problems = []
    if loaded or method == "cdt":
        problems.append("categorical quasi-identifiers and cdt generalize all columns at once")
    if epsilon is not None:
        problems.append("epsilon needs the insensitive partition of all columns")
    if l is not None or t is not None:
        problems.append("l-diversity and t-closeness are enforced on one partition")
    if method is None and method_params:
        problems.append("method_params need a method (the per-group defaults differ)")
    if problems:
        raise SchemaError("attribute_groups cannot be combined with this request: "
                          + "; ".join(problems) + ".")


def _by_attribute_groups(values: NDArray[np.float64], scaled: NDArray[np.float64],
                         groups: tuple[tuple[str, ...], ...], qi: tuple[str, ...], k: int,
                         method: str | None, params: Mapping[str, Any], aggregation: str,
                         agg_params: Mapping[str, Any], rng: np.random.Generator,
                         blocking: tuple[str | None, int, int | None] = (None, 0, None)
                         ) -> tuple[NDArray[np.float64], dict[str, NDArray[np.intp]],
                                    dict[str, str]]:
    """Partition and aggregate each attribute group on its own columns."""
    position = {c: j for j, c in enumerate(qi)}
    masked = np.empty_like(values)
    partitions: dict[str, NDArray[np.intp]] = {}
    methods: dict[str, str] = {}
    for group in groups:
        cols = [position[c] for c in group]
        name = method or ("univariate-optimal" if len(cols) == 1 else "mdav")
        partitioner = get_partitioner(name)
        if blocking[0] is not None:
            partitioner = _blocked(partitioner, blocking[0], blocking[1], blocking[2], k)
        labels = _checked_partition(partitioner, np.ascontiguousarray(scaled[:, cols]), k,
                                    rng, params)
        masked[:, cols] = _aggregate_safely(values[:, cols], labels, method=aggregation,
                                            random_state=rng, **agg_params)
        if is_noisy(aggregation, agg_params):
            _verify_noisy(aggregation, values[:, cols], masked[:, cols], labels, group)
        key = "+".join(group)
        partitions[key] = labels
        methods[key] = partitioner.name
    return masked, partitions, methods


def is_noisy_name(aggregation: str) -> bool:
    """Whether ``aggregation`` names a noisy aggregator (whatever its parameters)."""
    return aggregation in NOISY_AGGREGATORS


def _check_dp_request(df: pd.DataFrame, qi: tuple[str, ...], ids: tuple[str, ...],
                      method: str | None, aggregation: str, scaling: str | None,
                      method_params: Mapping[str, Any] | None) -> None:
    """With ``epsilon``, refuse every option that would void or contradict the guarantee."""
    problems = []
    if method not in (None, "insensitive"):
        problems.append(f"method={method!r}: the differentially private release needs the "
                        "insensitive partition (method=None or 'insensitive'); a data-driven "
                        "partition changes too much when one record changes.")
    if aggregation != "mean":
        problems.append(f"aggregation={aggregation!r}: the release publishes Laplace-noised "
                        "group means (aggregation='mean').")
    if scaling is not None:
        problems.append(f"scaling={scaling!r}: the bounds scale the data; leave scaling unset.")
    if method_params:
        problems.append(f"method_params={dict(method_params)!r}: the insensitive partition "
                        "takes none.")
    others = [str(c) for c in df.columns if c not in qi and c not in ids]
    if others:
        problems.append(
            f"column(s) {', '.join(map(repr, others))} would be published unchanged next to "
            "the noisy values, which voids the guarantee; make them quasi-identifiers (noised) "
            "or identifiers (dropped).")
    if problems:
        raise SchemaError("Cannot make an epsilon-differentially private release: "
                          + " ".join(problems))


# ------------------------------------------------------------------------------------------
# l-diversity and categorical quasi-identifiers


def _check_diversity_request(df: pd.DataFrame, sens: tuple[str, ...], l: float,
                             diversity: str, c: float) -> None:
    if diversity not in DIVERSITIES:
        raise ValueError(f"Unknown diversity {diversity!r}. Valid: {', '.join(DIVERSITIES)}.")
    check_l(l)
    if diversity == "recursive" and (isinstance(c, bool) or not isinstance(
            c, (int, float, np.integer, np.floating)) or not c > 0):
        raise ValueError(f"The 'diversity_c' parameter must be a number > 0. Got {c!r}.")
    if not sens:
        raise SchemaError("l-diversity needs at least one sensitive column (sensitive=...).")
    _require_complete(df, sens, "l-diversity counts sensitive values")
    whole = np.zeros(len(df), dtype=np.intp)  # the whole table as one class: the most any
    for col in sens:                          # partition can reach
        reached = l_diversity(whole, df[col].to_numpy(), diversity=diversity, c=c)
        if reached < l - 1e-12:
            raise SchemaError(
                f"The table cannot be made {diversity} {l:g}-diverse: sensitive column {col!r} "
                f"reaches only l = {reached:.4g} over all {len(df)} records together ("
                + (f"{reached:g} distinct values" if diversity == "distinct"
                   else "its most frequent value dominates" if diversity == "recursive"
                   else "its entropy is too low") + f"); ask for l <= {reached:.4g}.")


def _checked_partition(partitioner: Any, data: Any, k: int, rng: np.random.Generator,
                       params: Mapping[str, Any]) -> NDArray[np.intp]:
    """Run a partitioner and verify its labels; an invalid partition is a bug, not bad input."""
    labels = partitioner(data, k, random_state=rng, **params)
    n = data.n_samples if isinstance(data, MixedData) else np.asarray(data).shape[0]
    try:
        return check_labels(labels, n_samples=n, k=k)
    except (TypeError, ValueError) as error:
        raise InternalError(
            f"Method {partitioner.name!r} returned an invalid partition ({error}). Nothing "
            "was released. This is a bug in microagg."
        ) from error


def _require_complete(df: pd.DataFrame, sens: tuple[str, ...], purpose: str) -> None:
    """Sensitive columns without missing values, or a SchemaError naming counts and why."""
    missing = [f"{c!r}: {int(n)}" for c, n in ((c, df[c].isna().sum()) for c in sens) if n]
    if missing:
        raise SchemaError(f"Sensitive columns have missing values ({'; '.join(missing)} of "
                          f"{len(df)} rows); {purpose}, so fill or drop them first.")


def _privacy_params(l: float | None, diversity: str, t: float | None,
                    closeness: Mapping[str, SensitiveDistribution]) -> dict[str, Any]:
    """The l-diversity and t-closeness entries of ``Release.params``."""
    return {
        "l": l,
        "diversity": diversity if l is not None else None,
        "t": t,
        "t_distance": MappingProxyType({c: d.distance for c, d in closeness.items()}),
    }


def _published_classes(published: pd.DataFrame, qi: tuple[str, ...]) -> NDArray[np.intp]:
    """Equivalence class of each published row: rows with identical quasi-identifiers."""
    codes = np.column_stack([pd.factorize(published[c], use_na_sentinel=False)[0] for c in qi])
    return np.unique(codes, axis=0, return_inverse=True)[1].ravel().astype(np.intp)


def _sensitive_checks(classes: NDArray[np.intp], published: pd.DataFrame,
                      sens: tuple[str, ...], l: float | None, diversity: str, c: float
                      ) -> dict[str, Any]:
    """l-diversity re-derived from the published classes (raises below the required l)."""
    if l is None or not sens:
        return {}
    achieved = {col: check_l_diversity(classes, published[col].to_numpy(), l,
                                       diversity=diversity, c=c) for col in sens}
    return {"l_diversity": MappingProxyType({
        "required": l,
        "achieved": min(achieved.values()),
        "by_column": MappingProxyType(achieved),
        "diversity": diversity,
        **({"c": c} if diversity == "recursive" else {}),
        "model": f"{diversity} l-diversity of every sensitive column in every class of "
                 "identical published quasi-identifiers",
    })}


def _number_text(value: float) -> str:
    """Exact text of a number: ``39`` for an integral value, else the shortest repr."""
    v = float(value)
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _sensitive_columns(df: pd.DataFrame, sens: tuple[str, ...]) -> Columns:
    """Sensitive attributes for CDT's Gower distance: numbers as numbers, the rest coded."""
    numeric = [c for c in sens if pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    other = [c for c in sens if c not in numeric]
    _require_complete(df, sens, "CDT compares sensitive tuples")
    return Columns.of(df[numeric].to_numpy(dtype=np.float64) if numeric else None,
                      np.column_stack([pd.factorize(df[c])[0] for c in other]) if other else None)


def _load_hierarchies(df: pd.DataFrame, qi: tuple[str, ...], sens: tuple[str, ...],
                      hierarchies: Mapping[str, Any] | None
                      ) -> tuple[dict[str, Hierarchy], dict[str, Hierarchy]]:
    """The categorical quasi-identifiers with their hierarchies (a flat one when none is
    given), and the hierarchies given for sensitive columns (for t-closeness)."""
    given = dict(hierarchies or {})
    unknown = sorted(set(given) - set(qi) - set(sens))
    if unknown:
        raise SchemaError(
            f"hierarchies name column(s) {', '.join(map(repr, unknown))} that are neither "
            f"quasi-identifiers nor sensitive; quasi-identifiers: {', '.join(map(repr, qi))}"
            + (f"; sensitive: {', '.join(map(repr, sens))}." if sens else "."))

    def load(col: str) -> Hierarchy:
        h = given[col]
        if not isinstance(h, Hierarchy):
            return Hierarchy.from_csv(h, column=col)
        return h if h.column else Hierarchy(h.paths, column=col, source=h.source)

    categorical = [c for c in qi if c in given or not (
        pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]))]
    loaded: dict[str, Hierarchy] = {}
    for col in categorical:
        n_missing = int(df[col].isna().sum())
        if n_missing:
            raise SchemaError(f"Quasi-identifier {col!r} has {n_missing} missing values in "
                              f"{len(df)} rows; microagg never imputes silently.")
        if col not in given:  # no hierarchy: a group keeps its value or shows '*'
            loaded[col] = Hierarchy.flat(df[col].to_numpy(), column=col)
        else:
            loaded[col] = load(col)
    return loaded, {c: load(c) for c in sens if c in given}


def _closeness_targets(df: pd.DataFrame, sens: tuple[str, ...], t: float | None,
                       distance: str, hierarchies: dict[str, Hierarchy]
                       ) -> dict[str, SensitiveDistribution]:
    """The sensitive columns prepared for t-closeness (empty when t is None)."""
    if t is None:
        return {}
    check_t(t)
    if distance not in ("auto", *GROUND_DISTANCES):
        raise ValueError(f"Unknown t_distance {distance!r}. Valid: auto, "
                         f"{', '.join(GROUND_DISTANCES)}.")
    if not sens:
        raise SchemaError("t-closeness needs at least one sensitive column (sensitive=...).")
    _require_complete(df, sens, "t-closeness compares sensitive distributions")
    out = {}
    for col in sens:
        if distance == "hierarchical" and col not in hierarchies:
            raise SchemaError(f"t_distance='hierarchical' needs a hierarchy for the sensitive "
                              f"column {col!r} (hierarchies={{{col!r}: file}}).")
        use = hierarchies.get(col) if distance in ("auto", "hierarchical") else None
        out[col] = SensitiveDistribution(df[col].to_numpy(), hierarchy=use,
                                         distance="auto" if distance == "hierarchical"
                                         else distance)
    return out


def _closeness_checks(classes: NDArray[np.intp],
                      closeness: Mapping[str, SensitiveDistribution], t: float | None
                      ) -> dict[str, Any]:
    if t is None or not closeness:
        return {}
    achieved = {c: check_t_closeness(classes, d, t) for c, d in closeness.items()}
    return {"t_closeness": MappingProxyType({
        "required": t,
        "achieved": max(achieved.values()),
        "by_column": MappingProxyType(achieved),
        "distance": MappingProxyType({c: d.distance for c, d in closeness.items()}),
        "model": "largest Earth Mover's Distance between a published class's sensitive "
                 "distribution and the whole table's",
    })}


def _sensitive_metrics(classes: NDArray[np.intp], published: pd.DataFrame,
                       sens: tuple[str, ...]) -> dict[str, Any]:
    """Homogeneity, the distinct l reached and P(S) of seed 004 (always reported)."""
    return {
        "homogeneity": MappingProxyType({
            col: MappingProxyType(homogeneity(classes, published[col])) for col in sens}),
        "distinct_l": MappingProxyType({
            col: l_diversity(classes, published[col].to_numpy()) for col in sens}),
        "privacy_of_sensitive": privacy_of_sensitive(
            classes, [published[c].to_numpy() for c in sens]),
    }


def _ordinal_representative(column: pd.Series, labels: NDArray[np.intp], aggregation: str
                            ) -> pd.Series | list[str]:
    """Each group's (lower) median category, or its ``[low, high]`` range of categories."""
    codes = column.cat.codes.to_numpy()
    categories = column.cat.categories
    order = np.lexsort((codes, labels))
    sizes = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    sorted_codes = codes[order]
    if aggregation == "interval":
        low = categories[sorted_codes[starts]][labels]
        high = categories[sorted_codes[starts + sizes - 1]][labels]
        return [f"[{a}, {b}]" if a != b else str(a) for a, b in zip(low, high, strict=True)]
    median = sorted_codes[starts + (sizes - 1) // 2]
    dtype = column.dtype
    assert isinstance(dtype, pd.CategoricalDtype)  # ordinal columns only
    return pd.Series(pd.Categorical.from_codes(median[labels], dtype=dtype),
                     index=column.index)


def _is_ordinal(column: pd.Series) -> bool:
    """An ordered pandas categorical."""
    dtype = column.dtype
    return isinstance(dtype, pd.CategoricalDtype) and bool(dtype.ordered)


def _group_mode_labels(column: pd.Series, labels: NDArray[np.intp]) -> pd.Series:
    """Each group's most frequent value (the first in sorted order among ties)."""
    codes, uniques = pd.factorize(column, sort=True)
    counts = np.zeros((int(labels.max()) + 1, len(uniques)), dtype=np.int64)
    np.add.at(counts, (labels, codes), 1)
    mode = np.argmax(counts, axis=1)
    return pd.Series(np.asarray(uniques)[mode[labels]], index=column.index)


def _anonymize_mixed(df: pd.DataFrame, *, qi: tuple[str, ...], sens: tuple[str, ...],
                     ids: tuple[str, ...], k: int, method: str | None,
                     hierarchies: dict[str, Hierarchy], categorical_aggregation: str,
                     aggregation: str | None,
                     random_state: RandomState, method_params: Mapping[str, Any] | None,
                     l: float | None, diversity: str, diversity_c: float,
                     t: float | None, closeness: dict[str, SensitiveDistribution],
                     t0: float) -> Release:
    """The release of mixed numeric + categorical quasi-identifiers (seed 002)."""
    timings: dict[str, float] = {}
    t_level = t  # `t` is reused as a stopwatch below
    partitioner = get_partitioner(method or "mage")
    if aggregation is None:  # CDT publishes ranges (seed 004, Table 9); MAGE means
        aggregation = "interval" if partitioner.name == "cdt" else "mean"
    if aggregation not in NUMERIC_MODES:
        who = ("With categorical quasi-identifiers" if hierarchies else
               f"Method {partitioner.name!r} generalizes, and")
        raise ValueError(f"{who} the aggregation is the numeric columns' representative: one "
                         f"of {', '.join(NUMERIC_MODES)}. Got {aggregation!r}.")
    if not partitioner.mixed:
        capable = ", ".join(sorted(n for n, p in PARTITIONERS.items() if p.mixed))
        cats = ", ".join(f"{c!r} (dtype {df[c].dtype}, hierarchy: {h.source})"
                         for c, h in hierarchies.items())
        raise SchemaError(f"Method {partitioner.name!r} works on numeric data only, and "
                          f"{cats} are categorical (labels, never averaged); use one of: "
                          f"{capable}; or, if they are quantities, make them numbers "
                          "(type = \"numeric\" in a schema).")
    params = dict(method_params or {})
    seed, rng = resolve_seed(random_state)
    # ordinal: an ordered categorical without a hierarchy -> its ranks join the numeric part
    ord_cols = tuple(c for c in qi if c in hierarchies and hierarchies[c].source == "flat"
                     and _is_ordinal(df[c]))
    num_cols = tuple(c for c in qi if c not in hierarchies)
    cat_cols = tuple(c for c in qi if c in hierarchies and c not in ord_cols)
    numeric = _quasi_identifier_matrix(df, num_cols) if num_cols else np.zeros((len(df), 0))
    ranks = np.column_stack([df[c].cat.codes.to_numpy() for c in ord_cols]).astype(np.float64) \
        if ord_cols else np.zeros((len(df), 0))
    n_plain = len(num_cols)
    numeric = np.column_stack([numeric, ranks])
    _refuse_extreme_magnitudes(numeric, num_cols + ord_cols, partitioner.name)
    num_cols = num_cols + ord_cols
    codes = (np.column_stack([hierarchies[c].encode(df[c].to_numpy()) for c in cat_cols])
             if cat_cols else np.zeros((len(df), 0), dtype=np.intp))
    tables = tuple(hierarchies[c].tables() for c in cat_cols)
    data = MixedData.build(numeric if num_cols else None, codes, tables)
    if partitioner.needs_sensitive:
        if not sens:
            raise SchemaError(f"Method {partitioner.name!r} groups dissimilar sensitive tuples: "
                              "name the sensitive columns (sensitive=... / -s).")
        call_params = {**params, "sensitive": _sensitive_columns(df, sens)}
        params["sensitive"] = sens  # recorded by name
    else:
        call_params = params
    timings["validate"] = time.perf_counter() - t0

    t = time.perf_counter()
    labels = _checked_partition(partitioner, data, k, rng, call_params)
    timings["partition"] = time.perf_counter() - t
    if l is not None:
        t = time.perf_counter()
        cost = ILOmegaCost(numeric, codes, tables, labels, int(labels.max()) + 1)
        labels = enforce_l_diversity(labels, [df[c].to_numpy() for c in sens], l=l,
                                     diversity=diversity, c=diversity_c, cost=cost, k=k,
                                     names=sens)
        timings["l_diversity"] = time.perf_counter() - t
    if closeness:
        t = time.perf_counter()
        cost = ILOmegaCost(numeric, codes, tables, labels, int(labels.max()) + 1)
        labels = enforce_t_closeness(labels, list(closeness.values()), t=float(t_level or 0.0), cost=cost)
        timings["t_closeness"] = time.perf_counter() - t

    t = time.perf_counter()
    # CDT publishes value sets for categories without a hierarchy (seed 004, Table 9)
    sets = [partitioner.name == "cdt" and hierarchies[c].source == "flat" for c in cat_cols]
    gen = generalize(numeric, codes, tables, labels, numeric_mode=aggregation,
                     categorical_sets=sets)
    published = df.drop(columns=list(ids))
    constant = numeric.max(axis=0) == numeric.min(axis=0) if num_cols else np.zeros(0, bool)
    if constant.any():  # a mean of 0.1s is not always 0.1: constants are published exactly
        gen.numeric[:, constant] = numeric[:, constant]
    for j, col in enumerate(num_cols):
        if j >= n_plain:  # ordinal: the median category, or the category range
            published[col] = _ordinal_representative(df[col], labels, aggregation)
        elif aggregation == "mean":
            published[col] = gen.numeric[:, j]
        else:
            published[col] = [f"[{_number_text(a)}, {_number_text(b)}]"
                               for a, b in zip(gen.low[:, j], gen.high[:, j], strict=True)]
    for j, col in enumerate(cat_cols):
        if categorical_aggregation == "mode":
            published[col] = _group_mode_labels(df[col], labels)
        else:
            published[col] = gen.labels[j]
    timings["aggregate"] = time.perf_counter() - t

    t = time.perf_counter()
    group_min = int(np.bincount(labels).min())
    if group_min < k:
        raise PrivacyViolationError(f"A group has {group_min} < k={k} records. Nothing was "
                                    "released. This is a bug in microagg.")
    classes = _published_classes(published, qi)
    achieved = int(np.bincount(classes).min())
    if achieved < k:
        raise PrivacyViolationError(
            f"The published quasi-identifiers are only {achieved}-anonymous, below the "
            f"required k={k}. Nothing was released. This is a bug in microagg.")
    checks: dict[str, Any] = {
        "k_anonymity": _syntactic_k_check(k, achieved),
        "group_k": MappingProxyType({
            "required": k, "achieved": group_min,
            "model": "size of the smallest group (from the release's labels)"}),
        **_sensitive_checks(classes, published, sens, l, diversity, diversity_c),
        **_closeness_checks(classes, closeness, t_level),
    }
    timings["verify"] = time.perf_counter() - t

    t = time.perf_counter()
    spans = numeric.max(axis=0) - numeric.min(axis=0) if num_cols else np.zeros(0)
    lo, hi = (gen.low, gen.high)
    if aggregation == "mean" and num_cols:  # the class's interval, for the loss measures
        spans_of = generalize(numeric, None, (), labels, numeric_mode="interval")
        lo, hi = spans_of.low, spans_of.high
    metrics: dict[str, Any] = {
        "il_omega": il_omega(lo, hi, spans, gen.nodes, tables),
        "il_omega_normalized": il_omega(lo, hi, spans, gen.nodes, tables, normalized=True),
        "ncp": normalized_certainty_penalty(lo, hi, spans, gen.nodes, tables,
                                            covered=gen.covered),
        "utility_loss": utility_loss(labels, numeric if num_cols else None,
                                     [df[c].to_numpy() for c in cat_cols]),
        "privacy_of_quasi_identifiers": privacy_of_quasi_identifiers(classes),
        "query_answering": MappingProxyType(query_answering(
            numeric, gen.low, gen.high, codes, gen.nodes, tables, k=k, random_state=0)),
        **group_size_summary(labels),
    }
    if n_plain and aggregation == "mean":
        scaler = fit_scaler(numeric[:, :n_plain], "standard")
        metrics["information_loss"] = information_loss(
            apply_scaler(numeric[:, :n_plain], scaler),
            apply_scaler(gen.numeric[:, :n_plain], scaler))
        metrics["information_loss_columns"] = tuple(
            c for c, const in zip(num_cols[:n_plain], constant, strict=False) if not const)
    if sens:
        metrics.update(_sensitive_metrics(classes, published, sens))
        metrics["privacy_of_release"] = privacy_of_release(
            metrics["privacy_of_quasi_identifiers"], metrics["privacy_of_sensitive"])
    notes = [
        f"Quasi-identifier {c!r} is not numeric and has no hierarchy: a flat one is used "
        "(a group shows its value when all its records share it, '*' otherwise)."
        for c in cat_cols
        if hierarchies[c].source == "flat" and categorical_aggregation == "generalize"]
    advice = low_utility_message(
        labels, k, metrics["ncp"], loss_name="NCP", method=partitioner.name,
        alternative=None if partitioner.fixed_size else
        "mdav-categorical" if cat_cols or ord_cols else "mdav",
        cause=_loss_cause(l, closeness), sensitive=partitioner.needs_sensitive)
    if advice:
        warnings.warn(advice, LowUtilityWarning, stacklevel=3)
        notes.append(advice)
    timings["measure"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0
    return Release(
        data=published,
        labels=labels,
        params=MappingProxyType({
            "method": partitioner.name,
            "k": k,
            "quasi_identifiers": qi,
            "numeric_quasi_identifiers": num_cols[:n_plain],
            "ordinal_quasi_identifiers": ord_cols,
            "categorical_quasi_identifiers": cat_cols,
            "categorical_aggregation": categorical_aggregation,
            "hierarchies": MappingProxyType({c: hierarchies[c].source for c in cat_cols}),
            "sensitive": sens,
            "identifiers": ids,
            "aggregation": aggregation,
            "method_params": MappingProxyType({**partitioner.params, **params}),
            **_privacy_params(l, diversity, t_level, closeness),
            "microagg_version": __version__,
        }),
        seed=seed,
        checks=MappingProxyType(checks),
        metrics=MappingProxyType(metrics),
        warnings=tuple(notes),
        timings=MappingProxyType(timings),
    )
