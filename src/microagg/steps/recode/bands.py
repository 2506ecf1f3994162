"""The ``band`` step: a numeric column replaced by the label of its interval (sdcMicro's
``globalRecode``; R's ``cut``), with the breaks given, of equal width, or at quantiles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ...exceptions import SchemaError
from ._common import column_of, number_text, numeric_values, with_column
from .options import Band

__all__ = ["apply_band", "band_breaks", "band_labels", "band_of"]


def _equal_width(values: NDArray[np.float64], bands: int) -> NDArray[np.float64]:
    return np.linspace(values.min(), values.max(), bands + 1)


def _quantiles(values: NDArray[np.float64], bands: int) -> NDArray[np.float64]:
    return np.unique(np.quantile(values, np.linspace(0.0, 1.0, bands + 1)))


_FINDERS = {"equal_width": _equal_width, "quantiles": _quantiles}
"""How the breaks of ``bands`` bands are found from the observed values, per method."""


def band_breaks(options: Band, values: NDArray[np.float64]) -> tuple[float, ...]:
    """The breaks of the bands: ``options.breaks``, or found from the observed (non-NaN)
    ``values``: equal width from the minimum to the maximum, or at the quantiles
    ``0, 1/n, ..., 1`` (linear interpolation, R's type 7; tied quantiles merge bands).

    Parameters
    ----------
    options : Band
        The step's options.
    values : ndarray of shape (n_samples,)
        The column as float64, NaN missing.

    Returns
    -------
    tuple of float
        Strictly increasing breaks, at least two.
    """
    if options.breaks is not None:
        return options.breaks
    observed = values[~np.isnan(values)]
    if observed.size == 0 or observed.min() == observed.max():
        shown = "no observed value" if observed.size == 0 else f"the one value {observed[0]!r}"
        raise SchemaError(f"Step 'band' with method={options.method!r}: column "
                          f"{options.column!r} has {shown}; its bands need values spanning a "
                          "range. Give 'breaks' instead.")
    breaks = tuple(float(b) for b in _FINDERS[options.method](observed, int(options.bands or 1)))
    if options.labels is not None and len(options.labels) != len(breaks) - 1:
        raise SchemaError(f"Step 'band': column {options.column!r} has {len(breaks) - 1} "
                          f"band(s) at its quantiles {list(breaks)!r} (tied quantiles merge "
                          f"bands), but 'labels' gives {len(options.labels)}.")
    return breaks


def band_labels(breaks: tuple[float, ...], closed: str) -> tuple[str, ...]:
    """``"[20, 30)"``-style labels: ``closed="left"`` gives ``[a, b)`` and a last band
    ``[a, b]``; ``"right"`` gives ``(a, b]`` and a first band ``[a, b]``. A break is
    written with six significant digits (all of them where six would merge two breaks);
    the details keep the exact breaks."""
    n = len(breaks) - 1
    texts = [f"{b:.6g}" if not float(b).is_integer() else number_text(b) for b in breaks]
    if len(set(texts)) < len(texts):  # six digits do not tell two breaks apart: all digits
        texts = [number_text(b) for b in breaks]
    labels = []
    for i in range(n):
        a, b = texts[i], texts[i + 1]
        if closed == "left":
            labels.append(f"[{a}, {b}]" if i == n - 1 else f"[{a}, {b})")
        else:
            labels.append(f"[{a}, {b}]" if i == 0 else f"({a}, {b}]")
    return tuple(labels)


def band_of(values: NDArray[np.float64], breaks: tuple[float, ...], closed: str
            ) -> NDArray[np.intp]:
    """The band of each value (``-1``: missing or outside ``[breaks[0], breaks[-1]]``)."""
    edges = np.asarray(breaks, dtype=np.float64)
    n = edges.size - 1
    if closed == "left":
        index = np.searchsorted(edges, values, side="right") - 1
        index = np.where(values == edges[-1], n - 1, index)
    else:
        index = np.searchsorted(edges, values, side="left") - 1
        index = np.where(values == edges[0], 0, index)
    outside = np.isnan(values) | (values < edges[0]) | (values > edges[-1])
    return np.where(outside, -1, index).astype(np.intp)


def apply_band(table: pd.DataFrame, options: Band, rng: np.random.Generator, *,
               households: str | None = None, weights: str | None = None,
               strata: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replace each value of ``options.column`` by the label of its band.

    The column becomes text (object dtype); a missing value stays missing. Unlike R's
    ``cut`` (and so sdcMicro's ``globalRecode``), which turns a value outside the breaks
    (the lowest break itself included) into a silent ``NA``, a value outside every band is
    refused, with how many and their range. Quantile breaks are not rounded (sdcMicro's
    ``equalAmount`` rounds them to integers).

    Parameters
    ----------
    table : pandas.DataFrame
        The working table; it is not modified.
    options : Band
        The step's options.
    rng : numpy.random.Generator
        Unused (the step is deterministic).
    households, weights, strata : str, optional
        Unused: the bands are the same for every record (quantiles are unweighted).

    Returns
    -------
    table : pandas.DataFrame
        A new table, the same rows, order and index; only ``options.column`` changed.
    details : dict
        ``column``, ``method``, ``closed``, ``breaks``, ``bands`` (each band's ``label``,
        ``lower``, ``upper`` and ``count``), ``records_changed`` (every observed value) and
        ``missing``.

    References
    ----------
    Templ, M., Kowarik, A. and Meindl, B. "Statistical disclosure control for micro-data
    using the R package sdcMicro." J. Stat. Softw. 67(4) (2015) (``globalRecode``).
    """
    series = column_of(table, options.column, step=options.name)
    values = numeric_values(series, step=options.name)
    breaks = band_breaks(options, values)
    index = band_of(values, breaks, options.closed)
    missing = np.isnan(values)
    outside = ~missing & (index < 0)
    if outside.any():
        bad = values[outside]
        raise SchemaError(f"Step 'band': {int(outside.sum())} value(s) of column "
                          f"{options.column!r} lie outside all bands (from {bad.min():g} to "
                          f"{bad.max():g}); the bands cover [{breaks[0]:g}, {breaks[-1]:g}]. "
                          "Widen the first or last break.")
    labels = options.labels or band_labels(breaks, options.closed)
    published = np.empty(values.size, dtype=object)
    published[missing] = None
    published[~missing] = np.asarray(labels, dtype=object)[index[~missing]]
    sizes = np.bincount(index[~missing], minlength=len(labels))
    bands = [{"label": labels[i], "lower": breaks[i], "upper": breaks[i + 1],
              "count": int(sizes[i])} for i in range(len(labels))]
    details = {"column": options.column, "method": options.method, "closed": options.closed,
               "breaks": list(breaks), "bands": bands,
               "records_changed": int((~missing).sum()), "missing": int(missing.sum())}
    return with_column(table, options.column, published), details
