"""Verifiers of the perturbative steps: each re-derives its step's promise from the published
table (and the original, since every promise here is about the change) and returns
``{"model": ..., "holds": bool, ...achieved figures}``.

The statistical checks (PRAM's transition frequencies, noise's variance ratio) hold with
probability at least ``1 - false_alarm`` on a correct output: every check of one call shares
that budget (Bonferroni), so a correct release is called wrong at most that often.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from ._common import FALSE_ALARM, strata_codes
from .noise import verify_noise
from .options import Pram
from .pram import matrices_for
from .shuffle import verify_shuffle
from .swap import verify_rank_swap

__all__ = ["TransitionCounts", "binomial_p_values", "check_level", "verify_noise", "verify_pram", "verify_rank_swap",
           "verify_shuffle"]


def binomial_p_values(counts: NDArray[np.float64], trials: NDArray[np.float64],
                      probabilities: NDArray[np.float64]) -> NDArray[np.float64]:
    """Two-sided p-values of ``counts ~ Binomial(trials, probabilities)`` (doubled tail,
    capped at 1); a count the model cannot produce gets 0."""
    low = stats.binom.cdf(counts, trials, probabilities)
    high = stats.binom.sf(counts - 1, trials, probabilities)
    return np.minimum(1.0, 2.0 * np.minimum(low, high))


def verify_pram(options: Pram, original: pd.DataFrame, published: pd.DataFrame, *,
                households: str | None = None, weights: str | None = None,
                strata: str | None = None, details: Mapping[str, Any] | None = None,
                false_alarm: float = FALSE_ALARM) -> dict[str, Any]:
    """Check PRAM on the output: missing cells untouched, every value a known category, no
    transition the matrix forbids, each row of observed transitions within its binomial
    bounds, and (invariant PRAM) the published frequencies within sampling error of the
    original ones.

    The applied matrices come from ``details`` (the step's record) when given; else they
    are re-derived from the original, which is possible unless the diagonal was random.
    Without matrices, only the support and the missing cells are checked (``"matrix":
    "not recorded"``).
    """
    stratum, labels = strata_codes(original, strata)
    report: dict[str, Any] = {"model": "PRAM: values moved by the recorded transition "
                              "matrices (binomial bounds per transition, Bonferroni "
                              f"false-alarm rate {false_alarm:g})", "columns": {}}
    columns = {}
    for column in options.variables:
        found = matrices_for(options, column, original, stratum, len(labels), details)
        columns[column] = found
    level = check_level(columns, false_alarm)
    holds = True
    for column, found in columns.items():
        entry = _check_column(original[column], published[column], stratum, found, level,
                              invariant=options.invariant)
        holds &= entry["holds"]
        report["columns"][column] = entry
    report["holds"] = bool(holds)
    return report


def _check_column(before: pd.Series, after: pd.Series, stratum: NDArray[np.intp],
                  found: tuple[list[str], list[NDArray[np.float64]]] | None, level: float, *,
                  invariant: bool) -> dict[str, Any]:
    """One column's PRAM checks (see :func:`verify_pram`)."""
    categories = found[0] if found is not None else []
    counted = TransitionCounts(categories, max(int(stratum.max(initial=0)) + 1,
                                               len(found[1]) if found else 1))
    counted.add(before, after, stratum)
    return counted.judge(found, level, invariant=invariant)


class TransitionCounts:
    """The observed transitions of one PRAM column (from, to) per stratum, the missing
    cells moved and the unknown values, added up chunk by chunk; :meth:`judge` gives the
    column's checks of :func:`verify_pram`."""

    def __init__(self, categories: Sequence[str], n_strata: int) -> None:
        self.lookup = {label: i for i, label in enumerate(categories)}
        size = len(categories)
        self.tables = np.zeros((n_strata, size, size))
        self.missing_moved = 0
        self.unknown = 0

    def _codes(self, values: pd.Series) -> NDArray[np.intp]:
        codes, uniques = pd.factorize(values.to_numpy(dtype=object))
        at = np.array([self.lookup.get(str(v), -1) for v in uniques] + [-1], dtype=np.intp)
        return at[codes]  # (no missing value reaches here: -1 would take the last entry)

    def add(self, before: pd.Series, after: pd.Series, stratum: NDArray[np.intp]) -> None:
        """One chunk's rows (the same rows before and after, their strata codes)."""
        was_missing = before.isna().to_numpy()
        is_missing = after.isna().to_numpy()
        self.missing_moved += int((was_missing != is_missing).sum())
        present = ~was_missing & ~is_missing
        old, new = self._codes(before[present]), self._codes(after[present])
        self.unknown += int((new < 0).sum() + (old < 0).sum())
        known = (old >= 0) & (new >= 0)
        np.add.at(self.tables, (stratum[present][known], old[known], new[known]), 1.0)

    def judge(self, found: tuple[Sequence[str], Sequence[NDArray[np.float64]]] | None,
              level: float, *, invariant: bool) -> dict[str, Any]:
        """The column's checks against its applied matrices (``None``: not recorded)."""
        entry: dict[str, Any] = {"missing_moved": self.missing_moved}
        if found is None:
            entry.update(matrix="not recorded", holds=entry["missing_moved"] == 0)
            return entry
        entry["unknown_values"] = self.unknown
        worst_p, forbidden, worst_z = 1.0, 0, 0.0
        for s, matrix in enumerate(found[1]):
            table = self.tables[s]
            trials = table.sum(axis=1)
            forbidden += int(table[matrix <= 0].sum())
            worst_p = min(worst_p, float(binomial_p_values(table, trials[:, None] + 0 * table,
                                                           matrix).min(initial=1.0)))
            if invariant:
                variance = (trials[:, None] * matrix * (1 - matrix)).sum(axis=0)
                gap = table.sum(axis=0) - trials
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = np.where(variance > 0, np.abs(gap) / np.sqrt(variance),
                                 np.where(gap == 0, 0.0, np.inf))
                worst_z = max(worst_z, float(z.max(initial=0.0)))
        z_bound = float(stats.norm.isf(level / 2))
        entry.update(forbidden_transitions=forbidden, min_transition_p_value=worst_p,
                     p_value_bound=level)
        holds = (entry["missing_moved"] == 0 and entry["unknown_values"] == 0
                 and forbidden == 0 and worst_p >= level)
        if invariant:
            entry.update(max_frequency_z=worst_z, z_bound=z_bound)
            holds = holds and worst_z <= z_bound
        entry["holds"] = bool(holds)
        return entry


def check_level(columns: Mapping[str, Any], false_alarm: float = FALSE_ALARM) -> float:
    """Each PRAM check's false-alarm level: ``false_alarm`` shared over every check of the
    columns' matrices (``columns``: each column's (categories, matrices) or ``None``)."""
    n_checks = sum(len(c[0]) ** 2 * len(c[1]) * 2 for c in columns.values() if c) or 1
    return false_alarm / n_checks
