"""Shared pieces of the command line: the typer app, consoles, error handling, option parsers."""

from __future__ import annotations

import pathlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from microagg._base.column_names import match_column, match_columns
from microagg._runtime.sizing import format_duration, remaining_seconds

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXIT_BUG",
    "EXIT_NOT_PROTECTED",
    "EXIT_USER_ERROR",
    "LOG_DELAY",
    "LOG_EVERY",
    "PROGRESS_DELAY",
    "DelayedProgress",
    "HouseholdOption",
    "QuasiIdentifiersOption",
    "RandomStateOption",
    "SchemaOption",
    "SensitiveOption",
    "SepOption",
    "StrataOption",
    "UsageError",
    "WeightOption",
    "app",
    "exit_on_verdict",
    "match_column",
    "match_columns",
    "package_version",
    "parse_attribute_groups",
    "parse_bounds",
    "parse_hierarchies",
    "parse_params",
    "passthrough_as_read",
    "plain_json",
    "split_names",
    "stderr",
    "stdout",
    "user_errors",
]

EXIT_USER_ERROR = 2
"""Exit status for a user error (bad option, unreadable input, schema problem...)."""
EXIT_BUG = 3
"""Exit status for a broken guarantee: a bug in microagg."""
EXIT_NOT_PROTECTED = 4
"""Exit status of ``anonymize``, ``check`` and ``report`` when the verdict is "not
protected" (the files asked for are still written)."""
PROGRESS_DELAY = 1.0
"""Seconds a run must last before the progress display appears."""
LOG_DELAY = 5.0
"""Seconds a run must last before progress lines are printed (stderr not a terminal)."""
LOG_EVERY = 30.0
"""Most seconds between two progress lines (besides one at every tenth of the records)."""

app = typer.Typer(
    name="microagg",
    help="Safe release of microdata by microaggregation, with verified guarantees.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class UsageError(ValueError):
    """A command-line option is wrong or missing (reported like any other user error)."""


def stdout() -> Console:
    # Made per call so that the console writes to the current sys.stdout (CliRunner swaps it).
    return Console(highlight=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _fail(message: str, *, bug: bool = False) -> typer.Exit:
    """Print ``Error: message`` in red on stderr; return the Exit to raise (2, or 3 for a bug)."""
    text = f"Error: {message}" + (" (this is a bug in microagg; please report it)" if bug else "")
    stderr().print(Text(text, style="bold red"), soft_wrap=True)
    return typer.Exit(code=EXIT_BUG if bug else EXIT_USER_ERROR)


def exit_on_verdict(verdict: Any) -> None:
    """Exit with :data:`EXIT_NOT_PROTECTED` when ``verdict`` (a
    :class:`~microagg._pipeline.verdict.Verdict`) says "not protected"; else return."""
    from microagg._pipeline.verdict import NOT_PROTECTED

    if verdict.status == NOT_PROTECTED:
        raise typer.Exit(code=EXIT_NOT_PROTECTED)


def package_version() -> str:
    """The installed version of microagg (one definition: the fast ``--version`` path)."""
    from microagg.cli import package_version as installed

    return installed()


def _version_callback(value: bool) -> None:
    if value:
        stdout().print(f"microagg {package_version()}")
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


def parse_hierarchies(items: list[str] | None) -> dict[str, str]:
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


def parse_bounds(items: list[str] | None) -> dict[str, tuple[float, float]] | None:
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


def split_names(values: Sequence[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; ``None`` (option not given) stays ``None``.

    Spaces around a name are dropped, except inside double quotes: ``'" age "'`` names the
    column `` age `` (:func:`match_columns` also finds it as ``age`` when no column is
    called that).

    Examples
    --------
    >>> split_names(['a, b', '" c "'])
    ['a', 'b', ' c ']
    """
    if values is None:
        return None
    names = [name.strip() for value in values for name in value.split(",")]
    return [name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name
            for name in names if name]


def parse_attribute_groups(text: str | None) -> str | list[list[str]] | None:
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


def parse_params(items: Sequence[str] | None, option: str = "--param") -> dict[str, Any]:
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


class DelayedProgress:
    """A transient progress display over named stages that appears only after a delay.

    The work runs in the calling thread; a :class:`threading.Timer` starts the live display
    once the run has lasted ``delay`` seconds, so quick runs print nothing. A partitioner
    that measures its progress (exact MDAV) reports through :meth:`records`, passed to the
    engine as ``progress=``: on a terminal the bar then counts records grouped, with the
    time left; when the console is not a terminal (a log, a pipe, ``make``), plain lines are
    printed instead, once the run has lasted ``log_delay`` seconds, at every tenth of the
    records and at least every ``log_every`` seconds.
    """

    def __init__(self, console: Console, stages: Sequence[str], *,
                 delay: float | None = None, log_delay: float | None = None,
                 log_every: float | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
            TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
            console=console, transient=True,
        )
        self._stages = len(stages)
        self._task = self._progress.add_task(stages[0] if stages else "", total=len(stages),
                                             detail=f"0/{len(stages)}")
        self._lock = threading.Lock()
        self._started = False
        self._stopped = False
        self._timer: threading.Timer | None = None
        self._console = console
        self._log = not console.is_terminal
        # the module's settings when not given (read now, so that they can be changed)
        self._log_delay = LOG_DELAY if log_delay is None else log_delay
        self._log_every = LOG_EVERY if log_every is None else log_every
        self._began = time.monotonic()
        self._records_began = self._began
        self._logged: tuple[float, int] | None = None  # (when, tenth) of the last line
        self.label = "mdav"
        """What :meth:`records` calls the partition (the method's name)."""
        self.quadratic = True
        """Whether the time left is exact MDAV's (quadratic in the records left); ``False``
        for a run block by block (proportional to the records left)."""
        if console.is_terminal:
            self._timer = threading.Timer(PROGRESS_DELAY if delay is None else delay,
                                          self._start)
            self._timer.daemon = True

    def _start(self) -> None:
        with self._lock:
            if not self._stopped:
                self._progress.start()
                self._started = True

    def stage(self, description: str, *, done: int) -> None:
        """Show that ``done`` stages are complete and ``description`` is running."""
        self._progress.update(self._task, description=description, completed=done,
                              total=self._stages, detail=f"{done}/{self._stages}")

    def records(self, grouped: int, total: int) -> None:
        """``grouped`` of ``total`` records are in groups (0 when the partition starts)."""
        now = time.monotonic()
        if grouped == 0:
            self._records_began = now
        left = remaining_seconds(now - self._records_began, grouped, total,
                                 quadratic=self.quadratic)
        if self._log:
            self._log_line(now, grouped, total, left)
            return
        eta = "" if left is None or grouped >= total else f", {format_duration(left)} left"
        self._progress.update(self._task, description=f"{self.label}: grouping records",
                              completed=grouped, total=total,
                              detail=f"{grouped:,}/{total:,}{eta}")

    def _log_line(self, now: float, grouped: int, total: int, left: float | None) -> None:
        tenth = 10 * grouped // max(total, 1)
        if now - self._began < self._log_delay or grouped == 0:
            return
        last_when, last_tenth = self._logged or (self._began, 0)
        if tenth <= last_tenth and now - last_when < self._log_every and grouped < total:
            return
        self._logged = (now, tenth)
        line = (f"{self.label}: {grouped:,} of {total:,} records grouped "
                f"({100 * grouped // max(total, 1)} %)")
        if grouped >= total:
            line += f" in {format_duration(now - self._records_began).removeprefix('about ')}"
        elif left is not None:
            line += f", {format_duration(left)} left"
        self._console.print(Text(line), soft_wrap=True)

    def __enter__(self) -> DelayedProgress:
        self._began = time.monotonic()
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
def user_errors() -> Iterator[None]:
    """Turn library exceptions into one red line and an exit status (2 user, 3 bug)."""
    from microagg.exceptions import InternalError, PrivacyViolationError

    try:
        yield
    except (PrivacyViolationError, InternalError) as exc:
        raise _fail(f"{type(exc).__name__}: {exc}", bug=True) from None
    except (ValueError, TypeError, ImportError, OSError) as exc:
        # SchemaError is a ValueError; FileNotFoundError and PermissionError are OSErrors.
        raise _fail(str(exc)) from None


def passthrough_as_read(data: pd.DataFrame, source: str, output: pathlib.Path | str, *,
                         masked: Sequence[str], sep: str | None,
                         missing: Mapping[str, Sequence[Any]] | None = None) -> pd.DataFrame:
    """The table to write: every column not in ``masked`` as the input had it.

    The release computes on parsed values (numbers for t-closeness); what it publishes of a
    pass-through column (other, sensitive, or no role) is what was read: from CSV to CSV
    byte for byte (``01234``, ``NA``, ``null``, empty fields, ``1.50``); from a CSV or an
    Excel input to the other formats by the rule of :mod:`microagg.io._as_read`. Rows are in the
    input's order. Parquet, Stata, SPSS and database inputs store their types and are written
    as they are. A field that spells a column's missing-value code (``missing``) counts as
    an empty one for the typed formats (the code itself goes back to .sav and .dta).
    """
    from microagg.io._as_read import published_as_read, read_as_read

    keep = [c for c in data.columns if c not in masked]
    if not keep:
        return data
    return published_as_read(data, read_as_read(source, sep=sep, columns=keep),
                             masked=masked, output=output, missing=missing)


def plain_json(value: Any) -> Any:
    """JSON-ready values (the release's own converter, which also takes paths)."""
    from microagg._pipeline.result import to_plain

    return to_plain(value)


# Options shared by several commands (one declaration, one help text)
QuasiIdentifiersOption = Annotated[
    list[str] | None,
    typer.Option("-q", "--quasi-identifiers", show_default=False,
                 help="Comma-separated quasi-identifiers (repeatable): the columns an intruder "
                      "may know."),
]
SensitiveOption = Annotated[
    list[str] | None,
    typer.Option("-s", "--sensitive", show_default=False,
                 help="Comma-separated sensitive columns (l, t and homogeneity)."),
]
SchemaOption = Annotated[
    pathlib.Path | None,
    typer.Option("--schema", show_default=False,
                 help="A TOML schema with the columns' roles (see `microagg init-schema`); "
                      "replaces -q and -s."),
]
WeightOption = Annotated[
    str | None,
    typer.Option("--weight", show_default=False,
                 help="The sampling weight column (numbers > 0): population frequencies Fk "
                      "are estimated with it; without it the file is taken for "
                      "the population."),
]
HouseholdOption = Annotated[
    str | None,
    typer.Option("--household", show_default=False,
                 help="The household id column: adds the household risk."),
]
StrataOption = Annotated[
    str | None,
    typer.Option("--strata", show_default=False,
                 help="The strata column (a region, the design stratum): fk and Fk are "
                      "counted within each stratum (as sdcMicro's strataVar)."),
]
SepOption = Annotated[
    str | None,
    typer.Option("--sep", show_default=False, help="CSV separator (detected if omitted)."),
]
RandomStateOption = Annotated[
    int | None,
    typer.Option("--random-state", show_default=False,
                 help="Seed (an int >= 0); drawn and recorded when omitted."),
]
