"""The public face of a release: :func:`anonymize` builds a Request and runs it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from ._base.scaling import SCALINGS
from ._base.validation import RandomState
from ._pipeline.measure import DLD_SAMPLE, DLD_SAMPLE_ABOVE
from ._pipeline.request import CATEGORICAL_AGGREGATIONS, Request
from ._pipeline.result import Release
from ._pipeline.stages import run
from .hierarchy import Hierarchy
from .schema.schema_file import Schema
from .steps import Plan

__all__ = ["CATEGORICAL_AGGREGATIONS", "DLD_SAMPLE", "DLD_SAMPLE_ABOVE", "SCALINGS", "Release",
           "anonymize"]


def anonymize(
    df: pd.DataFrame,
    *,
    quasi_identifiers: str | Sequence[str] | None = None,
    k: int | None = None,
    method: str | None = None,
    plan: Plan | None = None,
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
    certify: bool | float = False,
    blocking: str | None = None,
    block_size: int | None = None,
    n_jobs: int | None = None,
    missing: str = "pattern",
    schema: Schema | None = None,
    keep: str | Sequence[str] = (),
    dates: str | Sequence[str] | Mapping[str, Mapping[str, str]] | None = None,
    rounding: Mapping[str, int | None] | bool | None = None,
    weights: str | None = None,
    households: str | None = None,
    strata: str | None = None,
    refine: float | None = None,
    attacks: bool = True,
    control: pd.DataFrame | None = None,
) -> Release:
    """Mask the quasi-identifiers of ``df`` by microaggregation and return a verified release.

    Records are grouped on the scaled quasi-identifiers (groups of at least ``k``) and each
    group's quasi-identifiers are replaced by its representative, computed on the original
    scale. Identifiers are dropped; sensitive and other columns pass through unchanged; the
    row order is kept. Every promise (k, group k, l, t, noise within range, DP accounting) is
    re-derived from the published data; a shortfall raises :class:`PrivacyViolationError`.
    A noisy aggregation (``"rho"`` with rho > 0, ``"random-k"``, ``"synthetic"``,
    ``"fuzzy-random"``) gives each record its own values: ``checks["group_k"]`` is promised,
    ``checks["k_anonymity"]`` only reported. ``epsilon`` makes an epsilon-differentially
    private release (:mod:`microagg.aggregate.dp`; noise from OS entropy, rows shuffled, every column a
    quasi-identifier). ``docs/guarantees.md`` says what each model does not promise.

    Parameters
    ----------
    df : pandas.DataFrame
        The microdata, one row per respondent.
    quasi_identifiers : str or sequence of str
        Columns to mask (key variables an intruder may know); from ``schema`` when given.
    k : int
        Minimum group size, ``2 <= k <= len(df)`` (required unless ``plan`` is given).
    method : str, default=None
        A partitioner of :data:`microagg.partition.PARTITIONERS`; ``None``: ``"mdav"``
        (``"mage"`` with categorical quasi-identifiers, the insensitive partition with DP).
    plan : microagg.steps.Plan, default=None
        The steps of the release, in order (:class:`~microagg.steps.Plan`), instead of
        ``quasi_identifiers``, ``k``, ``method``, ``method_params``, ``aggregation``,
        ``aggregation_params``, ``scaling`` and ``refine`` (refused with it, by name): the
        shorthand is exactly the plan of one :class:`~microagg.steps.Microaggregate` step.
        A plan of several steps masks disjoint groups of numeric quasi-identifiers, one
        after the other, each with its own k (promised, ``checks["steps"]``); k over all of
        them is reported, not promised (as with ``attribute_groups``). ``Release.steps``
        records what each step did; ``Release.without_last_step()`` re-runs the plan minus
        its last step under the recorded seed.
    sensitive, identifiers : str or sequence of str, default=()
        Confidential columns (published unchanged, checked by l / t) and direct identifiers
        (dropped). Every other column is published unchanged, but a column that looks like a
        direct identifier (named like one: ``person_id``, ``name``, ``email``..., or text /
        whole numbers unique on at least 95 % of the rows) is refused unless named in
        ``keep``.
    aggregation : str, default=None
        Group representative (:data:`~microagg.aggregate.AGGREGATORS`); ``None``: ``"mean"``
        (``"interval"`` for methods that generalize, e.g. ``cdt``).
    aggregation_params, method_params : mapping, default=None
        Parameters of the aggregation (``{"rho": 0.5}``) and of the method.
    scaling : {"standard", "minmax", "none"}, default=None
        Scaling for the distances only (``None``: z-scores); not with ``epsilon``.
    random_state : None, int or numpy.random.Generator, default=None
        The single source of randomness; the seed used is recorded in ``Release.seed``.
    epsilon : float, default=None
        Budget of an epsilon-differentially private release (> 0).
    bounds : mapping of column -> (lower, upper), default=None
        Public bounds for ``epsilon``; columns left out get the data's range and a
        :class:`PrivacyLeakWarning` (the guarantee then does not hold).
    intruder_knows : str or sequence of str, default=None
        Quasi-identifiers an intruder holds: adds ``metrics["dld_risk_known"]``.
    hierarchies : mapping of column -> Hierarchy or path, default=None
        Generalization hierarchies (ARX CSV). A quasi-identifier with one, or not numeric, is
        categorical: the release then generalizes (closest common generalization).
    l, diversity, diversity_c : default None, "distinct", 2.0
        Require l-diversity (distinct, entropy or recursive (c, l)) of every sensitive column.
    t, t_distance : default None, "auto"
        Require t-closeness (EMD; ground distance hierarchical, ordered or equal).
    attribute_groups, n_attribute_groups : default None
        Microaggregate groups of columns separately (``"individual"``, ``"correlation"`` or
        lists): NOT k-anonymous; real k and the intersection attack are reported.
    categorical_aggregation : {"generalize", "mode"}, default="generalize"
        Representative of nominal quasi-identifiers.
    clustering_il : int, default=None
        Also measure seed 001's clustering-based information loss with this many clusters.
    certify : bool or float, default=False
        Prove how far the partition is from the best possible: a lower bound on the SSE of
        every partition into groups of at least k (:func:`microagg.bounds.lower_bound`,
        ``True``: 60 seconds, a number: that many seconds), reported as
        ``metrics["certified_gap"]`` (percent by which the SSE can exceed the optimum's)
        and ``metrics["certificate"]``; numeric microaggregation of complete data, up to
        5,000 records.
    blocking, block_size, n_jobs : default None, None, None
        Run ``method`` block by block (``"kd"``, ``"pca"``, ``"vp"``) in worker processes;
        ``block_size=None``: the method's default (10,000; for ``mdav-scale`` 2,500,000
        records of up to 10 quasi-identifiers, 25 million values in wider data).
    missing : {"pattern", "category", "impute:median", "impute:mean", "refuse"}, default="pattern"
        Missing quasi-identifier values: grouped only with records of the same missingness
        pattern and published as missing (small patterns merged, the cells blanked counted in
        ``params["missing"]``); ``"category"``: a categorical column's missing value is a
        category while grouping; ``"impute:*"``: recorded imputation (warns); ``"refuse"``.
        Missing sensitive values never count as a diverse value for ``l``.
    schema : Schema, default=None
        Roles, types, hierarchies and bounds from a schema file (:func:`load_schema`); its
        ``other`` columns count as kept on purpose (``keep``).
    keep : str or sequence of str, default=()
        Columns published unchanged on purpose although they look like direct identifiers
        or, without a role, break ``k`` by themselves (a value that fewer than ``k`` rows
        share, missing values aside: exact dates, near-unique numbers, rare codes): without
        it such columns are refused before any work. Those kept are recorded in
        ``Release.params["keep"]`` and named by the report.
    weights : str, default=None
        The sampling weight column (finite numbers > 0): published unchanged, and used to
        estimate population frequencies for the disclosure risk before and after masking.
    households : str, default=None
        The household id column: for the household risk, then dropped like an identifier
        unless named in ``keep``.
    strata : str, default=None
        The strata column (a region, the design stratum; sdcMicro's ``strataVar``; none
        missing): published unchanged, and the disclosure risk counts the frequencies within
        each stratum. Published unchanged, it is also a key of the published-columns check.
    dates : str, sequence of str or mapping, default=None
        Quasi-identifiers that are dates (text parsed with ``format``, ISO 8601 by default;
        a ``datetime64`` quasi-identifier is a date without being named): microaggregated as
        days since 1970-01-01 and published as dates again, rounded to the day or to the
        first day of their month or year: ``{"dob": {"format": "%d.%m.%Y", "publish":
        "month"}}``. Text is published as ISO text, datetimes as ``datetime64[s]``.
        ``Release.params["dates"]``.
    rounding : mapping of column -> digits, bool or None, default=None
        Digits each quasi-identifier is published rounded to (0: integers, -1: tens; ``None``
        for a column: not rounded). By default (``None``) every quasi-identifier whose values
        are all whole numbers is published rounded to integers; ``False``: no rounding.
        Rounding comes after aggregation and the final table is verified again (it can merge
        classes): ``Release.params["rounding"]``, ``Release.checks["rounding"]``.
    refine : float, default=None
        The quality mode: seconds of local search (``> 0``) improving ``method``'s partition
        (``mdav-ls``; on large inputs ``mdav-scale`` with its refinement).
    attacks : bool, default=True
        Try singling out, linkability and the inference of each sensitive column on the
        release (anonymeter's attacks, Giomi et al. 2023), the quasi-identifiers known, on
        a sample of 2,000 attacked records: ``metrics["attacks"]``
        (:mod:`microagg._pipeline.attack_step`; their seed, drawn from ``random_state``,
        recorded). ``False``: none, and no ``attacks`` key. Without ``control`` each attack
        is compared with itself with the person's own released record left out.
    control : pandas.DataFrame, default=None
        Original records held out before the release (:func:`microagg.metrics.attacks.hold_out`;
        the columns of ``df``, at most its rows): what the attacks compare with, as in
        anonymeter.

    Returns
    -------
    Release

    Warns
    -----
    ConstantColumnWarning, LowUtilityWarning, PrivacyLeakWarning
        A constant quasi-identifier (published exactly, outside the loss); groups far above
        k or near-total loss; data-derived DP bounds, a noisy aggregation, attribute groups.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [24, 31, 32, 57, 49, 43], "income": [21, 19, 22, 43, 39, 32]})
    >>> release = anonymize(df, quasi_identifiers=["age", "income"], k=3, random_state=0)
    >>> release.k, release.data["age"].tolist()  # whole numbers: rounded by default
    (3, [29, 29, 29, 50, 50, 50])
    """
    def replay(steps: Plan, undone: Sequence[str] = ()) -> Release:
        # the same call with another plan, given once; the columns only an undone step
        # changed are published as they were, on purpose (recorded: sdcMicro's undolast)
        again, given = (None, steps) if schema is None else (replace(schema, plan=steps), None)
        kept = [*([keep] if isinstance(keep, str) else keep or ()), *undone]
        return anonymize(
            df, plan=given, sensitive=sensitive, identifiers=identifiers,
            random_state=release.seed, epsilon=epsilon, bounds=bounds,
            intruder_knows=intruder_knows, hierarchies=hierarchies, l=l, diversity=diversity,
            diversity_c=diversity_c, t=t, t_distance=t_distance,
            attribute_groups=attribute_groups, n_attribute_groups=n_attribute_groups,
            categorical_aggregation=categorical_aggregation, clustering_il=clustering_il,
            certify=certify, blocking=blocking, block_size=block_size, n_jobs=n_jobs,
            missing=missing, schema=again, keep=kept, dates=dates,
            rounding=rounding, weights=weights, households=households, strata=strata,
            attacks=attacks, control=control)

    release = run(Request.build(
        df, quasi_identifiers=quasi_identifiers, k=k, plan=plan, replay=replay,
        method=method, sensitive=sensitive, identifiers=identifiers, aggregation=aggregation,
        aggregation_params=aggregation_params, scaling=scaling, random_state=random_state,
        method_params=method_params, epsilon=epsilon, bounds=bounds,
        intruder_knows=intruder_knows, hierarchies=hierarchies, l=l, diversity=diversity,
        diversity_c=diversity_c, t=t, t_distance=t_distance,
        attribute_groups=attribute_groups, n_attribute_groups=n_attribute_groups,
        categorical_aggregation=categorical_aggregation, clustering_il=clustering_il,
        certify=certify, blocking=blocking, block_size=block_size, n_jobs=n_jobs,
        missing=missing, schema=schema, keep=keep, dates=dates, rounding=rounding,
        weights=weights, households=households, strata=strata, refine=refine,
        attacks=attacks, control=control))
    return release

