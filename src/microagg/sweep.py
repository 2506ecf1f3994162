"""Risk-utility sweep: a grid of methods x k (x aggregation parameters) on one table, each
release's information loss against its disclosure risk, and the Pareto front.
This is how a data steward picks k.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .audit.check import equivalence_classes
from .io._atomic import atomic_write
from .metrics.headline import NUMERIC_LOSS, class_risk, headline_loss
from .release import anonymize

__all__ = ["pareto_front", "plot_sweep", "risk_column", "sweep", "sweep_figure"]

_SHORT = {NUMERIC_LOSS.key: "SSE/SST"}
"""The ``loss_measure`` written for each headline loss (tables written before keep theirs)."""


def pareto_front(loss: ArrayLike, risk: ArrayLike) -> NDArray[np.bool_]:
    """Which points no other point beats on both counts (lower loss and lower risk, one of
    them strictly).

    Examples
    --------
    >>> pareto_front([1, 2, 3, 2], [3, 2, 1, 3]).tolist()
    [True, True, True, False]
    """
    a = np.asarray(loss, dtype=np.float64)
    b = np.asarray(risk, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"loss and risk must be 1-d arrays of the same length; got shapes "
                         f"{a.shape} and {b.shape}.")
    dominated = ((a[None, :] <= a[:, None]) & (b[None, :] <= b[:, None])
                 & ((a[None, :] < a[:, None]) | (b[None, :] < b[:, None]))).any(axis=1)
    return np.asarray(~dominated, dtype=np.bool_)


def sweep(df: pd.DataFrame, *, quasi_identifiers: Sequence[str], ks: Sequence[int] = (3, 5, 10),  # noqa: PLR0913 - public face: the grid, keyword-only
          methods: Sequence[str] = ("mdav",), sensitive: Sequence[str] = (),
          identifiers: Sequence[str] = (),
          aggregations: Sequence[tuple[str, Mapping[str, Any]]] = (("mean", {}),),
          options: Mapping[str, Any] | None = None,
          models: Sequence[tuple[str, Mapping[str, Any]]] = (("k", {}),),
          random_state: int = 0,
          on_step: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """Run :func:`~microagg.anonymize` for every method x k x aggregation x model and
    tabulate.

    Parameters
    ----------
    df : pandas.DataFrame
    quasi_identifiers, sensitive, identifiers : sequences of str
        Roles, as for :func:`~microagg.anonymize`.
    ks : sequence of int
    methods : sequence of str
        Partitioner names.
    aggregations : sequence of (name, params)
        E.g. ``[("mean", {}), ("rho", {"rho": 0.5})]``.
    options : mapping, default=None
        Further keyword arguments for every run (``blocking``, ``hierarchies``...).
    models : sequence of (label, params), default=(("k", {}),)
        Privacy models on top of k, one grid dimension: e.g. ``[("k", {}), ("l=2",
        {"l": 2}), ("t=0.2", {"t": 0.2}), ("epsilon=1", {"epsilon": 1.0, "bounds": {...}})]``;
        the label goes to the ``model`` column.
    random_state : int, default=0
        The seed of every run (recorded in the table).
    on_step : callable, default=None
        Called as ``on_step(done, total, label)`` before each run (progress bars).

    Returns
    -------
    pandas.DataFrame
        One row per run: ``method``, ``k``, ``aggregation``, ``aggregation_params``,
        ``model``,
        ``information_loss`` (%; the headline loss of
        :func:`microagg.metrics.headline.headline_loss`: SSE/SST, or NCP for generalized
        categorical and mixed releases, as ``loss_measure`` says), ``dld_risk`` (%; distance linkage, numeric releases only),
        ``class_risk`` (%; the mean over records of 1 / the size of its published class,
        :func:`microagg.metrics.headline.class_risk`),
        ``achieved_k`` (syntactic k of the published values), ``seconds``, ``warnings``
        (count), ``error`` (the message of a run that was refused, else empty) and
        ``pareto`` (on the front of loss vs risk among the runs that succeeded; the risk is
        DLD, or the class risk when a run has no DLD: :func:`risk_column`).

    Examples
    --------
    >>> import numpy as np
    >>> data = pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)), columns=["a", "b"])
    >>> table = sweep(data, quasi_identifiers=["a", "b"], ks=[2, 5], methods=["mdav", "md"])
    >>> table[["method", "k"]].values.tolist()
    [['mdav', 2], ['mdav', 5], ['md', 2], ['md', 5]]
    """
    grid = list(itertools.product(methods, ks, aggregations, models))
    rows = []
    for step, (method, k, (aggregation, params), (model, model_params)) in enumerate(grid):
        label = (f"{method}, k={k}, {aggregation}{'' if not params else ' ' + str(dict(params))}"
                 + ("" if model == "k" else f", {model}"))
        if on_step is not None:
            on_step(step, len(grid), label)
        row: dict[str, Any] = {"quasi_identifiers": ",".join(map(str, quasi_identifiers)),
                               "method": method, "k": int(k), "aggregation": aggregation,
                               "aggregation_params": ", ".join(f"{n}={v}" for n, v in
                                                               dict(params).items()),
                               "model": model}
        start = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                roles: dict[str, Any] = ({} if (options or {}).get("schema") is not None else {
                    "quasi_identifiers": list(quasi_identifiers), "sensitive": list(sensitive),
                    "identifiers": list(identifiers)})  # a schema gives them itself
                release = anonymize(
                    df, k=int(k), method=method, aggregation=aggregation,
                    aggregation_params=dict(params) or None, random_state=random_state,
                    **roles, **{**dict(options or {}), **dict(model_params)})
        except (ValueError, TypeError) as error:  # SchemaError is a ValueError
            row.update(information_loss=np.nan, loss_measure="", dld_risk=np.nan,
                       class_risk=np.nan, global_risk=np.nan, achieved_k=np.nan,
                       seconds=time.perf_counter() - start, warnings=0, error=str(error))
        else:
            metrics = release.metrics
            # the headline loss of the release's kind (metrics.headline): NCP for generalized
            # (categorical or mixed) releases, which covers every quasi-identifier, else
            # SSE/SST; the same figure anonymize's table and the report lead with
            found = headline_loss(metrics)
            loss, measure = (np.nan, "") if found is None else (found[1], _SHORT.get(
                found[0].key, found[0].short))
            dld = metrics.get("dld_risk")
            classes = equivalence_classes(release.data, list(quasi_identifiers))
            row.update(information_loss=loss, loss_measure=measure,
                       dld_risk=np.nan if dld is None else 100.0 * float(dld),
                       class_risk=100.0 * class_risk(classes),
                       global_risk=_global_risk(metrics),
                       achieved_k=release.k, seconds=time.perf_counter() - start,
                       warnings=len(caught), error="")
        rows.append(row)
    if on_step is not None:
        on_step(len(grid), len(grid), "done")
    table = pd.DataFrame(rows)
    ok = table["error"] == ""
    table["pareto"] = False
    if ok.any():
        risk = risk_column(table)
        table.loc[ok, "pareto"] = pareto_front(table.loc[ok, "information_loss"],
                                               table.loc[ok, risk])
    return table


def _global_risk(metrics: Any) -> float:
    """The published file's global risk in % (mean individual risk, with a weight or a
    household in the schema: ``metrics["survey_risk"]``), NaN without it."""
    survey = metrics.get("survey_risk")
    return float(survey["after"]["global_risk_pct"]) if survey else np.nan


RISK_LABELS = {
    "global_risk": ("global risk", "disclosure risk, global risk (mean individual risk, %)"),
    "dld_risk": ("DLD", "disclosure risk, DLD (% of records linked)"),
    "class_risk": ("class risk", "disclosure risk, mean 1 / class size (%)"),
}
"""Each risk axis of the map: its short name (tables) and its axis label."""


def risk_column(table: pd.DataFrame) -> str:
    """The risk the front and the map use: ``global_risk`` (the mean individual risk of the
    published file, as statistical offices measure it) when every successful run has it (a
    schema with a weight or a household), else ``dld_risk`` (distance linkage) when every
    successful run has it, else ``class_risk`` (mean 1 / class size: categorical releases,
    where distances between generalized values are not defined)."""
    errors = table["error"].astype(object).where(table["error"].notna(), "").astype(str)
    done = table[errors == ""]
    if "global_risk" in table.columns and len(done) and done["global_risk"].notna().all():
        return "global_risk"
    if "class_risk" in table.columns and done["dld_risk"].isna().any():
        return "class_risk"
    return "dld_risk"


def sweep_figure(table: pd.DataFrame, *, title: str = "Risk-utility map",
                 mark: tuple[float, float, str] | None = None) -> Any:
    """The matplotlib figure of :func:`plot_sweep` (information loss against DLD risk, one
    point per run labelled ``k=``, the Pareto front dashed); ``mark`` (loss, risk, label)
    adds one release as a star, e.g. the release a report describes. The caller closes it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("The sweep plot needs matplotlib: pip install 'microagg[plots]'"
                          ) from None
    errors = table["error"].astype(object).where(table["error"].notna(), "")  # CSV: NaN
    done = table[errors.astype(str) == ""]
    if done.empty:
        raise ValueError("The sweep table has no successful run to plot.")
    pareto = done["pareto"].astype(str).str.lower().isin(["true", "1"])
    risk = risk_column(table)
    fig, ax = plt.subplots(figsize=(7, 5), dpi=120)
    markers = ["o", "^", "s", "D", "v", "P", "X"]
    if "model" not in done.columns:  # tables written before the model column existed
        done = done.assign(model="k")
    for i, ((method, aggregation, params, model), part) in enumerate(
            done.assign(aggregation_params=done["aggregation_params"].astype(object)
                        .where(done["aggregation_params"].notna(), "")).groupby(
                ["method", "aggregation", "aggregation_params", "model"], sort=False)):
        label = (str(method) + ("" if aggregation == "mean" else f" ({aggregation} {params})")
                 + ("" if str(model) == "k" else f" {model}"))
        ax.scatter(part["information_loss"], part[risk], label=label, s=30,
                   marker=markers[i % len(markers)])
        for _, row in part.iterrows():
            ax.annotate(f"k={row['k']}", (row["information_loss"], row[risk]),
                        textcoords="offset points", xytext=(4, 3), fontsize=7)
    front = done[pareto].sort_values("information_loss")
    if len(front):
        ax.plot(front["information_loss"], front[risk], color="black", lw=1,
                ls="--", label="Pareto front")
    measures = sorted({str(m) for m in done.get("loss_measure", pd.Series(["SSE/SST"]))
                       if str(m) not in ("", "nan")}) or ["SSE/SST"]
    if mark is not None:
        ax.scatter([mark[0]], [mark[1]], marker="*", s=220, color="crimson", zorder=5,
                   label=mark[2])
    ax.set_xlabel(f"information loss, {' / '.join(measures)} (%)")
    ax.set_ylabel(RISK_LABELS[risk][1])
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_sweep(table: pd.DataFrame, path: str | os.PathLike[str], *,
               title: str = "Risk-utility map") -> pathlib.Path:
    """Plot information loss against DLD risk, one point per run (labelled ``method k``),
    the Pareto front as a line; written atomically as PNG (needs matplotlib)."""
    target = pathlib.Path(path).expanduser()
    fig = sweep_figure(table, title=title)
    import matplotlib.pyplot as plt

    try:  # a partial file named after this process, removed by the next write if killed
        atomic_write(target, lambda handle: fig.savefig(handle, format="png"))
    finally:
        plt.close(fig)
    return target
