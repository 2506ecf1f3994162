"""The refusals of a release request, each in one place (used by :mod:`.request`).

Every function raises :class:`~microagg.exceptions.SchemaError` (a ``ValueError``) or
``ValueError`` / ``TypeError`` with the message that names the columns, the options and what
to do instead; none of them changes data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._base.constraints import check_option
from ..exceptions import SchemaError
from ..hierarchy import Hierarchy
from ..models import DIVERSITIES, GROUND_DISTANCES, SensitiveDistribution, check_l, check_t
from ..models import l_diversity as l_diversity_of
from ..schema.schema_file import check_unique_columns
from .missing import MISSING_LABEL, missing_refusal

__all__ = ["EngineRefusal", "as_names", "check_attribute_group_request", "check_blocking_request",
           "check_diversity", "check_diversity_request", "check_dp_request",
           "check_quasi_identifier_types", "closeness_targets", "load_hierarchies",
           "not_numeric", "quality_mode_request", "require_complete", "require_numeric",
           "validate_roles"]


class EngineRefusal(SchemaError):
    """Options an engine does not run (``options``: their names in the Request, so that a
    face can name them its own way)."""

    def __init__(self, engine: str, options: Sequence[str],
                 runners: Sequence[str] = ("memory",)) -> None:
        self.engine = engine
        self.options = tuple(options)
        self.runners = tuple(runners)  # the engines that run every one of the options
        others = " or ".join(self.runners) or "no other"
        super().__init__(f"The {engine} engine runs numeric microaggregation with group means "
                         f"only; drop {', '.join(self.options)} (or use the {others} engine, "
                         f"which runs {'it' if len(self.options) == 1 else 'them'}).")


def as_names(value: str | Sequence[str] | None, role: str) -> tuple[str, ...]:
    """A role's column names as a tuple (one name may be given as a string)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    names = tuple(value)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise TypeError(f"Column names in {role!r} must be strings. Got {bad!r}.")
    return names


def validate_roles(df: pd.DataFrame, quasi_identifiers: tuple[str, ...],
                   sensitive: tuple[str, ...], identifiers: tuple[str, ...]) -> None:
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


def check_quasi_identifier_types(df: pd.DataFrame, qi: tuple[str, ...],
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
            # datetime64 columns reach this only on an engine that reads files itself: in
            # memory they are date quasi-identifiers (microagg._pipeline.dates)
            problems.append(f"{col!r} holds dates or durations (dtype {dtype}), which are "
                            "neither numbers to average nor categories here (the in-memory "
                            "engine microaggregates dates, not durations or periods): convert "
                            f"it first, to a number (e.g. {how}) or to text categories")
    if problems:
        raise SchemaError("Quasi-identifiers of a type microagg cannot mask: "
                          + "; ".join(problems) + ".")


def require_complete(df: pd.DataFrame, sens: tuple[str, ...], purpose: str) -> None:
    """Sensitive columns without missing values, or a SchemaError naming counts and why."""
    missing = [f"{c!r}: {int(n)}" for c, n in ((c, df[c].isna().sum()) for c in sens) if n]
    if missing:
        raise SchemaError(f"Sensitive columns have missing values ({'; '.join(missing)} of "
                          f"{len(df)} rows); {purpose}, so fill or drop them first.")


def not_numeric(dtypes: Any, columns: Sequence[str]) -> list[str]:
    """``'col' (dtype ...)`` for each of ``columns`` whose dtype (in ``dtypes``, a Series or
    mapping by column) is not a number (booleans are not numbers to average)."""
    return [f"{c!r} (dtype {dtypes[c]})" for c in columns
            if not pd.api.types.is_numeric_dtype(dtypes[c])
            or pd.api.types.is_bool_dtype(dtypes[c])]


def require_numeric(dtypes: Any, columns: Sequence[str]) -> None:
    """Quasi-identifiers of number dtypes, or the one message naming the others."""
    bad = not_numeric(dtypes, columns)
    if bad:
        raise SchemaError(
            "Quasi-identifiers must be numeric for the numeric methods; not numeric: "
            f"{', '.join(bad)}. Encode them, or pass them as sensitive or other columns.")


def check_diversity(diversity: Any) -> str:
    """A known l-diversity (:data:`~microagg.models.DIVERSITIES`), or the one message."""
    return str(check_option(diversity, DIVERSITIES, parameter="diversity"))


def check_diversity_request(df: pd.DataFrame, sens: tuple[str, ...], l: float,
                            diversity: str, c: float) -> None:
    """l-diversity is possible: a known diversity, a sensitive column, and the whole table
    (the most any partition can reach) reaches ``l`` in every sensitive column."""
    check_diversity(diversity)
    check_l(l)
    if diversity == "recursive" and (isinstance(c, bool) or not isinstance(
            c, (int, float, np.integer, np.floating)) or not c > 0):
        raise ValueError(f"The 'diversity_c' parameter must be a number > 0. Got {c!r}.")
    if not sens:
        raise SchemaError("l-diversity needs at least one sensitive column (sensitive=...).")
    for col in sens:  # missing values are never a diverse value: the observed ones count
        observed = df[col].dropna().to_numpy()
        if not len(observed):
            raise SchemaError(
                f"The table cannot be made {diversity} {l:g}-diverse: sensitive column {col!r} "
                f"has no observed value (all {len(df)} are missing, and a missing value never "
                "counts as a diverse one), so no l >= 1 can be met. Fill the column, or do not "
                "name it sensitive.")
        reached = l_diversity_of(np.zeros(len(observed), dtype=np.intp), observed,
                                 diversity=diversity, c=c)
        if reached < l - 1e-12:
            n_missing = len(df) - len(observed)
            raise SchemaError(
                f"The table cannot be made {diversity} {l:g}-diverse: sensitive column {col!r} "
                f"reaches only l = {reached:.4g} over all {len(observed)} records with an "
                "observed value together" + (f" ({n_missing} missing values never count)"
                                             if n_missing else "") + " ("
                + (f"{reached:g} distinct values" if diversity == "distinct"
                   else "its most frequent value dominates" if diversity == "recursive"
                   else "its entropy is too low") + f"); ask for l <= {reached:.4g}.")


def load_hierarchies(df: pd.DataFrame, qi: tuple[str, ...], sens: tuple[str, ...],
                     hierarchies: Mapping[str, Any] | None, *, missing: str = "refuse"
                     ) -> tuple[dict[str, Hierarchy], dict[str, Hierarchy]]:
    """The categorical quasi-identifiers with their hierarchies (a flat one of the observed
    values when none is given; with ``missing="category"`` it also holds
    :data:`~microagg._pipeline.missing.MISSING_LABEL`), and the hierarchies given for
    sensitive columns (for t-closeness). Missing values are refused under
    ``missing="refuse"`` only."""
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
        if n_missing and missing == "refuse":
            raise missing_refusal({col: n_missing}, len(df))
        label = [MISSING_LABEL] if n_missing and missing == "category" else []
        if col not in given:  # no hierarchy: a group keeps its value or shows '*'
            loaded[col] = Hierarchy.flat([*df[col].dropna().to_numpy(), *label], column=col)
        else:
            loaded[col] = load(col)
            if label and MISSING_LABEL not in loaded[col].paths:
                raise SchemaError(
                    f"missing='category' groups the {n_missing} missing values of {col!r} "
                    f"as the category {MISSING_LABEL!r}, which its hierarchy "
                    f"({loaded[col].source}) lacks: add it, or use missing='pattern'.")
    return loaded, {c: load(c) for c in sens if c in given}


def closeness_targets(df: pd.DataFrame, sens: tuple[str, ...], t: float | None,
                      distance: str, hierarchies: dict[str, Hierarchy]
                      ) -> dict[str, SensitiveDistribution]:
    """The sensitive columns prepared for t-closeness (empty when t is None)."""
    if t is None:
        return {}
    check_t(t)
    check_option(distance, ("auto", *GROUND_DISTANCES), parameter="t_distance")
    if not sens:
        raise SchemaError("t-closeness needs at least one sensitive column (sensitive=...).")
    # missing sensitive values are no value: each class is compared by its observed ones
    # (SensitiveDistribution), and the release says how many there were
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


def check_attribute_group_request(generalizes: bool, method: str | None,
                                  epsilon: float | None, l: float | None, t: float | None,
                                  method_params: Mapping[str, Any] | None) -> None:
    """Refuse what microaggregation by attribute groups cannot combine with."""
    problems = []
    if generalizes:
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


def check_dp_request(df: pd.DataFrame, qi: tuple[str, ...], ids: tuple[str, ...],
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


QUALITY_SCALE_ROWS = 50_000
"""From this many records on (and always with blocking or an engine that reads files), the
quality mode runs ``mdav-scale`` (near-linear) instead of ``mdav-ls`` (whose neighbour
groups and MDAV-2 / TFRP-2 starts are quadratic in the number of groups)."""


def quality_mode_request(method: str | None, method_params: Mapping[str, Any] | None,
                         seconds: Any, *, large: bool = False) -> tuple[str, dict[str, Any]]:
    """The quality mode (``refine=seconds``): ``method`` improved by local search (mdav-ls,
    started from ``method``, ``"auto"`` when none or mdav-ls) for at most ``seconds``; on
    ``large`` data (:data:`QUALITY_SCALE_ROWS`, blocking, file engines) with no method,
    mdav or mdav-scale named: ``mdav-scale`` with its ``quality_params`` (lists refined
    twice, sweeps until its tolerance), stopped after ``seconds``; a named method with a
    budget of its own (colgen): that method with ``seconds`` as its ``time_limit``."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer,
                                                             np.floating)) or not seconds > 0:
        raise ValueError(f"The 'refine' parameter must be a number of seconds > 0. "
                         f"Got {seconds!r} instead.")
    if large and method in (None, "mdav", "mdav-scale"):
        return "mdav-scale", _with_budget("mdav-scale", method_params, float(seconds))
    if method not in (None, "mdav", "mdav-ls") and _has_own_budget(method):
        return method, _with_budget(method, method_params, float(seconds))
    from ..partition.local_search import UNCAPPED_ROUNDS

    start = "auto" if method in (None, "mdav-ls") else method
    return "mdav-ls", {**dict(method_params or {}), "start": start,
                       "time_limit": float(seconds), "rounds": UNCAPPED_ROUNDS}


def _with_budget(method: str, method_params: Mapping[str, Any] | None, seconds: float
                 ) -> dict[str, Any]:
    """The parameters of ``method`` run with a budget of its own in the quality mode: its
    registry's ``quality_params``, then the caller's, then ``time_limit=seconds``."""
    from ..partition import get_partitioner

    return {**get_partitioner(method).quality_params, **dict(method_params or {}),
            "time_limit": seconds}


def _has_own_budget(method: str) -> bool:
    """Whether ``method`` is a search with a ``time_limit`` of its own (colgen,
    mdav-scale): ``refine`` then sets that budget instead of starting mdav-ls from it."""
    from ..partition import get_partitioner

    try:
        return "time_limit" in get_partitioner(method).params
    except ValueError:  # an unknown name is reported where the method is checked
        return False


def check_blocking_request(partitioner: Any, blocking: str, block_size: Any, k: int) -> int:
    """The blocking options (:func:`~microagg.partition.blocking.check_blocking`) and a method
    that can run block by block; returns the block size."""
    from ..partition.blocking import check_blocking

    return check_blocking(blocking, block_size, k=k, method=partitioner)
