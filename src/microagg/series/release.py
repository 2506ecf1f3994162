"""``anonymize_series``: k-anonymous release of whole time series (one column per time point)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .. import __version__
from .._base.validation import RandomState, check_choice, check_k, resolve_seed
from .._pipeline.result import Release
from .._pipeline.verify import (
    checked_partition,
    class_sizes,
    group_k_check,
    k_check,
    published_classes,
)
from ..metrics.utility import information_loss
from ..partition import get_partitioner
from ._columns import check_identifiers, select_series_columns, series_matrix
from .distance import DISTANCES, check_band
from .measure import mean_distance, nearest_series_linkage
from .representative import REPRESENTATIVES, group_centres

__all__ = ["anonymize_series"]

_METHOD = "series-mdav"
_CALLER = "anonymize_series"


def _options(distance: str, band: object, representative: str | None
             ) -> tuple[int | None, str]:
    check_choice(distance, DISTANCES, name="distance", caller=_CALLER)
    width = check_band(band, caller=_CALLER)
    if width is not None and distance != "dtw":
        raise ValueError(f"The 'band' parameter of {_CALLER} applies to distance='dtw' only. "
                         f"Got band={width} with distance={distance!r}.")
    rep = representative or ("dba" if distance == "dtw" else "mean")
    check_choice(rep, REPRESENTATIVES, name="representative", caller=_CALLER)
    return width, rep


def anonymize_series(df: pd.DataFrame, *, series_columns: str | Sequence[str], k: int,
                     distance: str = "euclidean", band: int | None = None,
                     representative: str | None = None, identifiers: str | Sequence[str] = (),
                     random_state: RandomState = None) -> Release:
    """Microaggregate whole time series: every published series is shared by >= k records.

    Each row of ``df`` holds one series in wide format (one column per time point, in
    order). The series are partitioned by :func:`~microagg.series.series_mdav` (MDAV under
    the Euclidean or DTW distance) and every series is replaced by its group's
    representative. The k-anonymity of the series is re-derived from the published table;
    other columns are published unchanged and identifiers are dropped.

    Parameters
    ----------
    df : pandas.DataFrame
        One record per row.
    series_columns : str or sequence of str
        The time points: a list of column names (in time order), a glob pattern (``"t*"``)
        or a prefix (``"t"``); a pattern or prefix keeps the table's column order.
    k : int
        Minimum number of records sharing each published series, ``2 <= k <= n_rows``.
    distance : {"euclidean", "dtw"}, default="euclidean"
        Distance between series for grouping, the DTW metric and the linkage risk.
    band : int or None, default=None
        Sakoe-Chiba radius of DTW, in time points (``distance="dtw"`` only).
    representative : {"mean", "dba"} or None, default=None
        Published series of each group: the pointwise mean, or the DTW barycentre
        (needs tslearn). ``None``: ``"mean"`` for Euclidean, ``"dba"`` for DTW.
    identifiers : str or sequence of str, default=()
        Columns dropped from the release.
    random_state : None, int or numpy.random.Generator, default=None
        Recorded as :attr:`Release.seed`; the method itself is deterministic.

    Returns
    -------
    Release
        ``data``: the published table; ``checks["k_anonymity"]`` counted on the published
        series; ``metrics``: ``information_loss`` (100 SSE/SST on the series values, %),
        ``dtw_mean`` (DTW only), ``linkage_risk`` and ``reidentification_risk``
        (:func:`~microagg.series.measure.nearest_series_linkage`).

    Raises
    ------
    PrivacyViolationError
        If the published series are not k-anonymous (a bug: nothing is released).

    References
    ----------
    Nin, J. and Torra, V. "Extending microaggregation procedures for time series
    protection." RSCTC 2006, LNCS 4259; "Towards the evaluation of time series protection
    methods." Information Sciences 179 (2009).

    Examples
    --------
    >>> df = pd.DataFrame({"t1": [0.0, 0.0, 1.0, 9.0, 9.0, 10.0],
    ...                    "t2": [0.0, 1.0, 1.0, 9.0, 10.0, 10.0]})
    >>> release = anonymize_series(df, series_columns="t*", k=3, random_state=0)
    >>> release.k, release.data["t1"].round(3).tolist()
    (3, [0.333, 0.333, 0.333, 9.333, 9.333, 9.333])
    """
    start = time.perf_counter()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"The 'df' parameter of {_CALLER} must be a pandas DataFrame. "
                        f"Got {type(df).__name__} instead.")
    if not all(isinstance(c, str) for c in df.columns):
        df = df.rename(columns=str)  # columns named 0, 1, ...: published as "0", "1", ...
    columns = select_series_columns(df, series_columns)
    ids = check_identifiers(df, identifiers, columns)
    k = check_k(k, n_samples=len(df), caller=_CALLER)
    width, rep = _options(distance, band, representative)
    values = series_matrix(df, columns)
    seed, rng = resolve_seed(random_state)
    timings: dict[str, float] = {"validate": time.perf_counter() - start}
    t = time.perf_counter()
    labels = checked_partition(get_partitioner(_METHOD), values, k, rng,
                               {"distance": distance, "band": width})
    timings["partition"] = time.perf_counter() - t
    t = time.perf_counter()
    masked = group_centres(values, labels, rep, width)[labels]
    published = df.drop(columns=ids)
    published[columns] = masked
    timings["aggregate"] = time.perf_counter() - t
    params = MappingProxyType({
        "method": _METHOD, "k": k, "distance": distance, "band": width,
        "representative": rep, "series_columns": tuple(columns), "identifiers": tuple(ids),
        "microagg_version": __version__})
    return _verified(published, values, labels, params, seed, timings)


def _verified(published: pd.DataFrame, values: NDArray[np.float64], labels: NDArray[np.intp],
              params: Mapping[str, Any], seed: int, timings: dict[str, float]) -> Release:
    """Checks from the published table, then the metrics, then the Release."""
    columns, k = list(params["series_columns"]), int(params["k"])
    distance, band = str(params["distance"]), params["band"]
    t = time.perf_counter()
    classes = published_classes(published, columns)
    checks = {
        "k_anonymity": k_check(k, int(class_sizes(classes).min())),
        "group_k": group_k_check(k, int(np.bincount(labels).min()),
                                 "series-mdav: every group holds at least k series"),
    }
    timings["verify"] = time.perf_counter() - t
    t = time.perf_counter()
    published_values = np.ascontiguousarray(published.loc[:, columns].to_numpy(np.float64))
    metrics: dict[str, Any] = {"information_loss": information_loss(values, published_values),
                               "groups": int(labels.max()) + 1}
    if distance == "dtw":
        metrics["dtw_mean"] = mean_distance(values, published_values, labels, "dtw", band)
    linkage, reidentification = nearest_series_linkage(values, published_values, classes,
                                                       distance, band)
    metrics["linkage_risk"] = linkage
    metrics["reidentification_risk"] = reidentification
    timings["measure"] = time.perf_counter() - t
    others = [c for c in published.columns if c not in columns]
    warnings = () if not others else (
        f"Only the {len(columns)} series columns are microaggregated; {len(others)} other "
        "column(s) are published unchanged: the k-anonymity holds for the series alone, and "
        "an intruder who knows another column may narrow a group down.",)
    return Release.of(data=published, labels=labels, params=params, layout="series",
                      seed=seed, checks=checks, metrics=metrics, warnings=warnings,
                      timings=timings)
