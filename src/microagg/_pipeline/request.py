"""A release request: every option checked once, then frozen (see ``DESIGN.md``).

:meth:`Request.build` takes what a face was given (the arguments of
:func:`microagg.anonymize`, the CLI's options, a :class:`~microagg.schema.Schema`) and applies
every cross-option rule, in one place and in the one message format; the engines and stages
that run a Request never re-validate it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._base.constraints import check_option
from .._base.scaling import SCALINGS
from .._base.validation import RandomState, check_k
from ..aggregate.aggregators import AGGREGATORS, is_noisy
from ..aggregate.aggregators import aggregation_params as checked_aggregation_params
from ..aggregate.dp import check_epsilon
from ..aggregate.generalize import NUMERIC_MODES
from ..exceptions import SchemaError
from ..hierarchy import Hierarchy
from ..io._nested import check_roles_hold_values
from ..models import SensitiveDistribution
from ..partition import PARTITIONERS, Partitioner, get_partitioner
from ..schema._steps import roles_from
from ..schema.schema_file import Schema
from ..steps import Plan
from .attack_step import AttackRequest, attack_request
from .certify import certify_option
from .kept import kept_on_purpose, weight_treated
from .missing import check_missing, kind_with_missing
from .plan_request import (
    check_plan_steps,
    check_publication,
    runs_as_plan,
    shorthand_of,
    shorthand_plan,
)
from .publish import prepare as prepare_publishing
from .rules import (
    QUALITY_SCALE_ROWS,
    EngineRefusal,
    as_names,
    check_attribute_group_request,
    check_blocking_request,
    check_diversity_request,
    check_dp_request,
    check_quasi_identifier_types,
    closeness_targets,
    load_hierarchies,
    quality_mode_request,
    validate_roles,
)
from .survey_roles import survey_roles
from .unmasked import check_keep, row_positions

__all__ = ["CATEGORICAL_AGGREGATIONS", "Request"]

CATEGORICAL_AGGREGATIONS = ("generalize", "mode")
"""Representatives of nominal quasi-identifiers in a mixed release."""

NO_ROWS = "The input table has no rows; there is nothing to release."


@dataclass(frozen=True, eq=False)  # holds a DataFrame: identity, not value, equality
class Request:
    """Everything a release needs, checked (build it with :meth:`build`).

    The fields are the options of :func:`microagg.anonymize` after checking: names as
    tuples, hierarchies loaded (``hierarchies``: the categorical quasi-identifiers; a flat
    hierarchy where none was given), the t-closeness targets prepared (``closeness``), the
    aggregation's parameters checked; ``kind`` says which stage runs it and ``engine`` which
    engine (:data:`microagg.engines.ENGINES`). For an engine that reads the table itself,
    ``data`` holds only the table's first rows (its columns and types).
    """

    data: pd.DataFrame
    quasi_identifiers: tuple[str, ...]
    k: int
    kind: str
    method: str | None = None
    sensitive: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    intruder_knows: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    """Columns that look like direct identifiers, published unchanged on purpose."""
    weight: str | None = None
    """The sampling weight column (published unchanged; for the disclosure risk)."""
    household: str | None = None
    """The household id column (for the household risk; dropped unless kept)."""
    strata: str | None = None
    """The strata column (sdcMicro's ``strataVar``; published unchanged): the risk measures
    count frequencies within each stratum (:mod:`.survey_roles`)."""
    aggregation: str | None = None
    aggregation_params: Mapping[str, Any] = field(default_factory=dict)
    scaling: str | None = None
    random_state: RandomState = None
    method_params: Mapping[str, Any] = field(default_factory=dict)
    epsilon: float | None = None
    bounds: Mapping[str, Sequence[float]] | None = None
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    l: float | None = None
    diversity: str = "distinct"
    diversity_c: float = 2.0
    t: float | None = None
    closeness: Mapping[str, SensitiveDistribution] = field(default_factory=dict)
    attribute_groups: str | Sequence[Sequence[str]] | None = None
    n_attribute_groups: int | None = None
    categorical_aggregation: str = "generalize"
    clustering_il: int | None = None
    certify: float | None = None
    """Seconds for a certified optimality gap (:mod:`.certify`); ``None``: none."""
    blocking: str | None = None
    block_size: int = 10_000
    n_jobs: int | None = None
    engine: str = "memory"
    missing: str = "pattern"
    """What to do with missing values (:data:`~microagg._pipeline.missing.MISSING_STRATEGIES`)."""
    dates: Mapping[str, Any] = field(default_factory=dict)
    """Date quasi-identifiers (:class:`~microagg._pipeline.dates.DateSpec`), held in ``data``
    as days since 1970-01-01 and published as dates (:mod:`.publish`)."""
    rounding: Mapping[str, int] = field(default_factory=dict)
    """Digits each quasi-identifier is published rounded to (:func:`.publish.rounding_for`)."""
    started: float = field(default_factory=time.perf_counter)
    """When the request was made (``Release.timings["validate"]`` counts from it)."""
    plan: Plan | None = None
    """The steps (:class:`~microagg.steps.Plan`): given, or the one step of the shorthand."""
    attacks: AttackRequest | None = None
    """The attacks tried on the release (:mod:`.attack_step`); ``None``: opted out."""
    replay: Any = field(default=None, repr=False)
    """``replay(plan)`` runs the face's call again with another plan (for
    :meth:`~microagg._pipeline.result.Release.without_last_step`); ``None``: not offered."""

    @property
    def noisy(self) -> bool:
        """Whether every record gets its own noisy values (a noisy aggregation)."""
        return self.aggregation is not None and self.kind != "mixed" and is_noisy(
            self.aggregation, self.aggregation_params)

    @property
    def partitioner(self) -> Partitioner:
        """The registry entry of the method (its stage's default when none was named)."""
        default = "mage" if self.kind == "mixed" else "mdav"
        return get_partitioner(self.method or default)

    @classmethod
    def build(cls, df: pd.DataFrame, *, quasi_identifiers: str | Sequence[str] | None = None,
              k: int | None = None, schema: Schema | None = None, engine: str = "memory",
              plan: Plan | None = None, replay: Any = None, **options: Any) -> Request:
        """Check every option (see :func:`microagg.anonymize` for each) and freeze them.

        With ``schema``, the roles, hierarchies and bounds come from it (options naming roles
        too are refused) and its declared types are applied to ``df`` first. ``refine``
        (seconds) asks for the quality mode: ``method`` improved by local search (mdav-ls).
        ``engine`` names the engine that will run the request: the options it does not run
        are refused first, all of them named (:class:`~microagg._pipeline.rules.EngineRefusal`);
        for an engine that reads the table itself, ``df`` is the table's first rows and the
        checks on the number of rows wait for :meth:`check_rows`. ``plan`` (a
        :class:`~microagg.steps.Plan`) gives the steps instead of the one-step shorthand's
        options (:mod:`.plan_request`); ``replay(plan)`` runs the face's call again with
        another plan (:meth:`Release.without_last_step`).
        """
        started = time.perf_counter()
        if schema is not None:  # a schema's [[steps]], or plan= checked against its roles
            schema = schema.with_plan(plan)
            plan = schema.plan
        runner = _engine(engine, {**options, "plan": plan}, schema)  # refused first
        quasi_identifiers, k, options = shorthand_of(plan, quasi_identifiers, k, options)
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"anonymize expects a pandas DataFrame. Got {type(df).__name__} "
                            "instead.")
        attacks = attack_request(df, options.pop("attacks", True), options.pop("control", None))
        if schema is not None:  # its names as the table spells them
            schema = schema.spelled_as(df.columns)
        df = row_positions(df, _named_columns(quasi_identifiers, options, schema))
        if schema is not None:
            df, quasi_identifiers, options = _with_schema(df, schema, quasi_identifiers,
                                                          options)
        if options.get("refine") is not None:
            large = (runner.reads_files or options.get("blocking") is not None
                     or len(df) >= QUALITY_SCALE_ROWS)
            method, params = quality_mode_request(options.get("method"),
                                                  options.get("method_params"),
                                                  options["refine"], large=large)
            options = {**options, "method": method, "method_params": params}
        whole = not runner.reads_files
        fields = _roles(df, quasi_identifiers, options, whole=whole)
        fields.update(survey_roles(df, fields, {**options, "plan": plan}, whole=whole))
        df, published_as = prepare_publishing(df, fields["quasi_identifiers"], options,
                                              schema, reads_files=runner.reads_files)
        fields["k"] = check_k(k, n_samples=df.shape[0] if whole else sys.maxsize,
                              caller="anonymize")
        fields.update(_privacy_models(df, fields, options, categorical=not runner.numeric_only))
        fields.update(_layout(fields, options, runner))
        fields["certify"] = certify_option(options.get("certify"),
                                           n_rows=df.shape[0] if whole else None,
                                           kind=fields["kind"])
        if whole:  # the stage with missing values, or their refusal, before any work
            fields["kind"] = kind_with_missing(df, fields["quasi_identifiers"],
                                               fields["missing"], fields["kind"],
                                               fields["hierarchies"], fields["certify"])
        if fields["kind"] == "mixed":
            fields.update(_mixed_options(df, fields, options))
        else:
            fields.update(_numeric_options(df, fields, options))
        if plan is not None and runs_as_plan(plan):
            fields["kind"] = check_plan_steps(df, plan, fields)
            check_publication(plan, published_as["dates"])
        fields["keep"] = _kept_identifiers(df, fields, whole=whole,  # after every other check
                                           treated=weight_treated(plan, fields.get("weight")))
        fields["plan"] = plan if plan is not None else shorthand_plan(fields, options)
        return cls(data=df, started=started, engine=runner.name, replay=replay, **fields,
                   **published_as, attacks=attacks)

    def check_rows(self, n_rows: int) -> None:
        """For an engine that counts the rows as it reads them: at least one row, and at
        least ``k`` (the checks :meth:`build` leaves to it)."""
        if n_rows == 0:
            raise SchemaError(NO_ROWS)
        check_k(self.k, n_samples=n_rows, caller="anonymize")


def _engine(name: str, options: Mapping[str, Any], schema: Schema | None) -> Any:
    """The registry entry of the engine, after refusing the options it does not run."""
    from ..engines import engines_running, get_engine

    runner = get_engine(name)
    refused = runner.refused(options, schema)
    if refused:
        raise EngineRefusal(runner.name, refused, engines_running(refused))
    return runner


_NAMING_OPTIONS = ("sensitive", "identifiers", "keep", "intruder_knows", "weights",
                   "households", "strata")
"""The options that name columns (besides the quasi-identifiers)."""


def _named_columns(quasi_identifiers: Any, options: Mapping[str, Any],
                   schema: Schema | None) -> set[str]:
    """Every column name the request gives a role, as given (checked later by the roles)."""
    given = [quasi_identifiers, *(options.get(name) for name in _NAMING_OPTIONS)]
    names = {name for value in given
             for name in ([value] if isinstance(value, str)
                          else value if isinstance(value, (list, tuple, set, frozenset)) else ())
             if isinstance(name, str)}
    return names | (set(schema.columns) if schema is not None else set())


def _with_schema(df: pd.DataFrame, schema: Schema, quasi_identifiers: Any,
                 options: dict[str, Any]) -> tuple[pd.DataFrame, Any, dict[str, Any]]:
    """Roles, hierarchies and bounds from ``schema``; its declared types applied to ``df``."""
    qi, sens, ids = roles_from(schema, quasi_identifiers, options.get("sensitive"),
                               options.get("identifiers"))
    given = dict(options.get("hierarchies") or {})
    clash = sorted(set(given) & set(schema.hierarchies))
    if clash:
        raise SchemaError(f"hierarchies {clash} repeat the schema's hierarchies.")
    doubled = [n for n, role in (("weights", schema.weight), ("households", schema.household),
                                 ("strata", schema.strata))
               if role is not None and options.get(n) is not None]
    if doubled:
        raise SchemaError(f"Give the survey roles either in the schema or as options, not both "
                          f"({', '.join(doubled)} given with a schema).")
    merged = {**options, "sensitive": sens, "identifiers": ids,  # 'other': kept on purpose
              "weights": options.get("weights") or schema.weight,
              "households": options.get("households") or schema.household,
              "strata": options.get("strata") or schema.strata,
              "keep": (*as_names(options.get("keep"), "keep"), *schema.names("other")),
              "hierarchies": {**given, **schema.hierarchies} or None}
    if merged.get("bounds") is None and options.get("epsilon") is not None:
        merged["bounds"] = schema.bounds
    return schema.apply(df), qi, merged


def _roles(df: pd.DataFrame, quasi_identifiers: Any, options: dict[str, Any], *,
           whole: bool = True) -> dict[str, Any]:
    qi = as_names(quasi_identifiers, "quasi_identifiers")
    sens = as_names(options.get("sensitive", ()), "sensitive")
    ids = as_names(options.get("identifiers", ()), "identifiers")
    known = as_names(options.get("intruder_knows"), "intruder_knows")
    validate_roles(df, qi, sens, ids)
    check_roles_hold_values(df, {"quasi-identifier": qi, "sensitive": sens})
    not_qi = [c for c in known if c not in qi]
    if not_qi:
        raise SchemaError(f"intruder_knows names {', '.join(map(repr, not_qi))}, which are not "
                          f"quasi-identifiers; quasi-identifiers: {', '.join(map(repr, qi))}.")
    if whole and df.shape[0] == 0:
        raise SchemaError(NO_ROWS)
    keep = check_keep(df, as_names(options.get("keep"), "keep"),
                      {"quasi_identifiers": qi, "sensitive": sens, "identifiers": ids})
    return {"quasi_identifiers": qi, "sensitive": sens, "identifiers": ids,
            "intruder_knows": known, "keep": keep}  # narrowed by _kept_identifiers


def _kept_identifiers(df: pd.DataFrame, fields: dict[str, Any], *, whole: bool,
                      treated: bool = False) -> tuple[str, ...]:
    """Refuse columns published unchanged that look like direct identifiers, then those
    without a role that break k by themselves, then a weight that re-links households
    unless a step of the plan treats it (``treated``: the household step; the release
    measures re-linking on the published table) (the whole table only); the ones kept on
    purpose, recorded (:func:`~.kept.kept_on_purpose`, the review's rule too)."""
    roles = {*fields["quasi_identifiers"], *fields["sensitive"], *fields["identifiers"]}
    as_is = [str(c) for c in df.columns if c not in roles]
    return kept_on_purpose(df, as_is, fields["keep"], weight=fields["weight"],
                           household=fields["household"], k=fields["k"], whole=whole,
                           treated=treated)


def _privacy_models(df: pd.DataFrame, fields: dict[str, Any], options: dict[str, Any], *,
                    categorical: bool = True) -> dict[str, Any]:
    """l and t checked, hierarchies loaded, t-closeness targets prepared. Without
    ``categorical`` (an engine of numeric quasi-identifiers only, which checks their values as
    it reads them), no column is taken for categorical by its type."""
    qi, sens = fields["quasi_identifiers"], fields["sensitive"]
    l, diversity = options.get("l"), options.get("diversity", "distinct")
    diversity_c = options.get("diversity_c", 2.0)
    missing = check_missing(options.get("missing", "pattern"))
    if l is not None:
        check_diversity_request(df, sens, l, diversity, diversity_c)
    check_quasi_identifier_types(df, qi, options.get("hierarchies"))
    loaded, sensitive_hierarchies = (load_hierarchies(df, qi, sens, options.get("hierarchies"),
                                                      missing=missing)
                                     if categorical else ({}, {}))
    t = options.get("t")
    closeness = closeness_targets(df, sens, t, options.get("t_distance", "auto"),
                                  sensitive_hierarchies)
    categorical_aggregation = options.get("categorical_aggregation", "generalize")
    check_option(categorical_aggregation, CATEGORICAL_AGGREGATIONS,
                 parameter="categorical_aggregation")
    return {"l": l, "diversity": diversity, "diversity_c": diversity_c, "t": t,
            "closeness": MappingProxyType(closeness),
            "hierarchies": MappingProxyType(loaded),
            "categorical_aggregation": categorical_aggregation, "missing": missing}


def _generalizing_method(method: str | None) -> bool:
    """Whether ``method`` names a registered partitioner that generalizes (publishes
    intervals or value sets) instead of representatives."""
    entry = PARTITIONERS.get(method) if method is not None else None
    return entry is not None and entry.generalizes


def _layout(fields: dict[str, Any], options: dict[str, Any], runner: Any) -> dict[str, Any]:
    """The stage that runs the request, with the rules on what it combines with."""
    method, epsilon = options.get("method"), options.get("epsilon")
    generalizes = bool(fields["hierarchies"]) or _generalizing_method(method)
    if generalizes and runner.numeric_only:
        raise EngineRefusal(runner.name, ["method"])
    attribute_groups = options.get("attribute_groups")
    n_attribute_groups = options.get("n_attribute_groups")
    if attribute_groups is not None:
        check_attribute_group_request(generalizes, method, epsilon, fields["l"], fields["t"],
                                      options.get("method_params"))
    elif n_attribute_groups is not None:
        raise ValueError("n_attribute_groups needs attribute_groups='correlation'.")
    kind = ("mixed" if generalizes else "dp" if epsilon is not None
            else "attribute-groups" if attribute_groups is not None else "numeric")
    return {"kind": kind, "method": method, "attribute_groups": attribute_groups,
            "n_attribute_groups": n_attribute_groups,
            **_blocking(fields, options, runner, generalizes or epsilon is not None),
            "n_jobs": options.get("n_jobs"), "random_state": options.get("random_state"),
            "clustering_il": options.get("clustering_il")}


def _blocking(fields: dict[str, Any], options: dict[str, Any], runner: Any, refused: bool
              ) -> dict[str, Any]:
    """``blocking`` and ``block_size`` checked once (``"kd"`` for an engine that always
    blocks); ``refused``: the release generalizes or is epsilon-DP."""
    blocking = options.get("blocking") or ("kd" if runner.blocks else None)
    block_size = options.get("block_size")
    if blocking is None:
        return {"blocking": None, "block_size": 10_000 if block_size is None else block_size}
    if refused:
        raise SchemaError("blocking applies to numeric microaggregation: not to categorical "
                          "quasi-identifiers, cdt or the epsilon-DP release.")
    partitioner = get_partitioner(options.get("method") or "mdav")
    if block_size is None:  # the method's own default (larger for mdav-scale)
        block_size = max(2 * fields["k"],
                         partitioner.default_block_size(len(fields["quasi_identifiers"])))
    return {"blocking": blocking,
            "block_size": check_blocking_request(partitioner, blocking, block_size,
                                                 fields["k"])}


def _may_be_noisy(aggregation: str | None) -> bool:
    entry = AGGREGATORS.get(aggregation) if aggregation is not None else None
    return entry is not None and entry.may_be_noisy


def _mixed_options(df: pd.DataFrame, fields: dict[str, Any], options: dict[str, Any]
                   ) -> dict[str, Any]:
    """Generalizing releases: no noise, scaling or epsilon; the numeric columns' mode."""
    loaded, method = fields["hierarchies"], fields["method"]
    aggregation = options.get("aggregation")
    if options.get("epsilon") is not None or options.get("bounds") is not None \
            or _may_be_noisy(aggregation) or options.get("aggregation_params") \
            or options.get("scaling") is not None or fields["intruder_knows"] \
            or fields["clustering_il"] is not None:
        what = (f"Categorical quasi-identifiers ({', '.join(map(repr, loaded))})"
                if loaded else "The cdt method")
        raise SchemaError(
            f"{what} generalize: epsilon, bounds, the noisy aggregations, scaling, "
            "intruder_knows and clustering_il apply to numeric microaggregation only.")
    partitioner = get_partitioner(method or "mage")
    aggregation = aggregation or partitioner.default_aggregation
    if aggregation not in NUMERIC_MODES:
        who = ("With categorical quasi-identifiers" if loaded else
               f"Method {partitioner.name!r} generalizes, and")
        raise ValueError(f"{who} the aggregation is the numeric columns' representative: one "
                         f"of {', '.join(NUMERIC_MODES)}. Got {aggregation!r}.")
    if not partitioner.mixed:
        capable = ", ".join(sorted(n for n, p in PARTITIONERS.items() if p.mixed))
        cats = ", ".join(f"{c!r} (dtype {df[c].dtype}, hierarchy: {h.source})"
                         for c, h in loaded.items())
        raise SchemaError(f"Method {partitioner.name!r} works on numeric data only, and "
                          f"{cats} are categorical (labels, never averaged); use one of: "
                          f"{capable}; or, if they are quantities, make them numbers "
                          "(type = \"numeric\" in a schema).")
    if partitioner.needs_sensitive and not fields["sensitive"]:
        raise SchemaError(f"Method {partitioner.name!r} groups dissimilar sensitive tuples: "
                          "name the sensitive columns (sensitive=... / -s).")
    return {"aggregation": aggregation,
            "method_params": MappingProxyType(dict(options.get("method_params") or {}))}


def _numeric_options(df: pd.DataFrame, fields: dict[str, Any], options: dict[str, Any]
                     ) -> dict[str, Any]:
    """Scaling, the aggregation and its parameters, epsilon and its bounds."""
    scaling = options.get("scaling")
    if scaling is not None:  # checked early: before any work
        check_option(scaling, SCALINGS, parameter="scaling")
    aggregation = options.get("aggregation") or "mean"
    check_option(aggregation, sorted(AGGREGATORS), parameter="aggregation")
    agg_params = checked_aggregation_params(aggregation, options.get("aggregation_params"))
    epsilon, bounds = options.get("epsilon"), options.get("bounds")
    if (fields["l"] is not None or fields["t"] is not None) \
            and (is_noisy(aggregation, agg_params) or epsilon is not None):
        raise SchemaError("l-diversity and t-closeness are checked on the published classes; a noisy "
                          "aggregation or an epsilon release has none (every published record "
                          "differs or rows are shuffled). Drop l, or use a deterministic "
                          "aggregation without epsilon.")
    method_params = options.get("method_params")
    if epsilon is None and (fields["method"] is not None or fields["attribute_groups"] is None):
        # the Request owns scaling: a method that normalizes inside stops when one is given
        partitioner = get_partitioner(fields["method"] or "mdav")
        method_params = partitioner.params_for_scaling(method_params or {}, scaling)
        partitioner.check_params(method_params)
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
        check_dp_request(df, fields["quasi_identifiers"], fields["identifiers"],
                         fields["method"], aggregation, scaling, method_params)
    elif bounds is not None:
        raise ValueError("bounds are used only with epsilon (the differentially private "
                         "release); pass epsilon too, or drop bounds.")
    return {"scaling": scaling, "aggregation": aggregation,
            "aggregation_params": MappingProxyType(dict(agg_params)), "epsilon": epsilon,
            "bounds": bounds, "method_params": MappingProxyType(dict(method_params or {}))}
