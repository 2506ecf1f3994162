"""The Result page's sample of published rows beside the original rows: a few records, drawn
with a fixed seed (the same rows for every attempt on one table, so attempts compare), each
published cell marked where it differs from the original. Only the published columns are
shown: the dropped identifiers never appear.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .risk_figures import cell_text

__all__ = ["SAMPLE_ROWS", "SAMPLE_SEED", "beside", "same_value"]

SAMPLE_ROWS = 10
"""Records in the sample."""
SAMPLE_SEED = 0
"""The sample's seed: the same rows for every attempt on one table."""


def same_value(original: Any, published: Any) -> bool:
    """Whether a published cell says what the original said: both missing, equal numbers
    (``36`` and ``36.0``), equal dates (a text date and the date it was read as), or equal
    text.

    Examples
    --------
    >>> same_value(36, 36.0), same_value("Coast", None), same_value(None, float("nan"))
    (True, False, True)
    """
    gone = [v is None or (pd.api.types.is_scalar(v) and bool(pd.isna(v)))
            for v in (original, published)]
    if any(gone):
        return all(gone)
    numbers = (int, float, np.integer, np.floating)
    if isinstance(original, numbers) and isinstance(published, numbers) \
            and not isinstance(original, bool | np.bool_):
        return bool(float(original) == float(published))
    if isinstance(original, pd.Timestamp) or isinstance(published, pd.Timestamp):
        try:
            return bool(pd.Timestamp(original) == pd.Timestamp(published))
        except (ValueError, TypeError):
            return False
    return str(original) == str(published)


def beside(original: pd.DataFrame, published: pd.DataFrame, *, shuffled: bool = False,
           n: int = SAMPLE_ROWS, seed: int = SAMPLE_SEED) -> dict[str, Any]:
    """``n`` rows of ``published`` beside the same rows of ``original`` (rows in = rows out,
    in the same order).

    Parameters
    ----------
    original, published : pandas.DataFrame
        The table as read and the release's published table (identifiers dropped).
    shuffled : bool, default=False
        Whether the release shuffled its rows (an epsilon-differentially private one): then
        no row of one is the row of the other, and nothing is paired (``"rows"`` empty).
    n, seed : int
        How many rows, drawn without replacement by ``numpy.random.default_rng(seed)``, shown
        in the table's order.

    Returns
    -------
    dict
        ``columns`` (the published ones), ``rows`` (``row``: 1-based, ``original`` and
        ``published``: the cells as text, ``changed``: one bool per column), ``changed``
        (cells changed in the sample), ``shuffled``.
    """
    columns = [str(c) for c in published.columns]
    if shuffled or len(original) != len(published):
        return {"columns": columns, "rows": [], "changed": 0, "shuffled": True}
    rng = np.random.default_rng(seed)
    picked = np.sort(rng.choice(len(published), size=min(n, len(published)), replace=False))
    rows = []
    for i in picked.tolist():
        before = [original[c].iloc[i] if c in original.columns else None
                  for c in published.columns]
        after = published.iloc[i].tolist()
        rows.append({"row": i + 1, "original": [cell_text(v) for v in before],
                     "published": [cell_text(v) for v in after],
                     "changed": [not same_value(b, a) for b, a in zip(before, after,
                                                                      strict=True)]})
    return {"columns": columns, "rows": rows, "shuffled": False,
            "changed": sum(sum(row["changed"]) for row in rows)}
