"""What the file engine's plan of recodings and local suppression (:mod:`.plan_suppress`)
adds up chunk by chunk: the recodings' details merged over the chunks
(:func:`merged_details`), each recoding's verifier run per chunk (its check is per record) and
its figures merged (:class:`PerRecordCheck`), the information loss of the numeric keys as
:func:`microagg.steps._state.figures` computes it on a whole table (:class:`LossSums`), and
the suppression's check recounted on the written file (:class:`SuppressCheck`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...hierarchy import as_labels
from ...steps.suppress.options import SuppressToK
from ...steps.suppress.patterns import count_patterns, pattern_codes, pattern_sizes
from ...steps.suppress.verify import _only_blanked

__all__ = ["LossSums", "PerRecordCheck", "SuppressCheck", "finish_details", "key_text",
           "merged_details"]


def merged_details(total: dict[str, Any] | None, part: Mapping[str, Any]) -> dict[str, Any]:
    """A recoding's details over two sets of rows: counts summed (a value's records, a
    band's), the mapping of the values present joined, the rest (options) kept."""
    if total is None:
        return dict(part)
    out = dict(total)
    for key, value in part.items():
        have = out.get(key)
        if key not in out or have is None:
            out[key] = value
        elif isinstance(value, bool) or not isinstance(value, (int, dict, list)):
            continue
        elif isinstance(value, int):
            out[key] = have + value
        elif isinstance(value, dict) and all(isinstance(v, int) for v in value.values()):
            out[key] = {**have, **{k: have.get(k, 0) + v for k, v in value.items()}}
        elif isinstance(value, dict):
            out[key] = dict(sorted({**have, **value}.items()))
        elif value and all(isinstance(v, dict) and "count" in v for v in value):
            # bands: the same bands in every chunk, their counts summed
            out[key] = [{**a, "count": a["count"] + b["count"]} for a, b in
                        zip(have, value, strict=True)]
    return out


def finish_details(details: dict[str, Any], rows: int) -> dict[str, Any]:
    """The merged details as the step records them on the whole table: the counts largest
    first, the share changed of the observed records."""
    out = dict(details)
    if isinstance(out.get("counts"), dict):
        order = sorted(out["counts"].items(), key=lambda item: -item[1])
        out["counts"] = dict(order)
    if "share_changed" in out:
        observed = rows - int(out.get("missing", 0))
        out["share_changed"] = float(out["records_changed"] / observed) if observed else 0.0
    return out


def key_text(series: pd.Series) -> pd.Series:
    """A published key as text whatever a chunk's parse (a CSV's ``3`` read back as a number
    is the text ``"3"`` it was written as); missing as ``None``."""
    if isinstance(series.dtype, pd.CategoricalDtype) or not (
            pd.api.types.is_numeric_dtype(series.dtype)
            or pd.api.types.is_bool_dtype(series.dtype)):
        values = series.astype(object)
        return values.where(values.notna(), None)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    labels = np.array([*as_labels(np.asarray(uniques, dtype=object)), None], dtype=object)
    return pd.Series(labels[np.where(codes < 0, len(labels) - 1, codes)], index=series.index,
                     dtype=object)


SUMMED = ("violations", "records_changed", "outside_domain")
"""The counts of records a per-record verifier returns (the rest describe the step)."""


class PerRecordCheck:
    """A step's verifier run chunk by chunk (its promise is per record): counts summed,
    ``holds`` joined, the highest and lowest published values kept, the rest its own."""

    def __init__(self, verifier: Callable[..., dict[str, Any]], options: Any) -> None:
        self.verifier, self.options = verifier, options
        self.result: dict[str, Any] | None = None

    def add(self, before: pd.DataFrame, published: pd.DataFrame) -> None:
        """The same rows as the step found them and as published."""
        part = self.verifier(self.options, before.reset_index(drop=True),
                             published.reset_index(drop=True))
        if self.result is None:
            self.result = part
            return
        out = self.result
        for key, value in part.items():
            have = out.get(key)
            if key == "holds":
                out[key] = bool(have) and bool(value)
            elif key in ("highest", "lowest"):
                pick = max if key == "highest" else min
                out[key] = value if have is None else have if value is None \
                    else pick(have, value)
            elif key in SUMMED:
                out[key] = have + value


class LossSums:
    """The SSE/SST in percent of the numeric keys, summed chunk by chunk, as
    :func:`microagg.steps._state.figures` computes it on a whole table: a complete table,
    the mean over the varying columns of SSE / (n var); with missing cells, the squared
    errors over the squared z-scores of the cells both tables have (z by the original's
    mean and standard deviation)."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        p = len(self.columns)
        self.shift: NDArray[np.float64] | None = None
        # per column: observed a, sum a, sum a^2 (shifted); on cells both have: count,
        # sum a, sum a^2 (shifted), sum (a - b)^2
        self.sums = np.zeros((7, p))
        self.n = 0
        self.holes = False

    def add(self, original: pd.DataFrame, current: pd.DataFrame) -> None:
        """The same rows of the original and of this version."""
        self.n += len(original)
        if not self.columns:
            return
        a = original.loc[:, self.columns].to_numpy(dtype=np.float64, na_value=np.nan)
        b = current.loc[:, self.columns].to_numpy(dtype=np.float64, na_value=np.nan)
        if self.shift is None:
            first = np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=0, initial=-np.inf)
            self.shift = np.where(np.isfinite(first), first, 0.0)
        self.holes |= bool(np.isnan(a).any() or np.isnan(b).any())
        d = a - self.shift
        seen, both = ~np.isnan(a), ~np.isnan(a) & ~np.isnan(b)
        self.sums += np.stack([
            seen.sum(axis=0), np.where(seen, d, 0.0).sum(axis=0),
            np.where(seen, d * d, 0.0).sum(axis=0), both.sum(axis=0),
            np.where(both, d, 0.0).sum(axis=0), np.where(both, d * d, 0.0).sum(axis=0),
            np.where(both, (a - b) ** 2, 0.0).sum(axis=0)])

    def loss(self) -> float:
        """The information loss in percent (0 without numeric keys)."""
        if not self.columns or not self.n:
            return 0.0
        seen, s1, s2, nb, b1, b2, lost = self.sums
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(seen > 0, s1 / np.maximum(seen, 1), 0.0)
            variance = np.maximum(np.where(seen > 0, s2 / np.maximum(seen, 1), 0.0)
                                  - mean * mean, 0.0)
        if not self.holes:
            varying = variance > 0
            if not varying.any():
                return 0.0
            return 100.0 * float((lost[varying] / variance[varying]).sum()) / (
                self.n * int(varying.sum()))
        use = (seen > 0) & (variance > 0)
        total = float(((b2 - 2 * mean * b1 + mean * mean * nb)[use] / variance[use]).sum())
        return 100.0 * float((lost[use] / variance[use]).sum()) / total if total > 0 else 0.0


class SuppressCheck:
    """The suppression's verifier on the written file read back in chunks
    (:func:`~microagg.steps.suppress.verify.verify_suppress`'s figures): the patterns of its
    keys counted for k under its missing semantics and with a missing value a category, the
    cells blanked, and the records changed otherwise than by a blank."""

    def __init__(self, options: SuppressToK) -> None:
        self.options = options
        self.merged: pd.Series | None = None
        self.changed = self.cells = self.rows = 0

    def add(self, before: pd.DataFrame, written: pd.DataFrame) -> None:
        """The same rows as the suppression found them and as written."""
        keys = list(self.options.keys)
        shown = pd.DataFrame({k: key_text(written[k]).to_numpy() for k in keys})
        found = pd.DataFrame({k: key_text(before[k]).to_numpy() for k in keys})
        counts = shown.value_counts(dropna=False, sort=False)
        self.merged = counts if self.merged is None else self.merged.add(counts, fill_value=0)
        self.changed += _only_blanked(self.options, found, shown)
        self.cells += int(sum((shown[k].isna() & found[k].notna()).sum() for k in keys))
        self.rows += len(shown)

    def result(self) -> dict[str, Any]:
        """The check, as the in-memory step's verifier reports it."""
        options = self.options
        patterns, counts = count_patterns([], options.keys) if self.merged is None else (
            self.merged.index.to_frame(index=False).set_axis(list(options.keys), axis=1),
            self.merged.to_numpy().astype(np.int64))
        codes = pattern_codes(patterns, options.keys)
        subsets: list[dict[str, Any]] = []
        for subset, k in options.requirements:
            sizes = pattern_sizes(codes[:, list(subset)], counts, options.missing)
            subsets.append({"keys": [options.keys[j] for j in subset], "k": k,
                            "achieved": int(sizes.min(initial=self.rows)),
                            "violating": int(counts[sizes < k].sum())})
        missing = "matches any value" if options.missing == "any" else "is a category"
        return {
            "model": f"k-anonymity on every required subset of {list(options.keys)} with "
                     f"missing={options.missing!r} (a missing value {missing})",
            "holds": all(s["violating"] == 0 for s in subsets) and self.changed == 0,
            "subsets": subsets, "records_changed_otherwise": self.changed,
            "households_varying": 0, "cells_suppressed": None if self.changed else self.cells,
            "required": options.required_k, "achieved": min(int(s["achieved"]) for s in subsets),
            "achieved_missing_as_category": int(counts.min()) if counts.size else 0,
            "households_checked": False,
            "counted": f"required/achieved: missing={options.missing!r}; "
                       "achieved_missing_as_category: a missing value a category of its "
                       "own, on the whole table, as checks['k_anonymity'] counts"}
