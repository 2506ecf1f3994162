"""Command-line interface: ``microagg anonymize | methods | datasets``."""

from __future__ import annotations

import json
import math
import pathlib
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from microagg.release import Release

__all__ = ["app", "main"]

EXIT_USER_ERROR = 2
"""Exit status for a user error (bad option, unreadable input, schema problem...)."""
EXIT_BUG = 3
"""Exit status for a broken guarantee: a bug in microagg."""
PROGRESS_DELAY = 1.0
"""Seconds a run must last before the progress display appears."""

app = typer.Typer(
    name="microagg",
    help="Safe release of microdata by microaggregation, with verified guarantees.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class UsageError(ValueError):
    """A command-line option is wrong or missing (reported like any other user error)."""


def _stdout() -> Console:
    # Made per call so that the console writes to the current sys.stdout (CliRunner swaps it).
    return Console(highlight=False)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _fail(message: str, *, bug: bool = False) -> typer.Exit:
    """Print ``Error: message`` in red on stderr; return the Exit to raise (2, or 3 for a bug)."""
    text = f"Error: {message}" + (" (this is a bug in microagg; please report it)" if bug else "")
    _stderr().print(Text(text, style="bold red"), soft_wrap=True)
    return typer.Exit(code=EXIT_BUG if bug else EXIT_USER_ERROR)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("microagg")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def _version_callback(value: bool) -> None:
    if value:
        _stdout().print(f"microagg {_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_callback, is_eager=True,
                     help="Show the version and exit."),
    ] = False,
) -> None:
    """Safe release of microdata by microaggregation, with verified guarantees."""


def _parse_hierarchies(items: list[str] | None) -> dict[str, str]:
    """``["education=edu.csv"]`` -> ``{"education": "edu.csv"}``; names ``--hierarchy``."""
    parsed: dict[str, str] = {}
    for item in items or []:
        name, eq, path = item.partition("=")
        if not eq or not name or not path:
            raise UsageError(f"--hierarchy must look like COLUMN=FILE. Got {item!r} instead.")
        if name in parsed:
            raise UsageError(f"--hierarchy gives {name!r} more than once.")
        parsed[name] = path
    return parsed


def _parse_bounds(items: list[str] | None) -> dict[str, tuple[float, float]] | None:
    """``["age=0:120"]`` -> ``{"age": (0.0, 120.0)}``; a malformed item names ``--bounds``."""
    if not items:
        return None
    parsed: dict[str, tuple[float, float]] = {}
    for item in items:
        name, eq, rest = item.partition("=")
        low, colon, high = rest.partition(":")
        try:
            pair = (float(low), float(high))
        except ValueError:
            pair = None
        if not eq or not colon or not name or pair is None:
            raise UsageError(
                f"--bounds must look like column=lower:upper (numbers). Got {item!r} instead."
            )
        if name in parsed:
            raise UsageError(f"--bounds gives {name!r} more than once.")
        parsed[name] = pair
    return parsed


def _split_names(values: Sequence[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; ``None`` (option not given) stays ``None``."""
    if values is None:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _parse_attribute_groups(text: str | None) -> str | list[list[str]] | None:
    """``individual`` / ``correlation`` as they are; ``a,b;c`` as [["a", "b"], ["c"]]."""
    if text is None or text in ("individual", "correlation"):
        return text
    groups = [[c.strip() for c in part.split(",") if c.strip()] for part in text.split(";")]
    if any(not g for g in groups):
        raise UsageError(f"--attribute-groups: an empty group in {text!r}; write the groups "
                         "as 'a,b;c,d', or 'individual' / 'correlation'.")
    return groups


def _parse_value(text: str) -> int | float | str:
    """A ``--param`` value: an int if it parses as one, else a float, else the string."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _parse_params(items: Sequence[str] | None, option: str = "--param") -> dict[str, Any]:
    """``["gamma=0.5"]`` -> ``{"gamma": 0.5}``; a malformed item names the option."""
    params: dict[str, Any] = {}
    for item in items or ():
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise UsageError(f"{option} must look like name=value. Got {item!r} instead.")
        if name in params:
            raise UsageError(f"{option} {name!r} is given more than once.")
        params[name] = _parse_value(value.strip())
    return params


class _DelayedProgress:
    """A transient progress display over named stages that appears only after a delay.

    The work runs in the calling thread; a :class:`threading.Timer` starts the live display
    once the run has lasted ``delay`` seconds, so quick runs print nothing. Nothing is shown
    when the console is not a terminal.
    """

    def __init__(self, console: Console, stages: Sequence[str], *,
                 delay: float = PROGRESS_DELAY) -> None:
        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
            TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
            console=console, transient=True,
        )
        self._task = self._progress.add_task(stages[0] if stages else "", total=len(stages))
        self._lock = threading.Lock()
        self._started = False
        self._stopped = False
        self._timer: threading.Timer | None = None
        if console.is_terminal:
            self._timer = threading.Timer(delay, self._start)
            self._timer.daemon = True

    def _start(self) -> None:
        with self._lock:
            if not self._stopped:
                self._progress.start()
                self._started = True

    def stage(self, description: str, *, done: int) -> None:
        """Show that ``done`` stages are complete and ``description`` is running."""
        self._progress.update(self._task, description=description, completed=done)

    def __enter__(self) -> _DelayedProgress:
        if self._timer is not None:
            self._timer.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._stopped = True
            if self._started:
                self._progress.stop()


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn library exceptions into one red line and an exit status (2 user, 3 bug)."""
    from microagg.exceptions import InternalError, PrivacyViolationError

    try:
        yield
    except (PrivacyViolationError, InternalError) as exc:
        raise _fail(f"{type(exc).__name__}: {exc}", bug=True) from None
    except (ValueError, TypeError, ImportError, OSError) as exc:
        # SchemaError is a ValueError; FileNotFoundError and PermissionError are OSErrors.
        raise _fail(str(exc)) from None


def _format_float(value: Any, *, scale: float = 1.0, digits: int = 2) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) * scale
        return f"{number:.{digits}f}" if math.isfinite(number) else str(number)
    return "n/a"


def _summary_table(release: Release, *, source: str, output: pathlib.Path,
                   seconds: float) -> Table:
    """The rich table printed after a run (rows, groups, k, IL, risk, time)."""
    metrics = release.metrics
    k_check = release.checks.get("k_anonymity", {})
    group_check = release.checks.get("group_k", {})
    dp_check = release.checks.get("differential_privacy")
    l_check = release.checks.get("l_diversity")
    t_check = release.checks.get("t_closeness")
    qis = list(release.params.get("quasi_identifiers", ()))
    table = Table(title="microagg release", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    rows = [
        ("input", source),
        ("output", str(output)),
        ("method", str(release.params.get("method", "?"))),
        ("rows", str(release.data.shape[0])),
        ("quasi-identifiers", f"{len(qis)}: {', '.join(map(str, qis))}"),
        ("groups", str(metrics.get("n_groups", "n/a"))),
        ("aggregation", str(release.params.get("aggregation", "?"))
         + "".join(f" {n}={v}" for n, v in release.params.get("aggregation_params", {}).items())),
        ("required k", str(group_check.get("required", "n/a"))),
        ("smallest group", str(group_check.get("achieved", "n/a"))),
        ("achieved k (published values)",
         str(k_check.get("achieved", "n/a"))
         + ("" if k_check.get("required") is not None else
            "  (attribute groups: real k, not guaranteed)"
            if release.attribute_partitions else "  (noisy: not k-anonymous)")),
        ("IL (%)", _format_float(metrics.get("information_loss"), digits=4)),
        *((("NCP (%)", _format_float(metrics["ncp"], scale=100.0, digits=3)),
           ("IL(Omega), normalized", _format_float(metrics["il_omega_normalized"], digits=4)))
          if "ncp" in metrics else ()),
        *(((f"l-diversity ({l_check['diversity']})",
            f"required {l_check['required']}, achieved {l_check['achieved']:.3g}"),)
          if l_check is not None else ()),
        *((("t-closeness", f"required {t_check['required']}, achieved {t_check['achieved']:.3g}"),)
          if t_check is not None else ()),
        *((("UL / P(Q) / P(S) (%)",
            f"{100 * metrics['utility_loss']:.2f} / "
            f"{100 * metrics['privacy_of_quasi_identifiers']:.2f} / "
            f"{100 * metrics['privacy_of_sensitive']:.2f}"),)
          if "utility_loss" in metrics and "privacy_of_sensitive" in metrics else ()),
        *((("homogeneous classes",
            "; ".join(f"{c}: {h['homogeneous_classes']} of {h['classes']} "
                      f"({100 * h['homogeneous_share']:.2f}% of records)"
                      for c, h in metrics["homogeneity"].items())),)
          if "homogeneity" in metrics else ()),
        ("IL original units (%)", _format_float(metrics.get("information_loss_original_units"), digits=4)),
        ("DLD risk (%)", _format_float(metrics.get("dld_risk"), scale=100.0)),
        *((("DLD risk, intruder's columns (%)",
            _format_float(metrics["dld_risk_known"], scale=100.0)),)
          if "dld_risk_known" in metrics else ()),
        *((("intersection attack, re-identified (%)",
            _format_float(metrics["intersection_attack_reidentified"], scale=100.0)),)
          if "intersection_attack_reidentified" in metrics else ()),
        *((("IL_RI / IL_ARI / IL_Jaccard / IL_fuzzy",
            " / ".join(f"{metrics[m]:.4f}"
                       for m in ("il_rand", "il_ari", "il_jaccard", "il_fuzzy_rand"))),)
          if "il_ari" in metrics else ()),
        *((("epsilon-DP", f"epsilon={dp_check['epsilon']} "
            + ("(holds)" if dp_check["holds"] else "(does NOT hold: bounds from the data)")),)
          if dp_check is not None else ()),
        ("seed", str(release.seed)),
        ("time (s)", f"{seconds:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


@app.command()
def anonymize(
    *,
    input_path: Annotated[
        pathlib.Path | None,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="Input table: .csv/.tsv/.txt (optionally .gz), .parquet or .pq."),
    ] = None,
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="Output table (.csv/.tsv/.txt[.gz], .parquet, .pq); written "
                          "atomically, never over the input."),
    ],
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", help="Use a bundled data set (see `microagg datasets`) "
                                       "instead of INPUT."),
    ] = None,
    quasi_identifiers: Annotated[
        list[str] | None,
        typer.Option("-q", "--quasi-identifiers", show_default=False,
                     help="Comma-separated numeric columns to mask (repeatable). Default with "
                          "--dataset: the data set's quasi-identifiers."),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Minimum group size (k >= 2).")] = 5,
    method: Annotated[
        str | None,
        typer.Option("-m", "--method", show_default=False,
                     help="Partitioner (see `microagg methods`); default mdav."),
    ] = None,
    sensitive: Annotated[
        list[str] | None,
        typer.Option("-s", "--sensitive", show_default=False,
                     help="Comma-separated sensitive columns (published unchanged)."),
    ] = None,
    drop: Annotated[
        list[str] | None,
        typer.Option("--drop", show_default=False,
                     help="Comma-separated identifier columns, removed from the output."),
    ] = None,
    aggregation: Annotated[
        str | None,
        typer.Option("--aggregation", show_default=False,
                     help="Group representative: mean (default), median, mode, the noisy rho "
                          "(with --rho) and random-k, synthetic (hybrid data: the group's "
                          "mean and covariance), fuzzy-random (a group mean drawn by fuzzy "
                          "membership; --agg-param m=2) (these four are not k-anonymous, not "
                          "DP), or interval (generalizing releases; the default for cdt).")
    ] = None,
    rho: Annotated[
        float | None,
        typer.Option("--rho", show_default=False,
                     help="Noise scale of --aggregation rho, in [0, 1] (default 0.5)."),
    ] = None,
    scaling: Annotated[
        str | None,
        typer.Option("--scaling", show_default=False,
                     help="Scaling for distances: standard (default), minmax or none."),
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", show_default=False,
                     help="Epsilon-differentially private release (insensitive partition + "
                          "Laplace noise on the group means); give --bounds for every "
                          "quasi-identifier."),
    ] = None,
    bounds: Annotated[
        list[str] | None,
        typer.Option("--bounds", show_default=False,
                     help="Public bounds for --epsilon as column=lower:upper (repeatable), "
                          "e.g. --bounds age=0:120."),
    ] = None,
    hierarchy: Annotated[
        list[str] | None,
        typer.Option("--hierarchy", show_default=False,
                     help="Generalization hierarchy of a categorical quasi-identifier as "
                          "COL=FILE (ARX CSV: value;level1;...;*), repeatable. With --dataset "
                          "adult the bundled hierarchies are used."),
    ] = None,
    l_div: Annotated[
        float | None,
        typer.Option("-l", "--l-diversity", show_default=False,
                     help="Require l-diversity of the sensitive columns (e.g. -l 2)."),
    ] = None,
    diversity: Annotated[
        str, typer.Option("--diversity", help="distinct, entropy or recursive.")
    ] = "distinct",
    diversity_c: Annotated[
        float, typer.Option("--diversity-c", help="c of recursive (c, l)-diversity.")
    ] = 2.0,
    t_close: Annotated[
        float | None,
        typer.Option("-t", "--t-closeness", show_default=False,
                     help="Require t-closeness of the sensitive columns (e.g. -t 0.2)."),
    ] = None,
    t_distance: Annotated[
        str, typer.Option("--t-distance",
                          help="EMD ground distance: auto, equal, ordered or hierarchical.")
    ] = "auto",
    intruder_knows: Annotated[
        list[str] | None,
        typer.Option("--intruder-knows", show_default=False,
                     help="Comma-separated quasi-identifiers an intruder holds: adds the "
                          "linkage risk on those columns only."),
    ] = None,
    attribute_groups: Annotated[
        str | None,
        typer.Option("--attribute-groups", show_default=False,
                     help="Microaggregate groups of quasi-identifiers separately: "
                          "'individual' (each column alone), 'correlation', or the groups "
                          "as 'a,b;c,d'. NOT k-anonymous: the real k is reported."),
    ] = None,
    n_attribute_groups: Annotated[
        int | None,
        typer.Option("--n-attribute-groups", show_default=False,
                     help="Number of groups for --attribute-groups correlation."),
    ] = None,
    categorical_aggregation: Annotated[
        str,
        typer.Option("--categorical-aggregation",
                     help="Nominal quasi-identifiers: 'generalize' (common ancestor in the "
                          "hierarchy) or 'mode' (most frequent value)."),
    ] = "generalize",
    agg_param: Annotated[
        list[str] | None,
        typer.Option("--agg-param", show_default=False,
                     help="Aggregation parameter name=value (repeatable), e.g. "
                          "--agg-param m=2 for fuzzy-random."),
    ] = None,
    clustering_il: Annotated[
        int | None,
        typer.Option("--clustering-il", metavar="C", show_default=False,
                     help="Also report the clustering-based information loss (k-means and "
                          "fuzzy c-means with C clusters: IL_RI, IL_ARI, IL_Jaccard, fuzzy "
                          "Rand)."),
    ] = None,
    blocking: Annotated[
        str | None,
        typer.Option("--blocking", show_default=False,
                     help="Run the method block by block for large files: kd (widest "
                          "axis), pca (principal axis) or vp (vantage point) median splits."),
    ] = None,
    block_size: Annotated[
        int, typer.Option("--block-size", help="Largest block with --blocking (>= 2k).")
    ] = 10_000,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", show_default=False,
                     help="Worker processes for --blocking (default: one per CPU on very "
                          "large inputs, else none)."),
    ] = None,
    schema: Annotated[
        pathlib.Path | None,
        typer.Option("--schema", show_default=False,
                     help="A TOML schema giving every column's role and type (see `microagg "
                          "init-schema`); replaces -q, -s, --drop."),
    ] = None,
    engine: Annotated[
        str,
        typer.Option("--engine",
                     help="local (in memory), file (out of core: streams INPUT in chunks, "
                          "blocks it, writes in the input's order; memory bounded by the "
                          "block size) or dask (a Dask cluster; --scheduler)."),
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", show_default=False,
                     help="Dask scheduler address for --engine dask (default: a local "
                          "cluster of one worker per CPU)."),
    ] = None,
    random_state: Annotated[
        int | None,
        typer.Option("--random-state", show_default=False,
                     help="Seed (an int >= 0); drawn and recorded when omitted."),
    ] = None,
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False,
                     help="CSV separator of the input and output; detected when omitted."),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", show_default=False,
                     help="Method parameter name=value (repeatable), e.g. --param gamma=0.5."),
    ] = None,
    refine: Annotated[
        float | None,
        typer.Option("--refine", metavar="SECONDS", show_default=False,
                     help="Quality mode: improve the method's partition by local search "
                          "(mdav-ls) for at most this many seconds. The result then "
                          "depends on the machine's speed."),
    ] = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the release summary (params, checks, metrics) as JSON."),
    ] = None,
    report: Annotated[
        pathlib.Path | None,
        typer.Option("--report", show_default=False,
                     help="Also write a self-contained HTML report of the release (.html)."),
    ] = None,
) -> None:
    """Mask the quasi-identifiers of a table by microaggregation and write the release."""
    start = time.perf_counter()
    with _user_errors():
        if (input_path is None) == (dataset is None):
            raise UsageError(
                "Give exactly one of INPUT or --dataset "
                f"(got {'both' if dataset is not None else 'neither'})."
            )
        from microagg.io import check_output_path, read_table, write_table, write_text_atomic

        inputs = [input_path] if input_path is not None else []
        out = check_output_path(output, inputs=inputs, parameter="--output")
        summary_out = None
        if summary_json is not None:
            summary_out = check_output_path(
                summary_json, inputs=[*inputs, out], extensions=(".json",),
                parameter="--summary-json",
            )
        report_out = None
        if report is not None:
            report_out = check_output_path(
                report, inputs=[*inputs, out, *([summary_out] if summary_out else [])],
                extensions=(".html", ".htm"), parameter="--report")
        method_params = _parse_params(param)
        if refine is not None:
            if not refine > 0:
                raise UsageError(f"--refine must be a number of seconds > 0. Got {refine}.")
            start_method = "auto" if method in (None, "mdav-ls") else method
            method_params = {**method_params, "start": start_method, "time_limit": refine,
                             "rounds": 10**9}
            method = "mdav-ls"
        agg_params: dict[str, Any] = _parse_params(agg_param, "--agg-param")
        if rho is not None:
            if aggregation != "rho":
                raise UsageError(
                    f"--rho applies to --aggregation rho, not {aggregation or 'mean'!r}.")
            agg_params["rho"] = rho
        parsed_bounds = _parse_bounds(bounds)
        hierarchies = _parse_hierarchies(hierarchy)
        qi = _split_names(quasi_identifiers)
        sens = _split_names(sensitive)
        ids = _split_names(drop)
        loaded_schema = None
        if schema is not None:
            from microagg.schema import load_schema, roles_from

            if dataset is not None:
                raise UsageError("--schema describes an INPUT file; --dataset brings its own "
                                 "roles.")
            loaded_schema = load_schema(schema)
            qi, sens, ids = roles_from(loaded_schema, qi, sens, ids)
            clash = sorted(set(hierarchies) & set(loaded_schema.hierarchies))
            if clash:
                raise UsageError(f"--hierarchy {clash} repeats the schema's hierarchies.")
            hierarchies.update(loaded_schema.hierarchies)
            if parsed_bounds is None and loaded_schema.bounds is not None \
                    and epsilon is not None:
                parsed_bounds = loaded_schema.bounds
        if input_path is not None and not qi:
            raise UsageError("-q/--quasi-identifiers (or --schema) is required with an INPUT "
                             "file.")
        if engine not in ("local", "file", "dask"):
            raise UsageError(f"--engine must be local, file or dask. Got {engine!r}.")
        if engine != "local":
            unsupported = [name for name, value in (
                ("--dataset", dataset), ("--aggregation", aggregation), ("--rho", rho),
                ("--epsilon", epsilon), ("--bounds", bounds), ("--hierarchy", hierarchy),
                ("-l", l_div), ("-t", t_close), ("--intruder-knows", intruder_knows),
                ("--attribute-groups", attribute_groups), ("--clustering-il", clustering_il),
                ("--refine", refine), ("--scaling", scaling), ("--report", report),
                ("--schema with hierarchies or ordinal columns",
                 loaded_schema is not None and (loaded_schema.hierarchies or any(
                     c.type == "ordinal" for c in loaded_schema.columns.values())))) if value]
            if unsupported:
                raise UsageError(f"--engine {engine} streams numeric microaggregation with "
                                 f"group means only; drop {', '.join(unsupported)} (or use "
                                 "--engine local).")
            if scheduler is not None and engine != "dask":
                raise UsageError("--scheduler applies to --engine dask.")
            assert input_path is not None  # --dataset refused above
            _anonymize_large(engine, input_path, out, summary_out, qi or [], ids or [], k,
                             method or "mdav", method_params, blocking or "kd", block_size,
                             jobs, random_state, sep, scheduler, start)
            return

        console = _stderr()
        with _DelayedProgress(console, ("read", "anonymize", "write")) as progress:
            progress.stage("read", done=0)
            if dataset is not None:
                from microagg.datasets import load_dataset

                ds = load_dataset(dataset)
                df = ds.data
                source = f"dataset {ds.name}"
                if qi is None:
                    qi = list(ds.quasi_identifiers)
                if sens is None:
                    sens = [c for c in ds.sensitive if c not in qi and c not in (ids or ())]
                if ids is None:
                    ids = [c for c in ds.identifiers if c not in qi]
                for col, path in ds.hierarchies.items():  # categorical QIs get the bundled ones
                    if col in qi and col not in hierarchies and ds.data[col].dtype.kind not in "biuf":
                        hierarchies[col] = str(path)
            else:
                assert input_path is not None  # checked above
                df = read_table(input_path, sep=sep)
                if loaded_schema is not None:
                    df = loaded_schema.apply(df)
                source = str(input_path)

            progress.stage("anonymize", done=1)
            from microagg.release import anonymize as run_anonymize

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                release = run_anonymize(
                    df, quasi_identifiers=qi or [], k=k, method=method,
                    sensitive=sens or (), identifiers=ids or (), aggregation=aggregation,
                    aggregation_params=agg_params or None, scaling=scaling,
                    random_state=random_state, method_params=method_params or None,
                    epsilon=epsilon, bounds=parsed_bounds,
                    intruder_knows=_split_names(intruder_knows),
                    hierarchies=hierarchies or None, l=l_div, diversity=diversity,
                    diversity_c=diversity_c, t=t_close, t_distance=t_distance,
                    attribute_groups=_parse_attribute_groups(attribute_groups),
                    n_attribute_groups=n_attribute_groups,
                    categorical_aggregation=categorical_aggregation,
                    clustering_il=clustering_il, blocking=blocking, block_size=block_size,
                    n_jobs=jobs,
                )

            progress.stage("write", done=2)
            write_table(release.data, out, sep=sep)
            if summary_out is not None:
                write_text_atomic(release.to_json() + "\n", summary_out)
            if report_out is not None:
                from microagg.report import write_report

                write_report(release, df, report_out)
            progress.stage("done", done=3)

    notes = list(release.warnings)
    notes += [str(w.message) for w in caught if str(w.message) not in notes]
    stdout = _stdout()
    stdout.print(_summary_table(release, source=source, output=out,
                                seconds=time.perf_counter() - start))
    if summary_out is not None:
        stdout.print(Text(f"summary written to {summary_out}"), soft_wrap=True)
    if report_out is not None:
        stdout.print(Text(f"report written to {report_out}"), soft_wrap=True)
    for note in notes:
        stdout.print(Text(f"Warning: {note}", style="yellow"), soft_wrap=True)


def _anonymize_large(engine: str, input_path: pathlib.Path, out: pathlib.Path,
                     summary_out: pathlib.Path | None, qi: list[str], ids: list[str], k: int,
                     method: str, method_params: dict[str, Any], blocking: str,
                     block_size: int, jobs: int | None, random_state: int | None,
                     sep: str | None, scheduler: str | None, start: float) -> None:
    """``--engine file`` / ``--engine dask``: stream the input, write the output atomically."""
    from microagg.io import write_text_atomic

    console = _stderr()
    stages = ("statistics", "routing", "microaggregation", "writing")
    release: Any
    with _DelayedProgress(console, stages) as progress:
        if engine == "file":
            from microagg.outofcore import anonymize_file

            release = anonymize_file(
                input_path, out, quasi_identifiers=qi, k=k, method=method, identifiers=ids,
                blocking=blocking, block_size=block_size, n_jobs=jobs,
                random_state=random_state, sep=sep, method_params=method_params or None,
                on_stage=lambda name: progress.stage(name, done=stages.index(name)))
        else:
            from microagg._dask import anonymize_dask_file

            release = anonymize_dask_file(
                input_path, out, quasi_identifiers=qi, k=k, method=method, identifiers=ids,
                blocking=blocking, block_size=block_size, random_state=random_state,
                sep=sep, scheduler=scheduler, method_params=method_params or None)
        progress.stage("done", done=len(stages))
    summary = {"rows": release.rows, "params": _plain_json(release.params),
               "seed": release.seed, "checks": _plain_json(release.checks),
               "metrics": _plain_json(release.metrics),
               "timings": _plain_json(release.timings)}
    if summary_out is not None:
        write_text_atomic(json.dumps(summary, indent=2) + "\n", summary_out)
    table = Table(title="microagg release", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    for name, value in (
            ("input", str(input_path)), ("output", str(out)), ("engine", engine),
            ("method", f"{method}, blocking {blocking}, block size {block_size:,}"),
            ("rows", f"{release.rows:,}"), ("quasi-identifiers", f"{len(qi)}: {', '.join(qi)}"),
            ("blocks / groups", f"{release.metrics['n_blocks']:,} / "
                                f"{release.metrics['n_groups']:,}"),
            ("required k", str(k)), ("achieved k (written file)", str(release.k)),
            ("IL (%)", f"{release.metrics['information_loss']:.4f}"),
            ("seed", str(release.seed)),
            ("time (s)", f"{time.perf_counter() - start:.2f}")):
        table.add_row(name, Text(value))
    stdout = _stdout()
    stdout.print(table)
    if summary_out is not None:
        stdout.print(Text(f"summary written to {summary_out}"), soft_wrap=True)


def _plain_json(value: Any) -> Any:
    """JSON-ready values (the release's own converter, which also takes paths)."""
    from microagg.release import _plain

    return _plain(value)


@app.command()
def methods() -> None:
    """List the microaggregation methods (partitioners) and their parameters."""
    from microagg.partition import ALIASES, PARTITIONERS

    table = Table(title="microaggregation methods", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("fixed size")
    table.add_column("parameters")
    table.add_column("summary")
    table.add_column("reference")
    for name, entry in PARTITIONERS.items():
        params = ", ".join(f"{p}={default!r}" for p, default in entry.params.items()
                           if p != "sensitive") or "-"  # the sensitive columns come from -s
        if entry.needs_sensitive:
            params += " (groups on the -s columns too)"
        table.add_row(name, "yes" if entry.fixed_size else "no", Text(params),
                      Text(entry.summary), Text(entry.reference))
    console = _stdout()
    console.print(table)
    if ALIASES:
        aliases = ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items())
        console.print(Text(f"Aliases: {aliases}"), soft_wrap=True)
    from microagg.aggregate import AGGREGATION_PARAMS, NOISY_AGGREGATORS

    aggs = ", ".join(
        name + "".join(f" ({p}={d!r})" for p, d in AGGREGATION_PARAMS[name].items())
        + (" [noisy: not k-anonymous, not DP]" if name in NOISY_AGGREGATORS else "")
        for name in AGGREGATION_PARAMS
    )
    console.print(Text(f"Aggregations (--aggregation): {aggs}. Differentially private "
                       "release: --epsilon with --bounds."), soft_wrap=True)


@app.command()
def check(
    input_path: Annotated[
        pathlib.Path,
        typer.Argument(metavar="INPUT", help="A published table (CSV, TSV or Parquet).",
                       show_default=False),
    ],
    quasi_identifiers: Annotated[
        list[str] | None,
        typer.Option("-q", "--quasi-identifiers", show_default=False,
                     help="Comma-separated columns an intruder may know."),
    ] = None,
    sensitive: Annotated[
        list[str] | None,
        typer.Option("-s", "--sensitive", show_default=False,
                     help="Comma-separated sensitive columns (for l, t and homogeneity)."),
    ] = None,
    schema: Annotated[
        pathlib.Path | None,
        typer.Option("--schema", show_default=False,
                     help="A TOML schema with the columns' roles (replaces -q and -s)."),
    ] = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the figures as JSON."),
    ] = None,
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False, help="CSV separator (detected if omitted)."),
    ] = None,
) -> None:
    """Report the k, l, t, homogeneous classes and class risk a published file achieves."""
    with _user_errors():
        from microagg.check import check_table
        from microagg.io import check_output_path, read_table, write_text_atomic

        summary_out = None
        if summary_json is not None:
            summary_out = check_output_path(summary_json, inputs=[input_path],
                                            extensions=(".json",), parameter="--summary-json")
        qi = _split_names(quasi_identifiers) or []
        sens = _split_names(sensitive) or []
        start = time.perf_counter()
        table = read_table(input_path, sep=sep)
        if schema is not None:
            from microagg.schema import load_schema, roles_from

            # the roles only: a published file lacks the identifiers and may show
            # generalized values the schema's types do not allow
            qi, sens, _ = roles_from(load_schema(schema), qi, sens, None)
        elif not qi:
            raise UsageError("Name the quasi-identifiers: -q, or --schema.")
        result = check_table(table, quasi_identifiers=qi, sensitive=sens)
        if summary_out is not None:
            write_text_atomic(json.dumps(_plain_json(result.summary()), indent=2) + "\n",
                              summary_out)
    out = Table(title=f"microagg check: {input_path}", show_header=False,
                title_justify="left")
    out.add_column("", style="bold")
    out.add_column("")
    rows = [("rows / classes", f"{result.rows:,} / {result.classes:,}"),
            ("k-anonymity", str(result.k)),
            ("risk per record (max / mean)",
             f"{result.risk['max']:.4f} / {result.risk['mean']:.4f}"),
            ("records in classes < 2 / < 3 / < 5 / < 10 (%)",
             " / ".join(f"{100 * result.risk[f'share_in_classes_below_{m}']:.2f}"
                        for m in (2, 3, 5, 10)))]
    for col in sens:
        rows.append((f"{col}: l (distinct / entropy)",
                     f"{result.l_diversity[col]['distinct']:.0f} / "
                     f"{result.l_diversity[col]['entropy']:.3g}"))
        rows.append((f"{col}: t (EMD)", f"{result.t_closeness[col]:.4f}"))
        h = result.homogeneity[col]
        rows.append((f"{col}: homogeneous classes",
                     f"{h['homogeneous_classes']} of {h['classes']} "
                     f"({100 * float(h['homogeneous_share']):.2f}% of records)"))
    rows.append(("time (s)", f"{time.perf_counter() - start:.2f}"))
    for name, value in rows:
        out.add_row(name, Text(value))
    _stdout().print(out)


@app.command()
def sweep(
    input_path: Annotated[
        pathlib.Path | None,
        typer.Argument(metavar="[INPUT]", help="A table (CSV, TSV or Parquet); or --dataset.",
                       show_default=False),
    ] = None,
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="The results table (.csv), one row per run."),
    ] = pathlib.Path("sweep.csv"),
    plot: Annotated[
        pathlib.Path | None,
        typer.Option("--plot", show_default=False,
                     help="Also draw IL against DLD with the Pareto front (.png; needs "
                          "matplotlib)."),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", show_default=False, help="Use a bundled data set."),
    ] = None,
    quasi_identifiers: Annotated[
        list[str] | None,
        typer.Option("-q", "--quasi-identifiers", show_default=False,
                     help="Comma-separated quasi-identifiers."),
    ] = None,
    sensitive: Annotated[
        list[str] | None,
        typer.Option("-s", "--sensitive", show_default=False, help="Sensitive columns."),
    ] = None,
    drop: Annotated[
        list[str] | None,
        typer.Option("--drop", show_default=False, help="Identifiers to drop."),
    ] = None,
    schema: Annotated[
        pathlib.Path | None,
        typer.Option("--schema", show_default=False, help="A TOML schema with the roles."),
    ] = None,
    methods_: Annotated[
        str,
        typer.Option("--methods", help="Comma-separated methods."),
    ] = "mdav",
    ks: Annotated[
        str,
        typer.Option("-k", help="Comma-separated values of k."),
    ] = "2,3,5,10,20",
    rho: Annotated[
        str | None,
        typer.Option("--rho", show_default=False,
                     help="Comma-separated rho values: adds the rho aggregation for each."),
    ] = None,
    random_state: Annotated[
        int, typer.Option("--random-state", help="The seed of every run.")
    ] = 0,
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False, help="CSV separator (detected if omitted)."),
    ] = None,
) -> None:
    """Run a grid of methods x k (x rho) and map information loss against disclosure risk."""
    with _user_errors():
        from microagg.io import check_output_path, read_table, write_table
        from microagg.sweep import plot_sweep
        from microagg.sweep import sweep as run_sweep

        if (input_path is None) == (dataset is None):
            raise UsageError("Give exactly one of INPUT or --dataset.")
        inputs = [input_path] if input_path is not None else []
        out = check_output_path(output, inputs=inputs, parameter="--output")
        plot_out = (check_output_path(plot, inputs=[*inputs, out], extensions=(".png",),
                                      parameter="--plot") if plot is not None else None)
        try:
            k_values = [int(v) for v in ks.split(",") if v.strip()]
            rho_values = [float(v) for v in rho.split(",") if v.strip()] if rho else []
        except ValueError:
            raise UsageError(f"-k takes integers and --rho numbers, comma-separated. Got "
                             f"-k {ks!r}, --rho {rho!r}.") from None
        methods_list = [m.strip() for m in methods_.split(",") if m.strip()]
        qi, sens, ids = (_split_names(quasi_identifiers), _split_names(sensitive),
                         _split_names(drop))
        if dataset is not None:
            from microagg.datasets import load_dataset

            ds = load_dataset(dataset)
            df = ds.data
            qi = qi or list(ds.quasi_identifiers)
            sens = sens if sens is not None else list(ds.sensitive)
            ids = ids if ids is not None else list(ds.identifiers)
        else:
            assert input_path is not None
            df = read_table(input_path, sep=sep)
            if schema is not None:
                from microagg.schema import load_schema, roles_from

                loaded = load_schema(schema)
                qi, sens, ids = roles_from(loaded, qi, sens, ids)
                df = loaded.apply(df)
        if not qi:
            raise UsageError("Name the quasi-identifiers: -q, --schema or --dataset.")
        aggregations: list[tuple[str, dict[str, Any]]] = [("mean", {})]
        aggregations += [("rho", {"rho": r}) for r in rho_values]
        console = _stderr()
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                      console=console, transient=True,
                      disable=not console.is_terminal) as bar:
            task = bar.add_task("sweep", total=len(methods_list) * len(k_values)
                                * len(aggregations))

            def step(done: int, total: int, label: str) -> None:
                bar.update(task, completed=done, description=label)

            table = run_sweep(df, quasi_identifiers=qi, sensitive=sens or (),
                              identifiers=ids or (), ks=k_values, methods=methods_list,
                              aggregations=aggregations, random_state=random_state,
                              on_step=step)
        write_table(table, out)
        if plot_out is not None:
            plot_sweep(table, plot_out, title=f"Risk-utility map: {dataset or input_path}")
    shown = Table(title="microagg sweep (* = on the Pareto front)", title_justify="left")
    for name in ("method", "k", "aggregation", "IL (%)", "DLD (%)", "achieved k", "s"):
        shown.add_column(name)
    for _, row in table.iterrows():
        agg = row["aggregation"] + (f" {row['aggregation_params']}"
                                    if row["aggregation_params"] else "")
        if row["error"]:
            shown.add_row(row["method"], str(row["k"]), agg, "refused", "", "", "")
            continue
        shown.add_row(("* " if row["pareto"] else "") + row["method"], str(row["k"]), agg,
                      f"{row['information_loss']:.3f}", f"{row['dld_risk']:.2f}",
                      str(int(row["achieved_k"])), f"{row['seconds']:.2f}")
    stdout = _stdout()
    stdout.print(shown)
    stdout.print(Text(f"table written to {out}" + (f", plot to {plot_out}" if plot_out
                                                    else "")), soft_wrap=True)


@app.command("init-schema")
def init_schema(
    input_path: Annotated[
        pathlib.Path,
        typer.Argument(metavar="INPUT", help="A table (CSV, TSV or Parquet).",
                       show_default=False),
    ],
    output: Annotated[
        pathlib.Path,
        typer.Option("-o", "--output", show_default=False,
                     help="Where to write the proposed schema (.toml)."),
    ],
    sep: Annotated[
        str | None,
        typer.Option("--sep", show_default=False, help="CSV separator (detected if omitted)."),
    ] = None,
) -> None:
    """Propose a schema for INPUT (roles and types guessed, reasons as comments) to edit."""
    with _user_errors():
        from microagg.io import check_output_path, read_table, write_text_atomic
        from microagg.schema import propose_schema

        out = check_output_path(output, inputs=[input_path], extensions=(".toml",),
                                parameter="--output")
        text = propose_schema(read_table(input_path, sep=sep))
        write_text_atomic(text, out)
    _stdout().print(Text(f"schema proposed in {out}: check every role, mark the sensitive "
                         "columns, then use it with --schema."), soft_wrap=True)


@app.command()
def datasets() -> None:
    """List the bundled benchmark data sets."""
    from microagg.datasets import list_datasets

    table = Table(title="bundled data sets", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("columns", justify="right")
    table.add_column("description")
    for info in list_datasets():
        table.add_row(info.name, str(info.rows), str(info.columns), Text(info.description))
    _stdout().print(table)


def main() -> None:
    """Console-script entry point (``microagg = "microagg.cli:main"``)."""
    app(prog_name="microagg")
