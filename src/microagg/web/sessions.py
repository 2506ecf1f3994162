"""Browser sessions: each one's table, statistics and schema, and its private work folder.

The store holds everything in memory, keyed by a random session id (the session cookie);
files (uploads, schema drafts) go to one folder per session inside a 0700 temporary folder
made at start and removed at exit (:meth:`SessionStore.close`, also registered with atexit).
"""

from __future__ import annotations

import atexit
import os
import pathlib
import re
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..io._leftovers import signals_deferred

__all__ = ["MAX_ATTEMPTS", "ColumnStats", "SessionState", "SessionStore", "column_stats",
           "plain_dtypes", "plain_type"]

MAX_ATTEMPTS = 20
"""Attempts a session keeps (the oldest are forgotten: each holds a published table)."""


@dataclass(frozen=True)
class ColumnStats:
    """The preview's line for one column."""

    name: str
    dtype: str
    missing: int
    distinct: int
    kind: str = ""
    """Its type in plain words (:func:`plain_type`), as the pages show it."""


def plain_type(dtype: Any) -> str:
    """A column's type in plain words rather than its pandas dtype.

    Examples
    --------
    >>> import numpy as np
    >>> plain_type(np.dtype("int64")), plain_type(np.dtype("float64")), plain_type(object)
    ('whole number', 'number', 'text')
    """
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return "ordered category" if dtype.ordered else "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "true/false"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "date"
    if pd.api.types.is_integer_dtype(dtype):
        return "whole number"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "text"


_DTYPE_WORDS = re.compile(r"\bdtype:? '?([A-Za-z][A-Za-z0-9_]*(?:\[[A-Za-z0-9_, ]+\])?)'?")


def plain_dtypes(message: str) -> str:
    """``message`` with every pandas dtype it names (``dtype str``, ``dtype float64``) in
    plain words (:func:`plain_type`); a word that is no dtype is kept.

    Examples
    --------
    >>> plain_dtypes("'sex' (dtype str, hierarchy: flat); 'age' has dtype int64")
    "'sex' (type text, hierarchy: flat); 'age' has type whole number"
    """
    import pandas as pd

    def plain(match: re.Match[str]) -> str:
        try:
            dtype = pd.api.types.pandas_dtype(match.group(1))
        except (TypeError, ValueError):
            return match.group(0)
        return f"type {plain_type(dtype)}"

    return _DTYPE_WORDS.sub(plain, message)


def column_stats(df: pd.DataFrame) -> list[ColumnStats]:
    """Type, missing and distinct counts (missing values not counted) of every column."""
    from ..io._nested import nunique

    missing = df.isna().sum()
    return [ColumnStats(str(col), str(df[col].dtype), int(missing.iloc[i]), nunique(df[col]),
                        plain_type(df[col].dtype)) for i, col in enumerate(df.columns)]


@dataclass
class SessionState:
    """What one browser session holds."""

    session_id: str
    csrf_token: str
    folder: pathlib.Path
    table: pd.DataFrame | None = None
    source: str | None = None
    as_read: Any = None
    """The uploaded file's cells as written (:class:`microagg.io._as_read.AsRead`; ``None``
    for a bundled data set, a database table, or a format that stores its types): what the
    downloads publish of the pass-through columns."""
    metadata: Any = None
    """The uploaded table's :class:`microagg.io.TableMetadata` (value and variable labels,
    date formats, missing codes, measurement levels of a ``.sav`` or ``.dta``), or ``None``:
    what the ``.sav`` and ``.dta`` downloads write again, as far as it still fits."""
    stats: list[ColumnStats] = field(default_factory=list)
    schema: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Column -> its schema entry (role, type, order, ...), as a TOML table."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Column -> why the proposal guessed its role (empty once a schema is uploaded)."""
    attempts: list[Any] = field(default_factory=list)
    """The releases made in this session (:class:`microagg.web.protect.Attempt`), oldest
    first."""
    current: int | None = None
    """Index in :attr:`attempts` of the one the Result and Export pages show."""
    risk_keys: tuple[str, ...] | None = None
    """The key variables the Risk page measures on, as the steward ticked them (``None``:
    the quasi-identifiers of the roles); the releases do not use them (the library measures
    a release on the columns it masks)."""
    sweep: Any = None
    """The last sweep of this session (:class:`microagg.web.sweep_page.SweepResult`)."""
    built: dict[str, str] = field(default_factory=dict)
    """The hierarchies built on the Hierarchies page: ``hierarchies/N.csv`` -> what it is."""
    jobs: dict[str, Any] = field(default_factory=dict)
    """The jobs this session started (:class:`microagg.web.jobs.Job`), by id."""
    last_seen: float = field(default_factory=time.monotonic)
    """When a request of this session last arrived (sessions idle too long are forgotten)."""

    @property
    def busy(self) -> bool:
        """Whether one of its jobs is running."""
        return any(job.running for job in self.jobs.values())

    def add_attempt(self, attempt: Any, limit: int = MAX_ATTEMPTS) -> None:
        """Keep ``attempt`` as the current one; beyond ``limit`` attempts the oldest is
        forgotten (each holds a copy of the table)."""
        self.attempts.append(attempt)
        del self.attempts[:-limit]
        self.current = len(self.attempts) - 1

    def set_table(self, df: pd.DataFrame, source: str, as_read: Any = None) -> None:
        """A new table (and its cells as written, ``as_read``; its metadata as read, from
        ``df.attrs``): its statistics computed once; the previous schema and attempts
        dropped."""
        from ..io.tables import table_metadata

        self.table, self.source, self.as_read = df, source, as_read
        self.metadata = table_metadata(df)
        self.stats = column_stats(df)
        self.schema, self.reasons = {}, {}
        self.attempts, self.current = [], None
        self.risk_keys = None


class SessionStore:
    """Sessions by id, and the private work folder they live in."""

    def __init__(self, work_dir: pathlib.Path | None = None, *,
                 idle_seconds: float = 12 * 3600) -> None:
        self.idle_seconds = idle_seconds
        self._sessions: dict[str, SessionState] = {}
        self._lock = threading.Lock()
        with signals_deferred():  # a Ctrl-C at start cannot leave the folder unregistered
            self.root = pathlib.Path(tempfile.mkdtemp(prefix="microagg-serve-", dir=work_dir))
            atexit.register(self.close)
        os.chmod(self.root, 0o700)

    def get(self, session_id: str | None) -> SessionState | None:
        """The session with this id, or ``None``."""
        if not session_id:
            return None
        with self._lock:
            state = self._sessions.get(session_id)
            if state is not None:
                state.last_seen = time.monotonic()
            return state

    def expire(self) -> int:
        """Forget the sessions idle for more than ``idle_seconds`` (their tables and work
        folders; not one whose job still runs); how many."""
        now = time.monotonic()
        with self._lock:
            old = [s for s in self._sessions.values()
                   if now - s.last_seen > self.idle_seconds and not s.busy]
            for state in old:
                del self._sessions[state.session_id]
        for state in old:
            shutil.rmtree(state.folder, ignore_errors=True)
        return len(old)

    def new(self) -> SessionState:
        """A new session: a random id (32 bytes), CSRF token and work folder (the idle
        sessions are forgotten first)."""
        self.expire()
        folder = self.root / secrets.token_hex(16)
        folder.mkdir(mode=0o700)
        state = SessionState(session_id=secrets.token_urlsafe(32),
                             csrf_token=secrets.token_urlsafe(32), folder=folder)
        with self._lock:
            self._sessions[state.session_id] = state
        return state

    def close(self) -> None:
        """Forget every session and remove the work folder (idempotent)."""
        with self._lock:
            self._sessions.clear()
        shutil.rmtree(self.root, ignore_errors=True)
