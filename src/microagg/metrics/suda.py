"""Special uniques: SUDA2 minimal sample uniques, SUDA and DIS-SUDA scores and the
contribution of each key variable (sdcMicro's ``suda2``)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._suda_kernel import lattice_msus
from ._survey_checks import check_keys

__all__ = ["MAX_KEYS", "MISSING_MODES", "SudaResult", "suda2"]

#: How a missing key value is treated: ``"na"``, a category of its own that may be part of
#: an MSU (sdcMicro 5.8.1 called with ``missing = NA``); ``"ignore"``, never part of an MSU
#: and never equal to another record's value (sdcMicro with a missing-value code).
MISSING_MODES = ("na", "ignore")

#: The most key variables: the search keeps one bit per record and variable subset.
MAX_KEYS = 20


@dataclass(frozen=True)
class SudaResult:
    """Result of :func:`suda2`; the arrays are read-only, one row per record.

    Attributes
    ----------
    keys : tuple of str
        The key variables, in the order given.
    max_size : int
        Largest MSU size searched.
    dis_fraction : float
        Sampling fraction used by DIS-SUDA.
    missing : str
        One of :data:`MISSING_MODES`.
    score : ndarray of shape (n_samples,)
        SUDA score: the sum over the record's MSUs of ``prod_{i=size}^{max_size-1} (K - i)``.
    dis_score : ndarray of shape (n_samples,)
        DIS-SUDA score, a per-record probability of a correct match, in [0, 1].
    msu_counts : ndarray of shape (n_samples, max_size), dtype=int64
        Column ``s - 1``: the record's number of MSUs of size ``s``.
    contribution_share : ndarray of shape (n_samples, n_keys)
        Share of the record's score carried by the MSUs containing each key variable (0
        where the score is 0); sdcMicro's ``contributionPercent``.
    attribute_contributions : dict of str to float
        Percent of the total score carried by MSUs containing each key variable (each in
        [0, 100]; they sum to more than 100 since an MSU counts for each of its variables).
    """

    keys: tuple[str, ...]
    max_size: int
    dis_fraction: float
    missing: str
    score: NDArray[np.float64] = field(repr=False)
    dis_score: NDArray[np.float64] = field(repr=False)
    msu_counts: NDArray[np.int64] = field(repr=False)
    contribution_share: NDArray[np.float64] = field(repr=False)
    attribute_contributions: dict[str, float]

    @property
    def msus_by_size(self) -> dict[int, int]:
        """Number of MSUs of each size 1..max_size, over all records."""
        totals = self.msu_counts.sum(axis=0)
        return {size + 1: int(totals[size]) for size in range(self.max_size)}

    def summary(self) -> dict[str, Any]:
        """Plain Python numbers: totals and maxima of both scores, MSU counts, contributions."""
        n = int(self.score.shape[0])
        return {
            "n_records": n,
            "n_keys": len(self.keys),
            "max_size": self.max_size,
            "dis_fraction": self.dis_fraction,
            "missing": self.missing,
            "score_sum": float(self.score.sum()),
            "score_max": float(self.score.max()) if n else 0.0,
            "dis_score_sum": float(self.dis_score.sum()),
            "dis_score_max": float(self.dis_score.max()) if n else 0.0,
            "records_with_msu": int((self.score > 0).sum()),
            "n_msus": int(self.msu_counts.sum()),
            "msus_by_size": self.msus_by_size,
            "attribute_contributions": dict(self.attribute_contributions),
        }


def suda2(df: Any, keys: Any, *, max_size: int | None = None, dis_fraction: float = 0.01,
          missing: str = "na") -> SudaResult:
    """Find every minimal sample unique (MSU) and score each record with SUDA and DIS-SUDA.

    An MSU of a record is a set of its key values (one per variable) that no other record
    shares, while every proper subset is shared by another record. Its SUDA score sums, over
    the record's MSUs of size ``s``, ``prod_{i=s}^{M-1} (K - i)`` for ``K`` key variables and
    maximum size ``M`` (Elliot et al.; with ``M = K`` a size-``s`` MSU weighs ``(K - s)!``).
    DIS-SUDA turns the scores into the probability that a unique match is correct:
    ``1 / (1 + D / (score**Q * sum_j score_j**-Q))`` over records with a score, where
    ``Q = 1 + (8 - K) / 20`` and ``D = P (1 - f) / f`` with ``P`` the records in pairs of
    identical records on all keys and ``f = dis_fraction`` (sdcMicro's formula, which
    depends on the sample uniques only through this ratio).

    As in sdcMicro, a value that covers exactly the same >= 2 records as a value of an
    earlier key variable (e.g. two variables missing for the same children) is one item,
    counted for the earlier variable only. ``Q`` is evaluated in single precision as
    sdcMicro does, so the scores agree with it to the printed digits. Unlike sdcMicro, one
    or two key variables are scored as they are (sdcMicro adds constant dummy variables
    and warns that its result may be wrong).

    Parameters
    ----------
    df : pandas.DataFrame of shape (n_samples, ...)
        The sample; key variables are compared as categories (equal values, nothing else).
    keys : sequence of str
        Categorical key variables, 1 to :data:`MAX_KEYS` distinct columns of ``df``.
    max_size : int, default=None
        Largest MSU size searched, in [1, len(keys)]; ``None`` means ``len(keys)`` (the
        sdcMicro default).
    dis_fraction : float, default=0.01
        Sampling fraction of DIS-SUDA, in (0, 1) (sdcMicro's ``DisFraction``).
    missing : {"na", "ignore"}, default="na"
        Treatment of missing key values, see :data:`MISSING_MODES`.

    Returns
    -------
    SudaResult
        Per-record scores, MSU counts and contributions; ``summary()`` gives the totals.

    References
    ----------
    Manning, A. M., Haglin, D. J. and Keane, J. A. "A recursive search algorithm for
    statistical disclosure assessment." Data Mining and Knowledge Discovery 16 (2008).
    Elliot, M. J., Manning, A., Mayes, K., Gurd, J. and Bane, M. "SUDA: a program for
    detecting special uniques." Joint UNECE/Eurostat Work Session on Statistical Data
    Confidentiality (2005). Elliot, M. J. "DIS: a new approach to the measurement of
    statistical disclosure risk." Risk Management 2 (2000). Templ, M. sdcMicro ``suda2``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "x"], "c": [0, 0, 0, 1]})
    >>> result = suda2(df, ["a", "b", "c"])
    >>> result.msus_by_size
    {1: 2, 2: 2, 3: 0}
    >>> result.score.tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    caller = "suda2"
    keys = check_keys(df, keys, caller=caller)
    n_keys = len(keys)
    if n_keys > MAX_KEYS:
        raise ValueError(f"The 'keys' parameter of {caller} names {n_keys} key variables; "
                         f"at most {MAX_KEYS} are allowed.")
    max_size = _check_max_size(max_size, n_keys, caller)
    dis_fraction = _check_dis_fraction(dis_fraction, caller)
    if isinstance(missing, bool) or missing not in MISSING_MODES:
        raise ValueError(f"The 'missing' parameter of {caller} must be one of "
                         f"{', '.join(map(repr, MISSING_MODES))}. Got {missing!r} instead.")
    codes, usable = _encode(df, keys, missing)
    weights = _weights(n_keys, max_size)
    msu_counts, score, raw, full_counts = lattice_msus(codes, usable, max_size, weights)
    dis_score = _dis_suda(score, int((full_counts == 2).sum()), dis_fraction, n_keys)
    share = np.divide(raw, score[:, None], out=np.zeros_like(raw), where=score[:, None] > 0)
    total = float(score.sum())
    contributions = {key: (100.0 * float(raw[:, v].sum()) / total if total else 0.0)
                     for v, key in enumerate(keys)}
    for array in (score, dis_score, msu_counts, share):
        array.flags.writeable = False
    return SudaResult(keys=keys, max_size=max_size, dis_fraction=dis_fraction,
                      missing=missing, score=score, dis_score=dis_score,
                      msu_counts=msu_counts, contribution_share=share,
                      attribute_contributions=contributions)


def _check_max_size(max_size: Any, n_keys: int, caller: str) -> int:
    if max_size is None:
        return n_keys
    if (isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral)
            or not 1 <= int(max_size) <= n_keys):
        raise ValueError(f"The 'max_size' parameter of {caller} must be an int in "
                         f"[1, {n_keys}] (the number of key variables) or None. "
                         f"Got {max_size!r} instead.")
    return int(max_size)


def _check_dis_fraction(dis_fraction: Any, caller: str) -> float:
    if (isinstance(dis_fraction, bool) or not isinstance(dis_fraction, numbers.Real)
            or not 0.0 < float(dis_fraction) < 1.0):
        raise ValueError(f"The 'dis_fraction' parameter of {caller} must be a float in "
                         f"(0, 1). Got {dis_fraction!r} instead.")
    return float(dis_fraction)


def _encode(df: Any, keys: tuple[str, ...], missing: str) -> tuple[NDArray[np.int64],
                                                                   NDArray[np.int64]]:
    """Codes (K, n) with a missing value as one more category, and the usable-item bits."""
    import pandas as pd  # local: the metrics package loads pandas only when used

    n = len(df)
    codes = np.empty((len(keys), n), dtype=np.int64)
    usable = np.zeros(n, dtype=np.int64)
    for v, key in enumerate(keys):
        column, _ = pd.factorize(df[key], use_na_sentinel=True)
        present = column >= 0
        codes[v] = np.where(present, column, column.max(initial=-1) + 1)
        bit = np.int64(1 << v)
        usable |= bit if missing == "na" else np.where(present, bit, np.int64(0))
    return codes, usable


def _weights(n_keys: int, max_size: int) -> NDArray[np.float64]:
    """Score of an MSU of each size: ``prod_{i=s}^{max_size-1} (n_keys - i)`` (index s)."""
    weights = np.zeros(max_size + 1)
    for size in range(1, max_size + 1):
        weights[size] = float(np.prod([n_keys - i for i in range(size, max_size)]))
    return weights


def _dis_suda(score: NDArray[np.float64], n_pair_records: int, dis_fraction: float,
              n_keys: int) -> NDArray[np.float64]:
    """DIS-SUDA scores (Elliot 2000, as computed by sdcMicro's suda2)."""
    exponent = float(np.float32(1.0) + (np.float32(8.0) - np.float32(n_keys)) / np.float32(20.0))
    dis = np.zeros_like(score)
    scored = score > 0
    if not scored.any():
        return dis
    powered = score[scored] ** exponent
    adjustment = float((1.0 / powered).sum())
    ratio = n_pair_records * (1.0 - dis_fraction) / dis_fraction
    dis[scored] = 1.0 / (1.0 + ratio / (powered * adjustment))
    return dis
