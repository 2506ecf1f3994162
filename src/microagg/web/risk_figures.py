"""The Risk page's view of the individual risk: the key variables a steward may choose (apart
from the columns to mask, as sdcApp's first step), the histogram of the records' risks and
the riskiest records with the key values that make them risky.

The individual risk is :func:`microagg.metrics.survey_risk.survey_risk`'s: the
Benedetti-Franconi posterior risk with a sampling weight, ``1 / fk`` without one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = [
    "KEY_ROLES",
    "RISKIEST",
    "Histogram",
    "cell_text",
    "chosen_keys",
    "histogram_drawing",
    "key_choices",
    "risk_histogram",
    "riskiest",
]

KEY_ROLES = ("quasi-identifier", "sensitive", "other")
"""The roles whose columns may be key variables of the risk: not an identifier (dropped),
not the weight, the household id or the strata (the risk measures use them as such)."""
RISKIEST = 20
"""Records in the table of the riskiest records."""
_BINS = 20
_WIDTH, _HEIGHT = 640, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 12, 44
_TOPS = tuple(m * 10.0 ** -d for d in range(9, -1, -1) for m in (1, 2, 5) if m * 10 ** -d <= 1)
"""The histogram's possible right ends: 1, 2 or 5 times a power of ten, in (0, 1]."""


def key_choices(schema: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The columns that may be key variables of the risk (:data:`KEY_ROLES`), in the
    schema's order."""
    return [name for name, entry in schema.items() if entry.get("role") in KEY_ROLES]


def chosen_keys(schema: Mapping[str, Mapping[str, Any]], chosen: Sequence[str] | None
                ) -> list[str]:
    """The key variables of the risk: ``chosen`` (those still offered by the roles, in the
    schema's order), or the quasi-identifiers when ``chosen`` is ``None``.

    Examples
    --------
    >>> schema = {"age": {"role": "quasi-identifier"}, "sex": {"role": "other"},
    ...           "id": {"role": "identifier"}}
    >>> chosen_keys(schema, None), chosen_keys(schema, ("sex", "id"))
    (['age'], ['sex'])
    """
    if chosen is None:
        return [name for name, entry in schema.items()
                if entry.get("role") == "quasi-identifier"]
    return [name for name in key_choices(schema) if name in chosen]


@dataclass(frozen=True)
class Histogram:
    """Counts of the records' individual risks in equal bins over ``[0, top]``."""

    edges: tuple[float, ...]
    """``bins + 1`` bin edges, from 0 to ``top`` (the first round value >= the largest
    risk); the last bin holds its upper edge."""
    counts: tuple[int, ...]
    log: bool
    """Whether the count axis is log-scaled: the largest bar is at least ten times the
    smallest non-empty one (a linear axis would hide it)."""


def risk_histogram(risk: ArrayLike, *, bins: int = _BINS) -> Histogram:
    """The histogram of the individual risks ``risk`` (values in (0, 1]).

    Examples
    --------
    >>> h = risk_histogram([1.0, 0.5, 0.5, 0.25], bins=4)
    >>> h.edges, h.counts, h.log
    ((0.0, 0.25, 0.5, 0.75, 1.0), (0, 1, 2, 1), False)
    """
    values = np.asarray(risk, dtype=np.float64)
    largest = float(values.max()) if values.size else 1.0
    top = next((t for t in _TOPS if t >= largest), 1.0)
    edges = np.linspace(0.0, top, bins + 1)
    counts, _ = np.histogram(values, bins=edges)
    filled = counts[counts > 0]
    log = bool(filled.size) and int(filled.max()) >= 10 * int(filled.min())
    return Histogram(tuple(float(e) for e in edges), tuple(int(c) for c in counts), log)


def _count_axis(histogram: Histogram) -> tuple[Any, list[int]]:
    """The height share of a count and the axis ticks (powers of ten on a log axis)."""
    largest = max(max(histogram.counts), 1)
    if histogram.log:
        decades = math.ceil(math.log10(largest)) or 1

        def share(count: int) -> float:  # 1 + log10(count) of 1 + decades: a 1 still shows
            return 0.0 if count <= 0 else (1 + math.log10(count)) / (1 + decades)
        return share, [10 ** d for d in range(decades + 1)]
    step = 10 ** max(0, math.floor(math.log10(largest)))
    for factor in (1, 2, 5, 10):
        if largest / (step * factor) <= 5:
            step *= factor
            break
    end = step * math.ceil(largest / step)
    return (lambda count: count / end), list(range(0, end + 1, step))


def histogram_drawing(histogram: Histogram) -> dict[str, Any]:
    """The histogram's geometry for the template's inline SVG.

    Returns
    -------
    dict
        Keys ``width``, ``height``, ``plot`` (left, top, right, bottom), ``bars`` (``x``,
        ``y``, ``width``, ``height``, ``low``, ``high``, ``count``), ``xticks`` and
        ``yticks`` (position, label), ``ylabel``.
    """
    right, bottom = _WIDTH - _RIGHT, _HEIGHT - _BOTTOM
    share, ticks = _count_axis(histogram)
    span, top = right - _LEFT, histogram.edges[-1]
    bars = []
    for i, count in enumerate(histogram.counts):
        x0 = _LEFT + span * histogram.edges[i] / top
        x1 = _LEFT + span * histogram.edges[i + 1] / top
        height = round((bottom - _TOP) * share(count), 1)
        bars.append({"x": round(x0, 1), "width": round(max(x1 - x0 - 1, 1), 1),
                     "y": round(bottom - height, 1), "height": height,
                     "low": _percent(histogram.edges[i]),
                     "high": _percent(histogram.edges[i + 1]), "count": count})
    return {"width": _WIDTH, "height": _HEIGHT,
            "plot": {"left": _LEFT, "top": _TOP, "right": right, "bottom": bottom},
            "bars": bars,
            "xticks": [(round(_LEFT + span * q, 1), _percent(top * q))
                       for q in (0, 0.25, 0.5, 0.75, 1)],
            "yticks": [(round(bottom - (bottom - _TOP) * share(t), 1), f"{t:,}")
                       for t in ticks if t > 0 or not histogram.log],
            "ylabel": "records (log scale)" if histogram.log else "records"}


def _percent(share: float) -> str:
    """A risk as a percentage (4 significant digits), as the survey-risk table writes it."""
    return f"{100 * share:.4g} %"


def cell_text(value: Any) -> str:
    """A cell as the pages show it: blank when missing, a whole float without ``.0``, other
    floats to 10 significant digits."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return ""
    if isinstance(value, float | np.floating):
        number = float(value)
        return str(int(number)) if number.is_integer() else f"{number:.10g}"
    return str(value)


def riskiest(table: pd.DataFrame, keys: Sequence[str], risk: ArrayLike, fk: ArrayLike,
             Fk: ArrayLike | None = None, *, n: int = RISKIEST) -> list[dict[str, Any]]:
    """The ``n`` records of ``table`` with the largest individual ``risk`` (ties: the first
    rows first): their row (1-based), their values of ``keys`` only (as text), their sample
    frequency ``fk``, their estimated population frequency ``Fk`` (with a weight) and their
    risk."""
    r = np.asarray(risk, dtype=np.float64)
    order = np.lexsort((np.arange(r.size), -r))[:n]
    f = np.asarray(fk)
    population = None if Fk is None else np.asarray(Fk, dtype=np.float64)
    values = table.iloc[order][list(keys)]
    return [{"row": int(i) + 1, "values": [cell_text(v) for v in cells], "fk": int(f[i]),
             "Fk": None if population is None else f"{population[i]:,.1f}",
             "risk": _percent(r[i])}
            for i, cells in zip(order, values.itertuples(index=False, name=None),
                                strict=True)]
