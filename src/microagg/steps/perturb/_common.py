"""What the perturbative steps share: column checks that raise before anything changes,
strata as integer codes, and the statistical bounds their verifiers use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

FALSE_ALARM = 1e-6
"""Default probability that a verifier calls a correct output wrong (all its checks
together, Bonferroni)."""


def check_columns(table: pd.DataFrame, columns: Sequence[str], *, step: str) -> None:
    """Every column the step names exists in the table (all missing ones listed)."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"Step {step!r} names column(s) {missing} that are not in the table; "
                         f"the columns are {list(table.columns)}.")


def numeric_values(table: pd.DataFrame, column: str, *, step: str,
                   min_present: int = 2, varying: bool = True) -> NDArray[np.float64]:
    """The column as float64 (NaN = missing); a non-numeric, almost empty or constant
    column is refused with its name and what was found."""
    series = table[column]
    if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
        raise TypeError(f"Step {step!r} needs a numeric column; column {column!r} has dtype "
                        f"{series.dtype}.")
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    present = values[~np.isnan(values)]
    if np.isinf(present).any():
        raise ValueError(f"Step {step!r}: column {column!r} holds an infinite value; values "
                         f"must be finite or missing (NaN).")
    if present.size < min_present:
        raise ValueError(f"Step {step!r} needs at least {min_present} non-missing values in "
                         f"column {column!r}; it has {present.size}.")
    if varying and np.ptp(present) == 0:
        raise ValueError(f"Step {step!r} cannot perturb column {column!r}: it is constant "
                         f"({float(present[0])!r} in all {present.size} non-missing rows), so its "
                         f"variance is 0; perturb a column whose variance is > 0.")
    return values


def strata_codes(table: pd.DataFrame, strata: str | None) -> tuple[NDArray[np.intp],
                                                                    list[str]]:
    """Each row's stratum as a code 0..s-1 and the strata's labels (one stratum ``"all"``
    without strata; a missing stratum value is a stratum of its own, ``"<missing>"``)."""
    if strata is None:
        return np.zeros(len(table), dtype=np.intp), ["all"]
    if strata not in table.columns:
        raise ValueError(f"The strata column {strata!r} is not in the table; the columns are "
                         f"{list(table.columns)}.")
    codes, uniques = pd.factorize(table[strata], sort=True, use_na_sentinel=True)
    labels = [str(u) for u in uniques]
    codes = np.asarray(codes, dtype=np.intp)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(labels), codes)
        labels.append("<missing>")
    return codes, labels


def moments(values: NDArray[np.float64]) -> dict[str, float]:
    """Mean and standard deviation of the non-missing values, as Python floats."""
    present = values[~np.isnan(values)]
    return {"mean": float(present.mean()), "sd": float(present.std(ddof=1))}
