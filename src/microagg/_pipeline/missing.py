"""Missing values in the quasi-identifiers and the sensitive columns (``missing=...``).

Item non-response is normal in surveys (8 % is common). The strategies
(:data:`MISSING_STRATEGIES`):

* ``"pattern"`` (the default): a record is grouped only with records that miss the same
  quasi-identifiers; each pattern is partitioned on its observed columns and missing stays
  missing in the output. Patterns too small for a class are merged as
  :func:`~microagg._pipeline.patterns.plan_patterns` says, blanking (suppressing) the cells
  they must; every suppressed cell is counted in ``Release.params["missing"]``. This is the
  treatment of missing values as a value of their own in k-anonymity (sdcMicro counts ``NA``
  as matching any value only in its optimistic risk; its local suppression publishes ``NA``;
  Templ, Kowarik & Meindl, *J. Stat. Softw.* 67(4), 2015) made safe by construction: a
  published missing cell is a value of its own, so every published class holds one pattern.
* ``"category"``: a categorical quasi-identifier's missing value is one more category while
  grouping (a group of non-respondents keeps it; a group mixing them with respondents
  generalizes); it is published as missing again. Numeric quasi-identifiers use
  ``"pattern"``.
* ``"impute:median"`` / ``"impute:mean"``: each missing numeric cell gets the column's
  median / mean of the observed values (the mode for a categorical column) before masking;
  the counts and values are recorded, and a warning says that published values exist for
  non-respondents.
* ``"refuse"``: a table with missing quasi-identifiers is refused, naming the columns.

Missing sensitive values (l-diversity) never count as a diverse value: a class needs ``l``
distinct *observed* values (entropy and recursive diversity count a class's missing values
as its most frequent observed value, which can only lower them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..exceptions import PrivacyLeakWarning, SchemaError
from .notes import warn_user
from .patterns import PatternPlan

__all__ = [
    "MISSING_LABEL",
    "MISSING_STRATEGIES",
    "MissingRecord",
    "check_missing",
    "fill_category",
    "impute_frame",
    "kind_with_missing",
    "missing_refusal",
    "observed_levels",
    "prepare_missing",
    "published_sensitive",
    "repair_diversity",
]

MISSING_STRATEGIES = ("pattern", "category", "impute:median", "impute:mean", "refuse")
"""The values of ``missing=`` (``--missing``); ``"pattern"`` is the default."""

MISSING_LABEL = "(missing)"
"""The category a missing categorical value is grouped as under ``missing="category"``."""


def check_missing(strategy: Any) -> str:
    """A known strategy, or the one message listing them."""
    if not isinstance(strategy, str) or strategy not in MISSING_STRATEGIES:
        raise ValueError(f"The 'missing' parameter must be one of "
                         f"{', '.join(map(repr, MISSING_STRATEGIES))}. Got {strategy!r} "
                         "instead.")
    return strategy


def missing_refusal(counts: Mapping[str, int], n_rows: int, what: str = "Quasi-identifiers"
                    ) -> SchemaError:
    """The error of ``missing="refuse"`` (and of the paths that run no strategy)."""
    listed = "; ".join(f"{c!r}: {n} missing" for c, n in counts.items())
    return SchemaError(
        f"{what} have missing values in {n_rows} rows ({listed}). Choose a strategy: "
        "missing='pattern' (group records by missingness pattern; --missing pattern), "
        "'category' (a categorical column's missing value as its own category), "
        "'impute:median' or 'impute:mean' (recorded imputation); or drop the rows first.")


@dataclass
class MissingRecord:
    """What a release did about missing values (``Release.params["missing"]``)."""

    strategy: str
    missing_cells: dict[str, int] = field(default_factory=dict)
    sensitive_missing: dict[str, int] = field(default_factory=dict)
    imputed: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    category: tuple[str, ...] = ()
    plan: PatternPlan | None = None
    names: tuple[str, ...] = ()

    @classmethod
    def of(cls, request: Any) -> MissingRecord:
        """The missing cells of the request's quasi-identifiers and sensitive columns."""
        df = request.data

        def counts(cols: tuple[str, ...]) -> dict[str, int]:
            return {c: int(n) for c in cols if (n := df[c].isna().sum())}

        return cls(strategy=request.missing, missing_cells=counts(request.quasi_identifiers),
                   sensitive_missing=counts(request.sensitive),
                   names=request.quasi_identifiers)

    def suppressed(self) -> dict[str, int]:
        """Blanked cells per quasi-identifier (observed in the input, missing in the output)."""
        if self.plan is None:
            return {}
        per = self.plan.suppressed.sum(axis=0)
        return {c: int(n) for c, n in zip(self.names, per, strict=True) if n}

    def params(self) -> Mapping[str, Any]:
        """``Release.params["missing"]``."""
        plan = self.plan
        patterns: dict[str, Any] = {}
        if plan is not None:
            sizes = np.bincount(plan.pattern, minlength=len(plan.missing))
            patterns = {
                "input": plan.input_patterns, "published": len(plan.missing),
                "sizes": MappingProxyType({
                    "+".join(c for c, m in zip(self.names, row, strict=True) if m) or "none":
                    int(s) for row, s in zip(plan.missing, sizes, strict=True)}),
                "steps": tuple(plan.steps)}
        return MappingProxyType({
            "strategy": self.strategy,
            "missing_cells": MappingProxyType(dict(self.missing_cells)),
            "patterns": MappingProxyType(patterns),
            "suppressed_cells": MappingProxyType(self.suppressed()),
            "imputed": MappingProxyType(dict(self.imputed)),
            "category": self.category,
            "sensitive_missing": MappingProxyType(dict(self.sensitive_missing)),
        })

    def warn(self, notes: list[str]) -> None:
        """The plain-words note of what was done (a PrivacyLeakWarning for imputation)."""
        if self.imputed:
            cells = ", ".join(f"{c!r}: {v['cells']} cells with {v['value']!r}"
                              for c, v in self.imputed.items())
            warn_user(notes, f"Missing quasi-identifier values were imputed ({self.strategy}; "
                      f"{cells}) before masking: the release publishes values for "
                      "non-respondents, and an imputed value is not a response.",
                      PrivacyLeakWarning)
        if self.plan is not None:
            suppressed = self.suppressed()
            blanked = (f"; {sum(suppressed.values())} observed cells were blanked so that "
                       f"every pattern forms classes of at least k ("
                       + ", ".join(f"{c!r}: {n}" for c, n in suppressed.items()) + ")"
                       if suppressed else "")
            missing = ", ".join(f"{c!r}: {n}" for c, n in self.missing_cells.items())
            warn_user(notes, f"Quasi-identifiers have missing values ({missing}): records "
                      f"were grouped only with records missing the same columns "
                      f"({self.plan.input_patterns} patterns in, {len(self.plan.missing)} "
                      f"published), and missing values are published as missing{blanked}.",
                      UserWarning)
        if self.category:
            warn_user(notes, "Missing values of "
                      f"{', '.join(map(repr, self.category))} were grouped as a category of "
                      "their own and are published as missing.", UserWarning)
        if self.sensitive_missing:
            counts = ", ".join(f"{c!r}: {n}" for c, n in self.sensitive_missing.items())
            warn_user(notes, f"Sensitive columns have missing values ({counts}); they are "
                      "published as missing and never count as a sensitive value (neither "
                      "for l-diversity nor in t-closeness's distributions).", UserWarning)


_NO_PATTERNS = {"dp": "the epsilon-DP release (its partition ignores the data)",
                "attribute-groups": "microaggregation by attribute groups"}


def kind_with_missing(df: pd.DataFrame, quasi_identifiers: tuple[str, ...], strategy: str,
                      kind: str, hierarchies: Mapping[str, Any], certify: float | None
                      ) -> str:
    """The stage of a request (:attr:`Request.kind`) given the missing values of its
    quasi-identifiers, checked when the Request is built: ``"patterns"`` for a numeric
    release grouped per missingness pattern; ``missing="refuse"``, a stage that has no
    patterns (the epsilon-DP release, attribute groups) and ``certify`` refuse them."""
    cells = {c: int(n) for c in quasi_identifiers if (n := df[c].isna().sum())}
    if not cells or strategy.startswith("impute:"):
        return kind
    if strategy == "refuse":
        raise missing_refusal(cells, len(df))
    category = strategy == "category"
    left = {c: n for c, n in cells.items()
            if not (category and c in hierarchies
                    and not isinstance(df[c].dtype, pd.CategoricalDtype))}
    if left and kind in _NO_PATTERNS:
        raise SchemaError(
            f"{_NO_PATTERNS[kind]} does not run missing={strategy!r} "
            f"(quasi-identifiers with missing values: "
            + ", ".join(f"{c!r}: {n} of {len(df)} rows" for c, n in left.items())
            + "); use missing='impute:median' or 'impute:mean', or drop the rows first.")
    if certify is not None:
        rows = int(df.loc[:, list(quasi_identifiers)].isna().any(axis=1).sum())
        raise SchemaError("certify needs complete quasi-identifiers: "
                          f"{rows} of {len(df)} rows have missing values. Impute or drop them "
                          "first (missing='impute:median'), or leave certify out.")
    return "patterns" if left and kind == "numeric" else kind


def prepare_missing(request: Any) -> tuple[Any, MissingRecord]:
    """The request as its stage runs it (imputed, or with missing categories filled) and
    the record of its missing values (the refusals came when it was built:
    :func:`kind_with_missing`)."""
    record = MissingRecord.of(request)
    if not record.missing_cells:
        return request, record
    if request.missing.startswith("impute:"):
        return impute_frame(request, record), record
    if request.missing == "category":
        request = fill_category(request, record)
    return request, record


def _fill_value(column: pd.Series, how: str) -> Any:
    """The median / mean of a numeric column's observed values, else its mode."""
    observed = column.dropna()
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        value = float(observed.median() if how == "median" else observed.mean())
        return value
    counts = observed.value_counts(sort=False)
    return sorted(counts.index[counts == counts.max()], key=str)[0]


def impute_frame(request: Any, record: MissingRecord) -> Any:
    """The request with its quasi-identifiers imputed (``missing="impute:..."``), recorded."""
    how = request.missing.split(":", 1)[1]
    df = request.data.copy()
    for col, n in record.missing_cells.items():
        if df[col].notna().sum() == 0:
            raise SchemaError(f"Quasi-identifier {col!r} has no observed value in "
                              f"{len(df)} rows: missing={request.missing!r} has nothing to "
                              "impute from; drop the column or use missing='pattern'.")
        value = _fill_value(df[col], how)
        df[col] = df[col].fillna(value)
        record.imputed[col] = MappingProxyType({"cells": n, "value": value})
    return replace(request, data=df)


def fill_category(request: Any, record: MissingRecord) -> Any:
    """The request with each categorical quasi-identifier's missing values as
    :data:`MISSING_LABEL` (``missing="category"``)."""
    cats = [c for c in record.missing_cells if c in request.hierarchies
            and not isinstance(request.data[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return request
    df = request.data.copy()
    for col in cats:
        df[col] = df[col].astype(object).where(df[col].notna(), MISSING_LABEL)
    record.category = tuple(cats)
    return replace(request, data=df)


def observed_levels(groups: NDArray[np.intp], values: Any, diversity: str, c: float
                    ) -> NDArray[np.float64]:
    """The l of each group on its observed sensitive values (0 for a group with none; the
    missing ones counted as the group's most frequent observed value)."""
    from ..models._l_diversity import levels  # the models' own l of a count table

    arr = np.asarray(values, dtype=object).ravel()
    observed = ~pd.isna(arr)
    g = int(groups.max()) + 1
    codes = np.unique(arr[observed].astype(str), return_inverse=True)[1].ravel()
    m = max(int(codes.max()) + 1 if codes.size else 0, 1)
    counts = np.zeros((g, m), dtype=np.int64)
    np.add.at(counts, (groups[observed], codes), 1)
    has = counts.sum(axis=1) > 0
    missing = np.bincount(groups[~observed], minlength=g)
    mode = np.argmax(counts, axis=1)
    counts[np.flatnonzero(has), mode[has]] += missing[has]
    out = levels(counts, diversity, c)
    out[~has] = 0.0
    return out


def published_sensitive(published: pd.DataFrame, classes: NDArray[np.intp],
                        sens: tuple[str, ...]) -> pd.DataFrame:
    """The published table for the l-diversity check: a sensitive column's missing values
    counted as their class's most frequent observed value (never a diverse value)."""
    out = published
    for col in sens:
        column = published[col]
        if not column.isna().any():
            continue
        frame = pd.DataFrame({"c": classes, "v": column.to_numpy(dtype=object)})
        observed = frame.dropna()
        if observed.empty:
            continue
        counts = observed.groupby(["c", "v"]).size().reset_index(name="n")
        counts["s"] = counts["v"].astype(str)  # ties: the first value in text order
        counts = counts.sort_values(["c", "n", "s"], ascending=[True, False, True])
        mode = counts.drop_duplicates("c").set_index("c")["v"]
        filled = frame["v"].where(frame["v"].notna(), frame["c"].map(mode))
        if out is published:
            out = published.copy()
        out[col] = filled.to_numpy(dtype=object)
    return out


def repair_diversity(request: Any, labels: NDArray[np.intp], centre: NDArray[np.float64]
                     ) -> NDArray[np.intp]:
    """Merge groups until each reaches ``l`` on its observed sensitive values (a missing
    value is never a diverse one): the failing group joins the group with the nearest
    centroid of ``centre`` (n, q), ties to the lower label."""
    if request.l is None:
        return labels
    sens = [request.data[c].to_numpy(dtype=object) for c in request.sensitive]
    if not any(pd.isna(s).any() for s in sens):
        return labels
    labels = np.unique(labels, return_inverse=True)[1].ravel().astype(np.intp)
    while True:
        level = np.min([observed_levels(labels, s, request.diversity, request.diversity_c)
                        for s in sens], axis=0)
        failing = np.flatnonzero(level < request.l - 1e-12)
        if failing.size == 0 or level.size == 1:
            return labels
        a = int(failing[0])
        sizes = np.bincount(labels).astype(np.float64)
        sums = np.zeros((sizes.size, centre.shape[1]))
        np.add.at(sums, labels, centre)
        means = sums / sizes[:, None]
        gap = ((means - means[a]) ** 2).sum(axis=1)
        gap[a] = np.inf
        b = int(np.argmin(gap))
        labels = np.unique(np.where(labels == a, b, labels), return_inverse=True)[1].ravel()
