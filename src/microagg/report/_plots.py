"""The sections of the release report that compare columns and draw them: group sizes,
numeric and categorical quasi-identifiers before and after, the correlation heat maps and the
sweep map (for :mod:`microagg.report`). A plot that would show one bar is a sentence instead.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..metrics.headline import column_losses
from ._dates import as_datetimes, date_range_table, date_text, days_text

__all__ = ["categorical_section", "correlation_figure", "fmt", "group_sizes_section",
           "numeric_section", "plots", "png", "sweep_section"]

_LABEL_CHARS = 18
"""Longest tick label of a heat map; longer column names are cut with '...'."""
_MAX_TICKS = 50
"""Most labelled columns on a heat map axis; beyond, every n-th column is labelled."""


def fmt(value: Any, digits: int = 4) -> str:
    """A value as report text: yes/no, thousands separators, 4 significant digits."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return "n/a" if not np.isfinite(value) else f"{float(value):.{digits}g}"
    if value is None:
        return "n/a"
    return html.escape(str(value))


def png(fig: Any, alt: str = "plot") -> str:
    """The figure as an embedded PNG ``<img>`` whose text alternative is ``alt`` (what it
    shows, for a screen reader); the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return (f"<img alt='{html.escape(alt, quote=True)}' src='data:image/png;base64,"
            + base64.b64encode(buffer.getvalue()).decode("ascii") + "'>")


def plots() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or ``None`` without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the report still renders, with the tables only
        return None
    return plt


def _short(label: str, limit: int = _LABEL_CHARS) -> str:
    return label if len(label) <= limit else label[:limit - 3] + "..."


def group_sizes_section(sizes: NDArray[np.intp], plt: Any) -> list[str]:
    """How many records each group has; one size for all groups is a sentence."""
    parts = ["<h2>Group sizes</h2>"]
    if sizes.min() == sizes.max():
        return [*parts, f"<p>All {sizes.size:,} groups have {int(sizes.min()):,} records.</p>"]
    parts.append(f"<p>{sizes.size:,} groups; smallest {sizes.min():,}, largest "
                 f"{sizes.max():,}, mean {sizes.mean():.2f}.</p>")
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 2.6))
        ax.hist(sizes, bins=np.arange(sizes.min(), sizes.max() + 2) - 0.5, color="#3a6fd8")
        ax.set_xlabel("records per group")
        ax.set_ylabel("groups")
        parts.append(png(fig, "histogram of the number of records per group"))
    return parts


def missing_counts(original: pd.DataFrame, published: pd.DataFrame,
                   columns: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Per column with missing values: (missing in the original, missing in the published)."""
    counts = {c: (int(original[c].isna().sum()), int(published[c].isna().sum()))
              for c in columns}
    return {c: n for c, n in counts.items() if n[0] or n[1]}


def _single_value(col: str, values: pd.Series, what: str = "published", *,
                  is_date: bool = False) -> str | None:
    """"All 1,080 published values of X are 12.0", when a column has one value (a date
    column's day number as its date)."""
    observed = values.dropna()
    if observed.nunique() != 1:
        return None
    value = date_text(float(observed.iloc[0])) if is_date else fmt(observed.iloc[0])
    return (f"<p>All {len(observed):,} {what} values of <b>{html.escape(col)}</b> are "
            f"{value}.</p>")


def _numeric_row(col: str, a: pd.Series, b: pd.Series, lost: float, n_missing: int, *,
                 is_date: bool) -> str:
    """One row of the numeric table: a date column's means as dates, its spread in days."""
    if is_date:
        means = (date_text(a.mean()), date_text(b.mean()))
        spreads = (f"sd {days_text(a.std())}", f"sd {days_text(b.std())}")
    else:
        means, spreads = (fmt(a.mean()), fmt(b.mean())), (fmt(a.var()), fmt(b.var()))
    return (f"<tr><td class='l'>{html.escape(col)}</td><td>{means[0]}</td>"
            f"<td>{means[1]}</td><td>{spreads[0]}</td><td>{spreads[1]}</td>"
            f"<td>{fmt(float(lost), 3)}</td><td>{fmt(int(b.nunique()))}</td>"
            f"<td>{fmt(n_missing)}</td></tr>")


SKEW_SPAN = 100.0
"""A positive column whose largest value is at least this many times its smallest, and
whose mean is above its median, is drawn on a logarithmic axis."""


def log_axis(values: pd.Series) -> bool:
    """Whether a column's histogram reads better on a logarithmic axis: every value
    positive, spanning two orders of magnitude (:data:`SKEW_SPAN`), skewed to the right
    (mean above median), as incomes and sizes are.

    Examples
    --------
    >>> log_axis(pd.Series([1.0, 2.0, 3.0, 500.0])), log_axis(pd.Series([20.0, 40.0, 90.0]))
    (True, False)
    >>> log_axis(pd.Series([0.0, 2.0, 3.0, 500.0]))          # a zero has no logarithm
    False
    """
    observed = values.astype(float).dropna()
    if observed.nunique() < 2 or not (observed > 0).all():
        return False
    low, high = float(observed.min()), float(observed.max())
    return high >= SKEW_SPAN * low and float(observed.mean()) > float(observed.median())


def _histogram(col: str, original: pd.Series, published: pd.Series, plt: Any, *,
               is_date: bool) -> str:
    """The original and published values of one column overlaid; a date column on a date
    axis, a skewed positive one on a logarithmic axis (:func:`log_axis`)."""
    fig, ax = plt.subplots(figsize=(4.2, 2.6))
    a, b = original.astype(float).dropna(), published.astype(float).dropna()
    bins: Any = np.histogram_bin_edges(a, bins=30) if len(a) else 30
    if not is_date and log_axis(pd.concat([a, b])):
        both = pd.concat([a, b])
        bins = np.geomspace(both.min(), both.max(), 31)
        ax.set_xscale("log")
        ax.set_xlabel(f"{col} (logarithmic axis)", fontsize=8)
    if is_date:
        a, b = as_datetimes(a), as_datetimes(b)
        if len(a):
            bins = as_datetimes(pd.Series(bins)).to_numpy()
        fig.autofmt_xdate()
    ax.hist(a, bins=bins, alpha=0.55, label="original", color="#5b6475")
    ax.hist(b, bins=bins, alpha=0.55, label="published", color="#3a6fd8")
    ax.set_title(col, fontsize=10)
    ax.legend(fontsize=7)
    return png(fig, f"histogram of {col}, original and published values overlaid"
               + (" (logarithmic axis)" if ax.get_xscale() == "log" else ""))


def numeric_section(original: pd.DataFrame, published: pd.DataFrame, numeric: list[str],
                    plt: Any, *, dates: Collection[str] = ()) -> list[str]:
    """Means, variances and the variation lost per column; histograms and correlations.

    ``dates`` names the columns that are dates held as days since 1970-01-01: their means,
    earliest and latest values are shown as dates, their spread in days, their histograms
    on date axes."""
    losses = column_losses(original[numeric].to_numpy(dtype=np.float64),
                           published[numeric].to_numpy(dtype=np.float64))
    missing = missing_counts(original, published, numeric)
    rows = []
    for col, lost in zip(numeric, losses, strict=True):
        rows.append(_numeric_row(col, original[col].astype(float),
                                 published[col].astype(float), float(lost),
                                 missing.get(col, (0, 0))[0], is_date=col in dates))
    parts = ["<h2>Quasi-identifiers before and after</h2>",
             "<p>Variation lost: 100 x the sum of squared changes / the sum of squares around "
             "the column mean (SSE/SST of the column; with mean aggregation, the share of its "
             "variance removed). Missing values are not counted.</p>",
             "<table><tr><th class='l'>column</th><th>mean, original</th><th>mean, "
             "published</th><th>variance, original</th><th>variance, published</th>"
             "<th>variation lost (%)</th><th>distinct published values</th>"
             "<th>missing in the original</th></tr>" + "".join(rows) + "</table>"]
    date_columns = [c for c in numeric if c in dates]
    if date_columns:
        parts.append(date_range_table(original, published, date_columns))
    if plt is None:
        return parts
    cells, sentences = [], []
    for col in numeric:
        sentence = _single_value(col, published[col], is_date=col in dates)
        if sentence is not None:
            sentences.append(sentence)
            continue
        cells.append(_histogram(col, original[col], published[col], plt,
                                is_date=col in dates))
    parts += sentences
    if cells:
        parts.append("<div class='grid'>" + "".join(cells) + "</div>")
    if len(numeric) > 1:
        parts.append("<h2>Correlations</h2>" + png(correlation_figure(
            original, published, numeric, plt), "correlation heat maps of the numeric "
            "quasi-identifiers, original and published"))
    return parts


def correlation_figure(original: pd.DataFrame, published: pd.DataFrame,
                       numeric: Sequence[str], plt: Any) -> Any:
    """The correlation matrices side by side; the figure grows with the columns and the tick
    labels shrink and are cut so that they never overlap."""
    p = len(numeric)
    side = float(min(12.0, max(3.5, 0.28 * p + 1.5)))
    step = -(-p // _MAX_TICKS)  # label every step-th column beyond _MAX_TICKS columns
    cell = 72.0 * 0.55 * side * step / p  # points between two labelled ticks
    fontsize = float(max(3.0, min(8.0, 0.6 * cell)))
    ticks = list(range(0, p, step))
    labels = [_short(str(numeric[j])) for j in ticks]
    fig, axes = plt.subplots(1, 2, figsize=(2 * side + 1.5, side + 1.0))
    image = None
    for ax, frame, name in ((axes[0], original, "original"), (axes[1], published, "published")):
        corr = frame[list(numeric)].astype(float).corr().to_numpy()
        image = ax.imshow(corr, vmin=-1, vmax=1, cmap="coolwarm")
        ax.set_title(f"correlations, {name}", fontsize=10)
        ax.set_xticks(ticks, labels, rotation=90, fontsize=fontsize)
        ax.set_yticks(ticks, labels, fontsize=fontsize)
    fig.colorbar(image, ax=axes, shrink=0.8)
    return fig


def categorical_section(original: pd.DataFrame, published: pd.DataFrame,
                        columns: Sequence[str], plt: Any) -> list[str]:
    """Non-numeric quasi-identifiers (nominal, ordinal, generalized): how many values
    changed, how many distinct values remain, and the most frequent published values."""
    rows, cells, sentences = [], [], []
    for col in columns:
        before = original[col].astype(str).to_numpy()
        after = published[col].astype(str).to_numpy()
        changed = float(np.mean(before != after))
        rows.append(f"<tr><td class='l'>{html.escape(col)}</td>"
                    f"<td>{fmt(int(pd.Series(before).nunique()))}</td>"
                    f"<td>{fmt(int(pd.Series(after).nunique()))}</td>"
                    f"<td>{100 * changed:.2f}</td>"
                    f"<td>{fmt(int(original[col].isna().sum()))}</td></tr>")
        sentence = _single_value(col, published[col])
        if sentence is not None:
            sentences.append(sentence)
        elif plt is not None:
            top = pd.Series(after).value_counts().head(10)[::-1]
            fig, ax = plt.subplots(figsize=(4.2, 0.35 * len(top) + 1.0))
            ax.barh([_short(label, 32) for label in top.index], top.to_numpy(),
                    color="#3a6fd8")
            ax.set_title(f"{col}: most frequent published values", fontsize=10)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_xlabel("records")
            cells.append(png(fig, f"bar chart of the most frequent published values of "
                                  f"{col}"))
    parts = ["<h2>Categorical quasi-identifiers before and after</h2>",
             "<table><tr><th class='l'>column</th><th>distinct, original</th><th>distinct, "
             "published</th><th>records whose value changed (%)</th><th>missing in the "
             "original</th></tr>" + "".join(rows) + "</table>", *sentences]
    if cells:
        parts.append("<div class='grid'>" + "".join(cells) + "</div>")
    return parts


def sweep_section(sweep: pd.DataFrame, plt: Any, *,
                  release: tuple[float, float, Sequence[str]] | None = None) -> list[str]:
    """The risk-utility map of a sweep (``microagg sweep``) and its Pareto runs; ``release``
    (its loss and risk in the sweep's measures, and its quasi-identifiers) is marked on the
    map, with a warning when the sweep masked other columns (the points would not compare).
    """
    from ..sweep import RISK_LABELS, risk_column, sweep_figure

    parts = ["<h2>Choosing k: the risk-utility map</h2>",
             "<p>Each point is one run of the sweep; the dashed line joins the runs no other "
             "run beats on both information loss and linkage risk (the Pareto front)"
             + ("; the red star is this release" if release is not None else "") + ".</p>"]
    parts += _sweep_columns_note(sweep, release)
    if plt is not None:
        mark = (release[0], release[1], "this release") if release is not None else None
        parts.append(png(sweep_figure(sweep, mark=mark), "risk-utility map of the sweep: "
                         "information loss against disclosure risk, one point per run"))
    errors = sweep["error"].astype(object).where(sweep["error"].notna(), "").astype(str)
    front = sweep[(errors == "") & sweep["pareto"].astype(str).str.lower().isin(["true", "1"])]
    risk = risk_column(sweep)
    parts.append("<table><tr><th class='l'>method</th><th>k</th><th class='l'>aggregation</th>"
                 f"<th>loss (%)</th><th>{RISK_LABELS[risk][0]} (%)"
                 "</th></tr>" + "".join(
                     f"<tr><td class='l'>{html.escape(str(r['method']))}</td><td>{r['k']}</td>"
                     f"<td class='l'>{html.escape(str(r['aggregation']))}</td>"
                     f"<td>{fmt(float(r['information_loss']))}</td>"
                     f"<td>{fmt(float(r[risk]))}</td></tr>"
                     for _, r in front.sort_values("information_loss").iterrows())
                 + "</table>")
    return parts


def _sweep_columns_note(sweep: pd.DataFrame, release: tuple[float, float, Sequence[str]] | None
                        ) -> list[str]:
    """A warning when the sweep's quasi-identifiers are not the release's."""
    if release is None or "quasi_identifiers" not in sweep.columns:
        return []
    swept = {str(q) for q in sweep["quasi_identifiers"].dropna().unique()}
    mine = ",".join(release[2])
    if swept == {mine}:
        return [f"<p>The sweep masked the same {len(release[2])} quasi-identifiers as this "
                "release.</p>"]
    return [f"<p class='warn'>The sweep masked other columns ({html.escape('; '.join(sorted(swept)))}) "
            f"than this release ({html.escape(mine)}): its points do not compare with this "
            "release's star.</p>"]
