"""Sample and weighted population frequencies of key-variable combinations, vectorized
(factorized codes + ``numpy.bincount``). Validation is assumed: see
:mod:`microagg.metrics.survey_risk`.

Missing key values follow sdcMicro's ``freqCalc`` (version 5.8.1, ``R/freqCalc.r``) when
``missing="any"``: a missing value stands for any category of its variable. Record ``i`` counts
record ``j`` when, on every key variable where both are observed, they agree. One exception, as
in ``freqCalc``: with two or more key variables, a record whose keys are all observed does
not count the records whose keys are all missing (those get ``fk = n``, ``Fk = sum(w)``), while
a record with some missing keys does count them. With one key variable, every record counts
the missing ones. ``missing="category"`` makes a missing value a category of its own.

With **strata** (sdcMicro's ``strataVar``), every count is made within each stratum: two
records match only when they are in the same stratum, and the rules above apply inside each
stratum (a record whose keys are all missing gets ``fk`` = its stratum's size). Without
missing values this is the same as counting on the keys plus the stratum.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["frequency_counts", "joint_codes", "key_codes", "key_frequencies"]

_MAX_CODE = np.int64(2) ** 62


def _compress(codes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Dense codes 0..g-1 of an int64 vector (hash-based, O(n))."""
    import pandas as pd  # local: the metrics package loads pandas only when used

    return np.asarray(pd.factorize(codes, sort=False)[0], dtype=np.int64)


def joint_codes(columns: list[NDArray[np.int64]], n: int) -> tuple[NDArray[np.int64], int]:
    """One non-negative code per distinct combination of the columns' codes (each >= 0), and
    an upper bound on the codes (the ``minlength`` for ``bincount``)."""
    if not columns:
        return np.zeros(n, dtype=np.int64), 1
    joint = columns[0].astype(np.int64, copy=True)
    size = int(joint.max(initial=0)) + 1
    for col in columns[1:]:
        card = int(col.max(initial=0)) + 1
        if size * card >= _MAX_CODE:
            joint = _compress(joint)
            size = int(joint.max(initial=0)) + 1
        joint *= card
        joint += col
        size *= card
    if size > 4 * n + 16:
        joint = _compress(joint)
        size = int(joint.max(initial=0)) + 1
    return joint, size


def _pattern_pairs(missing: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Code of each row's missing-value pattern and the patterns (rows of booleans)."""
    weights = np.left_shift(np.int64(1), np.arange(missing.shape[1], dtype=np.int64))
    packed = missing.astype(np.int64) @ weights
    labels = _compress(packed)
    first = np.zeros(int(labels.max(initial=0)) + 1, dtype=np.int64)
    first[labels[::-1]] = np.arange(labels.size - 1, -1, -1)
    return labels, missing[first]


def _count_into(codes: NDArray[np.int64], keep: NDArray[np.bool_], sources: NDArray[np.bool_],
                targets: NDArray[np.bool_], w: NDArray[np.float64] | None,
                out: tuple[NDArray[np.float64], NDArray[np.float64]],
                strata: NDArray[np.int64] | None = None) -> None:
    """Add to ``out`` (fk, Fk) of each target row the count and weight of the source rows
    that agree with it on the key columns ``keep`` (and are in its stratum)."""
    rows = np.flatnonzero(sources | targets)
    columns = [codes[rows, j] for j in np.flatnonzero(keep)]
    if strata is not None:
        columns.append(strata[rows])
    joint, size = joint_codes(columns, rows.size)
    src = sources[rows]
    cnt = np.bincount(joint[src], minlength=size)
    tot = cnt if w is None else np.bincount(joint[src], weights=w[rows][src], minlength=size)
    tgt = targets[rows]
    out[0][rows[tgt]] += cnt[joint[tgt]]
    out[1][rows[tgt]] += tot[joint[tgt]]


def _any_frequencies(codes: NDArray[np.int64], w: NDArray[np.float64] | None,
                     strata: NDArray[np.int64] | None = None
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """fk and Fk when a missing code (-1) matches any value (sdcMicro's ``freqCalc``),
    counted within each stratum when ``strata`` (codes >= 0) is given."""
    n, d = codes.shape
    labels, patterns = _pattern_pairs(codes < 0)
    masks = [labels == p for p in range(patterns.shape[0])]
    out = (np.zeros(n), np.zeros(n))
    for q, targets in enumerate(masks):
        for p, sources in enumerate(masks):
            if d > 1 and not patterns[q].any() and patterns[p].all():
                continue  # freqCalc: complete keys do not count all-missing keys
            _count_into(codes, ~(patterns[q] | patterns[p]), sources, targets, w, out, strata)
    return out


def key_frequencies(codes: NDArray[np.int64], w: NDArray[np.float64] | None, *,
                    missing: str, strata: NDArray[np.int64] | None = None
                    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Sample frequency ``fk`` (int64) and estimated population frequency ``Fk`` (float64,
    the sum of the weights; ``fk`` as float when ``w`` is None) of each row's key combination.

    ``codes`` is (n, d) int64, one factorized column per key variable, ``-1`` for a missing
    value when ``missing="any"`` (with ``missing="category"`` no code is negative).
    ``strata`` (n,) int64 codes >= 0: each row's stratum; the counts are made within it.
    """
    n = codes.shape[0]
    if missing == "any" and (codes < 0).any():
        fk_f, Fk = _any_frequencies(codes, w, strata)
        return np.rint(fk_f).astype(np.int64), Fk
    columns = [codes[:, j] for j in range(codes.shape[1])]
    joint, size = joint_codes(columns + ([] if strata is None else [strata]), n)
    cnt = np.bincount(joint, minlength=size)
    fk = cnt[joint].astype(np.int64)
    if w is None:
        return fk, fk.astype(np.float64)
    totals = np.asarray(np.bincount(joint, weights=w, minlength=size), dtype=np.float64)
    return fk, totals[joint]


def key_codes(df: Any, keys: tuple[str, ...], *, missing: str) -> NDArray[np.int64]:
    """(n, d) int64 codes of the key variables: one factorized column per key, ``-1`` for a
    missing value with ``missing="any"``, a code of its own with ``missing="category"``."""
    import pandas as pd  # local: the metrics package loads pandas only when used

    out = np.empty((len(df), len(keys)), dtype=np.int64)
    for j, key in enumerate(keys):
        out[:, j] = pd.factorize(df[key], sort=False, use_na_sentinel=missing == "any")[0]
    return out


def frequency_counts(codes: NDArray[np.int64], w: NDArray[np.float64] | None,
                     strata: NDArray[np.int64] | None = None
                     ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``fk`` and ``Fk`` of :func:`key_codes` output: negative codes match any value
    (``missing="any"``); codes made with ``missing="category"`` have none. With ``strata``
    (codes >= 0, one per row), counted within each stratum."""
    return key_frequencies(codes, w, missing="any", strata=strata)
