"""Re-identification risk against the population: k-map, the prosecutor, journalist and
marketer risks (El Emam's definitions, as ARX reports them), the population uniques
(:mod:`~microagg.metrics.population_models`) and ``riskyCells``-style counts of rare key
combinations (mu-ARGUS, sdcMicro).

The three attackers differ in what they know:

- **prosecutor**: knows the person is in the sample; risk of a record ``1/fk``;
- **journalist**: knows the person is in the population the sample was drawn from, and
  picks any record; the risk of the most exposed record is ``1/min Fk``;
- **marketer**: tries to re-identify every record at once; the expected share re-identified
  is the mean over records of ``1/Fk``.

``Fk`` is the number of persons in the population sharing a record's keys: counted in a
population table when one is given, or estimated (the weighted class size, or ``fk N/n``).
An estimate below ``fk`` is raised to ``fk`` (a class cannot be smaller in the population).

numpy only at import; pandas is loaded by the functions that read a table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["PopulationRisk", "population_frequencies", "population_risk", "population_summary",
           "risky_cells"]


@dataclass(frozen=True, eq=False)
class PopulationRisk:
    """Result of :func:`population_risk`.

    Attributes
    ----------
    fk, Fk : ndarray of shape (n_samples,)
        Sample and population class size of each record (``Fk >= fk``).
    ks : tuple of int
    estimated : bool
        ``True`` when ``Fk`` is an estimate (weights or a population size), ``False`` when
        counted in a population table.
    """

    fk: NDArray[np.int64]
    Fk: NDArray[np.float64]
    ks: tuple[int, ...]
    estimated: bool

    def summary(self) -> dict[str, Any]:
        """Plain numbers for JSON: ``k_map`` (the smallest population class), the prosecutor
        risk (largest and mean ``1/fk``), the journalist risk (largest ``1/Fk``), the
        marketer risk (mean ``1/Fk``) and the records with ``Fk < k`` for each k."""
        inv_f, inv_F = 1.0 / self.fk, 1.0 / self.Fk
        return {
            "n_records": int(self.fk.size), "estimated": self.estimated,
            "k_map": float(self.Fk.min()), "prosecutor_max": float(inv_f.max()),
            "prosecutor_mean": float(inv_f.mean()), "journalist_max": float(inv_F.max()),
            "marketer": float(inv_F.mean()),
            "k_map_violations": {str(k): int((self.Fk < k).sum()) for k in self.ks},
        }


def population_risk(fk: ArrayLike, Fk: ArrayLike, *, ks: Any = (2, 3, 5),
                    estimated: bool = True) -> PopulationRisk:
    """k-map and the prosecutor, journalist and marketer risks from ``fk`` and ``Fk``.

    Parameters
    ----------
    fk : array-like of int, shape (n_samples,)
        Sample class sizes, >= 1.
    Fk : array-like of float, shape (n_samples,)
        Population class sizes (counted or estimated); raised to ``fk`` where below it.
    ks : sequence of int >= 1, default=(2, 3, 5)
        Count the records whose population class is smaller than each k (k-map).
    estimated : bool, default=True

    Returns
    -------
    PopulationRisk

    References
    ----------
    El Emam, K. Guide to the De-Identification of Personal Health Information. CRC Press,
    2013, chapters 14-16 (prosecutor, journalist and marketer risk). Sweeney, L.
    "Computational disclosure control." PhD thesis, MIT, 2001 (k-map). ARX's
    ``RiskModelSampleSummary``.

    Examples
    --------
    >>> s = population_risk([1, 2, 2], [4.0, 10.0, 10.0]).summary()
    >>> s["k_map"], s["journalist_max"], round(s["marketer"], 4)
    (4.0, 0.25, 0.15)
    """
    f = np.asarray(fk, dtype=np.int64)
    F = np.asarray(Fk, dtype=np.float64)
    if f.shape != F.shape or f.ndim != 1 or f.size == 0:
        raise ValueError(f"fk and Fk must be non-empty, 1-dimensional and of one length; got "
                         f"shapes {f.shape} and {F.shape}.")
    if f.min() < 1 or not np.isfinite(F).all():
        raise ValueError("fk must be >= 1 and Fk finite.")
    ks = tuple(int(k) for k in ks)
    if any(k < 1 for k in ks):
        raise ValueError(f"ks must be whole numbers >= 1; got {ks}.")
    F = np.maximum(F, f)
    f.flags.writeable = False
    F.flags.writeable = False
    return PopulationRisk(fk=f, Fk=F, ks=ks, estimated=estimated)


def population_frequencies(sample: Any, population: Any, keys: Any) -> NDArray[np.int64]:
    """``Fk`` counted in a population table: the number of the population's rows sharing each
    sample record's key values (a missing value is a category of its own).

    Parameters
    ----------
    sample, population : pandas.DataFrame
        Both hold the key columns; the sample's combinations must all occur in the population.
    keys : sequence of str

    Returns
    -------
    ndarray of shape (n_samples,), dtype=int64

    Examples
    --------
    >>> import pandas as pd
    >>> pop = pd.DataFrame({"sex": ["f", "f", "m", "m", "m"]})
    >>> population_frequencies(pop.iloc[[0, 2]], pop, ["sex"]).tolist()
    [2, 3]
    """
    import pandas as pd

    keys = list(keys)
    for name, table in (("sample", sample), ("population", population)):
        absent = [k for k in keys if k not in table.columns]
        if absent:
            raise KeyError(f"population_frequencies: {name} has no column {absent[0]!r}.")
    n = len(sample)
    both = pd.concat([sample[keys], population[keys]], ignore_index=True)
    codes = np.zeros(len(both), dtype=np.int64)
    for key in keys:
        col = pd.factorize(both[key], use_na_sentinel=False)[0].astype(np.int64)
        codes = pd.factorize(codes * (int(col.max(initial=0)) + 1) + col)[0].astype(np.int64)
    counts = np.bincount(codes[n:], minlength=int(codes.max(initial=0)) + 1)
    Fk = counts[codes[:n]].astype(np.int64)
    if n and Fk.min() == 0:
        row = int(np.flatnonzero(Fk == 0)[0])
        raise ValueError(f"population_frequencies: the sample's row {row} has keys "
                         f"{sample[keys].iloc[row].tolist()} that the population does not "
                         "hold; the population must contain the sample.")
    return Fk


def _subset_table(codes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Frequencies of the observed combinations of the columns (rows with a missing code,
    -1, left out, as R's ``table``)."""
    rows = codes[(codes >= 0).all(axis=1)]
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = [int(c) + 1 for c in rows.max(axis=0)]
    if float(np.prod(np.asarray(sizes, dtype=np.float64))) >= 2.0 ** 62:  # too many cells
        _, counts = np.unique(rows, axis=0, return_counts=True)
        return counts.astype(np.int64)
    cell = np.ravel_multi_index(tuple(rows.T), tuple(sizes))  # one number per combination
    _, counts = np.unique(cell, return_counts=True)
    return counts.astype(np.int64)


def risky_cells(df: Any, keys: Any, *, threshold: int = 3, max_size: int | None = None
                ) -> list[dict[str, Any]]:
    """For every subset of the key variables of 1 to ``max_size`` variables, the number of
    key combinations (cells of its frequency table) held by fewer than ``threshold`` records.

    Parameters
    ----------
    df : pandas.DataFrame
    keys : sequence of str
    threshold : int >= 2, default=3
        A cell is risky when ``1 <= frequency < threshold``.
    max_size : int >= 1, default=None
        Largest subset size (sdcMicro's ``maxDim``), at most ``len(keys)``; ``None``: 3, or
        every key when there are fewer.

    Returns
    -------
    list of dict
        One per subset, in order of size then of ``keys``: ``{"keys": [...], "n_cells":
        observed cells, "n_risky": cells below the threshold, "records": records in them}``.
        A record with a missing value in the subset's keys is in none of its cells.

    References
    ----------
    Hundepool, A. et al. mu-ARGUS manual (version 5.1), 2014, section 4.2 (unsafe
    combinations); Templ, M., Kowarik, A., Meindl, B. sdcMicro 5.8.1, ``riskyCells``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 1, 2], "b": ["x", "x", "y", "y"]})
    >>> [(c["keys"], c["n_risky"]) for c in risky_cells(df, ["a", "b"], threshold=2)]
    [(['a'], 1), (['b'], 0), (['a', 'b'], 2)]
    """
    import pandas as pd

    keys = list(keys)
    absent = [k for k in keys if k not in df.columns]
    if absent:
        raise KeyError(f"risky_cells: no column {absent[0]!r}; the columns are "
                       f"{list(df.columns)}.")
    if isinstance(threshold, bool) or int(threshold) != threshold or threshold < 2:
        raise ValueError(f"risky_cells: threshold must be a whole number >= 2; got "
                         f"{threshold!r}.")
    if max_size is None:
        max_size = min(3, len(keys))
    if not 1 <= int(max_size) <= max(len(keys), 1):
        raise ValueError(f"risky_cells: max_size must be in [1, {len(keys)}] (the number of "
                         f"keys); got {max_size!r}.")
    codes = np.column_stack([pd.factorize(df[k])[0] for k in keys]).astype(np.int64)
    out = []
    for size in range(1, int(max_size) + 1):
        for subset in itertools.combinations(range(len(keys)), size):
            counts = _subset_table(codes[:, list(subset)])
            risky = counts[counts < threshold]
            out.append({"keys": [keys[j] for j in subset], "n_cells": int(counts.size),
                        "n_risky": int(risky.size), "records": int(risky.sum())})
    return out


def population_summary(df: Any, keys: Any, *, weights: str | None = None,
                       population_size: float | None = None, missing: str = "any",
                       strata: str | None = None, ks: Any = (2, 3, 5),
                       uniqueness: bool = True) -> dict[str, Any]:
    """The population figures of a file, for JSON: ``population_size`` (given, or the sum of
    the weights), ``"k_map"`` (:meth:`PopulationRisk.summary`) and, with ``uniqueness``,
    ``"uniqueness"`` (:meth:`~microagg.metrics.population_models.PopulationUniqueness.summary`:
    fitted models, which load scipy).

    Parameters
    ----------
    df : pandas.DataFrame
    keys : sequence of str
    weights : str, default=None
        Sampling weights: ``Fk`` is the weighted class size (as sdcMicro's ``Fk``).
    population_size : float, default=None
        ``N``, at least ``len(df)``; without weights ``Fk = fk N / n``. ``None``: the sum of
        the weights (one of the two is needed).
    missing : {"any", "category"}, default="any"
        The missing-value rule of ``fk`` and ``Fk``; the class-size table of the uniqueness
        models always takes a missing value for a category (a partition of the records).
    strata : str, default=None
        Counted within each stratum.
    ks : sequence of int, default=(2, 3, 5)
    uniqueness : bool, default=True
        Also the population uniques estimated by the Pitman, Zayatz and SNB models and
        Dankar et al.'s rule.

    Returns
    -------
    dict
    """
    from .population_models import class_sizes, population_uniqueness
    from .survey_risk import frequencies

    n = len(df)
    if population_size is None and weights is None:
        raise ValueError("population_summary: give population_size or weights.")
    if population_size is not None:
        if (isinstance(population_size, bool) or not isinstance(population_size, (int, float))
                or not np.isfinite(population_size) or population_size < n):
            raise ValueError(f"population_size must be a number >= the number of records "
                             f"({n:,}); got {population_size!r}.")
    fk, Fk = frequencies(df, keys, weights=weights, missing=missing, strata=strata)
    if population_size is not None:
        N = float(population_size)
    else:  # weights summing below n (weights < 1) do not make a population smaller
        N = max(float(df[weights].sum()), float(n))
    if weights is None:
        Fk = (fk * (N / n)).astype(np.float64)
    out = {"population_size": N, "weighted": weights is not None,
           "k_map": population_risk(fk, Fk, ks=ks).summary()}
    if uniqueness:
        partition = frequencies(df, keys, missing="category", strata=strata)[0]
        out["uniqueness"] = population_uniqueness(class_sizes(partition), N).summary()
    return out
